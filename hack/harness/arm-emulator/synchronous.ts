/**
 * The request flow of resource providers that answer writes at once (Microsoft.ManagedIdentity,
 * Microsoft.KeyVault's vaults): PUT creates (201) or updates (200) and the resource is Succeeded
 * in the reply, GET, DELETE (200, or 204 when there is nothing), and list in a resource group.
 * The resource-specific parts (name rules, the body, what the service computes) come from a
 * `SyncKind`.
 */
import { conditionalHeaders, idIn, isReply, requireGroup, resourceNotFound, type Target } from "./context.ts";
import { asObject, asString, noContent, ok, type ArmReply, type JsonObject } from "./http.ts";
import { methodNotAllowed } from "./resourcegroups.ts";
import { parseTags, preconditionFailed, type StoredResource } from "./store.ts";
import { validLocation } from "./tracked.ts";

export interface SyncKind {
  /** Canonical type, e.g. Microsoft.ManagedIdentity/userAssignedIdentities. */
  type: string;
  /** The error ARM gives for a name the provider refuses, if it does. */
  invalidName(name: string): ArmReply | undefined;
  /** Checks the PUT body; returns the properties to store, or the error the provider gives. */
  build(
    t: Target,
    input: { id: string; name: string; body: JsonObject; existing?: StoredResource },
  ): JsonObject | ArmReply;
  /** Properties ARM shows beside the stored ones, or what a response leaves out. */
  render?(r: StoredResource): JsonObject;
}

function rendered(kind: SyncKind, r: StoredResource): JsonObject {
  const properties = kind.render ? kind.render(r) : r.properties;
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    location: r.location ?? "",
    tags: r.tags,
    properties,
  };
}

/** Routes .../providers/{type} (list) and .../providers/{type}/{name}. */
export function synchronous(t: Target, kind: SyncKind, name: string | undefined): ArmReply {
  if (name === undefined) {
    if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
    const group = requireGroup(t, false);
    if (isReply(group)) return group;
    const items = t.ctx.store.ofType(t.subscriptionId, t.resourceGroup, kind.type);
    return ok({ value: items.map((r) => rendered(kind, r)) });
  }
  switch (t.req.method) {
    case "GET":
      return getSync(t, kind, name);
    case "PUT":
      return putSync(t, kind, name);
    case "DELETE":
      return deleteSync(t, kind, name);
    default:
      return methodNotAllowed(t.req.method);
  }
}

/** The stored resource of `kind` named `name` in the target's group. */
export function findSync(t: Target, kind: SyncKind, name: string): StoredResource | undefined {
  return t.ctx.store.get(idIn(t, kind.type, name));
}

function getSync(t: Target, kind: SyncKind, name: string): ArmReply {
  const group = requireGroup(t, false);
  if (isReply(group)) return group;
  const r = findSync(t, kind, name);
  return r ? ok(rendered(kind, r)) : resourceNotFound(kind.type, name, t.resourceGroup);
}

function putSync(t: Target, kind: SyncKind, name: string): ArmReply {
  const checked = checkPut(t, kind, name);
  if (isReply(checked)) return checked;
  const { id, group, existing, location, tags } = checked;
  const properties = kind.build(t, {
    id,
    name,
    body: asObject(t.req.body),
    ...(existing ? { existing } : {}),
  });
  if (isReply(properties)) return properties;
  const r: StoredResource = {
    id,
    name: existing?.name ?? name,
    type: kind.type,
    subscriptionId: t.subscriptionId,
    resourceGroup: group.name,
    location,
    tags,
    etag: t.ctx.store.newEtag(),
    properties: { ...properties, provisioningState: "Succeeded" },
  };
  t.ctx.store.put(r);
  return ok(rendered(kind, r), existing ? 200 : 201);
}

interface CheckedPut {
  id: string;
  group: StoredResource;
  existing: StoredResource | undefined;
  location: string;
  tags: Record<string, string>;
}

/** What ARM checks before the provider sees a PUT: the group, the name, preconditions, location, tags. */
function checkPut(t: Target, kind: SyncKind, name: string): CheckedPut | ArmReply {
  const group = requireGroup(t, true);
  if (isReply(group)) return group;
  const badName = kind.invalidName(name);
  if (badName) return badName;
  const existing = findSync(t, kind, name);
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(existing, ifMatch, ifNoneMatch);
  if (failed) return failed;
  const body = asObject(t.req.body);
  const location = validLocation(asString(body["location"]), existing, name);
  if (isReply(location)) return location;
  const tags = parseTags(body["tags"]);
  if ("error" in tags) return tags.error;
  return { id: existing?.id ?? idIn(t, kind.type, name), group, existing, location, tags: tags.tags };
}

function deleteSync(t: Target, kind: SyncKind, name: string): ArmReply {
  const group = requireGroup(t, false);
  if (isReply(group)) return group;
  const r = findSync(t, kind, name);
  if (!r) return noContent();
  for (const child of t.ctx.store.under(r.id)) t.ctx.store.delete(child.id);
  t.ctx.store.delete(r.id);
  return ok(rendered(kind, r));
}
