/**
 * Microsoft.Resources resource groups: synchronous PUT and PATCH, HEAD for existence, list, and
 * DELETE as ARM runs it (202 + Location; the group and everything in it go when it finishes).
 */
import {
  anotherOperationInProgress,
  normalizeLocation,
  resourceGroupNotFound,
  startOperation,
} from "./context.ts";
import type { Target } from "./context.ts";
import { asObject, asString, cloudError, noContent, ok, type ArmReply, type JsonObject } from "./http.ts";
import {
  groupId,
  parseTags,
  RESOURCE_GROUP_TYPE,
  ROLE_ASSIGNMENT_TYPE,
  type StoredResource,
} from "./store.ts";

export function renderGroup(g: StoredResource): JsonObject {
  return {
    id: g.id,
    name: g.name,
    type: RESOURCE_GROUP_TYPE,
    location: g.location ?? "",
    tags: g.tags,
    properties: { provisioningState: g.properties["provisioningState"] ?? "Succeeded" },
  };
}

/** /subscriptions/{s}/resourcegroups */
export function listGroups(t: Omit<Target, "resourceGroup">): ArmReply {
  if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
  return ok({ value: t.ctx.store.groups(t.subscriptionId).map(renderGroup) });
}

/** /subscriptions/{s}/resourcegroups/{rg} */
export function resourceGroup(t: Target): ArmReply {
  switch (t.req.method) {
    case "GET":
    case "HEAD":
      return getGroup(t);
    case "PUT":
      return putGroup(t);
    case "PATCH":
      return patchGroup(t);
    case "DELETE":
      return deleteGroup(t);
    default:
      return methodNotAllowed(t.req.method);
  }
}

/**
 * /subscriptions/{s}/resourcegroups/{rg}/resources: the top-level resources in the group; not the
 * extension resources on it (role assignments), which ARM does not list there.
 */
export function groupResources(t: Target): ArmReply {
  const group = t.ctx.store.group(t.subscriptionId, t.resourceGroup);
  if (!group) return resourceGroupNotFound(t.resourceGroup);
  const topLevel = t.ctx.store
    .under(group.id)
    .filter((r) => r.id.split("/").length === 9 && r.type !== ROLE_ASSIGNMENT_TYPE);
  return ok({
    value: topLevel.map((r) => ({
      id: r.id,
      name: r.name,
      type: r.type,
      ...(r.location ? { location: r.location } : {}),
      tags: r.tags,
    })),
  });
}

function getGroup(t: Target): ArmReply {
  const group = t.ctx.store.group(t.subscriptionId, t.resourceGroup);
  if (t.req.method === "HEAD") return noContent(group ? 204 : 404);
  return group ? ok(renderGroup(group)) : resourceGroupNotFound(t.resourceGroup);
}

function putGroup(t: Target): ArmReply {
  const existing = t.ctx.store.group(t.subscriptionId, t.resourceGroup);
  const body = asObject(t.req.body);
  const location = asString(body["location"]);
  if (!location) {
    return cloudError(400, "LocationRequired", "The location property is required for this definition.");
  }
  const parsed = parseTags(body["tags"]);
  if ("error" in parsed) return parsed.error;
  if (existing?.properties["provisioningState"] === "Deleting") {
    return cloudError(
      409,
      "ResourceGroupBeingDeleted",
      `The resource group '${existing.name}' is in deprovisioning state and cannot perform this operation.`,
    );
  }
  if (existing && existing.location !== normalizeLocation(location)) {
    return cloudError(
      409,
      "InvalidResourceGroupLocation",
      `Invalid resource group location '${location}'. The Resource group already exists in location '${existing.location ?? ""}'.`,
    );
  }
  const group: StoredResource = existing ?? {
    id: groupId(t.subscriptionId, t.resourceGroup),
    name: t.resourceGroup,
    type: RESOURCE_GROUP_TYPE,
    subscriptionId: t.subscriptionId,
    resourceGroup: t.resourceGroup,
    location: normalizeLocation(location),
    tags: {},
    etag: t.ctx.store.newEtag(),
    properties: { provisioningState: "Succeeded" },
  };
  group.tags = parsed.tags;
  t.ctx.store.put(group);
  return ok(renderGroup(group), existing ? 200 : 201);
}

function patchGroup(t: Target): ArmReply {
  const group = t.ctx.store.group(t.subscriptionId, t.resourceGroup);
  if (!group) return resourceGroupNotFound(t.resourceGroup);
  const body = asObject(t.req.body);
  if (body["tags"] !== undefined) {
    const parsed = parseTags(body["tags"]);
    if ("error" in parsed) return parsed.error;
    group.tags = parsed.tags;
  }
  return ok(renderGroup(group));
}

function deleteGroup(t: Target): ArmReply {
  const group = t.ctx.store.group(t.subscriptionId, t.resourceGroup);
  if (!group) return resourceGroupNotFound(t.resourceGroup);
  // A second DELETE while the first runs is accepted again, pointing at the same operation.
  if (group.operation?.kind === "delete") return { status: 202, headers: group.operation.headers };
  if (group.operation) return anotherOperationInProgress(group.id);
  group.properties["provisioningState"] = "Deleting";
  const store = t.ctx.store;
  const op = startOperation(
    t,
    { kind: "resources" },
    {
      complete: () => {
        for (const r of store.under(group.id)) store.delete(r.id);
        store.delete(group.id);
      },
      fail: () => {
        group.properties["provisioningState"] = "Succeeded";
        delete group.operation;
      },
      result: () => ({ status: 200 }),
    },
  );
  group.operation = { id: op.id, kind: "delete", headers: op.headers };
  return { status: 202, headers: op.headers };
}

export function methodNotAllowed(method: string): ArmReply {
  return cloudError(405, "MethodNotAllowed", `The requested method '${method}' is not allowed.`);
}
