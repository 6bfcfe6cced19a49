/** NodePool (hcp.aro.dev/v1alpha1): worker nodes of one HcpCluster. Mirrors crds/hcp.aro.dev_nodepools.yaml. */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import type { API_VERSION, Condition, Phase, VersionSpec } from "./meta.ts";
import { GROUP, VERSION } from "./meta.ts";

export const NODE_POOL_KIND = "NodePool";

/** Held by the node pool controller until the pool's ManifestWork is gone. */
export const NODE_POOL_FINALIZER = "hcp.aro.dev/nodepool";

export const NodePoolResource = {
  group: GROUP,
  version: VERSION,
  kind: NODE_POOL_KIND,
  plural: "nodepools",
  namespaced: true,
} as const satisfies ResourceType;

export interface NodePool extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof NODE_POOL_KIND;
  spec: NodePoolSpec;
  status?: NodePoolStatus;
}

/** Exactly one of replicas and autoScaling is set. */
export interface NodePoolSpec {
  /** Immutable. An HcpCluster in the same namespace. */
  clusterRef: { name: string };
  /** When omitted the nodes follow the cluster's version; never moves backwards. */
  version?: VersionSpec;
  /** Immutable except platform.azure.vmSize (a change rolls the nodes). */
  platform: NodePoolPlatformSpec;
  /** ≥ 0; also the scale subresource's spec.replicas. */
  replicas?: number;
  autoScaling?: NodePoolAutoScaling;
  /** Set on every node; keys are qualified names, values label values. */
  labels?: Record<string, string>;
  /** Unique by key and effect. */
  taints?: Taint[];
  /** Defaults to true. */
  autoRepair?: boolean;
  /** 0..10080; when omitted the cluster's setting applies. */
  nodeDrainTimeoutMinutes?: number;
}

export interface NodePoolPlatformSpec {
  azure: AzureNodePoolPlatform;
}

export type DiskStorageAccountType = "Premium_LRS" | "StandardSSD_LRS" | "Standard_LRS";
/** Managed: in Azure storage; Ephemeral: on the VM's local storage. */
export type OsDiskType = "Managed" | "Ephemeral";

export interface AzureNodePoolPlatform {
  /** e.g. "Standard_D8s_v3". The one mutable platform field. */
  vmSize: string;
  /** Defaults to { sizeGiB: 64, diskStorageAccountType: "Premium_LRS", diskType: "Managed" }. */
  osDisk?: {
    sizeGiB?: number;
    diskStorageAccountType?: DiskStorageAccountType;
    diskType?: OsDiskType;
    /** ARM ID of the disk encryption set of the OS disks. */
    encryptionSetId?: string;
  };
  availabilityZone?: "1" | "2" | "3";
  /** ARM subnet ID; defaults to the cluster's subnet. */
  subnetId?: string;
  /** Defaults to false. */
  encryptionAtHost?: boolean;
}

/** min ≤ max; min ≥ 0, max ≥ 1. */
export interface NodePoolAutoScaling {
  min: number;
  max: number;
}

export type TaintEffect = "NoSchedule" | "PreferNoSchedule" | "NoExecute";

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
}

export interface NodePoolStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  phase?: Phase;
  /** Nodes that exist; the scale subresource's status.replicas. */
  replicas?: number;
  readyReplicas?: number;
  version?: string;
}
