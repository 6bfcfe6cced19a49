/**
 * Resource names: the subscription ID, resource group and resource names in a path are checked
 * against ARM's rules (B.1 patterns) once per request, and the resource they identify travels on
 * the request to its handler (ArmRequest.resource).
 */
import { shorten } from "../api/json.ts";
import { CODES, CloudError } from "../errors.ts";
import { resourceType, type ResourceId, type ResourceKind } from "../resource-id.ts";

export const CLUSTER_NAME = /^[a-zA-Z]([-a-zA-Z0-9]{0,52}[a-zA-Z0-9])?$/;
export const NODE_POOL_NAME = /^[a-zA-Z]([-a-zA-Z0-9]{0,13}[a-zA-Z0-9])?$/;
/** ARO HCP's externalAuthName: the node pool's rule (at most 15 characters). */
export const EXTERNAL_AUTH_NAME = NODE_POOL_NAME;
const UUID = /^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/;
const RESOURCE_GROUP = /^[-\w.()]{0,89}[-\w()]$/;

export function checkSubscriptionId(subscriptionId: string): void {
  if (!UUID.test(subscriptionId))
    throw new CloudError(400, {
      code: CODES.InvalidSubscriptionID,
      message: `The provided subscription identifier '${shorten(subscriptionId)}' is malformed or invalid.`,
    });
}

export function checkResourceGroup(resourceGroup: string): void {
  if (!RESOURCE_GROUP.test(resourceGroup))
    throw new CloudError(400, {
      code: CODES.InvalidResourceGroupName,
      message: `Resource group '${shorten(resourceGroup)}' is invalid: 1-90 letters, digits, '_', '-', '.', '(', ')', not ending in '.'.`,
    });
}

export function checkResourceName(kind: ResourceKind, name: string): void {
  const pattern =
    kind === "cluster" ? CLUSTER_NAME : kind === "nodePool" ? NODE_POOL_NAME : EXTERNAL_AUTH_NAME;
  if (!pattern.test(name))
    throw new CloudError(400, {
      code: CODES.InvalidResourceName,
      message: `The resource name '${shorten(name)}' is invalid for ${resourceType(kind)}: it must match ${pattern.source}.`,
      target: "name",
    });
}

/** Checks the names in a path's parameters (B.1 patterns); the resource they identify, if any. */
export function resourceIdFromPath(params: Record<string, string>): ResourceId | undefined {
  const { subscriptionId, resourceGroup, cluster, nodePool, externalAuth } = params;
  if (subscriptionId !== undefined) checkSubscriptionId(subscriptionId);
  if (resourceGroup !== undefined) checkResourceGroup(resourceGroup);
  if (cluster !== undefined) checkResourceName("cluster", cluster);
  if (nodePool !== undefined) checkResourceName("nodePool", nodePool);
  if (externalAuth !== undefined) checkResourceName("externalAuth", externalAuth);
  if (subscriptionId === undefined || resourceGroup === undefined || cluster === undefined) return undefined;
  const base = { subscriptionId, resourceGroup, cluster };
  if (nodePool !== undefined) return { kind: "nodePool", ...base, nodePool };
  if (externalAuth !== undefined) return { kind: "externalAuth", ...base, externalAuth };
  return { kind: "cluster", ...base };
}
