/**
 * Reconciles one NodePool through the runtime's skeleton (runtime/reconciler.ts): the phases of
 * phases.ts, one status write (status.ts). Deletion removes the pool's work and waits for the
 * agent to confirm before the finalizer goes. A new pool whose cluster is on its way to placement
 * is looked at again instead, for as long as the cluster moves (phases.ts untoldClusterWaitMs), and
 * its first status, while it only says the pool is on its way, waits for news within a window
 * from the cluster's placement (firstStatusHoldMs): a pool created with its cluster is told at
 * most twice at create (Ready, or "on its way" then Ready), however long the cluster takes.
 */
import { NODE_POOL_FINALIZER, NodePoolResource, type NodePool } from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { requestLog } from "../hcp/requests.ts";
import { staleness } from "../hcp/staleness.ts";
import { failedSteps } from "../hcp/steps.ts";
import { deleteOwnedWorks, placedConsumer, type WorkRef } from "../hcp/work.ts";
import type { ReconcileContext, Request, Result } from "../runtime/controller.ts";
import type { TransitionPolicy } from "../runtime/events.ts";
import type { Phase } from "../runtime/phases.ts";
import { PhasedReconciler } from "../runtime/reconciler.ts";
import { poolNames } from "./nodepool.ts";
import { firstStatusHoldMs, POOL_PHASES, untoldClusterWaitMs } from "./phases.ts";
import { replaceRestoredPoolWork } from "./restored-work.ts";
import {
  CLUSTER_STALL_MS,
  FIRST_STATUS_WINDOW_MS,
  poolWork,
  type NodePoolReconcilerDeps,
  type PoolScope,
} from "./scope.ts";
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
  if (scope.facts.deleting) return {};
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

export class NodePoolReconciler extends PhasedReconciler<NodePool, PoolScope> {
  readonly #deps: NodePoolReconcilerDeps;
  readonly #now: () => number;

  constructor(deps: NodePoolReconcilerDeps, now: () => number = Date.now) {
    super({
      resource: NodePoolResource,
      finalizer: NODE_POOL_FINALIZER,
      get: (namespace, name) => deps.pools.get(namespace, name),
      writer: deps.writer,
      scope: (ctx, pool) => ({ deps, pool, log: requestLog(ctx, pool), facts: { pool, steps: {} } }),
      phases: () => POOL_PHASES,
      deletion: {
        phases: [replaceRestoredPoolWork(POOL_PHASES), deleteWork],
        waiting: (scope) => Boolean(scope.facts.deleting),
        reportsWaiting: true,
      },
      status: {
        compose: (scope, succeeded) => {
          const placed = scope.cluster?.status?.managementCluster;
          const mc = placed ? deps.managementClusters.get("", placed) : undefined;
          return composePoolStatus(scope.facts, { succeeded, stale: staleness(mc) });
        },
        events: {
          recorder: deps.events,
          policy: POOL_EVENTS,
          failedSteps: (scope) => failedSteps(scope.facts.steps),
        },
        holdFirst: (scope, next) =>
          firstStatusHoldMs(scope.pool, scope.cluster, next, {
            now: now(),
            windowMs: deps.firstStatusWindowMs ?? FIRST_STATUS_WINDOW_MS,
          }),
      },
    });
    this.#deps = deps;
    this.#now = now;
  }

  /** A new pool whose cluster is on its way to placement says nothing yet (phases.ts untoldClusterWaitMs). */
  override async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const deps = this.#deps;
    const pool = deps.pools.get(req.namespace, req.name);
    const stallMs = deps.clusterStallMs ?? CLUSTER_STALL_MS;
    const untold = pool && untoldClusterWaitMs(pool, deps, this.#now(), stallMs);
    if (untold) return { requeueAfterMs: untold };
    return super.reconcile(ctx, req);
  }
}
