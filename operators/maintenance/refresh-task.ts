/**
 * RefreshWorkTemplate: lets the cluster controller rewrite a cluster's work that it holds because
 * only the template changed (operators/cluster/work-template.ts), so that the rewrites after an
 * operators upgrade go out at a task's or rollout's rate, inside the clusters' windows. One step:
 * raise the cluster's allowed revision (a merge patch guarded by the resourceVersion read), then
 * wait until its status says the work carries the current revision.
 */
import {
  WORK_TEMPLATE_ALLOWED_ANNOTATION,
  WORK_TEMPLATE_REVISION,
  type HcpCluster,
} from "../api/v1alpha1/index.ts";
import type { KubeClient } from "../runtime/kube.ts";
import type { StepOutcome, TaskDefinition } from "./step.ts";
import { clusterName, patchClusterAsRead } from "./step-outcomes.ts";

/**
 * How often the step looks again while the work is rewritten: a cache read, and a run is Running
 * on at most the task's per-management-cluster limit of clusters at a time.
 */
const POLL_MS = 5_000;
/** A lost race on the cluster: look again as soon as the cache has the newer cluster. */
const RACE_RETRY_MS = 1_000;

/** What the step reads and changes of a cluster, given at construction (this folder imports no controller). */
export interface WorkTemplateRefresh {
  /** The template revision the cluster controller of this process builds. */
  revision(): number;
  /** Sets the allowed-revision annotation while the cluster is at `cluster`'s resourceVersion. */
  allow(cluster: HcpCluster, revision: number, signal: AbortSignal): Promise<"allowed" | "changed">;
}

/** WorkTemplateRefresh over the service cluster's client. */
export function workTemplateRefresh(deps: {
  client: Pick<KubeClient, "mergePatch">;
  /** Default: WORK_TEMPLATE_REVISION (the cluster controller's own, same binary). */
  revision?: () => number;
}): WorkTemplateRefresh {
  return {
    revision: deps.revision ?? (() => WORK_TEMPLATE_REVISION),
    async allow(cluster, revision, signal) {
      const patch = { metadata: { annotations: { [WORK_TEMPLATE_ALLOWED_ANNOTATION]: String(revision) } } };
      return (await patchClusterAsRead(deps.client, cluster, patch, signal)) === "written"
        ? "allowed"
        : "changed";
    },
  };
}

function allowedOf(cluster: HcpCluster): number {
  const raw = cluster.metadata.annotations?.[WORK_TEMPLATE_ALLOWED_ANNOTATION] ?? "";
  return /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}

/** The step's decision from the cluster as the cache has it; "allow" when the annotation is to be raised. */
export function refreshOutcome(cluster: HcpCluster, revision: number): StepOutcome | "allow" {
  const template = cluster.status?.workTemplate;
  if (template && template.workRevision >= revision)
    return {
      kind: "done",
      message: `${clusterName(cluster)}'s work is built from template revision ${template.workRevision}`,
    };
  if (allowedOf(cluster) < revision) return "allow";
  return {
    kind: "waiting",
    message: template
      ? `Waiting for ${clusterName(cluster)}'s work to be rewritten from template revision ${template.workRevision} to ${revision}`
      : `Waiting for ${clusterName(cluster)} to report its work's template revision`,
    requeueMs: POLL_MS,
  };
}

export function refreshWorkTemplate(ops: WorkTemplateRefresh): TaskDefinition {
  return {
    steps: [
      {
        name: "RewriteWork",
        async execute({ cluster, signal }) {
          const revision = ops.revision();
          const outcome = refreshOutcome(cluster, revision);
          if (outcome !== "allow") return outcome;
          if ((await ops.allow(cluster, revision, signal)) === "changed")
            return {
              kind: "waiting",
              message: `${clusterName(cluster)} changed meanwhile; looking again`,
              requeueMs: RACE_RETRY_MS,
            };
          return {
            kind: "waiting",
            message: `Allowed ${clusterName(cluster)}'s work to be rewritten from template revision ${revision}`,
            requeueMs: POLL_MS,
          };
        },
      },
    ],
  };
}
