/**
 * Versioned ARM bodies ⇄ hub resources: what a request in one API version means for the stored
 * resource, and what a stored resource looks like in one API version. Fields a version does not
 * know survive its updates (a 2024-06-10-preview PATCH keeps a cluster's ingress settings).
 */
import { VERSIONS, type ApiVersion } from "./api-version-schemas.ts";
import type { ResourceKind } from "./resource-id.ts";
import { isObject, project, type JsonObject, type ObjectSchema } from "./body-schema.ts";
import type { ArmResource } from "./cr-mapping.ts";

export function schemaFor(version: ApiVersion, kind: ResourceKind): ObjectSchema {
  return kind === "cluster" ? VERSIONS[version].cluster : VERSIONS[version].nodePool;
}

export function propertiesSchema(version: ApiVersion, kind: ResourceKind): ObjectSchema {
  const p = schemaFor(version, kind).properties["properties"];
  if (p?.type !== "object") throw new Error(`no properties schema for ${kind} in ${version}`);
  return p;
}

/** A hub resource as one API version shows it. */
export function toVersioned(res: ArmResource, version: ApiVersion, kind: ResourceKind): JsonObject {
  const properties = kind === "cluster" ? VERSIONS[version].clusterFromHub(res.properties) : res.properties;
  return project(schemaFor(version, kind), { ...res, properties }) as JsonObject;
}

/** The properties of a versioned body in the hub's shape. */
export function propertiesToHub(doc: JsonObject, version: ApiVersion, kind: ResourceKind): JsonObject {
  const p = isObject(doc["properties"]) ? doc["properties"] : {};
  return kind === "cluster" ? VERSIONS[version].clusterToHub(p) : p;
}

/**
 * Keeps what `old` holds that the request's version could not see (`seen`: old as that version
 * shows it, converted back) in `next`.
 */
export function carryHidden(old: unknown, seen: unknown, next: unknown): unknown {
  if (!isObject(old)) return next;
  const out: JsonObject = isObject(next) ? { ...next } : {};
  const visible = isObject(seen) ? seen : {};
  for (const [key, value] of Object.entries(old)) {
    if (visible[key] === undefined) {
      if (out[key] === undefined) out[key] = value;
    } else if (isObject(value) && isObject(out[key])) {
      out[key] = carryHidden(value, visible[key], out[key]);
    }
  }
  return out;
}
