/**
 * DNS: the cluster's zone, its NS delegation in the service's parent zone, and A records (api,
 * *.apps). Zones are tagged; record sets carry the owner in their metadata. Writes are conditional
 * (If-None-Match: * to create, If-Match: <etag> to update or delete), so a concurrent writer turns
 * into a conflict to re-read instead of a silent overwrite.
 */
import type { RecordSet, Zone } from "@azure/arm-dns";
import type { AzureCallOptions } from "./cancel.ts";
import type { AzureClients } from "./clients.ts";
import { hasOwnerTags, withOwnerTags, type Owner } from "./ownership.ts";
import {
  deleteOwned,
  ensureSync,
  lroOptions,
  type DeleteResult,
  type Outcome,
  type Ready,
} from "./reconcile.ts";

/** TTL of the NS delegation: what Azure gives a zone's own apex NS is 2 days; an hour lets a re-create propagate. */
export const DEFAULT_NS_TTL_SECONDS = 3600;
/** TTL of A records: short, the load balancer address can change on re-create. */
export const DEFAULT_A_TTL_SECONDS = 300;

interface InResourceGroup {
  subscriptionId: string;
  resourceGroup: string;
  owner: Owner;
}

export interface DnsZoneParams extends InResourceGroup {
  zoneName: string;
}

export interface NsDelegationParams extends InResourceGroup {
  /** The service's zone, e.g. hcp.example.com; `resourceGroup` is its group. */
  parentZone: string;
  /** The child zone's label in the parent, e.g. "mycluster" for mycluster.hcp.example.com. */
  childLabel: string;
  nameServers: string[];
  ttlSeconds?: number;
}

export interface ARecordParams extends InResourceGroup {
  zoneName: string;
  /** Relative name: "api", "*.apps". */
  name: string;
  ipv4Addresses: string[];
  ttlSeconds?: number;
}

/** If-Match with the etag we read, or If-None-Match: * when we read nothing. */
function conditions(existing: { etag?: string } | undefined): { ifMatch: string } | { ifNoneMatch: string } {
  return existing?.etag ? { ifMatch: existing.etag } : { ifNoneMatch: "*" };
}

/** DNS names compare case-insensitively, with or without the trailing dot. */
function sameNames(actual: (string | undefined)[], wanted: string[]): boolean {
  const norm = (names: (string | undefined)[]): string =>
    [...new Set(names.map((n) => (n ?? "").toLowerCase().replace(/\.$/, "")))].sort().join(" ");
  return norm(actual) === norm(wanted);
}

/** The cluster's public zone; returns the name servers Azure gave it (for the delegation). */
export async function ensureDnsZone(
  azure: AzureClients,
  p: DnsZoneParams,
  opts: AzureCallOptions = {},
): Promise<Ready<{ id: string; nameServers: string[] }>> {
  const zones = azure.dns(p.subscriptionId).zones;
  return ensureSync<Zone, { id: string; nameServers: string[] }>({
    azure,
    what: `DNS zone ${p.zoneName}`,
    owner: p.owner,
    signal: opts.signal,
    createFirst: opts.createFirst,
    get: (o) => zones.get(p.resourceGroup, p.zoneName, o),
    tags: (z) => z.tags,
    matches: (z) => hasOwnerTags(z.tags, p.owner),
    put: (z, o) =>
      zones.createOrUpdate(
        p.resourceGroup,
        p.zoneName,
        { location: "global", zoneType: "Public", tags: withOwnerTags(z?.tags, p.owner) },
        { ...conditions(z), ...o },
      ),
    value: (z) => ({ id: z.id ?? "", nameServers: z.nameServers ?? [] }),
  });
}

/** Deletes the zone (and its record sets) if ours. Long-running. */
export async function deleteDnsZone(
  azure: AzureClients,
  p: DnsZoneParams,
  opts: AzureCallOptions = {},
): Promise<Outcome<DeleteResult>> {
  const zones = azure.dns(p.subscriptionId).zones;
  const key = `/subscriptions/${p.subscriptionId}/resourceGroups/${p.resourceGroup}/providers/Microsoft.Network/dnszones/${p.zoneName}`;
  return deleteOwned<Zone>({
    azure,
    what: `DNS zone ${p.zoneName}`,
    owner: p.owner,
    signal: opts.signal,
    get: (o) => zones.get(p.resourceGroup, p.zoneName, o),
    tags: (z) => z.tags,
    begin: {
      key,
      start: (resumeFrom, o) =>
        zones.beginDelete(p.resourceGroup, p.zoneName, lroOptions(azure, resumeFrom, o)),
    },
  });
}

interface RecordSetTarget extends InResourceGroup {
  zoneName: string;
  name: string;
  type: "A" | "NS";
  signal?: AbortSignal | undefined;
  createFirst?: boolean | undefined;
}

function describe(t: RecordSetTarget): string {
  return `DNS ${t.type} record ${t.name} in zone ${t.zoneName}`;
}

async function ensureRecordSet(
  azure: AzureClients,
  t: RecordSetTarget,
  want: { ttl: number; records: Partial<RecordSet>; same: (r: RecordSet) => boolean },
): Promise<Ready<{ id: string }>> {
  const sets = azure.dns(t.subscriptionId).recordSets;
  return ensureSync<RecordSet, { id: string }>({
    azure,
    what: describe(t),
    owner: t.owner,
    signal: t.signal,
    createFirst: t.createFirst,
    get: (o) => sets.get(t.resourceGroup, t.zoneName, t.name, t.type, o),
    tags: (r) => r.metadata,
    matches: (r) => hasOwnerTags(r.metadata, t.owner) && r.ttl === want.ttl && want.same(r),
    put: (r, o) =>
      sets.createOrUpdate(
        t.resourceGroup,
        t.zoneName,
        t.name,
        t.type,
        { ...want.records, ttl: want.ttl, metadata: withOwnerTags(r?.metadata, t.owner) },
        { ...conditions(r), ...o },
      ),
    value: (r) => ({ id: r.id ?? "" }),
  });
}

async function deleteRecordSet(azure: AzureClients, t: RecordSetTarget): Promise<Outcome<DeleteResult>> {
  const sets = azure.dns(t.subscriptionId).recordSets;
  return deleteOwned<RecordSet>({
    azure,
    what: describe(t),
    owner: t.owner,
    signal: t.signal,
    get: (o) => sets.get(t.resourceGroup, t.zoneName, t.name, t.type, o),
    tags: (r) => r.metadata,
    remove: (r, o) =>
      sets.delete(t.resourceGroup, t.zoneName, t.name, t.type, {
        ...(r.etag ? { ifMatch: r.etag } : {}),
        ...o,
      }),
  });
}

/** The NS record set `childLabel` in the parent zone, pointing at the child zone's name servers. */
export async function ensureNsDelegation(
  azure: AzureClients,
  p: NsDelegationParams,
  opts: AzureCallOptions = {},
): Promise<Ready<{ id: string }>> {
  if (p.nameServers.length === 0) throw new TypeError("ensureNsDelegation: nameServers must not be empty");
  const target: RecordSetTarget = {
    ...p,
    zoneName: p.parentZone,
    name: p.childLabel,
    type: "NS",
    signal: opts.signal,
    createFirst: opts.createFirst,
  };
  return ensureRecordSet(azure, target, {
    ttl: p.ttlSeconds ?? DEFAULT_NS_TTL_SECONDS,
    records: { nsRecords: p.nameServers.map((nsdname) => ({ nsdname })) },
    same: (r) => sameNames(r.nsRecords?.map((n) => n.nsdname) ?? [], p.nameServers),
  });
}

export async function deleteNsDelegation(
  azure: AzureClients,
  p: Omit<NsDelegationParams, "nameServers" | "ttlSeconds">,
  opts: AzureCallOptions = {},
): Promise<Outcome<DeleteResult>> {
  const { signal } = opts;
  return deleteRecordSet(azure, { ...p, zoneName: p.parentZone, name: p.childLabel, type: "NS", signal });
}

/** An A record set (e.g. api, *.apps) with exactly these addresses. */
export async function ensureARecord(
  azure: AzureClients,
  p: ARecordParams,
  opts: AzureCallOptions = {},
): Promise<Ready<{ id: string }>> {
  return ensureRecordSet(
    azure,
    { ...p, type: "A", signal: opts.signal, createFirst: opts.createFirst },
    {
      ttl: p.ttlSeconds ?? DEFAULT_A_TTL_SECONDS,
      records: { aRecords: p.ipv4Addresses.map((ipv4Address) => ({ ipv4Address })) },
      same: (r) => sameNames(r.aRecords?.map((a) => a.ipv4Address) ?? [], p.ipv4Addresses),
    },
  );
}

export async function deleteARecord(
  azure: AzureClients,
  p: Omit<ARecordParams, "ipv4Addresses" | "ttlSeconds">,
  opts: AzureCallOptions = {},
): Promise<Outcome<DeleteResult>> {
  return deleteRecordSet(azure, { ...p, type: "A", signal: opts.signal });
}
