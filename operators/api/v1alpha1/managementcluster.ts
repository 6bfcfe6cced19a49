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
  /**
   * The broker client certificate the agent's connection uses, as its heartbeat reports it;
   * absent for an agent that sends none. The agent renews it itself before it expires
   * (docs/decisions/0010-agent-certificate-renewal.md).
   */
  brokerCertificate?: BrokerCertificateSummary;
  /**
   * Works the agent holds that this region does not know and never deleted (as after a restore
   * of the region, before its controllers write them again): left alone, not deleted; absent when
   * there are none (docs/decisions/0012-never-delete-the-unknown.md).
   */
  unclaimedWorks?: UnclaimedWorks;
}

/** How many works an agent holds that the region does not know, and the first of them. */
export interface UnclaimedWorks {
  count: number;
  /** Up to MAX_UNCLAIMED_SHOWN of their resource IDs, sorted. */
  resourceIDs: string[];
}

/** How many unclaimed resource IDs a ManagementCluster's status lists. */
export const MAX_UNCLAIMED_SHOWN = 20;

/** A client certificate, by what identifies it and bounds it. */
export interface BrokerCertificateSummary {
  /** Lower-case hexadecimal, without leading zeros stripped or added. */
  serialNumber: string;
  /** RFC 3339. */
  notBefore: string;
  notAfter: string;
}

/** The ManagementCluster condition that says whether its agent is heard (managementcluster/connected.ts). */
export const CONNECTED = "Connected";

export const CONNECTED_REASONS = {
  connected: "AgentConnected",
  notHeard: "AgentNotHeard",
  sourceDisconnected: "SourceDisconnected",
  noHeartbeat: "NoHeartbeat",
  waiting: "WaitingForAgent",
  notTracked: "LivenessNotTracked",
} as const;

/**
 * Heartbeats an agent may miss before its management cluster is no longer Connected: the bound is
 * this many of the intervals the agent announces (docs/decisions/0006-agent-liveness-by-heartbeat.md).
 */
export const MISSED_HEARTBEATS = 3;

/**
 * The reason of an HcpCluster's or NodePool's Ready that rests on a report its management cluster
 * can no longer vouch for (Connected False): Unknown, StatusStale.
 */
export const STATUS_STALE = "StatusStale";

/**
 * The liveness record: what maestro-server heard of one consumer's agent, in memory only. It
 * fills it (maestro-server/liveness.ts); the management cluster controller reads it into the
 * Connected condition and `status.agent`, and the monitor into its gauges.
 */
export interface LivenessSnapshot {
  /** When maestro-server last subscribed; absent while it is not connected to the broker. */
  listeningSinceMs?: number;
  /**
   * Since when maestro-server has not been connected (since it started, before its first
   * subscribe); absent before it starts, when nobody can be blamed for a silence yet.
   */
  deafSinceMs?: number;
  /** Absent: nothing heard from this consumer's agent since maestro-server started. */
  agent?: AgentHeard;
  /** What the agent's last spec resync listed that the region does not know; absent before one. */
  unclaimedWorks?: UnclaimedWorks;
}

export interface AgentHeard {
  /** When the agent was last heard, by maestro-server's clock (ms since the epoch). */
  lastHeardMs: number;
  /** The interval its heartbeats announce; absent for an agent that has sent none. */
  heartbeatMs?: number;
  /** The client certificate its last heartbeat reported. */
  brokerCertificate?: BrokerCertificateSummary;
}

/** What the readers of agent liveness see of it. */
export interface AgentLivenessSource {
  snapshot(consumer: string): LivenessSnapshot;
  /**
   * Called when a consumer's agent is heard for the first time, again after a silence longer
   * than its bound, or with a new heartbeat interval; with undefined when listening starts or
   * stops (every consumer). Expiry is not announced: the reader looks again at the bound.
   */
  onChange(handler: (consumer: string | undefined) => void): void;
}
