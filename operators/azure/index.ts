/**
 * The Azure layer of the operators: clients for ARM (endpoint, identity and TLS trust from
 * configuration), error classification, and idempotent, ownership-tagged ensure/delete operations
 * for what a hosted cluster needs in Azure. Controllers import from here only.
 */
export type { AzureCallOptions } from "./cancel.ts";
export {
  BlobStoreError,
  createBlobStore,
  HttpsBlobStore,
  STORAGE_SCOPE,
  type BlobCallOptions,
  type BlobStore,
} from "./blob.ts";
export { AzureClients, createAzureClients } from "./clients.ts";
export {
  DEFAULT_ARM_ENDPOINT,
  resolveAzureConfig,
  type AzureConfig,
  type AzureCredentialConfig,
  type AzureRetryConfig,
  type ResolvedAzureConfig,
} from "./config.ts";
export {
  AzureConflictError,
  AzureRetryableError,
  AzureUserError,
  classifyAzureError,
  isAzureError,
  RESOURCE_OWNED_BY_ANOTHER,
  type AzureError,
  type AzureErrorKind,
} from "./errors.ts";
export { CLUSTER_TAG, OWNER_TAG, ownerTags, type Owner } from "./ownership.ts";
export type { DeleteResult, InProgress, Outcome, Ready } from "./reconcile.ts";
export { deleteResourceGroup, ensureResourceGroup, type ResourceGroupParams } from "./resourcegroup.ts";
export {
  DEFAULT_A_TTL_SECONDS,
  DEFAULT_NS_TTL_SECONDS,
  deleteARecord,
  deleteDnsZone,
  deleteNsDelegation,
  ensureARecord,
  ensureDnsZone,
  ensureNsDelegation,
  type ARecordParams,
  type DnsZoneParams,
  type NsDelegationParams,
} from "./dns.ts";
export {
  deleteLoadBalancer,
  deletePublicIp,
  ensureLoadBalancer,
  ensurePublicIp,
  FRONTEND_NAME,
  type FrontendAddress,
  type LoadBalancerParams,
  type LoadBalancerReady,
  type NetworkResourceParams,
  type PublicIpParams,
} from "./network.ts";
