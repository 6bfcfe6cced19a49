/** What HyperShift reports of a HostedCluster: its status, condition types and reasons. */
import type { Condition } from "../../meta/v1.ts";
import type { LocalObjectReference } from "./meta.ts";

export type PayloadArch = "Multi" | "ARM64" | "AMD64" | "PPC64LE" | "S390X";

export interface HostedClusterStatus {
  /** metav1.Condition, a list map keyed by type; reason `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`. */
  conditions?: Condition[];
  /** The data plane's version (ClusterVersion). */
  version?: ClusterVersionStatus;
  /** The control plane's version; ARO HCP reads its history to decide a create succeeded. */
  controlPlaneVersion?: ControlPlaneVersionStatus;
  /** Set once the infrastructure is ready. */
  controlPlaneEndpoint?: APIEndpoint;
  /** Secret `<name>-admin-kubeconfig`, key `kubeconfig`. */
  kubeconfig?: LocalObjectReference;
  customKubeconfig?: LocalObjectReference;
  kubeadminPassword?: LocalObjectReference;
  /** ≤1024. */
  ignitionEndpoint?: string;
  /** ≤1024, `https://<oauth host>:<port>/oauth2callback/[identity-provider-name]`. */
  oauthCallbackURLTemplate?: string;
  payloadArch?: PayloadArch;
  platform?: { aws?: { defaultWorkerSecurityGroupID?: string } };
  /** The OpenShift configuration status (authentication, …); not typed here. */
  configuration?: Record<string, unknown>;
}

export interface APIEndpoint {
  /** ≤255. */
  host: string;
  port: number;
}

/** A release: image and version are required. */
export interface ReleaseInfo {
  image: string;
  version: string;
  url?: string;
  channels?: string[];
}

export type UpdateState = "Completed" | "Partial";

/** `status.version.history[]`; completionTime is required and null while Partial. */
export interface UpdateHistory {
  state: UpdateState;
  /** RFC 3339. */
  startedTime: string;
  completionTime: string | null;
  version?: string;
  image: string;
  verified: boolean;
  acceptedRisks?: string;
}

/** `status.version`; availableUpdates is required and may be null. */
export interface ClusterVersionStatus {
  desired: ReleaseInfo;
  /** Newest first; the first Completed entry is the current version. */
  history?: UpdateHistory[];
  observedGeneration: number;
  availableUpdates: ReleaseInfo[] | null;
  conditionalUpdates?: Array<{ release: ReleaseInfo; risks: unknown[]; conditions?: Condition[] }>;
}

/** `status.controlPlaneVersion.history[]`: no `verified`, version required (`x.y.z…`). */
export interface ControlPlaneUpdateHistory {
  state: UpdateState;
  startedTime: string;
  /** Absent while Partial. */
  completionTime?: string;
  /** Starts with x.y.z, ≤64. */
  version: string;
  /** ≤447. */
  image: string;
}

export interface ControlPlaneVersionStatus {
  desired: ReleaseInfo;
  /** 1–100 entries, newest first. */
  history?: ControlPlaneUpdateHistory[];
  /** ≥ 1. */
  observedGeneration?: number;
}

/** HostedCluster condition types HyperShift reports (`hostedcluster_conditions.go`), the ones used here. */
export const HostedClusterConditionType = {
  Available: "Available",
  Progressing: "Progressing",
  Degraded: "Degraded",
  InfrastructureReady: "InfrastructureReady",
  KubeAPIServerAvailable: "KubeAPIServerAvailable",
  EtcdAvailable: "EtcdAvailable",
  ValidConfiguration: "ValidConfiguration",
  SupportedHostedCluster: "SupportedHostedCluster",
  ValidReleaseImage: "ValidReleaseImage",
  ReconciliationActive: "ReconciliationActive",
  ReconciliationSucceeded: "ReconciliationSucceeded",
  ClusterVersionAvailable: "ClusterVersionAvailable",
  ClusterVersionProgressing: "ClusterVersionProgressing",
  ClusterVersionSucceeding: "ClusterVersionSucceeding",
  ClusterVersionUpgradeable: "ClusterVersionUpgradeable",
  ExternalDNSReachable: "ExternalDNSReachable",
  IgnitionEndpointAvailable: "IgnitionEndpointAvailable",
  /** Whether the Azure KMS key is usable: the control-plane operator encrypts with it. */
  ValidAzureKMSConfig: "ValidAzureKMSConfig",
  /**
   * Whether all etcd data is encrypted with spec.secretEncryption's active key; absent without
   * secretEncryption. Reported by HyperShift's re-encryption controller (newer than the v0.1.75
   * CRDs, whose conditions take any type).
   */
  EtcdDataEncryptionUpToDate: "EtcdDataEncryptionUpToDate",
} as const;

/** Reasons HyperShift uses across conditions (`hostedcluster_conditions.go`, `nodepool_conditions.go`). */
export const HyperShiftReason = {
  AsExpected: "AsExpected",
  StatusUnknown: "StatusUnknown",
  NotFound: "NotFound",
  WaitingForAvailable: "WaitingForAvailable",
  Blocked: "Blocked",
  WaitingOnInfrastructureReady: "WaitingOnInfrastructureReady",
  EtcdQuorumAvailable: "QuorumAvailable",
  EtcdWaitingForQuorum: "EtcdWaitingForQuorum",
  InvalidConfiguration: "InvalidConfiguration",
  InvalidImage: "InvalidImage",
  ReconciliationPaused: "ReconciliationPaused",
  /** NodePool. */
  ValidationFailed: "ValidationFailed",
  IgnitionEndpointMissing: "IgnitionEndpointMissing",
  /** ValidAzureKMSConfig: the key cannot be used, or the identity that uses it has no credentials. */
  AzureError: "AzureError",
  InvalidAzureCredentials: "InvalidAzureCredentials",
  /** EtcdDataEncryptionUpToDate. */
  ReEncryptionInProgress: "ReEncryptionInProgress",
  ReEncryptionCompleted: "ReEncryptionCompleted",
  ReEncryptionFailed: "ReEncryptionFailed",
} as const;

/** HyperShift's `AllIsWellMessage`. */
export const ALL_IS_WELL = "All is well";
