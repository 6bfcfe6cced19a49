/**
 * A cluster's version through ARM, on the update graph (releases/plan.ts): a new cluster's must be
 * offered and not past its end of life; a changed one must be reachable from the release the
 * cluster runs, without leaving a node pool too far behind. Refused in the plan's own words, the
 * reason the cluster controller would hold it with (ValidVersion), as a 400 on
 * properties.version.id.
 */
import type { HcpCluster, NodePool, VersionSpec } from "../../api/v1alpha1/index.ts";
import type { ReleaseCatalog } from "../../releases/catalog.ts";
import { planVersion, type Hold, type PoolInput } from "../../releases/plan.ts";
import { ARM_ANNOTATIONS } from "../../api/v1alpha1/index.ts";

/**
 * The release the cluster is on or going to: what HyperShift reports it runs, else what the
 * controller asked for, else what its stored version resolves to (a cluster not reconciled yet).
 */
function currentRelease(catalog: ReleaseCatalog, cluster: HcpCluster): string | undefined {
  const { status } = cluster;
  if (status?.version) return status.version;
  if (status?.desiredVersion) return status.desiredVersion;
  const resolved = catalog.resolve(cluster.spec.version);
  return resolved.ok ? resolved.release.version : undefined;
}

/** A node pool as ARM names it (its resource ID's last segment), and the version it names. */
function poolInput(pool: NodePool): PoolInput {
  const name =
    pool.metadata.annotations?.[ARM_ANNOTATIONS.resourceId]?.split("/").pop() ?? pool.metadata.name ?? "";
  return { name, ...(pool.spec.version ? { version: pool.spec.version.id } : {}) };
}

/**
 * Why the cluster may not have `version`, or undefined when it may: `existing` is the cluster as
 * stored (undefined for a create), `pools` its node pools.
 */
export function clusterVersionHold(input: {
  catalog: ReleaseCatalog;
  version: VersionSpec;
  existing?: HcpCluster;
  pools?: readonly NodePool[];
  now: number;
}): Hold | undefined {
  const { catalog, existing } = input;
  const upgradePolicy = existing?.spec.version.upgradePolicy;
  const plan = planVersion({
    catalog,
    version: { ...input.version, ...(upgradePolicy ? { upgradePolicy } : {}) },
    running: existing ? currentRelease(catalog, existing) : undefined,
    pools: (input.pools ?? []).filter((p) => !p.metadata.deletionTimestamp).map(poolInput),
    now: input.now,
  });
  return plan.holds[0];
}
