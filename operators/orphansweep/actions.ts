/**
 * What the sweep does to a resource, per kind: write its tags (a record set's metadata) with the
 * orphan mark set or removed, and delete it through the Azure layer's owner-checked deletes (which
 * re-read the resource and leave it alone unless the same owner's tag is still on it).
 */
import {
  deleteARecord,
  deleteDnsZone,
  deleteLoadBalancer,
  deleteNsDelegation,
  deletePublicIp,
  deleteResourceGroup,
  type AzureClients,
  type DeleteResult,
  type Outcome,
} from "../azure/index.ts";
import { ORPHANED_SINCE_TAG, type OwnedResource } from "./inventory.ts";

/** The tags with the mark set to `since`, or removed (undefined); other tags kept. */
export function withMark(tags: Record<string, string>, since: Date | undefined): Record<string, string> {
  const key = ORPHANED_SINCE_TAG.toLowerCase();
  const kept = Object.entries(tags).filter(([k]) => k.toLowerCase() !== key);
  return Object.fromEntries(since ? [...kept, [ORPHANED_SINCE_TAG, since.toISOString()]] : kept);
}

/** Writes the resource's tags (PATCH: ARM replaces the tag set with the one sent). */
export async function writeTags(
  azure: AzureClients,
  r: OwnedResource,
  tags: Record<string, string>,
  signal?: AbortSignal,
): Promise<void> {
  const o = { abortSignal: signal };
  const { subscriptionId: sub, resourceGroup: rg, name } = r;
  switch (r.kind) {
    case "ResourceGroup":
      await azure.resources(sub).resourceGroups.update(name, { tags }, o);
      return;
    case "DnsZone":
      await azure.dns(sub).zones.update(rg, name, { tags }, o);
      return;
    case "PublicIp":
      await azure.network(sub).publicIPAddresses.updateTags(rg, name, { tags }, o);
      return;
    case "LoadBalancer":
      await azure.network(sub).loadBalancers.updateTags(rg, name, { tags }, o);
      return;
    case "DnsRecordSet":
      // Conditional on what was listed: a record set its cluster rewrote meanwhile is left to the next sweep.
      await azure.dns(sub).recordSets.update(
        rg,
        r.zone ?? "",
        name,
        r.recordType ?? "NS",
        { metadata: tags },
        {
          ...o,
          ...(r.etag ? { ifMatch: r.etag } : {}),
        },
      );
      return;
  }
}

/** Deletes the resource if its owner tag still names the same owner. */
export async function deleteOwnedResource(
  azure: AzureClients,
  r: OwnedResource,
  signal?: AbortSignal,
): Promise<Outcome<DeleteResult>> {
  const opts = { signal };
  const { subscriptionId, resourceGroup, name, owner } = r;
  const inGroup = { subscriptionId, resourceGroup, owner };
  switch (r.kind) {
    case "ResourceGroup":
      return deleteResourceGroup(azure, { subscriptionId, name, owner }, opts);
    case "DnsZone":
      return deleteDnsZone(azure, { ...inGroup, zoneName: name }, opts);
    case "PublicIp":
      return deletePublicIp(azure, { ...inGroup, name }, opts);
    case "LoadBalancer":
      return deleteLoadBalancer(azure, { ...inGroup, name }, opts);
    case "DnsRecordSet":
      return r.recordType === "A"
        ? deleteARecord(azure, { ...inGroup, zoneName: r.zone ?? "", name }, opts)
        : deleteNsDelegation(azure, { ...inGroup, parentZone: r.zone ?? "", childLabel: name }, opts);
  }
}
