/**
 * The node pool controller: NodePools of the service cluster, each carried by a ManifestWork of
 * its own to the management cluster its HcpCluster is placed on. Wiring only; see reconcile.ts.
 */
import {
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, summariseWorkSpec, type ManifestWorkObject } from "../api/work/v1.ts";
import type { RegionSettings } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { staleness } from "../hcp/staleness.ts";
import { workChangeWakesSender } from "../hcp/work.ts";
import { CATALOG_CONFIGMAP, catalogSource } from "../releases/catalog.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { Controller, type Request } from "../runtime/controller.ts";
import { EventRecorder } from "../runtime/events.ts";
import type { Informer } from "../runtime/informer.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { enqueueForObject, enqueueMapped } from "../runtime/source.ts";
import { isDeepStrictEqual } from "node:util";
import { NodePoolReconciler } from "./reconcile.ts";
import { NODE_POOL_UID_INDEX } from "./scope.ts";

export const NODE_POOL_CONTROLLER = "nodepool-controller";

/** The conditions of its cluster a pool quotes or waits on (phases.ts findCluster). */
const CLUSTER_CONDITIONS_POOLS_READ = new Set(["Ready", "Degraded", "HostedClusterApplied"]);

/**
 * What of an HcpCluster its node pools read: a cluster status change elsewhere (a DNS record's
 * condition, the console URL) wakes none of them. Spec changes show in the generation.
 */
export function clusterAsPoolsSeeIt(c: HcpCluster): unknown {
  const { generation, deletionTimestamp } = c.metadata;
  const conditions = (c.status?.conditions ?? [])
    .filter((x) => CLUSTER_CONDITIONS_POOLS_READ.has(x.type))
    .map(({ type, status, reason, message }) => [type, status, reason, message]);
  return [generation, deletionTimestamp, c.status?.managementCluster, c.status?.version, conditions];
}

/** One function, not a closure per controller: the shared informer refuses a second function under the same index name. */
const byNodePoolUid = (w: ManifestWorkObject): string[] => {
  const uid = w.metadata.labels?.[WORK_LABELS.nodePool];
  return uid ? [uid] : [];
};

export interface NodePoolControllerOptions {
  cluster: Cluster;
  /** The operators' namespace: where the release catalog ConfigMap lives. */
  namespace: string;
  region: RegionSettings;
  /** Default 8: a reconcile waits on the apiserver, and every cluster status change wakes its pools. */
  workers?: number;
  log?: Logger;
}

export class NodePoolController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #informers: Informer<KubeObject>[];

  constructor(opts: NodePoolControllerOptions) {
    const log = (opts.log ?? silentLogger).child({ component: NODE_POOL_CONTROLLER });
    const { cluster } = opts;
    const pools = cluster.informer<NodePool>(NodePoolResource);
    const clusters = cluster.informer<HcpCluster>(HcpClusterResource);
    const managementClusters = cluster.informer<ManagementCluster>(ManagementClusterResource);
    // The process's one ManifestWork informer, shared with the cluster controller and maestro-server.
    const works = cluster.informer(ManifestWorkResource, {
      transform: summariseWorkSpec,
      indexers: { [NODE_POOL_UID_INDEX]: byNodePoolUid },
    });
    const catalog = catalogSource(cluster, opts.namespace);
    const client = cluster.client;
    this.#controller = new Controller({
      name: NODE_POOL_CONTROLLER,
      maxConcurrentReconciles: opts.workers ?? 8,
      log,
      reconciler: new NodePoolReconciler({
        pools,
        clusters,
        managementClusters,
        works,
        releases: () => catalog.current(),
        region: opts.region,
        writer: new Applier(client, NODE_POOL_CONTROLLER),
        events: new EventRecorder(client, NODE_POOL_CONTROLLER, log),
      }),
    });
    const toReq = (p: NodePool): Request => ({
      cluster: cluster.name,
      namespace: p.metadata.namespace ?? "",
      name: p.metadata.name ?? "",
    });
    const poolsOf = (namespace: string | undefined, clusterName: string | undefined) =>
      pools
        .list(namespace)
        .filter((p) => p.spec.clusterRef.name === clusterName)
        .map(toReq);
    enqueueForObject(pools, this.#controller);
    enqueueMapped(
      clusters,
      this.#controller,
      (c) => poolsOf(c.metadata.namespace, c.metadata.name),
      (before, after) => !isDeepStrictEqual(clusterAsPoolsSeeIt(before), clusterAsPoolsSeeIt(after)),
    );
    enqueueMapped(
      works,
      this.#controller,
      (w) => {
        const labels = w.metadata.labels ?? {};
        const uid = labels[WORK_LABELS.nodePool];
        const namespace = labels[WORK_LABELS.clusterNamespace];
        if (!uid || !namespace) return [];
        return pools
          .list(namespace)
          .filter((p) => p.metadata.uid === uid)
          .map(toReq);
      },
      workChangeWakesSender,
    );
    // A management cluster's agent lost or back: the pools of the clusters placed there show it.
    const poolsOn = (mc: ManagementCluster): Request[] => {
      const placed = new Set(
        clusters
          .list()
          .filter((c) => c.status?.managementCluster === mc.metadata.name)
          .map((c) => `${c.metadata.namespace ?? ""}/${c.metadata.name ?? ""}`),
      );
      if (placed.size === 0) return [];
      return pools
        .list()
        .filter((p) => placed.has(`${p.metadata.namespace ?? ""}/${p.spec.clusterRef.name}`))
        .map(toReq);
    };
    enqueueMapped(
      managementClusters,
      this.#controller,
      poolsOn,
      (before, after) => !isDeepStrictEqual(staleness(before), staleness(after)),
    );
    enqueueMapped(catalog.informer, this.#controller, (cm) =>
      cm.metadata.name === CATALOG_CONFIGMAP ? pools.list().map(toReq) : [],
    );
    this.#informers = [
      pools,
      clusters,
      managementClusters,
      works,
      catalog.informer,
    ] as Informer<KubeObject>[];
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.waitForSync(signal)));
    await this.#controller.start(signal);
  }
}
