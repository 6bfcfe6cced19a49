/**
 * What the sweep looks at: every Azure resource of the kinds the cluster controller creates that
 * carries a cluster's owner tag, in the subscriptions it is asked to sweep and in the region's
 * parent zone. A resource group tagged with an owner is one item (deleting it takes what is in
 * it); only groups not tagged by a cluster are looked into, for what a cluster made in a group
 * the user named. Owner values that are not Kubernetes UIDs (the region's own "hcp-service") are
 * not a cluster's, and are never listed.
 */
import type { ResourceGroup } from "@azure/arm-resources";
import { CLUSTER_TAG, OWNER_TAG, type AzureClients, type Owner } from "../azure/index.ts";

/** Marks a resource as orphaned: when the sweep first saw it without a live owner (RFC 3339). */
export const ORPHANED_SINCE_TAG = "hcp.aro.dev_orphaned-since";

export type OrphanKind = "ResourceGroup" | "DnsZone" | "LoadBalancer" | "PublicIp" | "DnsRecordSet";

/** The order deletions go in: what uses something goes before it (a load balancer before its IP). */
export const DELETION_ORDER: readonly OrphanKind[] = [
  "DnsRecordSet",
  "LoadBalancer",
  "PublicIp",
  "DnsZone",
  "ResourceGroup",
];

/** The record types a cluster writes: NS (its delegation in the parent zone) and A. */
export type RecordType = "NS" | "A";

/** One owner-tagged resource as listed. */
export interface OwnedResource {
  kind: OrphanKind;
  /** The ARM resource ID, for reports. */
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  /** The resource's name; a record set's relative name. */
  name: string;
  /** Record sets only: the zone and the record type. */
  zone?: string;
  recordType?: RecordType;
  /** Record sets only: for a conditional write of the metadata. */
  etag?: string;
  /** Its tags (a record set's metadata), as read. */
  tags: Record<string, string>;
  owner: Owner;
}

/** The region's parent DNS zone, where clusters' NS delegations live. */
export interface ParentZoneRef {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
}

/** What one listing found, and where it could not look (a failure there decides nothing). */
export interface Inventory {
  found: OwnedResource[];
  failures: { where: string; error: unknown }[];
}

/** A Kubernetes UID: what every HcpCluster's owner tag holds. */
const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A tag's value, the key compared case-insensitively as ARM does. */
export function tagOf(tags: Record<string, string> | undefined, key: string): string | undefined {
  const k = key.toLowerCase();
  return Object.entries(tags ?? {}).find(([name]) => name.toLowerCase() === k)?.[1];
}

/** The cluster owning these tags, or undefined when no cluster does. */
export function clusterOwner(tags: Record<string, string> | undefined): Owner | undefined {
  const id = tagOf(tags, OWNER_TAG);
  if (id === undefined || !UID.test(id)) return undefined;
  return { id, cluster: tagOf(tags, CLUSTER_TAG) ?? "" };
}

/** Whether a zone is a child of the parent zone: a zone of one of this region's clusters. */
export function underParentZone(zone: string, parentZone: ParentZoneRef): boolean {
  const name = zone.toLowerCase().replace(/\.$/, "");
  return name.endsWith(`.${parentZone.name.toLowerCase().replace(/\.$/, "")}`);
}

/**
 * The owners the listing shows to be this region's clusters: only this region writes delegations
 * into its parent zone and names zones under it. Another region's clusters may share a
 * subscription (and a location) with ours; their owners are in no region's cache but their own.
 */
export function regionOwners(found: readonly OwnedResource[], parentZone: ParentZoneRef): Set<string> {
  const evidence = found.filter(
    (r) => r.kind === "DnsRecordSet" || (r.kind === "DnsZone" && underParentZone(r.name, parentZone)),
  );
  return new Set(evidence.map((r) => r.owner.id));
}

/** Whether an owned group holds a zone under the parent zone, owned by the group's owner. */
export async function groupHoldsRegionZone(
  azure: AzureClients,
  group: OwnedResource,
  parentZone: ParentZoneRef,
  signal?: AbortSignal,
): Promise<boolean> {
  const zones = azure.dns(group.subscriptionId).zones;
  for await (const z of zones.listByResourceGroup(group.resourceGroup, { abortSignal: signal }))
    if (underParentZone(z.name ?? "", parentZone) && clusterOwner(z.tags)?.id === group.owner.id) return true;
  return false;
}

const NETWORK_KINDS: Record<string, OrphanKind> = {
  "microsoft.network/publicipaddresses": "PublicIp",
  "microsoft.network/loadbalancers": "LoadBalancer",
  "microsoft.network/dnszones": "DnsZone",
};

/** Lists every owned resource in the subscriptions and the parent zone. */
export async function listOwned(
  azure: AzureClients,
  where: { subscriptions: readonly string[]; parentZone: ParentZoneRef },
  signal?: AbortSignal,
): Promise<Inventory> {
  const inventory: Inventory = { found: [], failures: [] };
  for (const subscriptionId of where.subscriptions) {
    await collect(inventory, `subscription ${subscriptionId}`, () =>
      listSubscription(azure, subscriptionId, inventory, signal),
    );
  }
  const { parentZone } = where;
  await collect(inventory, `zone ${parentZone.name}`, () =>
    listRecordSets(azure, parentZone, inventory, signal),
  );
  return inventory;
}

async function collect(inventory: Inventory, where: string, list: () => Promise<void>): Promise<void> {
  try {
    await list();
  } catch (error) {
    inventory.failures.push({ where, error });
  }
}

async function listSubscription(
  azure: AzureClients,
  subscriptionId: string,
  inventory: Inventory,
  signal?: AbortSignal,
): Promise<void> {
  const groups: ResourceGroup[] = [];
  for await (const g of azure.resources(subscriptionId).resourceGroups.list({ abortSignal: signal }))
    groups.push(g);
  for (const g of groups) {
    const name = g.name ?? "";
    const tags = g.tags ?? {};
    const owner = clusterOwner(tags);
    const id = g.id ?? `/subscriptions/${subscriptionId}/resourceGroups/${name}`;
    // An owned group stays listed while it is deleted, so the sweep that started it sees it finish.
    if (name && owner)
      inventory.found.push({
        kind: "ResourceGroup",
        id,
        subscriptionId,
        resourceGroup: name,
        name,
        tags,
        owner,
      });
    else if (name && g.properties?.provisioningState !== "Deleting")
      await collect(inventory, `resource group ${name}`, () =>
        listGroupContents(azure, { subscriptionId, resourceGroup: name }, inventory, signal),
      );
  }
}

async function listGroupContents(
  azure: AzureClients,
  group: { subscriptionId: string; resourceGroup: string },
  inventory: Inventory,
  signal?: AbortSignal,
): Promise<void> {
  const resources = azure.resources(group.subscriptionId).resources;
  for await (const r of resources.listByResourceGroup(group.resourceGroup, { abortSignal: signal })) {
    const kind = NETWORK_KINDS[(r.type ?? "").toLowerCase()];
    const tags = r.tags ?? {};
    const owner = clusterOwner(tags);
    if (!kind || !owner || !r.name) continue;
    inventory.found.push({ kind, id: r.id ?? "", ...group, name: r.name, tags, owner });
  }
}

async function listRecordSets(
  azure: AzureClients,
  zone: ParentZoneRef,
  inventory: Inventory,
  signal?: AbortSignal,
): Promise<void> {
  const sets = azure.dns(zone.subscriptionId).recordSets;
  for await (const r of sets.listAllByDnsZone(zone.resourceGroup, zone.name, { abortSignal: signal })) {
    const recordType = (r.type ?? "").split("/").at(-1)?.toUpperCase();
    const tags = r.metadata ?? {};
    const owner = clusterOwner(tags);
    if ((recordType !== "NS" && recordType !== "A") || !owner || !r.name) continue;
    inventory.found.push({
      kind: "DnsRecordSet",
      id: r.id ?? "",
      subscriptionId: zone.subscriptionId,
      resourceGroup: zone.resourceGroup,
      name: r.name,
      zone: zone.name,
      recordType,
      ...(r.etag ? { etag: r.etag } : {}),
      tags,
      owner,
    });
  }
}
