/**
 * Reconciles one NodePool in the same fixed order as the cluster: get by key; deletion or the
 * finalizer first; the scope; the phases (phases.ts) through runPhases; one status write, with
 * `observedGeneration` moved only when every phase got through. Deletion removes the pool's work
 * and waits for the agent to confirm before the finalizer goes.
 */
import type { NodePool } from "../api/v1alpha1/index.ts";
import { NODE_POOL_FINALIZER, NodePoolResource } from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { requestLog } from "../hcp/requests.ts";
import { staleness } from "../hcp/staleness.ts";
import { failedSteps } from "../hcp/steps.ts";
import { deleteOwnedWorks, placedConsumer, type WorkRef } from "../hcp/work.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { recordTransitions, type TransitionPolicy } from "../runtime/events.ts";
import { phasesResult, runPhases, timed, type Phase } from "../runtime/phases.ts";
import { poolNames } from "./nodepool.ts";
import { POOL_PHASES } from "./phases.ts";
import { poolWork, type NodePoolReconcilerDeps, type PoolScope } from "./scope.ts";
import { composePoolStatus, POOL_CONDITIONS, POOL_STEPS } from "./status.ts";

/** The same rule as the cluster's: every condition's transitions but Progressing. */
export const POOL_EVENTS: TransitionPolicy = {
  negative: [POOL_CONDITIONS.Degraded],
  quiet: [POOL_CONDITIONS.Progressing],
  install: { ready: POOL_CONDITIONS.Ready, steps: POOL_STEPS },
};

/** The pool's work as it would be named had it been applied, where its cluster is placed. */
function expectedPoolWork(scope: PoolScope): WorkRef | undefined {
  const { deps, pool } = scope;
  const cluster = deps.clusters.get(pool.metadata.namespace ?? "", pool.spec.clusterRef.name);
  const namespace = placedConsumer(deps.managementClusters, cluster?.status?.managementCluster);
  if (!cluster || namespace === undefined) return undefined;
  return { name: poolNames(pool, clusterNames(cluster, deps.region)).workName, namespace };
}

/** The pool's work goes; maestro-server holds it until the agent confirms Deleted. */
export const deleteWork: Phase<PoolScope> = async ({ signal }, scope) => {
  const work = poolWork(scope);
  const namespace = await deleteOwnedWorks(
    scope.deps.writer,
    work ? [work] : [],
    expectedPoolWork(scope),
    signal,
  );
  if (namespace === undefined) return {};
  scope.facts.deleting = {
    reason: "DeletingNodePool",
    message: `Waiting for the agent of ${namespace} to confirm the NodePool is deleted`,
  };
  return {};
};

export const releaseFinalizer: Phase<PoolScope> = async ({ signal }, scope) => {
  if (scope.facts.deleting) return {};
  await scope.deps.writer.removeFinalizer(NodePoolResource, scope.pool, NODE_POOL_FINALIZER, { signal });
  return {};
};

export class NodePoolReconciler implements Reconciler {
  readonly #d: NodePoolReconcilerDeps;

  constructor(deps: NodePoolReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const pool = this.#d.pools.get(req.namespace, req.name);
    if (!pool?.metadata.uid) return {};
    const scope: PoolScope = { deps: this.#d, pool, log: requestLog(ctx, pool), facts: { pool, steps: {} } };
    if (pool.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, scope);
    if (await this.#d.writer.addFinalizer(NodePoolResource, pool, NODE_POOL_FINALIZER, ctx)) return {};
    const outcome = await runPhases(ctx, scope, POOL_PHASES);
    await timed(ctx, "writeStatus", () => this.#writeStatus(ctx, scope, outcome.errors.length === 0));
    return phasesResult(outcome);
  }

  async #reconcileDelete(ctx: ReconcileContext, scope: PoolScope): Promise<Result> {
    if (!scope.pool.metadata.finalizers?.includes(NODE_POOL_FINALIZER)) return {};
    const outcome = await runPhases(ctx, scope, [deleteWork, releaseFinalizer]);
    if (scope.facts.deleting) await this.#writeStatus(ctx, scope, outcome.errors.length === 0);
    return phasesResult(outcome);
  }

  async #writeStatus(ctx: ReconcileContext, scope: PoolScope, succeeded: boolean): Promise<void> {
    const { pool } = scope;
    const placed = scope.cluster?.status?.managementCluster;
    const mc = placed ? this.#d.managementClusters.get("", placed) : undefined;
    const status = composePoolStatus(scope.facts, { succeeded, stale: staleness(mc) });
    const written = await this.#d.writer.applyStatus<NodePool>(NodePoolResource, pool, status, ctx);
    if (!written) return;
    await recordTransitions(
      this.#d.events,
      pool,
      {
        before: pool.status?.conditions ?? [],
        after: status.conditions ?? [],
        failedSteps: failedSteps(scope.facts.steps),
        signal: ctx.signal,
      },
      POOL_EVENTS,
    );
  }
}
