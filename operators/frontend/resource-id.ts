/**
 * ARM resource IDs of the three resource types (clusters and their node pools and external auths), the name rules of their path segments, and the
 * links (operation status and result, nextLink) built from them.
 */
import type { ArmResourceKind } from "../api/v1alpha1/index.ts";
import { shorten } from "./body-schema.ts";
import { CODES, CloudError } from "./errors.ts";

export const PROVIDER = "Microsoft.RedHatOpenShift";
export const CLUSTER_TYPE = `${PROVIDER}/hcpOpenShiftClusters`;
export const NODE_POOL_TYPE = `${PROVIDER}/hcpOpenShiftClusters/nodePools`;
export const EXTERNAL_AUTH_TYPE = `${PROVIDER}/hcpOpenShiftClusters/externalAuths`;

export const CLUSTER_NAME = /^[a-zA-Z]([-a-zA-Z0-9]{0,52}[a-zA-Z0-9])?$/;
export const NODE_POOL_NAME = /^[a-zA-Z]([-a-zA-Z0-9]{0,13}[a-zA-Z0-9])?$/;
/** ARO HCP's externalAuthName: the node pool's rule (at most 15 characters). */
export const EXTERNAL_AUTH_NAME = NODE_POOL_NAME;
const UUID = /^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/;
const RESOURCE_GROUP = /^[-\w.()]{0,89}[-\w()]$/;

export type ResourceKind = ArmResourceKind;

/** A cluster, node pool or external auth, by its ARM coordinates (casing as the caller sent it). */
export interface ResourceId {
  kind: ResourceKind;
  subscriptionId: string;
  resourceGroup: string;
  cluster: string;
  /** Only for node pools. */
  nodePool?: string;
  /** Only for external auths. */
  externalAuth?: string;
}

export function formatResourceId(id: ResourceId): string {
  const cluster = `/subscriptions/${id.subscriptionId}/resourceGroups/${id.resourceGroup}/providers/${CLUSTER_TYPE}/${id.cluster}`;
  if (id.nodePool !== undefined) return `${cluster}/nodePools/${id.nodePool}`;
  if (id.externalAuth !== undefined) return `${cluster}/externalAuths/${id.externalAuth}`;
  return cluster;
}

export function resourceName(id: ResourceId): string {
  return id.nodePool ?? id.externalAuth ?? id.cluster;
}

const TYPES: Record<ResourceKind, string> = {
  cluster: CLUSTER_TYPE,
  nodePool: NODE_POOL_TYPE,
  externalAuth: EXTERNAL_AUTH_TYPE,
};

export function resourceType(kind: ResourceKind): string {
  return TYPES[kind];
}

/** The parent cluster of a node pool or external auth. */
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
  const pattern =
    kind === "cluster" ? CLUSTER_NAME : kind === "nodePool" ? NODE_POOL_NAME : EXTERNAL_AUTH_NAME;
  if (!pattern.test(name))
    throw new CloudError(400, {
      code: CODES.InvalidResourceName,
      message: `The resource name '${shorten(name)}' is invalid for ${resourceType(kind)}: it must match ${pattern.source}.`,
      target: "name",
    });
}

/** Validates the names in a path's parameters (B.1 patterns) and returns the resource they identify, if any. */
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
