/**
 * What the mapping of every kind shares: the CR kinds an ARM resource maps to, the context a CR
 * gets besides the resource, the ARM-only remainder and envelope kept in annotations (bounded in
 * size), and small path helpers over plain JSON. cluster.ts, node-pool.ts and external-auth.ts map
 * the internal model to their kind's CR and back.
 */
import {
  ARM_ANNOTATIONS,
  ARM_LABELS,
  type ExternalAuth,
  type HcpCluster,
  type NodePool,
} from "../../api/v1alpha1/index.ts";
import { isObject, type JsonObject } from "../api/json.ts";
import type { InternalResource } from "../api/internal.ts";
import { fieldErrors } from "../errors.ts";
import { identityWithDetails } from "../checks/managed-identities.ts";
import { resourceGroupLabel } from "./names.ts";
import { resourceType, type ResourceId, type ResourceKind } from "../resource-id.ts";

/** Every CR an ARM resource maps to. */
export type ArmCR = HcpCluster | NodePool | ExternalAuth;

export function isNodePool(cr: ArmCR): cr is NodePool {
  return "clusterRef" in cr.spec && "platform" in cr.spec;
}

export function isExternalAuth(cr: ArmCR): cr is ExternalAuth {
  return "issuer" in cr.spec;
}

/** What the CR gets besides the resource: where it lives and who asked. */
export interface ToCRContext {
  id: ResourceId;
  namespace: string;
  name: string;
  /** The customer's tenant (X-Ms-Home-Tenant-Id or the subscription's). */
  tenantId?: string;
  /** Annotations of this request: operation, correlation IDs. */
  annotations: Record<string, string>;
  /** For node pools and external auths: the HcpCluster's name. */
  clusterName?: string;
}

// ---- small path helpers over plain JSON (the ARM-only remainder, the response properties) ----

export function set(o: JsonObject, path: string, value: unknown): void {
  if (value === undefined) return;
  const keys = path.split(".");
  const last = keys.pop() ?? "";
  let cur = o;
  for (const key of keys) {
    const next = cur[key];
    if (isObject(next)) cur = next;
    else cur = cur[key] = {};
  }
  cur[last] = value;
}

/** Deletes a path and then any objects it left empty. */
function remove(o: JsonObject, path: string): void {
  const keys = path.split(".");
  const last = keys.pop() ?? "";
  const parents: JsonObject[] = [o];
  for (const key of keys) {
    const next = parents[parents.length - 1]?.[key];
    if (!isObject(next)) return;
    parents.push(next);
  }
  delete parents[parents.length - 1]?.[last];
  for (let i = keys.length - 1; i >= 0; i--) {
    const parent = parents[i];
    const key = keys[i] ?? "";
    if (parent && isObject(parent[key]) && Object.keys(parent[key]).length === 0) delete parent[key];
  }
}

export function parseJson(text: string | undefined): JsonObject {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** Drops undefined values so that the CR has no explicit nulls. */
export function compact<T extends object>(o: T): T {
  const out = { ...o };
  for (const [key, value] of Object.entries(out)) if (value === undefined) Reflect.deleteProperty(out, key);
  return out;
}

export function armOnly(properties: JsonObject, mapped: string[]): JsonObject {
  const rest = structuredClone(properties);
  for (const path of mapped) remove(rest, path);
  return rest;
}

/**
 * The most the request's ARM-only fields (envelope and properties without a spec field) may take
 * in the CR's annotations: the API server allows 256 KiB of annotations per object, and the
 * operation documents need the rest.
 */
export const MAX_STORED_ARM_BYTES = 128 * 1024;

const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? "");

/**
 * Refuses a resource whose annotations would pass the API server's limit, before writing it,
 * naming the largest field (rather than letting the API server name `metadata.annotations`).
 */
function checkStoredSize(envelope: JsonObject, properties: JsonObject): void {
  const total = jsonBytes(envelope) + jsonBytes(properties);
  if (total <= MAX_STORED_ARM_BYTES) return;
  const parts: Array<[string, number]> = [
    ...Object.entries(envelope).map(([k, v]): [string, number] => [k, jsonBytes(v)]),
    ...Object.entries(properties).map(([k, v]): [string, number] => [`properties.${k}`, jsonBytes(v)]),
  ];
  const [target, size] = parts.reduce((a, b) => (b[1] > a[1] ? b : a), ["properties", 0]);
  throw fieldErrors([
    {
      target,
      message: `The resource's tags, identity and properties take ${total} bytes, more than the ${MAX_STORED_ARM_BYTES} bytes (128 KiB) the service stores; '${target}' takes ${size}`,
    },
  ]);
}

/**
 * `spec`: properties stored in the spec whose total size the CRD cannot bound (image digest
 * mirrors), counted with the annotations' so that a resource too large to store is refused naming
 * its largest field rather than with the API server's request size limit.
 */
export function metadataFor(
  res: InternalResource,
  ctx: ToCRContext,
  properties: JsonObject,
  spec: JsonObject = {},
): HcpCluster["metadata"] {
  const envelope = compact({
    location: res.location,
    tags: res.tags,
    systemData: res.systemData,
    identity: res.identity,
  });
  checkStoredSize(envelope, { ...properties, ...spec });
  return {
    name: ctx.name,
    namespace: ctx.namespace,
    labels: {
      [ARM_LABELS.resourceGroup]: resourceGroupLabel(ctx.id.resourceGroup),
      ...(ctx.clusterName ? { [ARM_LABELS.cluster]: ctx.clusterName } : {}),
    },
    annotations: {
      [ARM_ANNOTATIONS.resourceId]: res.id,
      [ARM_ANNOTATIONS.envelope]: JSON.stringify(envelope),
      [ARM_ANNOTATIONS.properties]: JSON.stringify(properties),
      ...ctx.annotations,
    },
  };
}

// ---- CR → ARM ----

export function envelopeOf(
  cr: ArmCR,
  kind: ResourceKind,
  location: string | undefined,
  tenantId?: string,
): Omit<InternalResource, "properties"> {
  const a = cr.metadata.annotations ?? {};
  const env = parseJson(a[ARM_ANNOTATIONS.envelope]);
  const id = a[ARM_ANNOTATIONS.resourceId] ?? "";
  return compact({
    id,
    name: id.split("/").pop() ?? "",
    type: resourceType(kind),
    location: typeof env["location"] === "string" ? env["location"] : (location ?? ""),
    tags: stringMap(env["tags"]),
    systemData: isObject(env["systemData"]) ? env["systemData"] : undefined,
    identity: isObject(env["identity"]) ? identityWithDetails(env["identity"], tenantId) : undefined,
  });
}

/** The string entries of a JSON object (tags are strings, validated when they were sent). */
function stringMap(v: unknown): Record<string, string> | undefined {
  if (!isObject(v)) return undefined;
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/** ARM's status.conditions (Available, Degraded, Progressing) from the CR's summary conditions. */
export function armConditions(cr: ArmCR): JsonObject[] | undefined {
  const rename: Record<string, string> = {
    Ready: "Available",
    Degraded: "Degraded",
    Progressing: "Progressing",
  };
  const out = (cr.status?.conditions ?? [])
    .filter((c) => c.type in rename)
    .map((c) => ({
      type: rename[c.type],
      status: c.status,
      lastTransitionTime: c.lastTransitionTime,
      reason: c.reason,
      message: c.message,
    }));
  return out.length > 0 ? out : undefined;
}
