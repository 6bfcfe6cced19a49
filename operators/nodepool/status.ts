/**
 * NodePool status from the facts the phases recorded: a condition per step (the cluster is ready
 * for pools, the version is valid, the work is applied, the nodes are ready), the summary
 * conditions and node counts. Written once per reconcile through setCondition.
 */
import type { NodePool, NodePoolStatus, Phase } from "../api/v1alpha1/index.ts";
import type { StepState } from "../cluster/status.ts";
import { getCondition, setCondition, type Condition, type ConditionInput } from "../runtime/conditions.ts";

export const POOL_CONDITIONS = {
  Ready: "Ready",
  Progressing: "Progressing",
  Degraded: "Degraded",
  ClusterReady: "ClusterReady",
  ValidVersion: "ValidVersion",
  NodePoolApplied: "NodePoolApplied",
  NodesReady: "NodesReady",
  Deleting: "Deleting",
} as const;

export const POOL_STEPS = [
  POOL_CONDITIONS.ClusterReady,
  POOL_CONDITIONS.ValidVersion,
  POOL_CONDITIONS.NodePoolApplied,
  POOL_CONDITIONS.NodesReady,
] as const;

export type PoolStep = (typeof POOL_STEPS)[number];

/** What HyperShift's NodePool reported through feedback. */
export interface PoolReport {
  replicas?: number;
  version?: string;
  conditions: Array<{ type: string; status: string; reason?: string; message?: string }>;
}

export interface PoolFacts {
  pool: NodePool;
  steps: Partial<Record<PoolStep, StepState>>;
  report?: PoolReport;
  /** The version being rolled out to the nodes, when it differs from the one they run. */
  updatingTo?: string;
  deleting?: { reason: string; message: string };
}

function stepCondition(type: PoolStep, s: StepState): ConditionInput {
  return s.state === "ready"
    ? { type, status: "True", reason: s.reason ?? "AsExpected", message: s.message }
    : { type, status: "False", reason: s.reason, message: s.message };
}

function summary(facts: PoolFacts): ConditionInput[] {
  const failed = POOL_STEPS.map((t) => [t, facts.steps[t]] as const).find(
    ([, s]) => s?.state === "failed" && s.userActionRequired,
  );
  const blocker = POOL_STEPS.map((t) => [t, facts.steps[t]] as const).find(([, s]) => s?.state !== "ready");
  const degraded: ConditionInput = failed
    ? {
        type: POOL_CONDITIONS.Degraded,
        status: "True",
        reason: failed[1]!.reason ?? "",
        message: `${failed[0]}: ${failed[1]!.message}`,
      }
    : { type: POOL_CONDITIONS.Degraded, status: "False", reason: "AsExpected", message: "No problem found" };
  if (facts.deleting)
    return [
      { type: POOL_CONDITIONS.Ready, status: "False", reason: "Deleting", message: facts.deleting.message },
      { type: POOL_CONDITIONS.Progressing, status: "True", ...facts.deleting },
      degraded,
      { type: POOL_CONDITIONS.Deleting, status: "True", ...facts.deleting },
    ];
  const why = blocker ? `${blocker[0]}: ${blocker[1]?.message ?? "not started"}` : "";
  const ready: ConditionInput = blocker
    ? { type: POOL_CONDITIONS.Ready, status: "False", reason: blocker[1]?.reason ?? "Pending", message: why }
    : { type: POOL_CONDITIONS.Ready, status: "True", reason: "AsExpected", message: "The nodes are ready" };
  const progressing: ConditionInput = failed
    ? {
        type: POOL_CONDITIONS.Progressing,
        status: "False",
        reason: "UserActionRequired",
        message: degraded.message,
      }
    : facts.updatingTo
      ? {
          type: POOL_CONDITIONS.Progressing,
          status: "True",
          reason: "Upgrading",
          message: `Upgrading the nodes to ${facts.updatingTo}`,
        }
      : blocker
        ? {
            type: POOL_CONDITIONS.Progressing,
            status: "True",
            reason: blocker[1]?.reason ?? "Pending",
            message: why,
          }
        : {
            type: POOL_CONDITIONS.Progressing,
            status: "False",
            reason: "AsExpected",
            message: "Nothing to roll out",
          };
  return [ready, progressing, degraded];
}

function phaseOf(facts: PoolFacts, conditions: Condition[]): Phase {
  if (facts.deleting) return "Deleting";
  if (getCondition(conditions, POOL_CONDITIONS.Degraded)?.status === "True") return "Degraded";
  if (facts.updatingTo) return "Updating";
  return getCondition(conditions, POOL_CONDITIONS.Ready)?.status === "True" ? "Ready" : "Provisioning";
}

export function composePoolStatus(facts: PoolFacts): NodePoolStatus {
  const { pool, report } = facts;
  const opts = { observedGeneration: pool.metadata.generation };
  let conditions: Condition[] = pool.status?.conditions ?? [];
  for (const type of POOL_STEPS) {
    const s = facts.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), opts);
  }
  for (const c of summary(facts)) conditions = setCondition(conditions, c, opts);
  const ready = report?.conditions.find((c) => c.type === "Ready")?.status === "True";
  const version = report?.version ?? pool.status?.version;
  return {
    conditions,
    observedGeneration: pool.metadata.generation,
    phase: phaseOf(facts, conditions),
    replicas: report?.replicas ?? pool.status?.replicas ?? 0,
    readyReplicas: ready ? (report?.replicas ?? 0) : 0,
    ...(version ? { version } : {}),
  };
}
