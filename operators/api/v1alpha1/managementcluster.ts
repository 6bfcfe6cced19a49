/**
 * ManagementCluster (hcp.aro.dev/v1alpha1, cluster-scoped): a cluster that hosts control planes,
 * reached through one Maestro consumer. Mirrors crds/hcp.aro.dev_managementclusters.yaml.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import type { API_VERSION, Condition } from "./meta.ts";
import { GROUP, VERSION } from "./meta.ts";

export const MANAGEMENT_CLUSTER_KIND = "ManagementCluster";

/**
 * The management cluster controller's finalizer: a ManagementCluster stays while any HcpCluster is
 * placed on it (status.managementCluster names it), since those clusters' control planes and works
 * live there and a placed cluster is never moved.
 */
export const MANAGEMENT_CLUSTER_FINALIZER = "hcp.aro.dev/managementcluster";

export const ManagementClusterResource = {
  group: GROUP,
  version: VERSION,
  kind: MANAGEMENT_CLUSTER_KIND,
  plural: "managementclusters",
  namespaced: false,
} as const satisfies ResourceType;

export interface ManagementCluster extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof MANAGEMENT_CLUSTER_KIND;
  spec: ManagementClusterSpec;
  status?: ManagementClusterStatus;
}

export interface ManagementClusterSpec {
  /**
   * Maestro consumer name, a DNS label. Immutable. Names the service-cluster namespace holding the
   * cluster's ManifestWorks and appears in MQTT topics.
   */
  consumerName: string;
  capacity: { maxHostedClusters: number };
  /** Defaults to true; false keeps placement away. */
  schedulable?: boolean;
  /** Placement labels, matched by HcpCluster spec.placement.managementClusterSelector. */
  labels?: Record<string, string>;
  /** Azure region, e.g. "eastus". */
  region?: string;
}

export const MANAGEMENT_CLUSTER_PHASES = [
  "Pending",
  "Ready",
  "Full",
  "Unschedulable",
  "Unavailable",
  "Deleting",
] as const;
export type ManagementClusterPhase = (typeof MANAGEMENT_CLUSTER_PHASES)[number];

export interface ManagementClusterStatus {
  /**
   * Schedulable (room for placement), Connected (its agent heard within its bound) and, once it is
   * being deleted, Deleting (what its deletion waits for).
   */
  conditions?: Condition[];
  observedGeneration?: number;
  /** HcpClusters placed here: the load placement compares with capacity. */
  hostedClusters?: number;
  phase?: ManagementClusterPhase;
  agent?: ManagementClusterAgentStatus;
}

/** What maestro-server has heard of the management cluster's Maestro agent. */
export interface ManagementClusterAgentStatus {
  /**
   * When the agent was last heard (RFC 3339, seconds). Exact at each Connected transition; while
   * the condition stands it is refreshed at a coarse interval, not at every heartbeat.
   */
  lastHeardTime?: string;
  /** The heartbeat interval the agent announces; absent for an agent that sends none. */
  heartbeatSeconds?: number;
}
