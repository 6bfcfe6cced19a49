/**
 * HyperShift's HostedCluster and NodePool (`hypershift.openshift.io/v1beta1`), the subset this
 * project writes and reads. Mirrors the "Default" feature-set CRDs the management clusters serve,
 * taken from `github.com/openshift/hypershift@v0.1.75` (hack/harness/upstream.ts):
 * `cmd/install/assets/hypershift-operator/zz_generated.crd-manifests/{hostedclusters-Hypershift-Default,nodepools-Default}.crd.yaml`.
 * JSON names are HyperShift's; "default" marks fields the apiserver fills in, "immutable" those a
 * CEL rule freezes. Spec types cover what a creator sets (for ARO HCP, the Azure platform);
 * status types cover everything HyperShift reports that a client reads. Fields of other
 * platforms and the large OpenShift configuration blocks are left open (`unknown`).
 *
 * Facts that differ from newer HyperShift (see the API reference): the v0.1.75 CRD has no
 * `AzureBleuCloud`, no `Swift` private type, and refuses `autoScaling.min: 0` outside AWS.
 */
import type { Condition, ConditionStatus, KubeObject, ResourceType } from "../meta/v1.ts";

export const HYPERSHIFT_GROUP = "hypershift.openshift.io";
export const HYPERSHIFT_VERSION = "v1beta1";
export const HYPERSHIFT_API_VERSION = `${HYPERSHIFT_GROUP}/${HYPERSHIFT_VERSION}` as const;
export const HOSTED_CLUSTER_KIND = "HostedCluster";
export const NODE_POOL_KIND = "NodePool";

export const HostedClusterResource = {
  group: HYPERSHIFT_GROUP,
  version: HYPERSHIFT_VERSION,
  kind: HOSTED_CLUSTER_KIND,
  plural: "hostedclusters",
  namespaced: true,
} as const satisfies ResourceType;

/** HyperShift's NodePool; not hcp.aro.dev's (../v1alpha1/nodepool.ts). Has the scale subresource. */
export const NodePoolResource = {
  group: HYPERSHIFT_GROUP,
  version: HYPERSHIFT_VERSION,
  kind: NODE_POOL_KIND,
  plural: "nodepools",
  namespaced: true,
} as const satisfies ResourceType;

/**
 * Swift networking for the control plane (ARO HCP): the name of a PodNetworkInstance in the hosted
 * control plane's namespace (../acn/v1alpha1.ts) that HyperShift's router pods join. HyperShift's
 * `SwiftPodNetworkInstanceAnnotation`; newer HyperShift has `spec.platform.azure.private.swift`.
 */
export const SWIFT_POD_NETWORK_INSTANCE_ANNOTATION = "hypershift.openshift.io/swift-pod-network-instance";

/** The finalizer the HyperShift operator puts on HostedClusters and NodePools. */
export const HYPERSHIFT_FINALIZER = "hypershift.openshift.io/finalizer";

/**
 * On an empty Secret beside a HostedCluster that an OIDC client's clientSecret names: HyperShift
 * (on ARO HCP) creates it empty in the hosted cluster's openshift-config and never overwrites it
 * there, so the customer puts the secret in on their own cluster, not on the service's.
 */
export const HOSTED_CLUSTER_SOURCED_ANNOTATION = "hypershift.openshift.io/hosted-cluster-sourced";

/** `<hcNamespace>-<hcName with "." → "-">`, HyperShift's `HostedControlPlaneNamespace`. */
export function controlPlaneNamespaceName(namespace: string, name: string): string {
  return `${namespace}-${name.replaceAll(".", "-")}`;
}

/** The admin kubeconfig Secret HyperShift writes beside the HostedCluster (key `kubeconfig`). */
export function adminKubeconfigSecretName(hostedClusterName: string): string {
  return `${hostedClusterName}-admin-kubeconfig`;
}
export const ADMIN_KUBECONFIG_KEY = "kubeconfig";

/**
 * The control plane's root CA as the control-plane-operator publishes it in the control plane's
 * namespace (`manifests.RootCAConfigMap`): the CA the kube-apiserver's serving certificate chains
 * to, and the certificate-authority-data of the admin kubeconfig. The certificate only; the key
 * stays in the Secret of the same name.
 */
export const ROOT_CA_CONFIGMAP = "root-ca";
export const ROOT_CA_KEY = "ca.crt";

// ---------------------------------------------------------------------------------------------
// Shared pieces

export interface LocalObjectReference {
  /** default "". */
  name: string;
}

export type PlatformType = "AWS" | "Azure" | "IBMCloud" | "KubeVirt" | "Agent" | "PowerVS" | "None";

/** `^(\w+\S+)$`, ≤253. */
export interface Release {
  image: string;
}

export type AvailabilityPolicy = "HighlyAvailable" | "SingleReplica";

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

// ---------------------------------------------------------------------------------------------
// HostedCluster

export interface HostedCluster extends KubeObject {
  apiVersion?: typeof HYPERSHIFT_API_VERSION;
  kind?: typeof HOSTED_CLUSTER_KIND;
  spec: HostedClusterSpec;
  status?: HostedClusterStatus;
}

/**
 * CEL rules on the whole spec: ≥ 4 services (3 on IBMCloud), services immutable; on Azure,
 * Konnectivity and Ignition use Route, and OAuthServer uses Route with ManagedIdentities (Route or
 * LoadBalancer with WorkloadIdentities); serviceAccountSigningKey needs issuerURL.
 */
export interface HostedClusterSpec {
  release: Release;
  /** The control plane's own release, when it differs from the data plane's. */
  controlPlaneRelease?: Release;
  /** RFC 4122 UUID, immutable once set; generated when empty. */
  clusterID?: string;
  /** `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, ≤253, immutable once set. */
  infraID?: string;
  /** ≤100, e.g. "stable-4.19". */
  channel?: string;
  /** Absolute URL. */
  updateService?: string;
  platform: PlatformSpec;
  /** default "HighlyAvailable", immutable. */
  controllerAvailabilityPolicy?: AvailabilityPolicy;
  /** default "SingleReplica". */
  infrastructureAvailabilityPolicy?: AvailabilityPolicy;
  dns?: DNSSpec;
  /** A DNS name; ARO HCP sets `api.<baseDomainPrefix>.<baseDomain>`. */
  kubeAPIServerDNSName?: string;
  /** default { clusterNetwork: [{cidr: 10.132.0.0/14}], networkType: OVNKubernetes, serviceNetwork: [{cidr: 172.31.0.0/16}] }. */
  networking: ClusterNetworking;
  /** default Managed with an 8Gi PersistentVolume. */
  etcd: EtcdSpec;
  /** 4–6 entries, immutable. */
  services: ServicePublishingStrategyMapping[];
  pullSecret: LocalObjectReference;
  sshKey?: LocalObjectReference;
  /** default "https://kubernetes.default.svc", immutable. */
  issuerURL?: string;
  serviceAccountSigningKey?: LocalObjectReference;
  auditWebhook?: LocalObjectReference;
  additionalTrustBundle?: LocalObjectReference;
  /** Cannot be removed once set. */
  secretEncryption?: SecretEncryptionSpec;
  /** Immutable. */
  fips?: boolean;
  /** RFC 3339 date or "true"/"false" (any case of the first letter), ≤35. */
  pausedUntil?: string;
  /** default "management". */
  olmCatalogPlacement?: "management" | "guest";
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  /** ≤20 labels for the control-plane pods. */
  labels?: Record<string, string>;
  /** default {}. */
  capabilities?: Capabilities;
  imageContentSources?: Array<{ source: string; mirrors?: string[] }>;
  autoscaling?: ClusterAutoscaling;
  /** OpenShift configuration (apiServer, authentication incl. oidcProviders, ingress, oauth, proxy, …). */
  configuration?: ClusterConfiguration;
  /** Operator settings: the ingress operator's typed here, the cluster network operator's not. */
  operatorConfiguration?: OperatorConfiguration;
}

export interface OperatorConfiguration {
  clusterNetworkOperator?: Record<string, unknown>;
  ingressOperator?: {
    /**
     * How the default ingress controller is published (OpenShift's operator/v1 type). Unset on
     * Azure: LoadBalancerService with scope External.
     */
    endpointPublishingStrategy?: EndpointPublishingStrategy;
  };
}

/** The subset for a LoadBalancerService; `loadBalancer` only with that type. */
export interface EndpointPublishingStrategy {
  type: "LoadBalancerService" | "HostNetwork" | "Private" | "NodePortService";
  loadBalancer?: {
    /** Required. */
    scope: "Internal" | "External";
    /** Required; default Managed (the ingress operator keeps the *.apps record). */
    dnsManagementPolicy: "Managed" | "Unmanaged";
    allowedSourceRanges?: string[];
  };
}

export interface PlatformSpec {
  /** Immutable. */
  type: PlatformType;
  azure?: AzurePlatformSpec;
  /** Other platforms are outside this project; their blocks are not typed. */
  aws?: Record<string, unknown>;
  kubevirt?: Record<string, unknown>;
  agent?: Record<string, unknown>;
  ibmcloud?: Record<string, unknown>;
  powervs?: Record<string, unknown>;
}

export type AzureCloud =
  "AzurePublicCloud" | "AzureUSGovernmentCloud" | "AzureChinaCloud" | "AzureGermanCloud" | "AzureStackCloud";

export type AzureTopology = "Public" | "PublicAndPrivate" | "Private";

/**
 * CEL: `private` iff topology is Private or PublicAndPrivate, cannot be added or removed, no
 * Public ↔ non-Public transition, topology cannot be removed once set.
 */
export interface AzurePlatformSpec {
  /** default "AzurePublicCloud". */
  cloud?: AzureCloud;
  /** ≤255, immutable. */
  location: string;
  /** The managed resource group. `^[a-zA-Z0-9_()\-\.]{1,89}[a-zA-Z0-9_()\-]$`, default "default", immutable. */
  resourceGroup: string;
  /** ≤255, immutable. */
  vnetID: string;
  /** ARM subnet ID (11 path segments), immutable. */
  subnetID: string;
  /** ≤255, immutable. */
  subscriptionID: string;
  /** ≤255, immutable. */
  securityGroupID: string;
  /** ≤255. */
  tenantID: string;
  topology?: AzureTopology;
  private?: AzurePrivateSpec;
  azureAuthenticationConfig: AzureAuthenticationConfiguration;
}

export interface AzurePrivateSpec {
  /** Immutable. */
  type: "PrivateLink";
  /** Only with type PrivateLink; at least one field. */
  privateLink?: { natSubnetID?: string; additionalAllowedSubscriptions?: string[] };
}

/** Exactly the block matching the type is set (CEL). */
export type AzureAuthenticationConfiguration =
  | {
      /** ARO HCP. */
      azureAuthenticationConfigType: "ManagedIdentities";
      managedIdentities: AzureResourceManagedIdentities;
    }
  | {
      /** Self-managed Azure. */
      azureAuthenticationConfigType: "WorkloadIdentities";
      workloadIdentities: AzureWorkloadIdentities;
    };

export type ObjectEncoding = "utf-8" | "hex" | "base64";

/** A managed identity whose certificate is in the key vault, under `credentialsSecretName`. */
export interface ManagedIdentity {
  /** UUID. */
  clientID?: string;
  /** `^[a-zA-Z0-9-]+$`, 1–127. */
  credentialsSecretName: string;
  objectEncoding: ObjectEncoding;
}

export interface AzureResourceManagedIdentities {
  controlPlane: ControlPlaneManagedIdentities;
  dataPlane: DataPlaneManagedIdentities;
}

export interface ControlPlaneManagedIdentities {
  managedIdentitiesKeyVault: { name: string; tenantID: string };
  cloudProvider: ManagedIdentity;
  nodePoolManagement: ManagedIdentity;
  controlPlaneOperator: ManagedIdentity;
  imageRegistry?: ManagedIdentity;
  ingress: ManagedIdentity;
  network: ManagedIdentity;
  disk: ManagedIdentity;
  file: ManagedIdentity;
}

export interface DataPlaneManagedIdentities {
  diskMSIClientID: string;
  fileMSIClientID: string;
  imageRegistryMSIClientID: string;
}

/** Each `{ clientID }` (UUID). */
export interface AzureWorkloadIdentities {
  imageRegistry: { clientID: string };
  ingress: { clientID: string };
  file: { clientID: string };
  disk: { clientID: string };
  nodePoolManagement: { clientID: string };
  cloudProvider: { clientID: string };
  network: { clientID: string };
  controlPlaneOperator?: { clientID: string };
}

export interface DNSSpec {
  /** A domain name, ≤253, immutable once set. */
  baseDomain: string;
  /** A domain name, ≤253, immutable. */
  baseDomainPrefix?: string;
  publicZoneID?: string;
  privateZoneID?: string;
}

export type NetworkType = "OpenShiftSDN" | "Calico" | "OVNKubernetes" | "Other";

/** CIDRs of the three networks must not repeat each other (CEL). */
export interface ClusterNetworking {
  /** 1–2 entries, immutable; default [{ cidr: "10.132.0.0/14" }]. */
  clusterNetwork?: Array<{ cidr: string; hostPrefix?: number }>;
  /** 1–2 entries, immutable; default [{ cidr: "172.31.0.0/16" }]. */
  serviceNetwork?: Array<{ cidr: string }>;
  /** 1–2 entries, immutable. */
  machineNetwork?: Array<{ cidr: string }>;
  /** default "OVNKubernetes". */
  networkType?: NetworkType;
  /** Immutable; Enabled only with networkType Other. */
  allocateNodeCIDRs?: "Enabled" | "Disabled";
  apiServer?: { advertiseAddress?: string; port?: number; allowedCIDRBlocks?: string[] };
}

/** Exactly the block matching managementType is set (CEL). */
export type EtcdSpec =
  | {
      /** Immutable. */
      managementType: "Managed";
      managed: {
        storage: {
          type: "PersistentVolume";
          /** size: quantity, default "8Gi", immutable; storageClassName immutable. */
          persistentVolume?: { size?: string | number; storageClassName?: string };
          /** At most one URL. */
          restoreSnapshotURL?: string[];
        };
      };
    }
  | {
      managementType: "Unmanaged";
      unmanaged: { endpoint: string; tls: { clientSecret: LocalObjectReference } };
    };

export type ServiceType = "APIServer" | "OAuthServer" | "OIDC" | "Konnectivity" | "Ignition" | "OVNSbDb";

export type PublishingStrategyType = "LoadBalancer" | "NodePort" | "Route" | "None" | "S3";

export interface ServicePublishingStrategyMapping {
  service: ServiceType;
  servicePublishingStrategy: ServicePublishingStrategy;
}

/** Only the block matching `type` may be set (nodePort required with NodePort). */
export interface ServicePublishingStrategy {
  type: PublishingStrategyType;
  /** A domain name. */
  loadBalancer?: { hostname?: string };
  /** A domain name. */
  route?: { hostname?: string };
  nodePort?: { address: string; port?: number };
}

export interface SecretEncryptionSpec {
  type: "kms" | "aescbc";
  aescbc?: { activeKey: LocalObjectReference; backupKey?: LocalObjectReference };
  kms?: {
    provider: "IBMCloud" | "AWS" | "Azure";
    azure?: AzureKMSSpec;
    aws?: Record<string, unknown>;
    ibmcloud?: Record<string, unknown>;
  };
}

export interface AzureKMSKey {
  keyVaultName: string;
  keyName: string;
  keyVersion: string;
}

export interface AzureKMSSpec {
  activeKey: AzureKMSKey;
  backupKey?: AzureKMSKey;
  kms: ManagedIdentity;
  keyVaultAccess?: "Public" | "Private" | "";
}

export type OptionalCapability =
  "ImageRegistry" | "openshift-samples" | "Insights" | "baremetal" | "Console" | "NodeTuning" | "Ingress";

export interface Capabilities {
  enabled?: OptionalCapability[];
  disabled?: OptionalCapability[];
}

export interface ClusterAutoscaling {
  scaling?: "ScaleUpOnly" | "ScaleUpAndScaleDown";
  maxNodesTotal?: number;
  maxPodGracePeriod?: number;
  /** A Go duration, e.g. "15m". */
  maxNodeProvisionTime?: string;
  podPriorityThreshold?: number;
  maxFreeDifferenceRatioPercent?: number;
  balancingIgnoredLabels?: string[];
  expanders?: Array<"LeastWaste" | "Priority" | "Random">;
  scaleDown?: {
    delayAfterAddSeconds?: number;
    delayAfterDeleteSeconds?: number;
    delayAfterFailureSeconds?: number;
    unneededDurationSeconds?: number;
    utilizationThresholdPercent?: number;
  };
}

/**
 * config.openshift.io Authentication as HyperShift takes it (ExternalOIDC, on by default): with
 * `type: OIDC`, at most one provider (CRD maxItems 1), its issuer https.
 */
export interface AuthenticationSpec {
  type?: "" | "None" | "IntegratedOAuth" | "OIDC";
  oidcProviders?: OIDCProvider[];
  [field: string]: unknown;
}

export interface OIDCProvider {
  name: string;
  issuer: {
    issuerURL: string;
    audiences: string[];
    /** A ConfigMap in the HostedCluster's namespace with key `ca-bundle.crt`. */
    issuerCertificateAuthority?: { name: string };
  };
  /** Unique by (componentNamespace, componentName); at most 20. */
  oidcClients?: Array<{
    componentName: string;
    componentNamespace: string;
    clientID: string;
    clientSecret?: { name: string };
    extraScopes?: string[];
  }>;
  claimMappings: {
    username: {
      claim: string;
      prefixPolicy?: "" | "NoPrefix" | "Prefix";
      prefix?: { prefixString: string };
    };
    groups?: { claim: string; prefix?: string };
  };
  claimValidationRules?: Array<{
    type: "RequiredClaim";
    requiredClaim: { claim: string; requiredValue: string };
  }>;
}

/** OpenShift config.openshift.io specs by name; each left open but authentication. */
export interface ClusterConfiguration {
  apiServer?: Record<string, unknown>;
  authentication?: AuthenticationSpec;
  featureGate?: Record<string, unknown>;
  image?: Record<string, unknown>;
  ingress?: Record<string, unknown>;
  network?: Record<string, unknown>;
  oauth?: Record<string, unknown>;
  operatorhub?: Record<string, unknown>;
  proxy?: Record<string, unknown>;
  scheduler?: Record<string, unknown>;
}

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

// ---------------------------------------------------------------------------------------------
// NodePool

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
