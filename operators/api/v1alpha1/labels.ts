/**
 * Labels and annotations the controllers put on the ManifestWorks of a cluster, and that other
 * components (the other controllers, hcpctl) read back. The frontend's own ARM names are
 * elsewhere; these are the ones that map a work to what it carries.
 */
import type { ObjectMeta } from "../meta/v1.ts";
import type { HcpCluster } from "./hcpcluster.ts";

/**
 * On an object a region restore created (operators/regionbackup): the uid it was first created
 * with. A restore makes every object again under a new uid, so whatever the controllers name after
 * an object (a cluster's ID: its namespaces, works, Azure owner tags, OIDC issuer path and keyring)
 * uses originalUid(), and a restored region renames nothing. Only a region restorer may set it and
 * nobody may change it (config/bases/operators/admission.yaml): a copied ID would name another
 * cluster's namespaces and work.
 */
export const ORIGINAL_UID_ANNOTATION = "hcp.aro.dev/original-uid";

/** The uid the object was first created with: ORIGINAL_UID_ANNOTATION, else its own. */
export function originalUid(obj: { metadata: ObjectMeta }): string {
  return obj.metadata.annotations?.[ORIGINAL_UID_ANNOTATION] || (obj.metadata.uid ?? "");
}

/**
 * On an HcpCluster or NodePool a region restore created, until its controller has seen its work
 * applied again. The agent still holds the work from before the restore, which only a newer work
 * of the same name replaces (decision 0012): deleted before that, the object would find no work to
 * delete and leave the old one running on its management cluster. So a deletion first writes the
 * work again and waits for it to be applied. A finalizer, because that is what it is: something
 * that must happen before the object may go.
 */
export const RESTORED_WORK_FINALIZER = "hcp.aro.dev/restored-work";

/** Whether a restored object's work has not been applied again yet (RESTORED_WORK_FINALIZER). */
export function awaitsRestoredWork(obj: { metadata: ObjectMeta }): boolean {
  return obj.metadata.finalizers?.includes(RESTORED_WORK_FINALIZER) ?? false;
}

/**
 * Labels on every ManifestWork a cluster owns; they map a work back to its HcpCluster (and node
 * pool, break-glass credential or access session).
 */
export const WORK_LABELS = {
  clusterUid: "hcp.aro.dev/cluster-uid",
  clusterName: "hcp.aro.dev/cluster-name",
  clusterNamespace: "hcp.aro.dev/cluster-namespace",
  nodePool: "hcp.aro.dev/nodepool",
  breakglass: "hcp.aro.dev/breakglass",
  /** On an SRE access session's certificate work: the session's uid. */
  accessSession: "hcp.aro.dev/access-session-uid",
} as const;

/** The labels every work of a cluster carries (a node pool's adds WORK_LABELS.nodePool). */
export function workLabels(cluster: HcpCluster): Record<string, string> {
  return {
    [WORK_LABELS.clusterUid]: cluster.metadata.uid ?? "",
    [WORK_LABELS.clusterName]: cluster.metadata.name ?? "",
    [WORK_LABELS.clusterNamespace]: cluster.metadata.namespace ?? "",
  };
}

/**
 * ARM request IDs: the frontend stamps them on a CR, the controllers copy them onto its
 * ManifestWork, hcpctl follows a request by them.
 */
export const REQUEST_ID_ANNOTATIONS = [
  "hcp.aro.dev/correlation-request-id",
  "hcp.aro.dev/client-request-id",
] as const;

/**
 * On an HcpCluster, set to a new value (the portal writes when and who) by an SRE who fixed a
 * failure only the user could fix (a quota, a permission) out of band: the cluster controller
 * tries the held step again now instead of at its next recheck.
 */
export const RETRY_ANNOTATION = "hcp.aro.dev/retry";

/** On a cluster's work: `name=generation,…` of the ExternalAuths its HostedCluster carries. */
export const EXTERNAL_AUTHS_ANNOTATION = "hcp.aro.dev/external-auths";
