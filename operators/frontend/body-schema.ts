/**
 * A small schema language for the ARM request and response bodies of one API version, and the
 * walks over it: read a request (types, enums, patterns, ranges; read-only and unknown fields
 * dropped), check required fields, apply defaults, keep create-only fields on update (and refuse
 * changes to them), and project a stored resource onto what one API version shows. The schemas
 * themselves live in api-version-schemas.ts, one per version, built from the OpenAPI of ARO HCP.
 */
import { isDeepStrictEqual } from "node:util";
import type { FieldError } from "./errors.ts";

interface Common {
  /** Set by the service; ignored in requests, shown in responses. */
  readOnly?: boolean;
  /** Set at creation only ("r,c" in the OpenAPI); later requests may repeat it but not change it. */
  createOnly?: boolean;
  /** Applied on creation when the field is absent (objects: `{}` so their own defaults apply). */
  default?: unknown;
}

export interface StringSchema extends Common {
  type: "string";
  enum?: readonly string[];
  pattern?: RegExp;
  maxLength?: number;
  minLength?: number;
}
export interface IntegerSchema extends Common {
  type: "integer";
  minimum?: number;
  maximum?: number;
}
export interface BooleanSchema extends Common {
  type: "boolean";
}
export interface ObjectSchema extends Common {
  type: "object";
  properties: Record<string, Schema>;
  required?: readonly string[];
}
export interface MapSchema extends Common {
  type: "map";
  values: Schema;
  maxProperties?: number;
}
export interface ArraySchema extends Common {
  type: "array";
  items: Schema;
  maxItems?: number;
  minItems?: number;
}
/** Any JSON value, kept as is (e.g. identity's userAssignedIdentities entries). */
export interface AnySchema extends Common {
  type: "any";
}

export type Schema =
  StringSchema | IntegerSchema | BooleanSchema | ObjectSchema | MapSchema | ArraySchema | AnySchema;

export type JsonObject = Record<string, unknown>;

/** A JSON scalar as text; "" for anything else. */
export function text(v: unknown): string {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : "";
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

function checkString(s: StringSchema, v: string, path: string, errors: FieldError[]): void {
  if (s.enum && !s.enum.includes(v))
    errors.push({
      target: path,
      message: `The value '${v}' is not allowed for '${path}'; allowed values: ${s.enum.join(", ")}`,
    });
  if (s.maxLength !== undefined && v.length > s.maxLength)
    errors.push({ target: path, message: `'${path}' must be at most ${s.maxLength} characters long` });
  if (s.minLength !== undefined && v.length < s.minLength)
    errors.push({ target: path, message: `'${path}' must be at least ${s.minLength} characters long` });
  if (s.pattern && !s.pattern.test(v))
    errors.push({
      target: path,
      message: `The value '${v}' of '${path}' does not match ${s.pattern.source}`,
    });
}

function checkInteger(s: IntegerSchema, v: number, path: string, errors: FieldError[]): void {
  if (s.minimum !== undefined && v < s.minimum)
    errors.push({ target: path, message: `'${path}' must be at least ${s.minimum}, not ${v}` });
  if (s.maximum !== undefined && v > s.maximum)
    errors.push({ target: path, message: `'${path}' must be at most ${s.maximum}, not ${v}` });
}

const typeNames: Record<Schema["type"], string> = {
  string: "a string",
  integer: "an integer",
  boolean: "a boolean",
  object: "an object",
  map: "an object",
  array: "an array",
  any: "a value",
};

function hasType(s: Schema, v: unknown): boolean {
  switch (s.type) {
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "boolean":
      return typeof v === "boolean";
    case "object":
    case "map":
      return isObject(v);
    case "array":
      return Array.isArray(v);
    case "any":
      return true;
  }
}

function readObject(s: ObjectSchema, v: JsonObject, path: string, errors: FieldError[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(s.properties)) {
    if (child.readOnly || v[key] === undefined || v[key] === null) continue;
    out[key] = readValue(child, v[key], join(path, key), errors);
  }
  return out;
}

function readCollection(s: MapSchema | ArraySchema, v: unknown, path: string, errors: FieldError[]): unknown {
  if (s.type === "map") {
    const entries = Object.entries(v as JsonObject);
    if (s.maxProperties !== undefined && entries.length > s.maxProperties)
      errors.push({ target: path, message: `'${path}' may have at most ${s.maxProperties} entries` });
    return Object.fromEntries(entries.map(([k, x]) => [k, readValue(s.values, x, `${path}.${k}`, errors)]));
  }
  const items = v as unknown[];
  if (s.maxItems !== undefined && items.length > s.maxItems)
    errors.push({ target: path, message: `'${path}' may have at most ${s.maxItems} items` });
  if (s.minItems !== undefined && items.length < s.minItems)
    errors.push({ target: path, message: `'${path}' must have at least ${s.minItems} items` });
  return items.map((x, i) => readValue(s.items, x, `${path}[${i}]`, errors));
}

/**
 * Reads one request value: wrong types, values outside an enum or range, and pattern misses become
 * field errors; read-only and unknown fields are dropped. Required fields are checked separately
 * (a PATCH body is partial).
 */
export function readValue(s: Schema, v: unknown, path: string, errors: FieldError[]): unknown {
  if (!hasType(s, v)) {
    errors.push({ target: path, message: `'${path}' must be ${typeNames[s.type]}` });
    return undefined;
  }
  switch (s.type) {
    case "string":
      checkString(s, v as string, path, errors);
      return v;
    case "integer":
      checkInteger(s, v as number, path, errors);
      return v;
    case "object":
      return readObject(s, v as JsonObject, path, errors);
    case "map":
    case "array":
      return readCollection(s, v, path, errors);
    default:
      return v;
  }
}

/** Required fields of every object present in `v`. */
export function checkRequired(s: Schema, v: unknown, path: string, errors: FieldError[]): void {
  if (s.type === "object" && isObject(v)) {
    for (const key of s.required ?? [])
      if (v[key] === undefined || v[key] === null)
        errors.push({ target: join(path, key), message: `Missing required field '${join(path, key)}'` });
    for (const [key, child] of Object.entries(s.properties))
      if (v[key] !== undefined) checkRequired(child, v[key], join(path, key), errors);
  } else if (s.type === "array" && Array.isArray(v)) {
    v.forEach((x, i) => checkRequired(s.items, x, `${path}[${i}]`, errors));
  } else if (s.type === "map" && isObject(v)) {
    for (const [k, x] of Object.entries(v)) checkRequired(s.values, x, `${path}.${k}`, errors);
  }
}

/** Fills defaults into a new resource (objects with a default of {} get their own defaults). */
export function applyDefaults(s: Schema, v: unknown): unknown {
  if (s.type !== "object" || !isObject(v)) return v;
  const out: JsonObject = { ...v };
  for (const [key, child] of Object.entries(s.properties)) {
    if (out[key] === undefined && child.default !== undefined) out[key] = structuredClone(child.default);
    if (out[key] !== undefined) out[key] = applyDefaults(child, out[key]);
  }
  return out;
}

/**
 * On update: create-only fields the request left out keep their stored value; ones it changed are
 * errors. Updatable fields follow the request (PUT replaces; PATCH merged beforehand).
 */
export function keepCreateOnly(
  s: Schema,
  old: unknown,
  next: unknown,
  path: string,
  errors: FieldError[],
): unknown {
  if (s.readOnly) return next;
  if (s.createOnly) {
    if (next === undefined) return old;
    if (old !== undefined && !isDeepStrictEqual(old, next))
      errors.push({ target: path, message: `Field '${path}' cannot be changed after creation` });
    return next;
  }
  if (s.type !== "object") return next;
  // An object the request left out still keeps its create-only fields.
  if (next !== undefined && !isObject(next)) return next;
  const prev = isObject(old) ? old : {};
  const out: JsonObject = { ...(next ?? {}) };
  for (const [key, child] of Object.entries(s.properties)) {
    const kept = keepCreateOnly(child, prev[key], out[key], join(path, key), errors);
    if (kept !== undefined) out[key] = kept;
  }
  return next === undefined && Object.keys(out).length === 0 ? undefined : out;
}

/** What one API version shows of a stored value: its known fields, read-only ones included. */
export function project(s: Schema, v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  switch (s.type) {
    case "object": {
      if (!isObject(v)) return undefined;
      const out: JsonObject = {};
      for (const [key, child] of Object.entries(s.properties)) {
        const x = project(child, v[key]);
        if (x !== undefined) out[key] = x;
      }
      return out;
    }
    case "map":
      return isObject(v)
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, project(s.values, x)]))
        : undefined;
    case "array":
      return Array.isArray(v) ? v.map((x) => project(s.items, x)) : undefined;
    default:
      return hasType(s, v) ? v : undefined;
  }
}

/** RFC 7386 JSON merge patch: objects merge, null removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
