/** HyperShift's HostedCluster spec: what a creator sets (for ARO HCP, the Azure platform). */
import type { KubeObject } from "../../meta/v1.ts";
import type { AzurePlatformSpec, SecretEncryptionSpec } from "./azure.ts";
import type { HostedClusterStatus } from "./hostedcluster-status.ts";
import type {
  AvailabilityPolicy,
  HOSTED_CLUSTER_KIND,
  HYPERSHIFT_API_VERSION,
  LocalObjectReference,
  PlatformType,
  Release,
  Toleration,
} from "./meta.ts";

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
