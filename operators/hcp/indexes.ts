/**
 * Informer indexes more than one controller registers on the same shared informer. The shared
 * informer refuses a second function under a name, so each lives here once.
 */
import type { HcpCluster } from "../api/v1alpha1/index.ts";

/** HcpClusters by the ManagementCluster their status names ("" for not placed yet). */
export const MANAGEMENT_CLUSTER_INDEX = "management-cluster";
export const byManagementCluster = (c: HcpCluster): string[] => [c.status?.managementCluster ?? ""];
