/**
 * The summary conditions (Ready, Progressing, Degraded) a controller writes, for tests that play
 * the controller on a CR the frontend reads: ready, still progressing (with the reason and message
 * given), or degraded by a user error.
 */
import type { Condition } from "../../operators/runtime/conditions.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../operators/runtime/kube.ts";

export type SummaryState = "ready" | "progressing" | "degraded";

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, "Z");

export function summaryConditions(
  state: SummaryState,
  generation: number,
  progress: { reason: string; message?: string } = { reason: "Placing" },
): Condition[] {
  const c = (type: string, status: "True" | "False", reason: string, message = reason): Condition => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: now(),
    observedGeneration: generation,
  });
  if (state === "ready")
    return [
      c("Ready", "True", "AsExpected"),
      c("Progressing", "False", "AsExpected"),
      c("Degraded", "False", "AsExpected"),
    ];
  if (state === "degraded")
    return [
      c("Ready", "False", "InvalidSubnet"),
      c("Progressing", "False", "UserActionRequired"),
      c("Degraded", "True", "InvalidSubnet", "the subnet does not exist"),
    ];
  return [
    c("Ready", "False", progress.reason, progress.message),
    c("Progressing", "True", progress.reason, progress.message),
    c("Degraded", "False", "AsExpected"),
  ];
}

/**
 * Writes a CR's status as its controller would once it has done what its generation asks (or is
 * still at it): observedGeneration, the summary conditions, and what `extra` adds for that CR.
 */
export async function writeSummaryStatus(
  client: KubeClient,
  type: ResourceType,
  ref: { name: string; namespace: string },
  opts: {
    state: SummaryState;
    extra?: (cr: KubeObject) => Record<string, unknown>;
    progress?: { reason: string; message?: string };
  },
): Promise<void> {
  const cr = await client.get<KubeObject>(type, ref.name, ref.namespace);
  const generation = cr.metadata.generation ?? 1;
  const conditions = summaryConditions(opts.state, generation, opts.progress);
  await client.mergePatch(
    type,
    ref,
    { status: { observedGeneration: generation, conditions, ...opts.extra?.(cr) } },
    "status",
  );
}
