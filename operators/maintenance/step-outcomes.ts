/**
 * What the task files share: the step outcomes as short constructors, the name a message gives a
 * cluster, and the one write a step makes to an HcpCluster, guarded by the resourceVersion it read.
 */
import { HcpClusterResource, type HcpCluster } from "../api/v1alpha1/index.ts";
import { KubeApiError, type KubeClient } from "../runtime/kube.ts";
import type { StepOutcome } from "./step.ts";

/** How often a step that waits on something no watch reports looks again. */
export const STEP_POLL_MS = 30_000;

export const done = (message: string): StepOutcome => ({ kind: "done", message });
export const waiting = (message: string, requeueMs = STEP_POLL_MS): StepOutcome => ({
  kind: "waiting",
  message,
  requeueMs,
});
export const terminal = (message: string): StepOutcome => ({ kind: "terminal", message });

export const clusterName = (c: HcpCluster): string =>
  `HcpCluster ${c.metadata.namespace ?? ""}/${c.metadata.name ?? ""}`;

/**
 * Merge-patches `cluster` only while it is still at the resourceVersion it was read at: a merge
 * patch carrying resourceVersion is refused (409) when the cluster changed since, and then nothing
 * was written ("changed").
 */
export async function patchClusterAsRead(
  client: Pick<KubeClient, "mergePatch">,
  cluster: HcpCluster,
  patch: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> },
  signal: AbortSignal,
): Promise<"written" | "changed"> {
  const ref = { name: cluster.metadata.name ?? "", namespace: cluster.metadata.namespace ?? "" };
  const body = {
    ...patch,
    metadata: { ...patch.metadata, resourceVersion: cluster.metadata.resourceVersion },
  };
  try {
    await client.mergePatch(HcpClusterResource, ref, body, { signal });
    return "written";
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 409) return "changed";
    throw err;
  }
}
