/**
 * Reconciles one NodePool: its finalizer, then one status write (nodepool-status.ts) that moves
 * replicas and version towards the spec once its HostedCluster is Available. Deletion waits
 * `deleteDelayMs` (the machines draining) and releases the finalizer.
 */
import {
  HYPERSHIFT_FINALIZER,
  NODE_POOL_KIND,
  NodePoolResource,
  type HostedCluster,
  type NodePool,
  type NodePoolStatus,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import type { Applier } from "../../operators/runtime/apply.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../../operators/runtime/controller.ts";
import type { EventRecorder } from "../../operators/runtime/events.ts";
import { isNotFound } from "../../operators/runtime/errors.ts";
import type { Informer } from "../../operators/runtime/informer.ts";
import { nodePoolTransitions, type Transition } from "./events.ts";
import type { SimulatorMetrics } from "./metrics.ts";
import { computeNodePoolStatus } from "./nodepool-status.ts";
import { failureOf } from "./release.ts";

export interface NodePoolReconcilerDeps {
  cluster: string;
  hostedClusters: Informer<HostedCluster>;
  nodePools: Informer<NodePool>;
  applier: Applier;
  events: EventRecorder;
  metrics: SimulatorMetrics;
  provisionDelayMs: number;
  deleteDelayMs: number;
}

export class NodePoolReconciler implements Reconciler {
  readonly #d: NodePoolReconcilerDeps;

  constructor(deps: NodePoolReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    try {
      return await this.#reconcile(ctx, req);
    } catch (err) {
      // Deleted under us (the cache lags behind a finalizer we just released): nothing left to do.
      if (isNotFound(err)) return {};
      throw err;
    }
  }

  async #reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const np = this.#d.nodePools.get(req.namespace, req.name);
    if (!np) return {};
    if (np.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, np);
    if (await this.#d.applier.addFinalizer(NodePoolResource, np, HYPERSHIFT_FINALIZER)) return {};
    const outcome = computeNodePoolStatus(np, {
      now: new Date(),
      provisionDelayMs: this.#d.provisionDelayMs,
      hostedCluster: this.#d.hostedClusters.get(req.namespace, np.spec.clusterName),
      failure: failureOf(np.metadata.annotations),
    });
    await this.#writeStatus(np, outcome.status);
    // Without a due time we wait for a watch: the NodePool's spec, or its HostedCluster's status.
    return outcome.requeueAfterMs === undefined ? {} : { requeueAfterMs: outcome.requeueAfterMs };
  }

  async #writeStatus(np: NodePool, status: NodePoolStatus): Promise<void> {
    const written = await this.#d.applier.applyStatus(NodePoolResource, np, status);
    if (!written) return;
    await this.#record(np, nodePoolTransitions(np.status ?? {}, status));
  }

  async #record(np: NodePool, transitions: Transition[]): Promise<void> {
    for (const t of transitions) {
      this.#d.metrics.transitions.inc({ cluster: this.#d.cluster, kind: NODE_POOL_KIND, reason: t.reason });
      await this.#d.events.event(np, t.type, t.reason, t.message);
    }
  }

  async #reconcileDelete(ctx: ReconcileContext, np: NodePool): Promise<Result> {
    if (!np.metadata.finalizers?.includes(HYPERSHIFT_FINALIZER)) return {};
    const remainingMs = Date.parse(np.metadata.deletionTimestamp ?? "") + this.#d.deleteDelayMs - Date.now();
    if (remainingMs > 0) return { requeueAfterMs: remainingMs };
    ctx.log.info("Releasing the NodePool: its machines are gone");
    await this.#record(np, [
      { type: "Normal", reason: "Deleted", message: "The NodePool's machines are gone" },
    ]);
    await this.#d.applier.removeFinalizer(NodePoolResource, np, HYPERSHIFT_FINALIZER);
    this.#d.metrics.deletions.inc({ cluster: this.#d.cluster, kind: NODE_POOL_KIND });
    return {};
  }
}
