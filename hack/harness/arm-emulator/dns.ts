/**
 * Microsoft.Network DNS zones and record sets. A zone PUT is synchronous and creates the apex NS
 * and SOA record sets with the zone's four Azure name servers; a zone DELETE is a long-running
 * operation that takes the record sets with it. Record sets are synchronous; the apex NS and SOA
 * cannot be deleted; record data is checked for the types the service uses (A, AAAA, NS, CNAME).
 */
import { createHash } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import {
  conditionalHeaders,
  idIn,
  isReply,
  requireGroup,
  resourceNotFound,
  startOperation,
  type Target,
} from "./context.ts";
import {
  asArray,
  asObject,
  asString,
  cloudError,
  isObject,
  noContent,
  ok,
  type ArmReply,
  type JsonObject,
} from "./http.ts";
import { deletedReply } from "./operations.ts";
import { methodNotAllowed } from "./resourcegroups.ts";
import { parseTags, preconditionFailed, type StoredResource } from "./store.ts";

export const ZONE_TYPE = "Microsoft.Network/dnszones";
const RECORD_TYPES = ["A", "AAAA", "CAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT"];
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;
const RECORD_LABEL = /^(\*|[a-z0-9_-]{1,63})$/i;

/** Routes .../providers/Microsoft.Network/dnszones[/{zone}[/{type}[/{name}]]]. */
export function dns(t: Target, rest: string[]): ArmReply {
  const [zone, type, name] = rest;
  if (zone === undefined) return listZones(t);
  if (type === undefined) return zoneRequest(t, zone);
  if (name === undefined) return listRecordSets(t, zone, type);
  return recordSetRequest(t, zone, type.toUpperCase(), name);
}

function renderZone(t: Target, z: StoredResource): JsonObject {
  return {
    id: z.id,
    name: z.name,
    type: ZONE_TYPE,
    etag: z.etag,
    location: "global",
    tags: z.tags,
    properties: { ...z.properties, numberOfRecordSets: t.ctx.store.under(z.id).length },
  };
}

function renderRecordSet(r: StoredResource): JsonObject {
  return { id: r.id, name: r.name, type: r.type, etag: r.etag, properties: r.properties };
}

function listZones(t: Target): ArmReply {
  if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
  const group = requireGroup(t, false);
  if (isReply(group)) return group;
  return ok({
    value: t.ctx.store.ofType(t.subscriptionId, t.resourceGroup, ZONE_TYPE).map((z) => renderZone(t, z)),
  });
}

function zoneRequest(t: Target, zone: string): ArmReply {
  const group = requireGroup(t, t.req.method === "PUT" || t.req.method === "PATCH");
  if (isReply(group)) return group;
  const existing = t.ctx.store.get(idIn(t, ZONE_TYPE, zone));
  switch (t.req.method) {
    case "GET":
      return existing ? ok(renderZone(t, existing)) : resourceNotFound(ZONE_TYPE, zone, t.resourceGroup);
    case "PUT":
      return putZone(t, group, zone, existing);
    case "PATCH":
      return patchZone(t, zone, existing);
    case "DELETE":
      return deleteZone(t, existing);
    default:
      return methodNotAllowed(t.req.method);
  }
}

function putZone(
  t: Target,
  group: StoredResource,
  zone: string,
  existing: StoredResource | undefined,
): ArmReply {
  const labels = zone.split(".");
  if (labels.length < 2 || zone.length > 253 || !labels.every((l) => LABEL.test(l))) {
    return cloudError(400, "BadRequest", `The zone name '${zone}' is not a valid DNS zone name.`);
  }
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(existing, ifMatch, ifNoneMatch);
  if (failed) return failed;
  if (existing?.operation) return cloudError(409, "Conflict", `The zone '${zone}' is being deleted.`);
  const body = asObject(t.req.body);
  const location = asString(body["location"]) ?? "global";
  if (location.toLowerCase() !== "global") {
    return cloudError(
      400,
      "LocationNotAvailableForResourceType",
      `The provided location '${location}' is not available for resource type '${ZONE_TYPE}'. List of available regions for the resource type is 'global'.`,
    );
  }
  const tags = parseTags(body["tags"]);
  if ("error" in tags) return tags.error;
  if (existing) {
    existing.tags = tags.tags;
    existing.etag = t.ctx.store.newEtag();
    return ok(renderZone(t, existing));
  }
  const z = createZone(t, group, zone, tags.tags);
  return ok(renderZone(t, z), 201);
}

function createZone(
  t: Target,
  group: StoredResource,
  zone: string,
  tags: Record<string, string>,
): StoredResource {
  const nameServers = azureNameServers(`${t.subscriptionId}/${zone}`.toLowerCase());
  const z: StoredResource = {
    id: idIn(t, ZONE_TYPE, zone),
    name: zone,
    type: ZONE_TYPE,
    subscriptionId: t.subscriptionId,
    resourceGroup: group.name,
    location: "global",
    tags,
    etag: t.ctx.store.newEtag(),
    properties: {
      maxNumberOfRecordSets: 10000,
      maxNumberOfRecordsPerRecordSet: 20,
      nameServers,
      zoneType: "Public",
    },
  };
  t.ctx.store.put(z);
  putRecord(
    t,
    z,
    { type: "NS", name: "@" },
    { TTL: 172800, NSRecords: nameServers.map((nsdname) => ({ nsdname })) },
  );
  putRecord(
    t,
    z,
    { type: "SOA", name: "@" },
    {
      TTL: 3600,
      SOARecord: {
        host: nameServers[0] ?? "",
        email: "azuredns-hostmaster.microsoft.com",
        serialNumber: 1,
        refreshTime: 3600,
        retryTime: 300,
        expireTime: 2419200,
        minimumTTL: 300,
      },
    },
  );
  return z;
}

/** Azure gives every zone one of its numbered name-server sets, e.g. ns1-03.azure-dns.com. */
export function azureNameServers(seed: string): string[] {
  const n = (createHash("sha256").update(seed).digest()[0] ?? 0) % 9;
  const set = `0${n + 1}`;
  return [
    `ns1-${set}.azure-dns.com.`,
    `ns2-${set}.azure-dns.net.`,
    `ns3-${set}.azure-dns.org.`,
    `ns4-${set}.azure-dns.info.`,
  ];
}

function patchZone(t: Target, zone: string, existing: StoredResource | undefined): ArmReply {
  if (!existing) return resourceNotFound(ZONE_TYPE, zone, t.resourceGroup);
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(existing, ifMatch, ifNoneMatch);
  if (failed) return failed;
  const body = asObject(t.req.body);
  if (body["tags"] !== undefined) {
    const tags = parseTags(body["tags"]);
    if ("error" in tags) return tags.error;
    existing.tags = tags.tags;
  }
  existing.etag = t.ctx.store.newEtag();
  return ok(renderZone(t, existing));
}

function deleteZone(t: Target, existing: StoredResource | undefined): ArmReply {
  if (!existing) return noContent();
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(existing, ifMatch, ifNoneMatch);
  if (failed) return failed;
  if (existing.operation) return { status: 202, headers: existing.operation.headers };
  const store = t.ctx.store;
  const op = startOperation(
    t,
    { kind: "dns", resourceGroup: existing.resourceGroup },
    {
      complete: () => {
        for (const r of store.under(existing.id)) store.delete(r.id);
        store.delete(existing.id);
      },
      fail: () => delete existing.operation,
      result: deletedReply(204),
    },
  );
  existing.operation = { id: op.id, kind: "delete", headers: op.headers };
  return { status: 202, headers: op.headers };
}

function listRecordSets(t: Target, zone: string, type: string): ArmReply {
  if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
  const group = requireGroup(t, false);
  if (isReply(group)) return group;
  const z = t.ctx.store.get(idIn(t, ZONE_TYPE, zone));
  if (!z) return resourceNotFound(ZONE_TYPE, zone, t.resourceGroup);
  const all = ["recordsets", "all"].includes(type.toLowerCase());
  const sets = t.ctx.store.under(z.id).filter((r) => all || r.type.endsWith(`/${type.toUpperCase()}`));
  return ok({ value: sets.map(renderRecordSet) });
}

function recordSetRequest(t: Target, zone: string, type: string, name: string): ArmReply {
  if (!RECORD_TYPES.includes(type)) {
    return cloudError(400, "BadRequest", `The record type '${type}' is not supported.`);
  }
  const group = requireGroup(t, t.req.method === "PUT" || t.req.method === "PATCH");
  if (isReply(group)) return group;
  const z = t.ctx.store.get(idIn(t, ZONE_TYPE, zone));
  const existing = z ? t.ctx.store.get(`${z.id}/${type}/${name}`) : undefined;
  switch (t.req.method) {
    case "GET":
      return existing ? ok(renderRecordSet(existing)) : recordNotFound(t, name);
    case "PUT":
    case "PATCH":
      return z ? writeRecordSet(t, z, { type, name, existing }) : parentNotFound(zone);
    case "DELETE":
      return deleteRecordSet(t, type, name, existing);
    default:
      return methodNotAllowed(t.req.method);
  }
}

function writeRecordSet(
  t: Target,
  z: StoredResource,
  target: { type: string; name: string; existing: StoredResource | undefined },
): ArmReply {
  const { type, name, existing } = target;
  if (t.req.method === "PATCH" && !existing) return recordNotFound(t, name);
  if (name !== "@" && !name.split(".").every((l, i) => (i === 0 ? RECORD_LABEL : LABEL).test(l))) {
    return cloudError(400, "BadRequest", `The record set name '${name}' is not valid.`);
  }
  if (type === "SOA" && name !== "@")
    return cloudError(400, "BadRequest", "SOA record sets exist only at the apex.");
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(existing, ifMatch, ifNoneMatch);
  if (failed) return failed;
  const input = asObject(asObject(t.req.body)["properties"]);
  const invalid = invalidRecords(type, input);
  if (invalid) return invalid;
  const merged = t.req.method === "PATCH" && existing ? { ...existing.properties, ...input } : input;
  const r = putRecord(t, z, { type, name }, merged);
  return ok(renderRecordSet(r), existing ? 200 : 201);
}

/** Properties the service computes; a PUT body cannot set them. */
const COMPUTED_RECORD_PROPERTIES = ["fqdn", "provisioningState"];

function putRecord(
  t: Target,
  z: StoredResource,
  { type, name }: { type: string; name: string },
  input: JsonObject,
): StoredResource {
  const id = `${z.id}/${type}/${name}`;
  const existing = t.ctx.store.get(id);
  const props = Object.fromEntries(
    Object.entries(input).filter(([k]) => !COMPUTED_RECORD_PROPERTIES.includes(k)),
  );
  const metadata = isObject(props["metadata"]) ? props["metadata"] : {};
  const r: StoredResource = {
    id: existing?.id ?? id,
    name: existing?.name ?? name,
    type: `${ZONE_TYPE}/${type}`,
    subscriptionId: z.subscriptionId,
    resourceGroup: z.resourceGroup,
    tags: {},
    etag: t.ctx.store.newEtag(),
    properties: {
      ...props,
      metadata,
      TTL: typeof props["TTL"] === "number" ? props["TTL"] : 3600,
      fqdn: name === "@" ? `${z.name}.` : `${name}.${z.name}.`,
      provisioningState: "Succeeded",
      targetResource: {},
    },
  };
  t.ctx.store.put(r);
  return r;
}

/** Checks the record data of the types the service writes. */
function invalidRecords(type: string, props: JsonObject): ArmReply | undefined {
  const check = (field: string, key: string, valid: (v: string) => boolean): ArmReply | undefined => {
    for (const rec of asArray(props[field])) {
      const value = asString(asObject(rec)[key]);
      if (value === undefined || !valid(value)) {
        return cloudError(400, "BadRequest", `The ${type} record value '${value ?? ""}' is not valid.`);
      }
    }
    return undefined;
  };
  const hostname = (v: string): boolean => v.length > 0 && v.length <= 255 && !v.includes(" ");
  switch (type) {
    case "A":
      return check("ARecords", "ipv4Address", (v) => isIPv4(v));
    case "AAAA":
      return check("AAAARecords", "ipv6Address", (v) => isIPv6(v));
    case "NS":
      return check("NSRecords", "nsdname", hostname);
    case "CNAME": {
      const cname = asString(asObject(props["CNAMERecord"])["cname"]);
      return cname === undefined || hostname(cname)
        ? undefined
        : cloudError(400, "BadRequest", `The CNAME record value '${cname}' is not valid.`);
    }
    default:
      return undefined;
  }
}

function deleteRecordSet(
  t: Target,
  type: string,
  name: string,
  existing: StoredResource | undefined,
): ArmReply {
  if (!existing) return noContent();
  if (name === "@" && (type === "NS" || type === "SOA")) {
    return cloudError(400, "BadRequest", `The ${type} record set at the zone apex cannot be deleted.`);
  }
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(existing, ifMatch, ifNoneMatch);
  if (failed) return failed;
  t.ctx.store.delete(existing.id);
  return { status: 200 };
}

function recordNotFound(t: Target, name: string): ArmReply {
  return cloudError(
    404,
    "NotFound",
    `The resource record '${name}' does not exist in resource group '${t.resourceGroup}' of subscription '${t.subscriptionId}'.`,
  );
}

function parentNotFound(zone: string): ArmReply {
  return cloudError(
    404,
    "ParentResourceNotFound",
    `Can not perform requested operation on nested resource. Parent resource '${zone}' not found.`,
  );
}
