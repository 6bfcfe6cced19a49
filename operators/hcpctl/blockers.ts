/**
 * What holds a deletion back, read from the objects alone. Deletion runs behind finalizers: the
 * cluster waits for its node pools, then for its works (maestro-server keeps each until the agent
 * confirms Deleted), then for Azure; a node pool waits for its work. A finalizer no controller of
 * this service owns is named as such: nobody here will ever remove it.
 */
import {
  CLUSTER_FINALIZER,
  EXTERNAL_AUTH_FINALIZER,
  NODE_POOL_FINALIZER,
  WORK_LABELS,
  type ExternalAuth,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import { MANIFEST_WORK_CLEANUP_FINALIZER, type ManifestWork } from "../api/work/v1.ts";
import { find } from "./conditions.ts";
import type { Blocker, ClusterSnapshot, Deletion } from "./model.ts";

/** The finalizers this service's controllers put on objects, and who removes each, when. */
export const KNOWN_FINALIZERS: Record<string, string> = {
  [CLUSTER_FINALIZER]:
    "the cluster controller, once node pools, HostedCluster, Azure resources and the OIDC issuer are gone",
  [NODE_POOL_FINALIZER]: "the node pool controller, once its ManifestWork is gone",
  [EXTERNAL_AUTH_FINALIZER]:
    "the external auth controller, once the HostedCluster no longer carries the OIDC provider",
  [MANIFEST_WORK_CLEANUP_FINALIZER]: "maestro-server, once the agent confirms Deleted",
};

const ref = (o: { metadata: { name?: string } }): string => o.metadata.name ?? "";

/** Finalizers no controller of this service removes. */
function foreignFinalizers(finalizers: readonly string[] | undefined): Blocker[] {
  return (finalizers ?? [])
    .filter((f) => !(f in KNOWN_FINALIZERS))
    .map((f) => ({ kind: "Finalizer", name: f, why: "no controller of this service removes it" }));
}

/** Why a work being deleted is still there, from what maestro-server wrote on it. */
export function workDeletionWhy(work: ManifestWork): string {
  if (!work.metadata.deletionTimestamp) return "not deleted yet";
  if (!work.metadata.finalizers?.includes(MANIFEST_WORK_CLEANUP_FINALIZER))
    return `finalizers ${(work.metadata.finalizers ?? []).join(", ")}`;
  const published = find(work.status?.conditions, "Published");
  const consumer = work.metadata.namespace ?? "";
  if (published?.reason === "DeletePublished")
    return `awaiting the agent's Deleted: the deletion was published to ${consumer}`;
  if (published?.reason === "BrokerNotConnected")
    return "the deletion is not published: maestro-server is not connected to the broker";
  return "the deletion is not published to the agent yet";
}

function workBlocker(work: ManifestWork): Blocker {
  return {
    kind: "ManifestWork",
    name: ref(work),
    namespace: work.metadata.namespace,
    why: workDeletionWhy(work),
  };
}

function poolBlocker(pool: NodePool): Blocker {
  const why = pool.metadata.deletionTimestamp
    ? `being deleted; finalizers ${(pool.metadata.finalizers ?? []).join(", ") || "none"}`
    : "not deleted yet";
  return { kind: "NodePool", name: ref(pool), namespace: pool.metadata.namespace, why };
}

/** The works of one node pool (their nodepool label holds its uid). */
export function worksOfPool(pool: NodePool, works: readonly ManifestWork[]): ManifestWork[] {
  return works.filter((w) => w.metadata.labels?.[WORK_LABELS.nodePool] === pool.metadata.uid);
}

function clusterBlockers(s: ClusterSnapshot): Blocker[] {
  if (s.nodePools.length > 0) return s.nodePools.map(poolBlocker);
  if (s.works.length > 0) return s.works.map(workBlocker);
  const deleting = find(s.cluster.status?.conditions, "Deleting");
  if (deleting?.reason === "DeletingAzureResources")
    return [
      { kind: "Azure", name: s.cluster.spec.platform.azure.managedResourceGroup, why: deleting.message },
    ];
  const foreign = foreignFinalizers(s.cluster.metadata.finalizers);
  if (foreign.length > 0 || !s.cluster.metadata.finalizers?.includes(CLUSTER_FINALIZER)) return foreign;
  // Nothing it waited for is left: the controller is between steps (Azure, then the finalizer).
  const last = deleting ? `; its last word: ${deleting.message}` : "";
  return [
    {
      kind: "Finalizer",
      name: CLUSTER_FINALIZER,
      why: `the cluster controller has not released it yet${last}`,
    },
  ];
}

function poolBlockers(pool: NodePool, works: readonly ManifestWork[]): Blocker[] {
  const own = worksOfPool(pool, works);
  if (own.length > 0) return own.map(workBlocker);
  const foreign = foreignFinalizers(pool.metadata.finalizers);
  if (foreign.length > 0) return foreign;
  if (pool.metadata.finalizers?.includes(NODE_POOL_FINALIZER))
    return [
      {
        kind: "Finalizer",
        name: NODE_POOL_FINALIZER,
        why: "the node pool controller has not released it yet",
      },
    ];
  return [];
}

/** An external auth waits for the HostedCluster to drop its provider; its Deleting condition says how far. */
function authBlockers(auth: ExternalAuth): Blocker[] {
  const foreign = foreignFinalizers(auth.metadata.finalizers);
  if (foreign.length > 0 || !auth.metadata.finalizers?.includes(EXTERNAL_AUTH_FINALIZER)) return foreign;
  const deleting = find(auth.status?.conditions, "Deleting");
  return [
    {
      kind: "Finalizer",
      name: EXTERNAL_AUTH_FINALIZER,
      why: deleting?.message ?? "the external auth controller has not released it yet",
    },
  ];
}

function workBlockers(work: ManifestWork): Blocker[] {
  const foreign = foreignFinalizers(work.metadata.finalizers);
  if (!work.metadata.finalizers?.includes(MANIFEST_WORK_CLEANUP_FINALIZER)) return foreign;
  return [{ kind: "Agent", name: work.metadata.namespace ?? "", why: workDeletionWhy(work) }, ...foreign];
}

function deletionOf(
  obj: { metadata: { deletionTimestamp?: string; finalizers?: string[] } },
  blockedBy: () => Blocker[],
): Deletion | undefined {
  const since = obj.metadata.deletionTimestamp;
  if (!since) return undefined;
  return { since, finalizers: [...(obj.metadata.finalizers ?? [])], blockedBy: blockedBy() };
}

export const clusterDeletion = (s: ClusterSnapshot): Deletion | undefined =>
  deletionOf(s.cluster, () => clusterBlockers(s));

export const poolDeletion = (pool: NodePool, works: readonly ManifestWork[]): Deletion | undefined =>
  deletionOf(pool, () => poolBlockers(pool, works));

export const authDeletion = (auth: ExternalAuth): Deletion | undefined =>
  deletionOf(auth, () => authBlockers(auth));

export const workDeletion = (work: ManifestWork): Deletion | undefined =>
  deletionOf(work, () => workBlockers(work));
