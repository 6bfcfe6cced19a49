/**
 * Shared pieces of the hcp.aro.dev/v1alpha1 API: group and version, the status condition shape
 * and the version block HcpCluster and NodePool both carry. The CRDs in crds/ are the source of
 * truth; these types mirror them field for field.
 */

export const GROUP = "hcp.aro.dev";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** Category of all three kinds: `kubectl get hcp` lists clusters, node pools and management clusters. */
export const CATEGORY = "hcp";

/** metav1.Condition; the CRDs keep conditions as a list map keyed by type. One definition serves all. */
export type { Condition, ConditionStatus } from "../meta/v1.ts";

export const CHANNEL_GROUPS = ["stable", "candidate", "fast", "eus", "nightly"] as const;
export type ChannelGroup = (typeof CHANNEL_GROUPS)[number];

export interface VersionSpec {
  /** major.minor ("4.19") or major.minor.patch ("4.19.7"); never moves backwards. */
  id: string;
  /** Defaults to "stable". */
  channelGroup?: ChannelGroup;
}

/** The phases HcpCluster and NodePool report: a summary for humans; automation reads conditions. */
export const PHASES = [
  "Pending",
  "Provisioning",
  "Ready",
  "Updating",
  "Degraded",
  "Deleting",
  "Failed",
] as const;
export type Phase = (typeof PHASES)[number];

/** Summary condition types every hcp.aro.dev controller writes. */
export const CONDITION_TYPES = {
  Ready: "Ready",
  Progressing: "Progressing",
  Degraded: "Degraded",
} as const;

/** A Kubernetes label selector (metav1.LabelSelector). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface LabelSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  /** Required (non-empty) for In and NotIn, absent for Exists and DoesNotExist. */
  values?: string[];
}
