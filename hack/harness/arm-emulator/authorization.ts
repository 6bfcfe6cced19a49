/**
 * Microsoft.Authorization role assignments, an extension resource at any scope (a subscription, a
 * resource group, a resource, a subnet): `{scope}/providers/Microsoft.Authorization/roleAssignments[/{name}]`.
 * PUT creates one (201; the name is a GUID; the same principal, role and scope twice is
 * RoleAssignmentExists; an existing one cannot move to another principal, role or scope), GET,
 * DELETE (200 with what was deleted, 204 when nothing), and list with ARM's filters: none (at,
 * above and below the scope), `atScope()` (at or above) and `principalId eq '{id}'` (that
 * principal's, at, above and below). Role definitions are not kept: any role definition ID of the
 * right shape is taken, as the built-in roles are.
 */
import {
  asObject,
  asString,
  cloudError,
  noContent,
  ok,
  type ArmReply,
  type ArmRequest,
  type JsonObject,
} from "./http.ts";
import { methodNotAllowed } from "./resourcegroups.ts";
import type { EmulatorContext } from "./context.ts";
import { ROLE_ASSIGNMENT_TYPE, type StoredResource } from "./store.ts";

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ROLE_DEFINITION_ID =
  /^(\/subscriptions\/[^/]+)?\/providers\/Microsoft\.Authorization\/roleDefinitions\/([0-9a-f-]{36})$/i;

/** Where `providers/Microsoft.Authorization/roleAssignments` starts in a path, if it is there. */
export function roleAssignmentsAt(lower: string[]): number | undefined {
  for (let i = lower.length - 2; i >= 2; i--)
    if (
      lower[i] === "providers" &&
      lower[i + 1] === "microsoft.authorization" &&
      lower[i + 2] === "roleassignments"
    )
      return i;
  return undefined;
}

interface AssignmentRequest {
  ctx: EmulatorContext;
  req: ArmRequest;
  subscriptionId: string;
  /** The scope as sent, e.g. /subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v. */
  scope: string;
}

/** Handles a request whose path has `providers/Microsoft.Authorization/roleAssignments` at `at`. */
export function roleAssignments(
  ctx: EmulatorContext,
  req: ArmRequest,
  subscriptionId: string,
  at: number,
): ArmReply {
  const scope = `/${req.segments.slice(0, at).join("/")}`;
  const name = req.segments[at + 3];
  const a: AssignmentRequest = { ctx, req, subscriptionId, scope };
  if (req.segments.length > at + 4)
    return cloudError(404, "NotFound", `No route for ${req.method} ${req.path}.`);
  if (name === undefined) return req.method === "GET" ? list(a) : methodNotAllowed(req.method);
  switch (req.method) {
    case "GET": {
      const r = ctx.store.get(assignmentId(scope, name));
      return r ? ok(render(r)) : notFound(name);
    }
    case "PUT":
      return put(a, name);
    case "DELETE": {
      const r = ctx.store.get(assignmentId(scope, name));
      if (!r) return noContent();
      ctx.store.delete(r.id);
      return ok(render(r));
    }
    default:
      return methodNotAllowed(req.method);
  }
}

function assignmentId(scope: string, name: string): string {
  return `${scope}/providers/${ROLE_ASSIGNMENT_TYPE}/${name}`;
}

function notFound(name: string): ArmReply {
  return cloudError(404, "RoleAssignmentNotFound", `The role assignment '${name}' is not found.`);
}

export function render(r: StoredResource): JsonObject {
  return { id: r.id, name: r.name, type: ROLE_ASSIGNMENT_TYPE, properties: r.properties };
}

function put(a: AssignmentRequest, name: string): ArmReply {
  if (!GUID.test(name))
    return cloudError(
      400,
      "InvalidRoleAssignmentId",
      `The role assignment ID '${name}' is not valid. The role assignment ID must be a GUID.`,
    );
  const props = asObject(asObject(a.req.body)["properties"]);
  const roleDefinitionId = asString(props["roleDefinitionId"]) ?? "";
  const principalId = asString(props["principalId"]) ?? "";
  if (!ROLE_DEFINITION_ID.test(roleDefinitionId))
    return cloudError(
      400,
      "InvalidRoleDefinitionId",
      `The role definition ID '${roleDefinitionId}' is not valid.`,
    );
  if (!GUID.test(principalId))
    return cloudError(
      400,
      "InvalidPrincipalId",
      `A valid principal ID must be provided for role assignment.`,
    );
  const id = assignmentId(a.scope, name);
  const existing = a.ctx.store.get(id);
  const same = (r: StoredResource): boolean =>
    sameText(r.properties["principalId"], principalId) &&
    roleGuid(asString(r.properties["roleDefinitionId"]) ?? "") === roleGuid(roleDefinitionId) &&
    sameText(r.properties["scope"], a.scope);
  if (existing && !same(existing))
    return cloudError(
      400,
      "RoleAssignmentUpdateNotPermitted",
      "Tenant ID, application ID, principal ID, and scope are not allowed to be updated.",
    );
  const duplicate = assignments(a.ctx).find((r) => r !== existing && same(r));
  if (duplicate)
    return cloudError(
      409,
      "RoleAssignmentExists",
      `The role assignment already exists. The ID of the existing role assignment is ${duplicate.name}.`,
    );
  if (existing) return ok(render(existing));
  const now = new Date().toISOString();
  const r: StoredResource = {
    id,
    name,
    type: ROLE_ASSIGNMENT_TYPE,
    subscriptionId: a.subscriptionId,
    resourceGroup: resourceGroupOf(a.scope),
    tags: {},
    etag: a.ctx.store.newEtag(),
    properties: {
      roleDefinitionId,
      principalId,
      principalType: asString(props["principalType"]) ?? "ServicePrincipal",
      scope: a.scope,
      createdOn: now,
      updatedOn: now,
    },
  };
  a.ctx.store.put(r);
  return ok(render(r), 201);
}

function list(a: AssignmentRequest): ArmReply {
  const filter = parseFilter(a.req.query.get("$filter"));
  if (typeof filter === "string") return cloudError(400, "BadRequest", filter);
  const query = a.scope.toLowerCase();
  const items = assignments(a.ctx).filter((r) => {
    const scope = (asString(r.properties["scope"]) ?? "").toLowerCase();
    const atOrAbove = query === scope || query.startsWith(`${scope}/`);
    const below = scope.startsWith(`${query}/`);
    if (filter.principalId !== undefined && !sameText(r.properties["principalId"], filter.principalId))
      return false;
    return filter.atScope ? atOrAbove : atOrAbove || below;
  });
  return ok({ value: items.map(render) });
}

/** `atScope()`, `principalId eq '{id}'` (or `assignedTo('{id}')`), joined by `and`; or why not. */
function parseFilter(text: string | null): { atScope: boolean; principalId?: string } | string {
  const out: { atScope: boolean; principalId?: string } = { atScope: false };
  if (text === null || text.trim() === "") return out;
  for (const term of text.split(/\s+and\s+/i).map((s) => s.trim())) {
    const principal = /^(?:principalId\s+eq\s+'([^']*)'|assignedTo\('([^']*)'\))$/i.exec(term);
    if (/^atScope\(\)$/i.test(term)) out.atScope = true;
    else if (principal) out.principalId = principal[1] ?? principal[2] ?? "";
    else
      return `The filter '${text}' is not supported. Supported filters are atScope(), principalId eq '{id}' and assignedTo('{id}').`;
  }
  return out;
}

function assignments(ctx: EmulatorContext): StoredResource[] {
  return ctx.store.everyOfType(ROLE_ASSIGNMENT_TYPE);
}

function roleGuid(roleDefinitionId: string): string {
  return roleDefinitionId.split("/").at(-1)?.toLowerCase() ?? "";
}

function sameText(value: unknown, text: string): boolean {
  return typeof value === "string" && value.toLowerCase() === text.toLowerCase();
}

function resourceGroupOf(scope: string): string {
  const seg = scope.split("/").filter(Boolean);
  return seg[2]?.toLowerCase() === "resourcegroups" ? (seg[3] ?? "") : "";
}
