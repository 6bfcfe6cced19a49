/**
 * A restored pool's work written again before it is deleted, and its steps kept while the agent has
 * not yet answered for that work (operators/hcp/restored-work.ts).
 */
import { awaitsRestoredWork, NodePoolResource } from "../api/v1alpha1/index.ts";
import type { ManifestWorkObject } from "../api/work/v1.ts";
import { confirmRestoredWork, replaceRestoredWork, type RestoredWorkOptions } from "../hcp/restored-work.ts";
import { stepsFromConditions, workStep } from "../hcp/steps.ts";
import type { Phase } from "../runtime/phases.ts";
import { poolWork, type PoolScope } from "./scope.ts";
import { POOL_CONDITIONS } from "./status.ts";

const RESTORED_WORK: RestoredWorkOptions<PoolScope> = {
  resource: NodePoolResource,
  object: (scope) => scope.pool,
  writer: (scope) => scope.deps.writer,
  placedOn: ({ deps, pool }) =>
    deps.clusters.get(pool.metadata.namespace ?? "", pool.spec.clusterRef.name)?.status?.managementCluster ||
    undefined,
  // The work's own status, not the steps, which keepRestoredPoolSteps may have kept from the backup.
  applied: (scope) => {
    const work = scope.appliedWork ?? poolWork(scope);
    return work !== undefined && workStep(work).state === "ready";
  },
  hold: (scope, reason, message) => {
    scope.facts.deleting = { reason, message };
  },
};

export const confirmRestoredPoolWork = confirmRestoredWork(RESTORED_WORK);

/** The first deletion phase; `phases` are the ordinary ones, which write the work. */
export function replaceRestoredPoolWork(phases: readonly Phase<PoolScope>[]): Phase<PoolScope> {
  return replaceRestoredWork(RESTORED_WORK, phases);
}

const AGENT_STEPS = [POOL_CONDITIONS.NodePoolApplied, POOL_CONDITIONS.NodesReady] as const;

/**
 * Until the agent answers for a restored pool's new work, the steps its reports decide stay as the
 * backup recorded them: the nodes did not go anywhere.
 */
export function keepRestoredPoolSteps(scope: PoolScope, work: ManifestWorkObject): boolean {
  if (!awaitsRestoredWork(scope.pool)) return false;
  if (work.status?.conditions?.some((c) => c.type === "Applied")) return false;
  const kept = stepsFromConditions(AGENT_STEPS, scope.pool.status?.conditions ?? []);
  if (kept[POOL_CONDITIONS.NodePoolApplied]?.state !== "ready") return false;
  Object.assign(scope.facts.steps, kept);
  return true;
}
