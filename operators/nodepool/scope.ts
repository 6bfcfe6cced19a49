/**
 * What one NodePool reconcile works with: the dependencies and the scope the phases fill in. Each
 * field says which phase sets it; status.ts reads only `facts`.
 */
import type { HcpCluster, ManagementCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { CachedManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import type { ClusterNames, RegionSettings } from "../api/v1alpha1/clusternames.ts";
import type { Release, ReleaseCatalog } from "../releases/catalog.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import type { Logger } from "../runtime/logger.ts";
import type { PoolFacts } from "./status.ts";

export const NODE_POOL_UID_INDEX = "nodepool-uid";

export interface NodePoolReconcilerDeps {
  pools: Lister<NodePool>;
  clusters: Lister<HcpCluster>;
  managementClusters: Lister<ManagementCluster>;
  /** Node pool works, indexed by NODE_POOL_UID_INDEX. */
  works: Lister<CachedManifestWork>;
  releases: () => ReleaseCatalog;
  region: RegionSettings;
  writer: ObjectWriter;
  events: Pick<EventRecorder, "record">;
  /** How long a new pool keeps quiet while its cluster is on its way (phases.ts untoldClusterWaitMs); default CLUSTER_WAIT_UNTOLD_MS. */
  clusterWaitUntoldMs?: number;
}

/**
 * A pool created with its cluster usually sees it placed within seconds; past this the wait is
 * one a user should be told of, and its status says so.
 */
export const CLUSTER_WAIT_UNTOLD_MS = 30_000;

export interface PoolScope {
  deps: NodePoolReconcilerDeps;
  pool: NodePool;
  log: Logger;
  facts: PoolFacts;
  /** Set by findCluster. */
  cluster?: HcpCluster;
  /** Set by findCluster. */
  names?: ClusterNames;
  /** Set by findCluster: the consumer of the ManagementCluster the cluster is placed on. */
  consumer?: string;
  /** Set by resolveRelease. */
  release?: Release;
  /** Set by applyWork when it wrote the work in this reconcile (the informer lags behind). */
  appliedWork?: ManifestWorkObject;
}

/** The pool's own work. */
export function poolWork(scope: PoolScope): ManifestWorkObject | undefined {
  return scope.deps.works.byIndex(NODE_POOL_UID_INDEX, scope.pool.metadata.uid ?? "")[0];
}
