/**
 * The request flow Microsoft.Network uses for its tracked resources: GET, list, PATCH of tags
 * (synchronous), and PUT and DELETE as long-running operations (201/200 or 202 with
 * Azure-AsyncOperation and Location; provisioningState Updating or Deleting meanwhile). The
 * resource-specific parts (validation, references, what happens on success) come from a `Kind`.
 */
import { randomUUID } from "node:crypto";
import {
  anotherOperationInProgress,
  conditionalHeaders,
  idIn,
  invalidNetworkName,
  isReply,
  normalizeLocation,
  requireGroup,
  resourceNotFound,
  startOperation,
  type Target,
} from "./context.ts";
import { asObject, asString, cloudError, noContent, ok, type ArmReply, type JsonObject } from "./http.ts";
import { deletedReply } from "./operations.ts";
import { methodNotAllowed } from "./resourcegroups.ts";
import { parseTags, preconditionFailed, type StoredResource } from "./store.ts";

export interface Kind {
  /** Canonical type, e.g. Microsoft.Network/publicIPAddresses. */
  type: string;
  /** Checks the PUT body and returns what to store, or the error ARM gives. */
  build(t: Target, input: BuildInput): { sku?: JsonObject; properties: JsonObject } | ArmReply;
  /** Extra properties computed when rendering (e.g. what references the resource). */
  render?(t: Target, r: StoredResource): JsonObject;
  /** Runs when a PUT's operation succeeds. */
  succeeded?(t: Target, r: StoredResource): void;
  /** The reply refusing a DELETE, if the resource cannot go yet. */
  blocksDelete?(t: Target, r: StoredResource): ArmReply | undefined;
}

export interface BuildInput {
  id: string;
  body: JsonObject;
  existing: StoredResource | undefined;
}

export function render(t: Target, kind: Kind, r: StoredResource): JsonObject {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    etag: r.etag,
    location: r.location ?? "",
    tags: r.tags,
    ...(r.sku ? { sku: r.sku } : {}),
    properties: { ...r.properties, ...kind.render?.(t, r) },
  };
}

/** Routes .../providers/{type} (list) and .../providers/{type}/{name}. */
export function tracked(t: Target, kind: Kind, name: string | undefined): ArmReply {
  if (name === undefined) {
    if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
    const group = requireGroup(t, false);
    if (isReply(group)) return group;
    const items = t.ctx.store.ofType(t.subscriptionId, t.resourceGroup, kind.type);
    return ok({ value: items.map((r) => render(t, kind, r)) });
  }
  switch (t.req.method) {
    case "GET":
      return getTracked(t, kind, name);
    case "PUT":
      return putTracked(t, kind, name);
    case "PATCH":
      return patchTags(t, kind, name);
    case "DELETE":
      return deleteTracked(t, kind, name);
    default:
      return methodNotAllowed(t.req.method);
  }
}

function getTracked(t: Target, kind: Kind, name: string): ArmReply {
  const group = requireGroup(t, false);
  if (isReply(group)) return group;
  const r = t.ctx.store.get(idIn(t, kind.type, name));
  return r ? ok(render(t, kind, r)) : resourceNotFound(kind.type, name, t.resourceGroup);
}

function putTracked(t: Target, kind: Kind, name: string): ArmReply {
  const checked = checkPut(t, kind, name);
  if (isReply(checked)) return checked;
  const { id, group, existing, location, tags, built } = checked;
  const r: StoredResource = {
    id,
    name: existing?.name ?? name,
    type: kind.type,
    subscriptionId: t.subscriptionId,
    resourceGroup: group.name,
    location,
    tags,
    ...(built.sku ? { sku: built.sku } : {}),
    etag: t.ctx.store.newEtag(),
    properties: {
      ...built.properties,
      resourceGuid: asString(existing?.properties["resourceGuid"]) ?? randomUUID(),
      provisioningState: "Updating",
    },
  };
  t.ctx.store.put(r);
  const op = startOperation(
    t,
    { kind: "network", location },
    {
      complete: () => settle(t, kind, r.id, "Succeeded"),
      fail: () => settle(t, kind, r.id, "Failed"),
      result: () => {
        const current = t.ctx.store.get(r.id);
        return current ? ok(render(t, kind, current)) : noContent();
      },
    },
  );
  r.operation = { id: op.id, kind: "put", headers: op.headers };
  return ok(render(t, kind, r), existing ? 200 : 201, op.headers);
}

interface CheckedPut {
  id: string;
  group: StoredResource;
  existing: StoredResource | undefined;
  location: string;
  tags: Record<string, string>;
  built: { sku?: JsonObject; properties: JsonObject };
}

/** Everything ARM and the provider check before accepting a PUT. */
function checkPut(t: Target, kind: Kind, name: string): CheckedPut | ArmReply {
  const group = requireGroup(t, true);
  if (isReply(group)) return group;
  const badName = invalidNetworkName(name);
  if (badName) return badName;
  const existing = t.ctx.store.get(idIn(t, kind.type, name));
  const id = existing?.id ?? idIn(t, kind.type, name);
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(existing, ifMatch, ifNoneMatch);
  if (failed) return failed;
  if (existing?.operation) return anotherOperationInProgress(existing.id);
  const body = asObject(t.req.body);
  const location = validLocation(asString(body["location"]), existing, name);
  if (isReply(location)) return location;
  const tags = parseTags(body["tags"]);
  if ("error" in tags) return tags.error;
  const built = kind.build(t, { id, body, existing });
  if (isReply(built)) return built;
  return { id, group, existing, location, tags: tags.tags, built };
}

function settle(t: Target, kind: Kind, id: string, state: "Succeeded" | "Failed"): void {
  const r = t.ctx.store.get(id);
  if (!r) return;
  delete r.operation;
  r.properties["provisioningState"] = state;
  r.etag = t.ctx.store.newEtag();
  if (state === "Succeeded") kind.succeeded?.(t, r);
}

/** The location a PUT gives, normalized; refused when missing or not where the resource already is. */
export function validLocation(
  location: string | undefined,
  existing: StoredResource | undefined,
  name: string,
): string | ArmReply {
  if (!location) {
    return cloudError(400, "LocationRequired", "The location property is required for this definition.");
  }
  const normalized = normalizeLocation(location);
  if (existing && existing.location !== normalized) {
    return cloudError(
      400,
      "InvalidResourceLocation",
      `The resource '${name}' already exists in location '${existing.location ?? ""}' in resource group '${existing.resourceGroup}'. A resource with the same name cannot be created in location '${normalized}'. Please select a new resource name.`,
    );
  }
  return normalized;
}

function patchTags(t: Target, kind: Kind, name: string): ArmReply {
  const group = requireGroup(t, true);
  if (isReply(group)) return group;
  const r = t.ctx.store.get(idIn(t, kind.type, name));
  if (!r) return resourceNotFound(kind.type, name, t.resourceGroup);
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(r, ifMatch, ifNoneMatch);
  if (failed) return failed;
  const tags = parseTags(asObject(t.req.body)["tags"]);
  if ("error" in tags) return tags.error;
  r.tags = tags.tags;
  r.etag = t.ctx.store.newEtag();
  return ok(render(t, kind, r));
}

function deleteTracked(t: Target, kind: Kind, name: string): ArmReply {
  const group = requireGroup(t, false);
  if (isReply(group)) return group;
  const r = t.ctx.store.get(idIn(t, kind.type, name));
  if (!r) return noContent();
  const { ifMatch, ifNoneMatch } = conditionalHeaders(t.req);
  const failed = preconditionFailed(r, ifMatch, ifNoneMatch);
  if (failed) return failed;
  if (r.operation?.kind === "delete") return { status: 202, headers: r.operation.headers };
  if (r.operation) return anotherOperationInProgress(r.id);
  const blocked = kind.blocksDelete?.(t, r);
  if (blocked) return blocked;
  r.properties["provisioningState"] = "Deleting";
  const op = startOperation(
    t,
    { kind: "network", location: r.location ?? "global" },
    {
      complete: () => t.ctx.store.delete(r.id),
      fail: () => settle(t, kind, r.id, "Failed"),
      result: deletedReply(204),
    },
  );
  r.operation = { id: op.id, kind: "delete", headers: op.headers };
  return { status: 202, headers: op.headers };
}
