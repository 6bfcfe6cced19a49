/**
 * ARM resource IDs of the three resource types (clusters and their node pools and external auths)
 * and the links (operation status and result) built from them. The name rules of their path
 * segments are the names middleware's (http/names.ts).
 */
import type { ArmResourceKind } from "../api/v1alpha1/index.ts";

export const PROVIDER = "Microsoft.RedHatOpenShift";
export const CLUSTER_TYPE = `${PROVIDER}/hcpOpenShiftClusters`;
export const NODE_POOL_TYPE = `${PROVIDER}/hcpOpenShiftClusters/nodePools`;
export const EXTERNAL_AUTH_TYPE = `${PROVIDER}/hcpOpenShiftClusters/externalAuths`;

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
