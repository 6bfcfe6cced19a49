/**
 * The management cluster controller: keeps each ManagementCluster's status showing its load (the
 * HcpClusters placed on it) against its capacity, and whether placement may use it. Placement
 * itself is the cluster controller's; this one only reports.
 */
import {
  HcpClusterResource,
  ManagementClusterResource,
  type HcpCluster,
  type ManagementCluster,
  type ManagementClusterPhase,
  type ManagementClusterStatus,
} from "../api/v1alpha1/index.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../hcp/indexes.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { setCondition, type ConditionInput } from "../runtime/conditions.ts";
import {
  Controller,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from "../runtime/controller.ts";
import type { Informer, Lister } from "../runtime/informer.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { enqueueForObject, enqueueMapped } from "../runtime/source.ts";

export const MANAGEMENT_CLUSTER_CONTROLLER = "managementcluster-controller";

export function managementClusterStatus(mc: ManagementCluster, placed: number): ManagementClusterStatus {
  const max = mc.spec.capacity.maxHostedClusters;
  const phase: ManagementClusterPhase =
    mc.spec.schedulable === false ? "Unschedulable" : placed >= max ? "Full" : "Ready";
  const schedulable: ConditionInput =
    phase === "Ready"
      ? {
          type: "Schedulable",
          status: "True",
          reason: "HasCapacity",
          message: `${placed} of ${max} hosted clusters placed`,
        }
      : phase === "Full"
        ? {
            type: "Schedulable",
            status: "False",
            reason: "Full",
            message: `${placed} of ${max} hosted clusters placed: no room`,
          }
        : { type: "Schedulable", status: "False", reason: "Cordoned", message: "spec.schedulable is false" };
  return {
    conditions: setCondition(mc.status?.conditions, schedulable, {
      observedGeneration: mc.metadata.generation,
    }),
    observedGeneration: mc.metadata.generation,
    hostedClusters: placed,
    phase,
  };
}

export interface LoadReconcilerDeps {
  managementClusters: Lister<ManagementCluster>;
  /** Indexed by MANAGEMENT_CLUSTER_INDEX. */
  clusters: Lister<HcpCluster>;
  applier: StatusWriter;
}

/** The one write this controller makes: a ManagementCluster's status. */
export type StatusWriter = Pick<Applier, "applyStatus">;

export class LoadReconciler implements Reconciler {
  readonly #d: LoadReconcilerDeps;

  constructor(deps: LoadReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(_ctx: ReconcileContext, req: Request): Promise<Result> {
    const mc = this.#d.managementClusters.get("", req.name);
    if (!mc) return {};
    const placed = this.#d.clusters.byIndex(MANAGEMENT_CLUSTER_INDEX, req.name).length;
    await this.#d.applier.applyStatus(ManagementClusterResource, mc, managementClusterStatus(mc, placed));
    return {};
  }
}

export class ManagementClusterController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #mcs: Informer<ManagementCluster>;
  readonly #clusters: Informer<HcpCluster>;

  constructor(opts: { cluster: Cluster; log?: Logger }) {
    const { cluster } = opts;
    this.#mcs = cluster.informer<ManagementCluster>(ManagementClusterResource);
    this.#clusters = cluster.informer<HcpCluster>(HcpClusterResource, {
      indexers: { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster },
    });
    this.#controller = new Controller({
      name: MANAGEMENT_CLUSTER_CONTROLLER,
      log: (opts.log ?? silentLogger).child({ component: MANAGEMENT_CLUSTER_CONTROLLER }),
      reconciler: new LoadReconciler({
        managementClusters: this.#mcs,
        clusters: this.#clusters,
        applier: new Applier(cluster.client, MANAGEMENT_CLUSTER_CONTROLLER),
      }),
    });
    enqueueForObject(this.#mcs, this.#controller);
    // Only a placement changes a load: the many other cluster status changes wake nothing here.
    enqueueMapped(
      this.#clusters,
      this.#controller,
      (c) =>
        c.status?.managementCluster
          ? [{ cluster: cluster.name, namespace: "", name: c.status.managementCluster }]
          : [],
      (before, after) => before.status?.managementCluster !== after.status?.managementCluster,
    );
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all([this.#mcs.waitForSync(signal), this.#clusters.waitForSync(signal)]);
    await this.#controller.start(signal);
  }
}
