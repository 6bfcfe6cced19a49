/**
 * What the usage recorder reads off an HcpCluster and a NodePool: the cluster's billing facts, the
 * time it first succeeded and was deleted, and a pool's vCPU rate. Pure functions of the objects,
 * so that the recorder's decisions can be tested without a cluster, and bad objects are refused
 * with an error naming the object and the field.
 */
import { ARM_ANNOTATIONS } from "../api/v1alpha1/arm.ts";
import { originalUid, type HcpCluster, type NodePool } from "../api/v1alpha1/index.ts";
import type { ClusterFacts } from "../metering/ledger.ts";
import { nodePoolRate } from "../metering/vm-sizes.ts";
import { getCondition } from "../runtime/conditions.ts";

/** A cluster's or pool's identity in the ledger: its ID (original uid) and its ARM resource ID. */
export interface Metered {
  uid: string;
  resourceId: string;
}

function nameOf(o: HcpCluster | NodePool): string {
  return `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;
}

function time(what: string, value: string | undefined): Date | undefined {
  if (value === undefined || value === "") return undefined;
  const t = new Date(value);
  if (Number.isNaN(t.getTime())) throw new Error(`${what} is not a time: "${value}"`);
  return t;
}

/**
 * The cluster's ARM resource ID as the frontend stamped it. A cluster made without the frontend
 * (kubectl, the samples) has none; it is metered under the ID it would have in ARM, with its
 * namespace standing for the resource group, so its usage is still in the ledger (the metering
 * API will refuse it, and the ledger records that).
 */
export function clusterResourceId(c: HcpCluster): string {
  const stamped = c.metadata.annotations?.[ARM_ANNOTATIONS.resourceId];
  if (stamped) return stamped;
  const sub = c.spec.platform.azure.subscriptionId;
  return `/subscriptions/${sub}/resourceGroups/${c.metadata.namespace ?? ""}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${c.metadata.name ?? ""}`;
}

export function meteredCluster(c: HcpCluster): Metered {
  const uid = originalUid(c);
  if (!uid) throw new Error(`HcpCluster ${nameOf(c)} has no uid`);
  return { uid, resourceId: clusterResourceId(c) };
}

/** A pool's ARM resource ID: the frontend's, else under its cluster's. */
export function meteredPool(p: NodePool, cluster: HcpCluster): Metered {
  const uid = originalUid(p);
  if (!uid) throw new Error(`NodePool ${nameOf(p)} has no uid`);
  const stamped = p.metadata.annotations?.[ARM_ANNOTATIONS.resourceId];
  return { uid, resourceId: stamped || `${clusterResourceId(cluster)}/nodePools/${p.metadata.name ?? ""}` };
}

/**
 * The billing record's facts. createdAt is the object's creationTimestamp, or its Ready's
 * lastTransitionTime when that is earlier: an object made again by a region restore (or an
 * undelete) carries the status of the cluster it was, which existed before its new
 * creationTimestamp, and a cluster cannot have succeeded before it was created. A cluster the
 * ledger already holds keeps its first record (the recorder offers none again).
 */
export function clusterFacts(c: HcpCluster): ClusterFacts {
  const { uid, resourceId } = meteredCluster(c);
  const createdAt = time(`HcpCluster ${nameOf(c)} metadata.creationTimestamp`, c.metadata.creationTimestamp);
  if (!createdAt) throw new Error(`HcpCluster ${nameOf(c)} has no metadata.creationTimestamp`);
  const ready = readySince(c);
  const azure = c.spec.platform.azure;
  return {
    clusterId: uid,
    resourceId,
    subscriptionId: azure.subscriptionId,
    ...(azure.tenantId ? { tenantId: azure.tenantId } : {}),
    location: azure.location,
    createdAt: ready && ready < createdAt ? ready : createdAt,
  };
}

/** When Ready last went True, while it is True: the first time the recorder sees it, the cluster's first success. */
export function readySince(c: HcpCluster): Date | undefined {
  const ready = getCondition(c.status?.conditions, "Ready");
  if (ready?.status !== "True") return undefined;
  return time(`HcpCluster ${nameOf(c)} condition Ready lastTransitionTime`, ready.lastTransitionTime);
}

export function deletedAt(kind: "HcpCluster" | "NodePool", o: HcpCluster | NodePool): Date | undefined {
  return time(`${kind} ${nameOf(o)} metadata.deletionTimestamp`, o.metadata.deletionTimestamp);
}

/**
 * A pool's vCPUs from now on: the nodes HyperShift reports (status.replicas, the nodes that
 * exist, which for an autoscaled pool is the autoscaler's actual count) × the size's vCPUs; 0
 * once it is being deleted. The size is the spec's: during a size change the nodes roll one by
 * one, and the new size is billed from the change on.
 */
export function poolRate(p: NodePool): number {
  if (p.metadata.deletionTimestamp) return 0;
  return nodePoolRate(p.spec.platform.azure.vmSize, p.status?.replicas ?? 0);
}
