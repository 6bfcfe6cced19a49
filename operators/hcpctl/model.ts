/**
 * What `hcpctl describe` shows, as data: the objects read from the service cluster (a snapshot)
 * and the tree built from them. The tree is what `-o json|yaml` prints and what the text renderer
 * draws; both come from the same TreeNode, so the two never disagree.
 */
import type { ExternalAuth, HcpCluster, ManagementCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { ConditionStatus } from "../api/meta/v1.ts";
import type { ManifestWork } from "../api/work/v1.ts";

/** Everything describe reads about one HcpCluster, all from the service cluster. */
export interface ClusterSnapshot {
  cluster: HcpCluster;
  /** The NodePools whose spec.clusterRef names the cluster. */
  nodePools: NodePool[];
  /** The ExternalAuths whose spec.clusterRef names the cluster (the HostedCluster's OIDC providers). */
  externalAuths: ExternalAuth[];
  /** The ManagementCluster status.managementCluster names, when it exists. */
  managementCluster?: ManagementCluster;
  /** The works labelled with the cluster's uid: its own and its node pools'. */
  works: ManifestWork[];
}

export type Severity = "" | "Info" | "Warning" | "Error";

/** A condition as a row shows it, with the severity its polarity gives it. */
export interface ConditionView {
  type: string;
  status: ConditionStatus;
  severity: Severity;
  reason: string;
  message: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** The READY / SEVERITY / REASON / SINCE / MESSAGE of one object. */
export interface Summary {
  /** "" when the object has no such state (a management cluster that reports none). */
  ready: ConditionStatus | "";
  severity: Severity;
  reason: string;
  /** The condition the row shows, when it comes from one. */
  condition?: string;
  /** RFC 3339: when the summary condition last changed. */
  since?: string;
  message: string;
}

/** Something that holds a deletion back. */
export interface Blocker {
  /** The kind of what blocks: an object kind, "Finalizer" or "Azure". */
  kind: string;
  name: string;
  namespace?: string;
  why: string;
}

export interface Deletion {
  /** metadata.deletionTimestamp. */
  since: string;
  finalizers: string[];
  blockedBy: Blocker[];
}

export interface TreeNode {
  /** The object's kind ("HcpCluster", "NodePool", …), or "" for a heading that groups children. */
  kind: string;
  /** The API group of the kind, so that HyperShift's NodePool is told from ours. */
  apiGroup?: string;
  name: string;
  namespace?: string;
  /** Absent on headings. */
  summary?: Summary;
  conditions: ConditionView[];
  /** Facts worth showing that are not conditions: generations, versions, endpoints, counts. */
  details: Record<string, string | number | boolean>;
  deletion?: Deletion;
  children: TreeNode[];
}

/** The document `describe -o json|yaml` prints. */
export interface ClusterTree {
  apiVersion: "hcpctl.hcp.aro.dev/v1alpha1";
  kind: "ClusterTree";
  /** When the objects were read (RFC 3339). */
  observedAt: string;
  root: TreeNode;
}
