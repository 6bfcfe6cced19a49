/**
 * What every resource handler receives, and the checks ARM makes in front of every resource
 * provider: the resource group exists (and is not being deleted), names and locations are valid.
 */
import type { ComputeCatalog } from "./compute.ts";
import type { Faults } from "./faults.ts";
import { cloudError, header, type ArmReply, type ArmRequest } from "./http.ts";
import type { AsyncOperations, OperationStyle } from "./operations.ts";
import { groupId, type ResourceStore, type StoredResource } from "./store.ts";

export interface EmulatorContext {
  endpoint: string;
  store: ResourceStore;
  ops: AsyncOperations;
  faults: Faults;
  /** The tenant of the emulated subscriptions (and of the one service principal). */
  tenantId: string;
  /** VM sizes offered per location and zone, and each subscription's vCPU usage and quota. */
  compute: ComputeCatalog;
  /** The next public IPv4 address to hand out. */
  nextIpAddress(): string;
}

/** A request addressed to something inside one resource group. */
export interface Target {
  ctx: EmulatorContext;
  req: ArmRequest;
  subscriptionId: string;
  resourceGroup: string;
  apiVersion: string;
}

export function resourceGroupNotFound(resourceGroup: string): ArmReply {
  return cloudError(404, "ResourceGroupNotFound", `Resource group '${resourceGroup}' could not be found.`);
}

export function resourceNotFound(type: string, name: string, resourceGroup: string): ArmReply {
  return cloudError(
    404,
    "ResourceNotFound",
    `The Resource '${type}/${name}' under resource group '${resourceGroup}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
  );
}

/** The resource group a request targets, or the reply ARM gives when it cannot be used. */
export function requireGroup(t: Target, forWrite: boolean): StoredResource | ArmReply {
  const group = t.ctx.store.group(t.subscriptionId, t.resourceGroup);
  if (!group) return resourceGroupNotFound(t.resourceGroup);
  if (forWrite && group.properties["provisioningState"] === "Deleting") {
    return cloudError(
      409,
      "ResourceGroupBeingDeleted",
      `The resource group '${group.name}' is in deprovisioning state and cannot perform this operation.`,
    );
  }
  return group;
}

export function isReply(value: unknown): value is ArmReply {
  return typeof value === "object" && value !== null && "status" in value && typeof value.status === "number";
}

/** The canonical id of a resource in the target's group, using the group's stored casing. */
export function idIn(t: Target, type: string, ...names: string[]): string {
  const group = t.ctx.store.group(t.subscriptionId, t.resourceGroup);
  const base = group?.id ?? groupId(t.subscriptionId, t.resourceGroup);
  return `${base}/providers/${type}/${names.join("/")}`;
}

/** ARM normalizes "West US" to "westus". */
export function normalizeLocation(location: string): string {
  return location.replace(/\s+/g, "").toLowerCase();
}

const NETWORK_NAME = /^[A-Za-z0-9](?:[\w.-]{0,78}\w)?$/;

export function invalidNetworkName(name: string): ArmReply | undefined {
  if (NETWORK_NAME.test(name)) return undefined;
  return cloudError(
    400,
    "InvalidResourceName",
    `Resource name ${name} is invalid. The name can be up to 80 characters long. It must begin with a word character, and it must end with a word character or with '_'. The name may contain word characters or '.', '-', '_'.`,
  );
}

export function anotherOperationInProgress(id: string): ArmReply {
  return cloudError(
    409,
    "AnotherOperationInProgress",
    `Another operation on this or dependent resource is in progress. Resource: ${id}.`,
  );
}

export function conditionalHeaders(req: ArmRequest): { ifMatch?: string; ifNoneMatch?: string } {
  const ifMatch = header(req, "if-match");
  const ifNoneMatch = header(req, "if-none-match");
  return { ...(ifMatch ? { ifMatch } : {}), ...(ifNoneMatch ? { ifNoneMatch } : {}) };
}

/** Starts an operation with the faults that match the request. */
export function startOperation(
  t: Target,
  style: OperationStyle,
  handlers: {
    complete: () => void;
    fail: (e: { code: string; message: string }) => void;
    result: () => ArmReply;
  },
): ReturnType<AsyncOperations["start"]> {
  return t.ctx.ops.start({
    subscriptionId: t.subscriptionId,
    style,
    apiVersion: t.apiVersion,
    fault: t.ctx.faults.takeOperationFault(t.req.method, t.req.path),
    ...handlers,
  });
}
