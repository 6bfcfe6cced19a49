/**
 * Informer indexes more than one controller registers on the same shared informer. The shared
 * informer refuses a second function under a name, so each lives here once.
 */
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import type { ManifestWorkObject } from "../api/work/v1.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";

/** HcpClusters by the ManagementCluster their status names ("" for not placed yet). */
export const MANAGEMENT_CLUSTER_INDEX = "management-cluster";
export const byManagementCluster = (c: HcpCluster): string[] => [c.status?.managementCluster ?? ""];

/** ManifestWorks by the uid of the HcpCluster they belong to (its own and its node pools'). */
export const CLUSTER_UID_INDEX = "cluster-uid";
export const byClusterUid = (w: ManifestWorkObject): string[] => {
  const uid = w.metadata.labels?.[WORK_LABELS.clusterUid];
  return uid ? [uid] : [];
};
