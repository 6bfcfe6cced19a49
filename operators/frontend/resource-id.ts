/**
 * ARM resource IDs of the two resource types, the name rules of their path segments, and the
 * links (operation status and result, nextLink) built from them.
 */
import { shorten } from "./body-schema.ts";
import { CODES, CloudError } from "./errors.ts";

export const PROVIDER = "Microsoft.RedHatOpenShift";
export const CLUSTER_TYPE = `${PROVIDER}/hcpOpenShiftClusters`;
export const NODE_POOL_TYPE = `${PROVIDER}/hcpOpenShiftClusters/nodePools`;

export const CLUSTER_NAME = /^[a-zA-Z]([-a-zA-Z0-9]{0,52}[a-zA-Z0-9])?$/;
export const NODE_POOL_NAME = /^[a-zA-Z]([-a-zA-Z0-9]{0,13}[a-zA-Z0-9])?$/;
const UUID = /^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/;
const RESOURCE_GROUP = /^[-\w.()]{0,89}[-\w()]$/;

export type ResourceKind = "cluster" | "nodePool";

/** A cluster or node pool, by its ARM coordinates (casing as the caller sent it). */
export interface ResourceId {
  kind: ResourceKind;
  subscriptionId: string;
  resourceGroup: string;
  cluster: string;
  /** Only for node pools. */
  nodePool?: string;
}

export function formatResourceId(id: ResourceId): string {
  const cluster = `/subscriptions/${id.subscriptionId}/resourceGroups/${id.resourceGroup}/providers/${CLUSTER_TYPE}/${id.cluster}`;
  return id.nodePool === undefined ? cluster : `${cluster}/nodePools/${id.nodePool}`;
}

export function resourceName(id: ResourceId): string {
  return id.nodePool ?? id.cluster;
}

export function resourceType(kind: ResourceKind): string {
  return kind === "cluster" ? CLUSTER_TYPE : NODE_POOL_TYPE;
}

/** The parent cluster of a node pool. */
export function clusterOf(id: ResourceId): ResourceId {
  return {
    kind: "cluster",
    subscriptionId: id.subscriptionId,
    resourceGroup: id.resourceGroup,
    cluster: id.cluster,
  };
}

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
  const pattern = kind === "cluster" ? CLUSTER_NAME : NODE_POOL_NAME;
  if (!pattern.test(name))
    throw new CloudError(400, {
      code: CODES.InvalidResourceName,
      message: `The resource name '${shorten(name)}' is invalid for ${resourceType(kind)}: it must match ${pattern.source}.`,
      target: "name",
    });
}

/** Validates the names in a path's parameters (B.1 patterns) and returns the resource they identify, if any. */
export function resourceIdFromPath(params: Record<string, string>): ResourceId | undefined {
  const { subscriptionId, resourceGroup, cluster, nodePool } = params;
  if (subscriptionId !== undefined) checkSubscriptionId(subscriptionId);
  if (resourceGroup !== undefined) checkResourceGroup(resourceGroup);
  if (cluster !== undefined) checkResourceName("cluster", cluster);
  if (nodePool !== undefined) checkResourceName("nodePool", nodePool);
  if (subscriptionId === undefined || resourceGroup === undefined || cluster === undefined) return undefined;
  return nodePool === undefined
    ? { kind: "cluster", subscriptionId, resourceGroup, cluster }
    : { kind: "nodePool", subscriptionId, resourceGroup, cluster, nodePool };
}

/** Normalises an ARM location ("East US" → "eastus"). */
export function normalizeLocation(location: string): string {
  return location.toLowerCase().replace(/\s+/g, "");
}

export function operationStatusPath(subscriptionId: string, location: string, operationId: string): string {
  return `/subscriptions/${subscriptionId}/providers/${PROVIDER}/locations/${location}/hcpOperationStatuses/${operationId}`;
}

export function operationResultPath(subscriptionId: string, location: string, operationId: string): string {
  return `/subscriptions/${subscriptionId}/providers/${PROVIDER}/locations/${location}/hcpOperationResults/${operationId}`;
}
