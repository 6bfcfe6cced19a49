/**
 * Soft delete (docs/operations.md "Soft delete and undelete"): with a retention, a deleted cluster's
 * node pools, external auths and works go as always (ARM sees it deleted, its control plane leaves
 * the management cluster), but its Azure resources, OIDC issuer and signing keyring stay until the
 * purge (operators/softdelete) removes them after the retention. What it was is recorded
 * (api/v1alpha1/deleted-cluster.ts) before anything of it is deleted (its node pools' specs are
 * gone after), and completed with deletedAt and purgeAfter just before the finalizer goes: a crash
 * at any point finds the record and goes on.
 */
import {
  ORIGINAL_UID_ANNOTATION,
  REQUEST_ID_ANNOTATIONS,
  originalUid,
  type HcpCluster,
} from "../api/v1alpha1/index.ts";
import { clusterNames, type RegionSettings } from "../api/v1alpha1/clusternames.ts";
import type {
  DeletedClusterRecord,
  PurgeStep,
  RecordedObject,
  RetainedResources,
} from "../api/v1alpha1/deleted-cluster.ts";
import type { ObjectMeta } from "../api/meta/v1.ts";
import type { Phase } from "../runtime/phases.ts";
import type { ClusterInfrastructure } from "./infrastructure.ts";
import { issuerPath, type ClusterOidc } from "./oidc.ts";
import { externalAuthsOf, infraSpecOf, type ClusterScope } from "./scope.ts";

/** Whether this deletion keeps the Azure resources, the issuer and the keyring for an undelete. */
export function keptForUndelete(scope: ClusterScope): boolean {
  return (scope.deps.softDelete?.retentionMs ?? 0) > 0;
}

/** Annotations that describe a request or an object's past, not what it is: not recorded. */
const NOT_RECORDED: ReadonlySet<string> = new Set([
  ORIGINAL_UID_ANNOTATION,
  "kubectl.kubernetes.io/last-applied-configuration",
  ...REQUEST_ID_ANNOTATIONS,
]);

function recorded<S>(obj: { metadata: ObjectMeta; spec: S }): RecordedObject<S> {
  const annotations = Object.fromEntries(
    Object.entries(obj.metadata.annotations ?? {}).filter(([k]) => !NOT_RECORDED.has(k)),
  );
  return {
    name: obj.metadata.name ?? "",
    ...(obj.metadata.labels && Object.keys(obj.metadata.labels).length > 0
      ? { labels: obj.metadata.labels }
      : {}),
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    spec: obj.spec,
  };
}

/** The cluster as it is now, its node pools and external auths not already going. */
function recordOf(scope: ClusterScope): DeletedClusterRecord {
  const { cluster, deps } = scope;
  const live = (o: { metadata: ObjectMeta }) => !o.metadata.deletionTimestamp;
  const pools = deps.nodePools
    .list(cluster.metadata.namespace)
    .filter((p) => p.spec.clusterRef.name === cluster.metadata.name && live(p));
  const lastBackup = cluster.status?.backup?.recent?.[0];
  const managementCluster = cluster.status?.managementCluster;
  return {
    clusterID: originalUid(cluster),
    uid: cluster.metadata.uid ?? "",
    namespace: cluster.metadata.namespace ?? "",
    cluster: recorded(cluster),
    nodePools: pools.map(recorded),
    externalAuths: externalAuthsOf(scope).filter(live).map(recorded),
    ...(lastBackup ? { lastBackup } : {}),
    ...(managementCluster ? { managementCluster } : {}),
  };
}

/**
 * First of the deletion: what the cluster is, before its node pools go. A record this deletion
 * wrote is kept (the pools it names may be gone by now); one left of an earlier object under the
 * same ID (an undeleted cluster deleted again) is replaced.
 */
export const recordDeletion: Phase<ClusterScope> = async ({ signal }, scope) => {
  const records = scope.deps.softDelete?.records;
  if (!records || !keptForUndelete(scope)) return {};
  const existing = await records.find(originalUid(scope.cluster), { signal });
  if (existing?.uid === scope.cluster.metadata.uid) return {};
  await records.write(recordOf(scope), { signal });
  return {};
};

/**
 * Last of the deletion, once nothing waits: the record says when the cluster went and when what
 * was kept goes. Written once; a reconcile after a crash before the finalizer went finds it done.
 */
export const completeDeletionRecord: Phase<ClusterScope> = async ({ signal }, scope) => {
  const soft = scope.deps.softDelete;
  if (scope.facts.deleting || !soft || !keptForUndelete(scope)) return {};
  const { cluster } = scope;
  const existing = await soft.records.find(originalUid(cluster), { signal });
  const record = existing !== undefined && existing.uid === cluster.metadata.uid ? existing : recordOf(scope);
  if (record.deletedAt !== undefined) return {};
  const lastBackup = record.lastBackup ?? cluster.status?.backup?.recent?.[0];
  await soft.records.write(
    {
      ...record,
      ...(lastBackup ? { lastBackup } : {}),
      deletedAt: new Date(scope.now).toISOString(),
      purgeAfter: new Date(scope.now + soft.retentionMs).toISOString(),
    },
    { signal },
  );
  scope.log.info("Soft-deleted: Azure resources, OIDC issuer and signing keys kept for an undelete", {
    clusterID: record.clusterID,
    retentionSeconds: soft.retentionMs / 1000,
  });
  return {};
};

/** The deleted cluster as its names and Azure resources know it: its ID as its uid. */
export function clusterOfRecord(record: DeletedClusterRecord): HcpCluster {
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "HcpCluster",
    metadata: {
      name: record.cluster.name,
      namespace: record.namespace,
      uid: record.clusterID,
      annotations: { [ORIGINAL_UID_ANNOTATION]: record.clusterID },
    },
    spec: record.cluster.spec,
  };
}

/**
 * The purge of what a soft-deleted cluster kept, through the cluster controller's own Azure client
 * and key store (its cache of keyrings forgets the one removed): the Azure resources as a deletion
 * removes them (same owner tags, so never another owner's), then the issuer's documents, then the
 * keyring.
 */
export class ClusterRetainedResources implements RetainedResources {
  readonly #infra: ClusterInfrastructure;
  readonly #oidc: Pick<ClusterOidc, "documents" | "keys">;
  readonly #region: RegionSettings;

  constructor(deps: {
    infra: ClusterInfrastructure;
    oidc: Pick<ClusterOidc, "documents" | "keys">;
    region: RegionSettings;
  }) {
    this.#infra = deps.infra;
    this.#oidc = deps.oidc;
    this.#region = deps.region;
  }

  async purge(record: DeletedClusterRecord, opts: { signal?: AbortSignal }): Promise<PurgeStep> {
    const cluster = clusterOfRecord(record);
    const spec = infraSpecOf(cluster, clusterNames(cluster, this.#region).zoneName);
    const azure = await this.#infra.deleteAll(spec, opts);
    if (azure.step.state !== "ready") return { done: false, message: azure.step.message };
    const issuer = await this.#oidc.documents.unpublish(issuerPath(cluster), opts);
    if (issuer.step.state !== "ready") return { done: false, message: issuer.step.message };
    await this.#oidc.keys.remove({ uid: record.clusterID, name: spec.ownerName }, opts);
    return { done: true, message: "Azure resources, OIDC issuer documents and signing keys deleted" };
  }
}
