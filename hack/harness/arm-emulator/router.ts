/**
 * Maps an authenticated ARM request to its handler. ARM paths are case-insensitive, so every
 * keyword is compared lowercased; names keep the casing they were sent with.
 */
import { roleAssignments, roleAssignmentsAt } from "./authorization.ts";
import { compute } from "./compute.ts";
import type { EmulatorContext, Target } from "./context.ts";
import { dns } from "./dns.ts";
import { cloudError, type ArmReply, type ArmRequest } from "./http.ts";
import { keyVault, subscriptionVaults } from "./keyvault.ts";
import { identityKind } from "./managedidentity.ts";
import { loadBalancerKind, publicIpKind } from "./network.ts";
import { groupResources, listGroups, resourceGroup } from "./resourcegroups.ts";
import { synchronous } from "./synchronous.ts";
import { tracked } from "./tracked.ts";
import { virtualNetworks } from "./virtualnetworks.ts";

const SUBSCRIPTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUS_SEGMENTS = ["operations", "dnsoperationstatuses"];
const RESULT_SEGMENTS = ["operationresults", "dnsoperationresults"];

export function route(ctx: EmulatorContext, req: ArmRequest): ArmReply {
  const seg = req.segments;
  const lower = seg.map((s) => s.toLowerCase());
  const subscriptionId = seg[1];
  if (lower[0] !== "subscriptions" || subscriptionId === undefined) return notFound(req);
  if (!SUBSCRIPTION_ID.test(subscriptionId)) {
    return cloudError(
      400,
      "InvalidSubscriptionId",
      `The provided subscription identifier '${subscriptionId}' is malformed or invalid.`,
    );
  }
  const apiVersion = req.query.get("api-version");
  if (!apiVersion) {
    return cloudError(
      400,
      "MissingApiVersionParameter",
      "The api-version query parameter (?api-version=) is required for all requests.",
    );
  }
  const operation = operationRequest(ctx, req, subscriptionId);
  if (operation) return operation;
  // An extension resource at any scope: the scope is the path before it.
  const assignments = roleAssignmentsAt(lower);
  if (assignments !== undefined) return roleAssignments(ctx, req, subscriptionId, assignments);
  if (lower[2] === "providers")
    return subscriptionProviderRequest({ ctx, req, subscriptionId, apiVersion }, seg.slice(3));
  if (lower[2] !== "resourcegroups") return notFound(req);
  return groupRequest({ ctx, req, subscriptionId, apiVersion });
}

/** /subscriptions/{s}/resourcegroups[/{rg}[/resources | /providers/...]] */
function groupRequest(base: Omit<Target, "resourceGroup">): ArmReply {
  const seg = base.req.segments;
  const next = seg[4]?.toLowerCase();
  const rg = seg[3];
  if (rg === undefined) return listGroups(base);
  const t: Target = { ...base, resourceGroup: rg };
  if (seg.length === 4) return resourceGroup(t);
  if (next === "resources" && seg.length === 5) return groupResources(t);
  if (next !== "providers" || seg.length < 7) return notFound(base.req);
  return providerRequest(t, seg.slice(5));
}

function providerRequest(t: Target, providerPath: string[]): ArmReply {
  const [namespace = "", type = "", name, ...rest] = providerPath;
  const fullType = `${namespace}/${type}`.toLowerCase();
  switch (fullType) {
    case "microsoft.network/dnszones":
      return dns(t, providerPath.slice(2));
    case "microsoft.network/publicipaddresses":
      return rest.length === 0 ? tracked(t, publicIpKind, name) : notFound(t.req);
    case "microsoft.network/loadbalancers":
      return rest.length === 0 ? tracked(t, loadBalancerKind, name) : notFound(t.req);
    case "microsoft.network/virtualnetworks":
      return virtualNetworks(t, name, rest);
    case "microsoft.managedidentity/userassignedidentities":
      return rest.length === 0 ? synchronous(t, identityKind, name) : notFound(t.req);
    case "microsoft.keyvault/vaults":
      return keyVault(t, name, rest);
    default:
      return cloudError(
        400,
        "InvalidResourceType",
        `The resource type '${type}' could not be found in the namespace '${namespace}' for api version '${t.apiVersion}'.`,
      );
  }
}

/** /subscriptions/{s}/providers/{namespace}/...: what a provider serves across the subscription. */
function subscriptionProviderRequest(t: Omit<Target, "resourceGroup">, providerPath: string[]): ArmReply {
  const [namespace = "", ...rest] = providerPath;
  const lower = rest.map((s) => s.toLowerCase());
  switch (namespace.toLowerCase()) {
    case "microsoft.compute":
      return compute(t, rest);
    case "microsoft.keyvault":
      return lower.length === 1 && lower[0] === "vaults" ? subscriptionVaults(t) : notFound(t.req);
    default:
      return notFound(t.req);
  }
}

/** Azure-AsyncOperation and Location URLs of every provider. */
function operationRequest(
  ctx: EmulatorContext,
  req: ArmRequest,
  subscriptionId: string,
): ArmReply | undefined {
  const kind = operationUrlKind(req.segments.map((s) => s.toLowerCase()));
  if (kind === undefined) return undefined;
  const id = req.segments.at(-1) ?? "";
  if (req.method !== "GET") return cloudError(405, "MethodNotAllowed", "Operation URLs only answer GET.");
  const op = ctx.ops.get(subscriptionId, id);
  if (!op) return cloudError(404, "OperationNotFound", `The operation '${id}' could not be found.`);
  return kind === "status" ? ctx.ops.statusReply(op) : ctx.ops.locationReply(op);
}

/**
 * /subscriptions/{s}/operationresults/{id}, /subscriptions/{s}/providers/{ns}/locations/{l}/operations/{id}
 * (or operationResults), /subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Network/dnsOperationStatuses/{id}
 * (or dnsOperationResults).
 */
export function operationUrlKind(lower: string[]): "status" | "result" | undefined {
  const kind = lower.at(-2) ?? "";
  const status = STATUS_SEGMENTS.includes(kind);
  if (!status && !RESULT_SEGMENTS.includes(kind)) return undefined;
  return operationUrlShape(lower, kind) ? (status ? "status" : "result") : undefined;
}

function operationUrlShape(lower: string[], kind: string): boolean {
  if (lower.length === 4) return kind === "operationresults";
  if (lower.length !== 8) return false;
  if (kind.startsWith("dnsoperation")) return lower[4] === "providers";
  return lower[2] === "providers" && lower[4] === "locations";
}

function notFound(req: ArmRequest): ArmReply {
  return cloudError(404, "NotFound", `No route for ${req.method} ${req.path}.`);
}
