/** HyperShift's NodePool (not hcp.aro.dev's): spec, status and condition types. */
import type { ConditionStatus, KubeObject } from "../../meta/v1.ts";
import type {
  LocalObjectReference,
  NODE_POOL_KIND,
  HYPERSHIFT_API_VERSION,
  PlatformType,
  Release,
} from "./meta.ts";

export interface NodePool extends KubeObject {
  apiVersion?: typeof HYPERSHIFT_API_VERSION;
  kind?: typeof NODE_POOL_KIND;
  spec: NodePoolSpec;
  status?: NodePoolStatus;
}

/**
 * CEL: not both replicas and autoScaling; autoScaling.min 0 only on AWS; arm64 only on
 * AWS/Azure/Agent/GCP/None; arch cannot be removed once set.
 */
export interface NodePoolSpec {
  /** The HostedCluster in the same namespace; a DNS label, immutable. */
  clusterName: string;
  release: Release;
  platform: NodePoolPlatform;
  management: NodePoolManagement;
  /** Also the scale subresource's spec.replicas. */
  replicas?: number;
  autoScaling?: NodePoolAutoScaling;
  /** default "amd64", immutable. */
  arch?: "arm64" | "amd64" | "ppc64le" | "s390x";
  /** Go durations, e.g. "10m0s". */
  nodeDrainTimeout?: string;
  nodeVolumeDetachTimeout?: string;
  nodeLabels?: Record<string, string>;
  /** ≤50. */
  taints?: NodePoolTaint[];
  /** ConfigMaps with MachineConfig and friends, ≤10. */
  config?: LocalObjectReference[];
  tuningConfig?: LocalObjectReference[];
  pausedUntil?: string;
}

/** max ≥ 1, min ≥ 0, max ≥ min. */
export interface NodePoolAutoScaling {
  min: number;
  max: number;
}

export interface NodePoolManagement {
  /** Immutable. */
  upgradeType: "Replace" | "InPlace";
  /** default false. */
  autoRepair?: boolean;
  /** default { strategy: RollingUpdate, rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }. */
  replace?: {
    strategy?: "RollingUpdate" | "OnDelete";
    rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string };
  };
  /** Only with upgradeType InPlace. */
  inPlace?: { maxUnavailable?: number | string };
}

export interface NodePoolTaint {
  key: string;
  value?: string;
  effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

export interface NodePoolPlatform {
  /** Immutable. */
  type: PlatformType;
  azure?: AzureNodePoolPlatform;
  aws?: Record<string, unknown>;
  kubevirt?: Record<string, unknown>;
  agent?: Record<string, unknown>;
  ibmcloud?: Record<string, unknown>;
  powervs?: Record<string, unknown>;
}

export interface AzureNodePoolPlatform {
  /** e.g. "Standard_D8s_v3". */
  vmSize: string;
  image: AzureVMImage;
  osDisk: AzureNodePoolOSDisk;
  /** ARM subnet ID whose subscription is a UUID; immutable. */
  subnetID: string;
  /** default "Enabled". */
  encryptionAtHost?: "Enabled" | "Disabled";
  availabilityZone?: "1" | "2" | "3";
  diagnostics?: {
    /** default "Disabled". */
    storageAccountType?: "Managed" | "UserManaged" | "Disabled";
    /** Only (and required) with UserManaged; an https URL. */
    userManaged?: { storageAccountURI: string };
  };
}

/** imageID iff type ImageID; azureMarketplace only with AzureMarketplace. */
export interface AzureVMImage {
  type: "ImageID" | "AzureMarketplace";
  imageID?: string;
  /** publisher, offer, sku and version all or none; imageGeneration default "Gen2". */
  azureMarketplace?: {
    publisher?: string;
    offer?: string;
    sku?: string;
    version?: string;
    imageGeneration?: "Gen1" | "Gen2";
  };
}

export interface AzureNodePoolOSDisk {
  /** 16–32767. */
  sizeGiB?: number;
  diskStorageAccountType?: "Premium_LRS" | "PremiumV2_LRS" | "Standard_LRS" | "StandardSSD_LRS";
  encryptionSetID?: string;
  persistence?: "Persistent" | "Ephemeral";
}

/**
 * NodePool conditions have their own shape (not metav1.Condition): reason and message are
 * optional, severity exists, and the list is atomic.
 */
export interface NodePoolCondition {
  type: string;
  status: ConditionStatus;
  severity?: string;
  lastTransitionTime: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

export interface NodePoolStatus {
  /** Nodes that are available; the scale subresource's status.replicas. */
  replicas?: number;
  /** The OpenShift version of the nodes, ≤64. */
  version?: string;
  conditions?: NodePoolCondition[];
  nodesInfo?: {
    nodeVersions: Array<{
      kubeletVersion: string;
      ocpVersion: string;
      readyNodeCount: number;
      unreadyNodeCount: number;
    }>;
  };
  platform?: Record<string, unknown>;
}

/** NodePool condition types (`nodepool_conditions.go`), the ones used here. */
export const NodePoolConditionType = {
  Ready: "Ready",
  AllMachinesReady: "AllMachinesReady",
  AllNodesHealthy: "AllNodesHealthy",
  ValidReleaseImage: "ValidReleaseImage",
  ValidPlatformImage: "ValidPlatformImage",
  ValidMachineConfig: "ValidMachineConfig",
  SupportedVersionSkew: "SupportedVersionSkew",
  UpdateManagementEnabled: "UpdateManagementEnabled",
  AutoscalingEnabled: "AutoscalingEnabled",
  AutorepairEnabled: "AutorepairEnabled",
  UpdatingVersion: "UpdatingVersion",
  UpdatingConfig: "UpdatingConfig",
  ReconciliationActive: "ReconciliationActive",
  IgnitionEndpointAvailable: "IgnitionEndpointAvailable",
} as const;
