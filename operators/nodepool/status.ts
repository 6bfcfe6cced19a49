/**
 * NodePool status from the facts the phases recorded: a condition per step (the cluster is ready
 * for pools, the version is valid, the work is applied, the nodes are ready), then one small
 * function per summary condition (Degraded, Ready, Progressing, Deleting), the phase and node
 * counts. Written once per reconcile through setCondition. While the management cluster's agent
 * is not Connected, a Ready that rests on its reports is Unknown (StatusStale, hcp/staleness.ts);
 * the phase stays what was last known.
 */
import { NODE_POOL_STEPS, type NodePool, type NodePoolStatus, type Phase } from "../api/v1alpha1/index.ts";
import type { PoolReport } from "../api/v1alpha1/feedback.ts";
import { staleReady, type Staleness } from "../hcp/staleness.ts";
import {
  degradedFromSteps,
  firstNotReady,
  firstUserFailure,
  heldBy,
  stepCondition,
  type Steps,
} from "../hcp/steps.ts";
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

/** The steps in the order they run; a step that is not True holds the ones after it. */
export const POOL_STEPS =
  NODE_POOL_STEPS satisfies readonly (typeof POOL_CONDITIONS)[keyof typeof POOL_CONDITIONS][];

export type PoolStep = (typeof POOL_STEPS)[number];

/** Steps whose state the management cluster's agent reports. */
const AGENT_STEPS: readonly PoolStep[] = [POOL_CONDITIONS.NodePoolApplied, POOL_CONDITIONS.NodesReady];

/** Whether Ready rests on what the agent reported (see the cluster's status.ts). */
function readyFromAgent(facts: PoolFacts): boolean {
  if (facts.deleting || firstUserFailure(POOL_STEPS, facts.steps)) return false;
  const blocker = firstNotReady(POOL_STEPS, facts.steps);
  return !blocker || AGENT_STEPS.includes(blocker.type);
}

export interface PoolFacts {
  pool: NodePool;
  steps: Steps<PoolStep>;
  report?: PoolReport;
  /** The version being rolled out to the nodes, when it differs from the one they run. */
  updatingTo?: string;
  deleting?: { reason: string; message: string };
}

/** Degraded: the first failure only the user can fix. */
export function degradedCondition(facts: PoolFacts): ConditionInput {
  return degradedFromSteps(POOL_CONDITIONS.Degraded, POOL_STEPS, facts.steps);
}

/** Ready: every step done; otherwise the step that holds it; never while deleting. */
export function readyCondition(facts: PoolFacts): ConditionInput {
  const type = POOL_CONDITIONS.Ready;
  if (facts.deleting) return { type, status: "False", reason: "Deleting", message: facts.deleting.message };
  const blocker = firstNotReady(POOL_STEPS, facts.steps);
  if (blocker) return heldBy(type, "False", blocker);
  return { type, status: "True", reason: "AsExpected", message: "The nodes are ready" };
}

/** Progressing: deletion; stopped while the user must act; an upgrade; the step under way; or nothing. */
export function progressingCondition(facts: PoolFacts, degraded: ConditionInput): ConditionInput {
  const type = POOL_CONDITIONS.Progressing;
  if (facts.deleting) return { type, status: "True", ...facts.deleting };
  if (degraded.status === "True")
    return { type, status: "False", reason: "UserActionRequired", message: degraded.message };
  if (facts.updatingTo)
    return {
      type,
      status: "True",
      reason: "Upgrading",
      message: `Upgrading the nodes to ${facts.updatingTo}`,
    };
  const blocker = firstNotReady(POOL_STEPS, facts.steps);
  if (blocker) return heldBy(type, "True", blocker);
  return { type, status: "False", reason: "AsExpected", message: "Nothing to roll out" };
}

/** Deleting: only while deletion runs (the condition appears with it). */
export function deletingCondition(facts: PoolFacts): ConditionInput | undefined {
  return facts.deleting ? { type: POOL_CONDITIONS.Deleting, status: "True", ...facts.deleting } : undefined;
}

export function phaseOf(facts: PoolFacts, conditions: Condition[]): Phase {
  if (facts.deleting) return "Deleting";
  if (getCondition(conditions, POOL_CONDITIONS.Degraded)?.status === "True") return "Degraded";
  if (facts.updatingTo) return "Updating";
  return getCondition(conditions, POOL_CONDITIONS.Ready)?.status === "True" ? "Ready" : "Provisioning";
}

function summary(facts: PoolFacts): ConditionInput[] {
  const degraded = degradedCondition(facts);
  const deleting = deletingCondition(facts);
  return [
    readyCondition(facts),
    progressingCondition(facts, degraded),
    degraded,
    ...(deleting ? [deleting] : []),
  ];
}

/** Node counts and version as HyperShift reported them, else as the status already said. */
function observedFields(facts: PoolFacts): Pick<NodePoolStatus, "replicas" | "readyReplicas" | "version"> {
  const previous = facts.pool.status ?? {};
  const report = facts.report ?? { conditions: [] };
  const ready = report.conditions.find((c) => c.type === "Ready")?.status === "True";
  const version = report.version ?? previous.version;
  const replicas = report.replicas ?? previous.replicas ?? 0;
  return { replicas, readyReplicas: ready ? (report.replicas ?? 0) : 0, ...(version ? { version } : {}) };
}

function withConditions(facts: PoolFacts): Condition[] {
  const stamp = { observedGeneration: facts.pool.metadata.generation };
  let conditions: Condition[] = facts.pool.status?.conditions ?? [];
  for (const type of POOL_STEPS) {
    const s = facts.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), stamp);
  }
  for (const c of summary(facts)) conditions = setCondition(conditions, c, stamp);
  return conditions;
}

/**
 * The whole status. `succeeded`: the reconcile got through without an error; only then does
 * `observedGeneration` move to this generation. `stale`: the management cluster's agent is not
 * Connected (hcp/staleness.ts).
 */
export function composePoolStatus(
  facts: PoolFacts,
  opts: { succeeded: boolean; stale?: Staleness },
): NodePoolStatus {
  const { pool } = facts;
  const observedGeneration = opts.succeeded ? pool.metadata.generation : pool.status?.observedGeneration;
  let conditions = withConditions(facts);
  const phase = phaseOf(facts, conditions);
  const ready = getCondition(conditions, POOL_CONDITIONS.Ready);
  if (opts.stale && ready && readyFromAgent(facts))
    conditions = setCondition(conditions, staleReady(ready, opts.stale), {
      observedGeneration: pool.metadata.generation,
    });
  return {
    conditions,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    phase,
    ...observedFields(facts),
  };
}
