/** The Azure blocks of a HostedCluster: its platform, managed identities and KMS encryption. */
import type { LocalObjectReference } from "./meta.ts";

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
