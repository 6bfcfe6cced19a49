/**
 * The ARM frontend's vocabulary on the service cluster: the annotations and labels it writes on
 * HcpClusters, NodePools, ExternalAuths, subscription namespaces and operation ConfigMaps, which
 * hcpctl and the tests read too, and which provisioning states end an operation.
 */
import type { ProvisioningState } from "./operation.ts";

export const ARM_ANNOTATIONS = {
  /** The ARM resource ID with the casing of the request that created it. */
  resourceId: "hcp.aro.dev/arm-resource-id",
  /** JSON: tags, systemData and identity. */
  envelope: "hcp.aro.dev/arm-envelope",
  /** JSON: the ARM properties the CR spec has no field for. */
  properties: "hcp.aro.dev/arm-properties",
  /** The ID of the ARM operation that last changed the resource. */
  operation: "hcp.aro.dev/arm-operation-id",
  /** Create, Update or Delete: what that operation does. */
  operationRequest: "hcp.aro.dev/arm-operation-request",
  /** By when that operation must end (frontend/operations/deadlines.ts). */
  operationDeadline: "hcp.aro.dev/arm-operation-deadline",
  /** JSON: the document of that operation when it is a Create or Update (frontend/operations/). */
  operationDoc: "hcp.aro.dev/arm-operation",
  /** JSON: the earlier operations on the resource, as they ended, newest first (frontend/operations/). */
  operationHistory: "hcp.aro.dev/arm-operation-history",
  correlationRequestId: "hcp.aro.dev/correlation-request-id",
  clientRequestId: "hcp.aro.dev/client-request-id",
  /** On a subscription's namespace: the subscription document ARM sent, as JSON. */
  subscription: "hcp.aro.dev/arm-subscription",
} as const;

export const ARM_LABELS = {
  /** sha256 of the lower-cased resource group, shortened (resource group names are not label values). */
  resourceGroup: "hcp.aro.dev/arm-resource-group-hash",
  /** On node pools and external auths: the HcpCluster they belong to. */
  cluster: "hcp.aro.dev/arm-cluster",
  /** On a subscription's namespace: the lower-cased subscription ID. */
  subscription: "hcp.aro.dev/arm-subscription",
  subscriptionState: "hcp.aro.dev/arm-subscription-state",
  /** On operation ConfigMaps: "true". */
  operation: "hcp.aro.dev/arm-operation",
  /** On operation ConfigMaps: the CR the operation acts on. */
  operationTarget: "hcp.aro.dev/arm-operation-target",
  /**
   * On operation ConfigMaps: "pending" when the operation carries an Azure-AsyncNotificationUri; on
   * HcpClusters, NodePools and ExternalAuths: the ID of their operation that does (frontend/operations/notifier.ts).
   */
  notification: "hcp.aro.dev/arm-notification",
  /** On operation ConfigMaps, by the notifier: "sent" or "abandoned". */
  notified: "hcp.aro.dev/arm-notified",
  /** On HcpClusters and NodePools: the first 8 hex digits of the IDs of their operations (frontend/operations/). */
  operationKey: "hcp.aro.dev/arm-operation-key",
} as const;

/** The provisioning states an operation ends in. */
export const TERMINAL_STATES = [
  "Succeeded",
  "Failed",
  "Canceled",
] as const satisfies readonly ProvisioningState[];

export function isTerminal(state: ProvisioningState): boolean {
  return TERMINAL_STATES.some((terminal) => terminal === state);
}
