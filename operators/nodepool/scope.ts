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
  /** How long a cluster on its way may go without moving before its untold pools say they wait (phases.ts untoldClusterWaitMs); default CLUSTER_STALL_MS. */
  clusterStallMs?: number;
  /** How long after it could start a new pool's first "on its way" status waits for news (phases.ts firstStatusHoldMs); default FIRST_STATUS_WINDOW_MS. */
  firstStatusWindowMs?: number;
}

/**
 * A new pool says nothing while its cluster is on its way to placement, however long that takes,
 * as long as the cluster moves: each of its steps changes a condition within seconds to a couple
 * of minutes (an Azure operation, the agent's report), even at 1,000 clusters where the whole
 * region is Ready in about 13 minutes. The cluster has no provisioning timeout of its own; one
 * none of whose conditions moved for 10 minutes is stuck without saying so, and a user who made a
 * pool should then see it wait on the pool itself.
 */
export const CLUSTER_STALL_MS = 600_000;

/**
 * How long, from when it could start (its creation, or its cluster's placement if later), a new
 * pool's first status waits for its nodes while it would only say "on its way": nodes that come
 * within it are told once (Ready); past it the wait is one a user should be told of.
 */
export const FIRST_STATUS_WINDOW_MS = 30_000;

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
