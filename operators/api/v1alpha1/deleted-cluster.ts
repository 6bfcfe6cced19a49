/**
 * A soft-deleted cluster (docs/operations.md "Soft delete and undelete"): when the operators run
 * with a retention, a deleted HcpCluster's Azure resources, OIDC issuer and signing keyring stay
 * for that long, and this record, a ConfigMap `hcp-deleted-<clusterID>` in the operators'
 * namespace, says what it was: enough for `hcpctl cluster undelete` to create it again under the
 * same ID (ORIGINAL_UID_ANNOTATION: the same names, Azure resources, issuer and keys) restored from
 * its last backup, and for the purge to remove what was kept once the retention ends.
 *
 * Written by the cluster controller (operators/cluster/soft-delete.ts) before anything of the
 * cluster is deleted, completed with deletedAt and purgeAfter just before its finalizer goes; read
 * by the purge (operators/softdelete), the orphan sweep (a record's ID owns its Azure resources),
 * the region backup (records are backed up), and hcpctl.
 */
import type { KubeObject } from "../meta/v1.ts";
import type { ExternalAuthSpec } from "./externalauth.ts";
import type { HcpClusterSpec } from "./hcpcluster.ts";
import type { NodePoolSpec } from "./nodepool.ts";

/** On every record: the deleted cluster's ID (its original uid). */
export const DELETED_CLUSTER_LABEL = "hcp.aro.dev/deleted-cluster";
/** On every record: the deleted cluster's namespace and name, to find it by them. */
export const DELETED_CLUSTER_NAME_LABELS = {
  namespace: "hcp.aro.dev/cluster-namespace",
  name: "hcp.aro.dev/cluster-name",
} as const;
/** The record's one data key: DeletedClusterRecord as JSON. */
export const DELETED_CLUSTER_DATA_KEY = "record.json";
/**
 * An undelete is refused this close to purgeAfter (at most a tenth of the retention): a purge that
 * starts at purgeAfter must not find a cluster being created under it (the clocks of hcpctl's host
 * and the operators may differ a little).
 */
export const UNDELETE_MARGIN_MS = 60_000;

/** An object of the cluster as it was: enough to create it again. */
export interface RecordedObject<S> {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  spec: S;
}

export interface DeletedClusterRecord {
  /** The cluster's ID: its original uid, the one every name of it derives from. */
  clusterID: string;
  /**
   * The uid of the HcpCluster object it was written for: an undeleted cluster is another object
   * under the same ID, and a record left of an earlier deletion is not this one's.
   */
  uid: string;
  namespace: string;
  cluster: RecordedObject<HcpClusterSpec>;
  /** Its node pools and external auths that were not already being deleted when it was. */
  nodePools: RecordedObject<NodePoolSpec>[];
  externalAuths: RecordedObject<ExternalAuthSpec>[];
  /** Its newest completed backup (status.backup.recent[0]), which an undelete restores from. */
  lastBackup?: string;
  /** The ManagementCluster its control plane ran on. */
  managementCluster?: string;
  /** RFC 3339: when its finalizer went (ARM saw it deleted earlier: when the delete began). Unset while it is being deleted. */
  deletedAt?: string;
  /** RFC 3339: deletedAt plus the retention; after it, the purge removes what was kept. */
  purgeAfter?: string;
}

export function deletedClusterRecordName(clusterID: string): string {
  return `hcp-deleted-${clusterID}`;
}

/** A ConfigMap, as far as a record is one. */
export type RecordConfigMap = KubeObject & { data?: Record<string, string> };

/** The ConfigMap that holds the record. */
export function encodeDeletedCluster(record: DeletedClusterRecord, namespace: string): RecordConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: deletedClusterRecordName(record.clusterID),
      namespace,
      labels: {
        [DELETED_CLUSTER_LABEL]: record.clusterID,
        [DELETED_CLUSTER_NAME_LABELS.namespace]: record.namespace,
        [DELETED_CLUSTER_NAME_LABELS.name]: record.cluster.name,
      },
    },
    data: { [DELETED_CLUSTER_DATA_KEY]: JSON.stringify(record) },
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isDate = (v: unknown): boolean =>
  v === undefined || (typeof v === "string" && !Number.isNaN(Date.parse(v)));

/** What is wrong with a parsed record's identity, if anything. */
function identityProblem(r: Record<string, unknown>, label: string | undefined): string | undefined {
  if (typeof r.clusterID !== "string" || r.clusterID === "") return "no clusterID";
  if (r.clusterID !== label) return `clusterID ${r.clusterID} is not its label ${DELETED_CLUSTER_LABEL}`;
  if (typeof r.uid !== "string") return "no uid";
  const cluster = r.cluster;
  if (typeof r.namespace !== "string" || !isObject(cluster) || typeof cluster.name !== "string")
    return "no cluster namespace and name";
  return isObject(cluster.spec) ? undefined : "no cluster spec";
}

/** What is wrong with a parsed record, if anything. */
function problemOf(r: Record<string, unknown>, label: string | undefined): string | undefined {
  const identity = identityProblem(r, label);
  if (identity) return identity;
  if (!Array.isArray(r.nodePools) || !Array.isArray(r.externalAuths))
    return "no nodePools or externalAuths lists";
  if (!isDate(r.deletedAt) || !isDate(r.purgeAfter)) return "deletedAt or purgeAfter is not a time";
  if ((r.deletedAt === undefined) !== (r.purgeAfter === undefined))
    return "deletedAt and purgeAfter go together";
  return undefined;
}

/** The record a ConfigMap holds; throws saying what is wrong with one that is not. */
export function decodeDeletedCluster(cm: RecordConfigMap): DeletedClusterRecord {
  const where = `ConfigMap ${cm.metadata.namespace ?? ""}/${cm.metadata.name ?? ""}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(cm.data?.[DELETED_CLUSTER_DATA_KEY] ?? "");
  } catch {
    throw new Error(`${where}: data.${DELETED_CLUSTER_DATA_KEY} is not JSON`);
  }
  if (!isObject(parsed)) throw new Error(`${where}: data.${DELETED_CLUSTER_DATA_KEY} is not an object`);
  const problem = problemOf(parsed, cm.metadata.labels?.[DELETED_CLUSTER_LABEL]);
  if (problem) throw new Error(`${where}: ${problem}`);
  return parsed as unknown as DeletedClusterRecord;
}

/** The last instant an undelete is accepted (ms since the epoch); undefined while the cluster is being deleted. */
export function undeleteDeadline(record: DeletedClusterRecord): number | undefined {
  if (record.purgeAfter === undefined || record.deletedAt === undefined) return undefined;
  const end = Date.parse(record.purgeAfter);
  const retention = end - Date.parse(record.deletedAt);
  return end - Math.min(UNDELETE_MARGIN_MS, Math.max(0, retention) / 10);
}

/** What the purge does with a record now. */
export type PurgeDecision =
  /** Still being deleted (no deletedAt) or within its retention. */
  | { action: "keep"; until?: number }
  /** A cluster with its ID exists: undeleted (or being deleted again); only the record goes, after its retention. */
  | { action: "dropRecord" }
  /** Its retention ended: the Azure resources, the issuer and the keyring go, then the record. */
  | { action: "purge" };

/**
 * Never purges what a live cluster uses: `liveIDs` are the original uids of the HcpClusters read
 * from the apiserver just now (an undelete creates the cluster before it drops the record).
 */
export function purgeDecision(
  record: DeletedClusterRecord,
  now: number,
  liveIDs: ReadonlySet<string>,
): PurgeDecision {
  if (record.purgeAfter === undefined) return { action: "keep" };
  const due = Date.parse(record.purgeAfter);
  if (now < due) return { action: "keep", until: due };
  return liveIDs.has(record.clusterID) ? { action: "dropRecord" } : { action: "purge" };
}

/** How one purge step went: done, or still under way (an Azure deletion polls), with why. */
export interface PurgeStep {
  done: boolean;
  message: string;
}

/** What a purge of a record's kept resources goes through (the cluster controller's, wired in main.ts). */
export interface RetainedResources {
  /** Deletes the record's Azure resources, its issuer's documents and its signing keyring, in that order. */
  purge(record: DeletedClusterRecord, opts: { signal?: AbortSignal }): Promise<PurgeStep>;
}
