/**
 * Reading one cluster's objects from the service cluster: the HcpCluster, its NodePools and
 * ExternalAuths, the ManagementCluster it is placed on and the works labelled with it. Read once (describe), or kept
 * current by informers (describe --watch), both through `assemble`.
 */
import {
  ExternalAuthResource,
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  type ExternalAuth,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { CliError } from "./errors.ts";
import type { Connection } from "./kube.ts";
import type { ClusterSnapshot } from "./model.ts";

/** The works of a cluster by name, across namespaces; filtered to its uid by `assemble`. */
export function workSelector(name: string, namespace: string): string {
  return `${WORK_LABELS.clusterName}=${name},${WORK_LABELS.clusterNamespace}=${namespace}`;
}

const byName = <T extends { metadata: { name?: string } }>(a: T, b: T): number =>
  (a.metadata.name ?? "").localeCompare(b.metadata.name ?? "");

/** What was read about a cluster, before `assemble` keeps only what is the cluster's. */
export interface ReadObjects {
  cluster: HcpCluster;
  pools: readonly NodePool[];
  externalAuths: readonly ExternalAuth[];
  managementCluster: ManagementCluster | undefined;
  works: readonly ManifestWork[];
}

/** The snapshot from what was read; pools, auths and works of other clusters (or an older uid) left out. */
export function assemble(read: ReadObjects): ClusterSnapshot {
  const { cluster, managementCluster, works } = read;
  const uid = cluster.metadata.uid;
  const ofCluster = (o: { spec: { clusterRef: { name: string } } }): boolean =>
    o.spec.clusterRef.name === cluster.metadata.name;
  return {
    cluster,
    nodePools: read.pools.filter(ofCluster).sort(byName),
    externalAuths: read.externalAuths.filter(ofCluster).sort(byName),
    ...(managementCluster ? { managementCluster } : {}),
    works: works.filter((w) => !uid || w.metadata.labels?.[WORK_LABELS.clusterUid] === uid).sort(byName),
  };
}

export function notFound(name: string, namespace: string): CliError {
  return new CliError(`hcpcluster "${name}" not found in namespace "${namespace}"`);
}

export async function fetchSnapshot(
  conn: Connection,
  name: string,
  namespace: string,
): Promise<ClusterSnapshot> {
  const cluster = await conn.get<HcpCluster>(HcpClusterResource, name, namespace);
  if (!cluster) throw notFound(name, namespace);
  const placed = cluster.status?.managementCluster;
  const [pools, auths, mc, works] = await Promise.all([
    conn.list<NodePool>(NodePoolResource, { namespace }),
    conn.list<ExternalAuth>(ExternalAuthResource, { namespace }),
    placed ? conn.get<ManagementCluster>(ManagementClusterResource, placed) : Promise.resolve(undefined),
    conn.list<ManifestWork>(ManifestWorkResource, { labelSelector: workSelector(name, namespace) }),
  ]);
  return assemble({
    cluster,
    pools: pools.items,
    externalAuths: auths.items,
    managementCluster: mc,
    works: works.items,
  });
}
