/** HcpCluster (hcp.aro.dev/v1alpha1): one hosted OpenShift cluster. Mirrors crds/hcp.aro.dev_hcpclusters.yaml. */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import type { MaintenanceSpec } from "./maintenance.ts";
import type { API_VERSION, ChannelGroup, Condition, LabelSelector, Phase, VersionSpec } from "./meta.ts";
import { GROUP, VERSION } from "./meta.ts";

export const HCP_CLUSTER_KIND = "HcpCluster";

/** Held by the cluster controller until node pools, HostedCluster, Azure resources and the OIDC issuer are gone. */
export const CLUSTER_FINALIZER = "hcp.aro.dev/cluster";

export const HcpClusterResource = {
  group: GROUP,
  version: VERSION,
  kind: HCP_CLUSTER_KIND,
  plural: "hcpclusters",
  namespaced: true,
} as const satisfies ResourceType;

/**
 * The HcpCluster fields a list may select by (the CRD's selectableFields): the frontend looks up a
 * new cluster's DNS prefix, the management cluster controller what is placed on it, and SREs
 * either with `kubectl get hcpc -A --field-selector <field>=<value>`.
 */
export const DNS_PREFIX_FIELD = "spec.dns.baseDomainPrefix";
export const PLACEMENT_FIELD = "status.managementCluster";

/** The defaults the CRD applies to spec.network (ARO HCP's). */
export const DEFAULT_NETWORK = {
  networkType: "OVNKubernetes",
  podCidr: "10.128.0.0/14",
  serviceCidr: "172.30.0.0/16",
  machineCidr: "10.0.0.0/16",
  hostPrefix: 23,
} as const satisfies Required<NetworkSpec>;

export const DEFAULT_CHANNEL_GROUP: ChannelGroup = "stable";

export interface HcpCluster extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof HCP_CLUSTER_KIND;
  spec: HcpClusterSpec;
  status?: HcpClusterStatus;
}

/**
 * Whether the service moves a cluster on its own to newer patches of its minor: Manual (the
 * default) never does; AutomaticPatch does whenever the update graph offers one (a
 * major.minor.patch spec.version.id is then a floor). A major.minor id asks for the minor's
 * newest patch either way.
 */
export const UPGRADE_POLICIES = ["Manual", "AutomaticPatch"] as const;
export type UpgradePolicy = (typeof UPGRADE_POLICIES)[number];

export interface ClusterVersionSpec extends VersionSpec {
  /** Defaults to Manual. */
  upgradePolicy?: UpgradePolicy;
}

export interface HcpClusterSpec {
  version: ClusterVersionSpec;
  /** Immutable. */
  dns: DnsSpec;
  /** Immutable. Defaulted to DEFAULT_NETWORK field by field. */
  network?: NetworkSpec;
  api?: ApiSpec;
  /** Defaulted to { type: Public }; immutable. */
  ingress?: IngressSpec;
  /** Immutable except platform.azure.identities. */
  platform: PlatformSpec;
  /** 0..10080; 0 means no limit. */
  nodeDrainTimeoutMinutes?: number;
  /**
   * FIPS mode (ARM's cryptoRestrictions FIPS); defaults to false; immutable. HostedCluster
   * spec.fips.
   */
  fips?: boolean;
  /** Defaulted to { state: Enabled }; immutable. */
  clusterImageRegistry?: ClusterImageRegistrySpec;
  /** At most 240; updatable. HostedCluster spec.imageContentSources. */
  imageDigestMirrors?: ImageDigestMirror[];
  /** The cluster autoscaler's settings; updatable. HostedCluster spec.autoscaling. */
  autoscaling?: ClusterAutoscalingSpec;
  /**
   * How etcd data is encrypted at rest; cannot be removed once set. HostedCluster
   * spec.secretEncryption when customer-managed.
   */
  etcd?: EtcdSpec;
  /**
   * HighlyAvailable (the default) or SingleReplica: how many replicas each control-plane component
   * runs (HyperShift's controllerAvailabilityPolicy); immutable. Through ARM, an experimental tag
   * on subscriptions with the experimental feature registered (frontend/preview-features.ts).
   */
  controllerAvailabilityPolicy?: AvailabilityPolicy;
  /** Read once at placement; changing it later does not move the control plane. */
  placement?: PlacementSpec;
  /** When true the controllers roll out no changes. */
  paused?: boolean;
  /** Backups of the hosted control plane (a Velero Schedule); unset, DEFAULT_BACKUP. */
  backup?: BackupSpec;
  /**
   * A restore of the hosted control plane from one of its own backups (a Velero Restore on the
   * management cluster); another backupName asks for a new restore, none removes the Restore.
   */
  restore?: RestoreSpec;
  /**
   * When the service may begin disruptive work of its own (an automatic patch upgrade, a
   * maintenance task): weekly windows in the customer's time zone and freezes. None: any time.
   */
  maintenance?: MaintenanceSpec;
}

export type AvailabilityPolicy = "HighlyAvailable" | "SingleReplica";

/** Each field defaulted by the CRD (DEFAULT_BACKUP). */
export interface BackupSpec {
  /** True: the Schedule makes no backups; those taken are kept. */
  paused?: boolean;
  /** Cron, 5 fields, UTC. */
  schedule?: string;
  /** 1..2160. */
  retentionHours?: number;
}

export interface RestoreSpec {
  /** One of this cluster's backups: `<status.clusterID>-backup-<yyyyMMddHHmmss>` (status.backup.recent). */
  backupName: string;
}

/** ARO HCP's hourly tier (its docs/backups.md): every hour, kept 7 days. */
export const DEFAULT_BACKUP: Required<BackupSpec> = {
  paused: false,
  schedule: "0 */1 * * *",
  retentionHours: 168,
};

export interface DnsSpec {
  /** Parent zone; when omitted the cluster controller uses the region's base domain. */
  baseDomain?: string;
  /** DNS label, at most 15 characters, starting with a letter. */
  baseDomainPrefix: string;
}

export type NetworkType = "OVNKubernetes" | "Other";

/** IPv4 only; pod, service and machine networks are disjoint; hostPrefix ≥ the pod prefix length. */
export interface NetworkSpec {
  networkType?: NetworkType;
  podCidr?: string;
  serviceCidr?: string;
  machineCidr?: string;
  /** 1..30. */
  hostPrefix?: number;
}

export type ApiVisibility = "Public" | "Private";

export interface ApiSpec {
  /** Immutable; defaults to Public. */
  visibility?: ApiVisibility;
  /**
   * IPv4 or IPv6 addresses and CIDR blocks allowed to reach the API server (at most 500); unset
   * or empty, any address may. Updatable. HostedCluster spec.networking.apiServer.allowedCIDRBlocks.
   */
  authorizedCIDRs?: string[];
}

export const INGRESS_TYPES = ["Public", "Private", "Disabled"] as const;
export type IngressType = (typeof INGRESS_TYPES)[number];

/** The first OpenShift minor HyperShift can run without the Ingress and Console capabilities. */
export const INGRESS_DISABLED_SINCE = { major: 4, minor: 20 } as const;

export interface IngressSpec {
  /**
   * Public (the default): a load balancer with a public IP; Private: a load balancer frontend in
   * the node subnet (HyperShift's ingress controller scope Internal); Disabled: no default ingress
   * and no console (HostedCluster spec.capabilities.disabled; OpenShift ≥ INGRESS_DISABLED_SINCE).
   */
  type?: IngressType;
}

export interface ClusterImageRegistrySpec {
  /**
   * Enabled (the default) or Disabled; Disabled turns off OpenShift's ImageRegistry capability
   * (HostedCluster spec.capabilities.disabled). Immutable.
   */
  state?: "Enabled" | "Disabled";
}

/** int32 each; unset, HyperShift's defaults. */
export interface ClusterAutoscalingSpec {
  /** ≥0: the most nodes the autoscaler grows the cluster to; unset, no limit. */
  maxNodesTotal?: number;
  /** ≥0: seconds pods get to end gracefully before a node is removed (HyperShift: 600). */
  maxPodGracePeriodSeconds?: number;
  /** ≥0: seconds a new node may take to join before it counts as failed (HyperShift: 15 minutes). */
  maxNodeProvisionTimeSeconds?: number;
  /** Pods of a lower priority do not make the autoscaler add nodes (HyperShift: -10). */
  podPriorityThreshold?: number;
}

export interface EtcdSpec {
  dataEncryption?: EtcdDataEncryptionSpec;
}

export type KeyManagementMode = "PlatformManaged" | "CustomerManaged";

/** customerManaged is set exactly when keyManagementMode is CustomerManaged. */
export interface EtcdDataEncryptionSpec {
  /** Defaulted to PlatformManaged; immutable. */
  keyManagementMode: KeyManagementMode;
  customerManaged?: CustomerManagedEncryptionSpec;
}

export interface CustomerManagedEncryptionSpec {
  /** Defaulted to KMS, the only type; immutable. */
  encryptionType?: "KMS";
  kms: KmsEncryptionSpec;
}

/** An Azure Key Vault key; the cluster's `kms` control plane operator identity uses it. */
export interface KmsEncryptionSpec {
  /** 3-24 letters, digits and single hyphens; immutable. */
  vaultName: string;
  /** Defaulted to Public; immutable. HostedCluster keyVaultAccess. */
  visibility?: "Public" | "Private";
  activeKey: KmsKeySpec;
}

export interface KmsKeySpec {
  /** 1-127 letters, digits and hyphens; immutable. */
  name: string;
  /** Letters and digits (Key Vault's are 32 hex digits); a new version rotates the key. */
  version: string;
}

/** Where nodes may pull `source`'s images from instead, tried in order. */
export interface ImageDigestMirror {
  /** A repository as image pull specs name it, e.g. quay.io/openshift-release-dev/ocp-release. ≤255. */
  source: string;
  /** 1..255 distinct repositories, each ≤255. */
  mirrors: string[];
}

export interface PlatformSpec {
  azure: AzurePlatformSpec;
}

export interface AzurePlatformSpec {
  /** UUID. */
  subscriptionId: string;
  /** UUID. */
  tenantId?: string;
  /** Azure region name, e.g. "eastus". */
  location: string;
  /** Resource group the service creates and owns; not the subnet's resource group. */
  managedResourceGroup: string;
  /** ARM subnet ID in subscriptionId. */
  subnetId: string;
  /**
   * ARM subnet ID in subnetId's virtual network, not subnetId itself: the control plane's private
   * link to the nodes (Swift). Required with a Private API; set once, then immutable.
   */
  vnetIntegrationSubnetId?: string;
  /** ARM network security group ID. */
  networkSecurityGroupId: string;
  /** Defaults to LoadBalancer, the only value. */
  outboundType?: "LoadBalancer";
  /** The one mutable part of platform. */
  identities: AzureIdentities;
}

/** Values are ARM user-assigned identity IDs (…/Microsoft.ManagedIdentity/userAssignedIdentities/<name>). */
export interface AzureIdentities {
  /** Operator name (DNS label) → identity. At least one. */
  controlPlaneOperators: Record<string, string>;
  dataPlaneOperators?: Record<string, string>;
  serviceManagedIdentity: string;
}

export interface PlacementSpec {
  /** Matched against ManagementCluster spec.labels. */
  managementClusterSelector?: LabelSelector;
}

export interface HcpClusterStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  phase?: Phase;
  /** The version the control plane runs (major.minor.patch). */
  version?: string;
  /**
   * The release the control plane is asked to run now: spec.version resolved on the update graph
   * (the next hop when an upgrade takes several).
   */
  desiredVersion?: string;
  apiURL?: string;
  consoleURL?: string;
  /** The cluster's OIDC issuer: HostedCluster spec.issuerURL, where its discovery document and JWKS are published. */
  issuerURL?: string;
  /** Name of the ManagementCluster the control plane was placed on. */
  managementCluster?: string;
  /** UUID; also the HostedCluster's spec.clusterID. */
  clusterID?: string;
  /** Namespace of the HostedCluster on the management cluster. */
  hostedClusterNamespace?: string;
  /** The Azure resources the service made for the cluster, as last found ready. */
  azure?: HcpClusterAzureStatus;
  /** The service-account signing keys by key ID: held, published, and applied on the management cluster. */
  serviceAccountSigningKey?: HcpClusterSigningKeyStatus;
  /** The template revision the cluster's work was built from, and the one this service builds now. */
  workTemplate?: HcpClusterWorkTemplateStatus;
  /** The backup Schedule as Velero last reported it. */
  backup?: HcpClusterBackupStatus;
  /** The restore spec.restore asks for (or last asked for), as Velero reported it. */
  restore?: HcpClusterRestoreStatus;
}

export interface HcpClusterBackupStatus {
  /** The Schedule's phase: New, Enabled or FailedValidation. */
  phase?: string;
  /** RFC 3339: when the Schedule last started a backup. */
  lastBackupTime?: string;
  paused: boolean;
  /** Velero's validation errors, when it has any. */
  message?: string;
  /** The names of the newest completed backups, newest first (at most RECENT_BACKUPS_MAX). */
  recent?: string[];
}

/** Velero's Restore phases, as status.restore reports them. */
export type RestorePhase =
  "New" | "InProgress" | "Completed" | "PartiallyFailed" | "Failed" | "FailedValidation";

/** The restore spec.restore asked for, as Velero on the management cluster last reported it. */
export interface HcpClusterRestoreStatus {
  /** The backup restored from (spec.restore.backupName when it was asked). */
  backupName: string;
  /** The Velero Restore's name in the management cluster's velero namespace. */
  restoreName: string;
  /** New until Velero reports the Restore. */
  phase: RestorePhase;
  startedAt?: string;
  completedAt?: string;
  /** Objects restored so far, of itemsTotal. */
  itemsRestored?: number;
  itemsTotal?: number;
  warnings?: number;
  errors?: number;
  /** Why it failed: Velero's failureReason, or its first validation error. */
  failureReason?: string;
}

/** WORK_TEMPLATE_REVISION as the cluster's work carries it and as the cluster controller has it. */
export interface HcpClusterWorkTemplateStatus {
  workRevision: number;
  currentRevision: number;
}

/** Key IDs (the `kid` a token carries) of the cluster's service-account signing keys. */
export interface HcpClusterSigningKeyStatus {
  /** The key the HostedCluster is given to sign with. */
  activeKeyId?: string;
  /** The keys of the JWKS last published at the issuer. */
  publishedKeyIds?: string[];
  /** The key the Secret on the management cluster holds, as its agent reported it. */
  appliedKeyId?: string;
}

export interface HcpClusterAzureStatus {
  /** The cluster's DNS zone and the name servers Azure gave it. */
  dnsZone?: { name: string; nameServers: string[] };
  /** The public IP address of the cluster's API (its api record). */
  apiIP?: string;
  /**
   * The address of the cluster's ingress (its *.apps record): apiIP when the ingress is Public, a
   * private address in the node subnet when Private; none when Disabled.
   */
  ingressIP?: string;
}
