/**
 * The walks over a schema (schema.ts): read a request value (types, enums, patterns, ranges;
 * read-only and unknown fields dropped), check required fields, apply defaults, keep create-only
 * fields on update (and refuse changes to them), project a stored value onto what one schema
 * shows, and RFC 7386 merge patch. Untyped inside; the exported entry points give the schema's type.
 */
import { isIP } from "node:net";
import { isDeepStrictEqual } from "node:util";
import type { FieldError } from "../errors.ts";
import { isObject, setOwn, shorten, type JsonObject } from "./json.ts";
import type {
  BooleanSchema,
  IntegerSchema,
  MapSchema,
  ObjectSchema,
  ArraySchema,
  Schema,
  StringFormat,
  StringSchema,
  TypeOf,
} from "./schema.ts";

/** What each format checks, and what the error says a value must be. */
const FORMATS: Record<StringFormat, { check: (v: string) => boolean; description: string }> = {
  cidr: { check: isAddressOrCidr, description: "an IP address or CIDR block such as 10.0.0.0/8" },
};

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** `10.0.0.0/8`, `2001:db8::/32`, or a single address. */
function isAddressOrCidr(v: string): boolean {
  const [address = "", prefix, ...rest] = v.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

function checkString(s: StringSchema, v: string, path: string, errors: FieldError[]): void {
  if (s.enum && !s.enum.includes(v))
    errors.push({
      target: path,
      message: `The value '${shorten(v)}' is not allowed for '${path}'; allowed values: ${s.enum.join(", ")}`,
    });
  if (s.format && !FORMATS[s.format].check(v))
    errors.push({
      target: path,
      message: `The value '${shorten(v)}' of '${path}' is not ${FORMATS[s.format].description}`,
    });
  if (s.maxLength !== undefined && v.length > s.maxLength)
    errors.push({ target: path, message: `'${path}' must be at most ${s.maxLength} characters long` });
  if (s.minLength !== undefined && v.length < s.minLength)
    errors.push({ target: path, message: `'${path}' must be at least ${s.minLength} characters long` });
  if (s.pattern && !s.pattern.test(v))
    errors.push({
      target: path,
      message: `The value '${shorten(v)}' of '${path}' ${s.patternText ?? `does not match ${s.pattern.source}`}`,
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
      return typeof v === "number" && Number.isSafeInteger(v);
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

// ---- the walks: untyped inside; the exported entry points give the schema's type ----

function wrongType(s: Schema, path: string, errors: FieldError[]): undefined {
  errors.push({ target: path, message: `'${path}' must be ${typeNames[s.type]}` });
  return undefined;
}

function readScalar(
  s: StringSchema | IntegerSchema | BooleanSchema,
  v: unknown,
  path: string,
  errors: FieldError[],
): unknown {
  if (s.type === "string" && typeof v === "string") checkString(s, v, path, errors);
  else if (s.type === "integer" && typeof v === "number" && Number.isSafeInteger(v))
    checkInteger(s, v, path, errors);
  else if (s.type === "integer" && typeof v === "number" && Number.isInteger(v)) {
    // 1e308 is an integer to JSON, and 2^53+1 reads as 2^53: neither is the number that was sent.
    errors.push({
      target: path,
      message: `'${path}' must be an integer of at most ${Number.MAX_SAFE_INTEGER} in magnitude`,
    });
    return undefined;
  } else if (s.type !== "boolean" || typeof v !== "boolean") return wrongType(s, path, errors);
  return v;
}

function readObject(s: ObjectSchema, v: JsonObject, path: string, errors: FieldError[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(s.properties)) {
    if (!child || child.readOnly || v[key] === undefined || v[key] === null) continue;
    out[key] = readAny(child, v[key], join(path, key), errors);
  }
  return out;
}

function checkKey(s: MapSchema, key: string, path: string, errors: FieldError[]): void {
  const rules = s.keys;
  if (rules?.maxLength !== undefined && key.length > rules.maxLength)
    errors.push({
      target: path,
      message: `The key '${shorten(key)}' of '${path}' is ${key.length} characters long, more than ${rules.maxLength}`,
    });
  if (rules?.forbidden?.test(key))
    errors.push({
      target: path,
      message: `The key '${shorten(key)}' of '${path}' ${rules.forbiddenText ?? `matches ${rules.forbidden.source}`}`,
    });
}

function readMap(s: MapSchema, v: JsonObject, path: string, errors: FieldError[]): JsonObject {
  const entries = Object.entries(v);
  if (s.maxProperties !== undefined && entries.length > s.maxProperties)
    errors.push({ target: path, message: `'${path}' may have at most ${s.maxProperties} entries` });
  for (const [k] of entries) checkKey(s, k, path, errors);
  // A null entry is no entry, as a null field is no field: in a PATCH it removes the entry.
  return Object.fromEntries(
    entries
      .filter(([, x]) => x !== null)
      .map(([k, x]) => [k, readAny(s.values, x, `${path}.${shorten(k, 128)}`, errors)]),
  );
}

function readArray(s: ArraySchema, items: unknown[], path: string, errors: FieldError[]): unknown[] {
  if (s.maxItems !== undefined && items.length > s.maxItems)
    errors.push({ target: path, message: `'${path}' may have at most ${s.maxItems} items` });
  if (s.minItems !== undefined && items.length < s.minItems)
    errors.push({ target: path, message: `'${path}' must have at least ${s.minItems} items` });
  return items.map((x, i) => readAny(s.items, x, `${path}[${i}]`, errors));
}

function readAny(s: Schema, v: unknown, path: string, errors: FieldError[]): unknown {
  switch (s.type) {
    case "object":
      return isObject(v) ? readObject(s, v, path, errors) : wrongType(s, path, errors);
    case "map":
      return isObject(v) ? readMap(s, v, path, errors) : wrongType(s, path, errors);
    case "array":
      return Array.isArray(v) ? readArray(s, v, path, errors) : wrongType(s, path, errors);
    case "any":
      return v;
    default:
      return readScalar(s, v, path, errors);
  }
}

/**
 * The parse step: reads a request value into the schema's type. Wrong types, values outside an
 * enum or range, and pattern misses become field errors (named by their JSON path); read-only and
 * unknown fields are dropped. Required fields are checked separately (a PATCH body is partial).
 */
export function readValue<S extends Schema>(
  s: S,
  v: unknown,
  path: string,
  errors: FieldError[],
): TypeOf<S> | undefined {
  // The walk keeps only values of the types `s` names: the result is a TypeOf<S>.
  return readAny(s, v, path, errors) as TypeOf<S> | undefined;
}

function missing(v: JsonObject, key: string): boolean {
  return v[key] === undefined || v[key] === null;
}

function requiredInObject(s: ObjectSchema, v: JsonObject, path: string, errors: FieldError[]): void {
  for (const key of s.required ?? [])
    if (missing(v, key))
      errors.push({ target: join(path, key), message: `Missing required field '${join(path, key)}'` });
  for (const [key, child] of Object.entries(s.properties))
    if (child && v[key] !== undefined) checkRequired(child, v[key], join(path, key), errors);
}

/** Required fields of every object present in `v`. */
export function checkRequired(s: Schema, v: unknown, path: string, errors: FieldError[]): void {
  if (s.type === "object" && isObject(v)) requiredInObject(s, v, path, errors);
  else if (s.type === "array" && Array.isArray(v))
    v.forEach((x, i) => checkRequired(s.items, x, `${path}[${i}]`, errors));
  else if (s.type === "map" && isObject(v))
    for (const [k, x] of Object.entries(v)) checkRequired(s.values, x, `${path}.${k}`, errors);
}

function defaults(s: Schema, v: unknown): unknown {
  if (s.type !== "object" || !isObject(v)) return v;
  const out: JsonObject = { ...v };
  for (const [key, child] of Object.entries(s.properties)) {
    if (!child) continue;
    if (out[key] === undefined && child.default !== undefined) out[key] = structuredClone(child.default);
    if (out[key] !== undefined) out[key] = defaults(child, out[key]);
  }
  return out;
}

/** Fills defaults into a new resource (objects with a default of {} get their own defaults). */
export function applyDefaults<S extends Schema>(s: S, v: unknown): TypeOf<S> | undefined {
  // Defaults are values of the schema's own fields: a value of this schema stays one.
  return defaults(s, v) as TypeOf<S> | undefined;
}

function keepObject(
  s: ObjectSchema,
  { old, next }: { old: unknown; next: unknown },
  path: string,
  errors: FieldError[],
): unknown {
  // An object the request left out still keeps its create-only fields.
  if (next !== undefined && !isObject(next)) return next;
  const prev = isObject(old) ? old : {};
  const out: JsonObject = { ...(next ?? {}) };
  for (const [key, child] of Object.entries(s.properties)) {
    const kept = child ? keep(child, { old: prev[key], next: out[key] }, join(path, key), errors) : undefined;
    if (kept !== undefined) out[key] = kept;
  }
  return next === undefined && Object.keys(out).length === 0 ? undefined : out;
}

const sameIgnoringCase = (a: unknown, b: unknown): boolean =>
  typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();

function keep(
  s: Schema,
  { old, next }: { old: unknown; next: unknown },
  path: string,
  errors: FieldError[],
): unknown {
  if (s.readOnly) return next;
  if (!s.createOnly) return s.type === "object" ? keepObject(s, { old, next }, path, errors) : next;
  if (next === undefined) return old;
  if (old === undefined) return next;
  // The same identifier in another casing is no change: the stored casing stays.
  if (s.type === "string" && s.caseInsensitive && sameIgnoringCase(old, next)) return old;
  if (!isDeepStrictEqual(old, next))
    errors.push({ target: path, message: `Field '${path}' cannot be changed after creation` });
  return next;
}

/**
 * On update: create-only fields the request left out keep their stored value; ones it changed are
 * errors. Updatable fields follow the request (PUT replaces; PATCH merged beforehand).
 */
export function keepCreateOnly<S extends Schema>(
  s: S,
  old: unknown,
  next: unknown,
  errors: FieldError[],
): TypeOf<S> | undefined {
  // Every value kept comes from `old` or `next`, both values of this schema.
  return keep(s, { old, next }, "", errors) as TypeOf<S> | undefined;
}

function projectObject(s: ObjectSchema, v: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(s.properties)) {
    const x = child ? projectAny(child, v[key]) : undefined;
    if (x !== undefined) out[key] = x;
  }
  return out;
}

function projectAny(s: Schema, v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  switch (s.type) {
    case "object":
      return isObject(v) ? projectObject(s, v) : undefined;
    case "map":
      return isObject(v)
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, projectAny(s.values, x)]))
        : undefined;
    case "array":
      return Array.isArray(v) ? v.map((x) => projectAny(s.items, x)) : undefined;
    default:
      return hasType(s, v) ? v : undefined;
  }
}

/** What one API version shows of a stored value: its known fields, read-only ones included. */
export function project<S extends Schema>(s: S, v: unknown): TypeOf<S> | undefined {
  // Like readValue, the walk keeps only values of the types `s` names.
  return projectAny(s, v) as TypeOf<S> | undefined;
}

/**
 * RFC 7386 JSON merge patch: objects merge, null removes, anything else replaces. Keys are set as
 * own properties: a body's "__proto__" is a key like any other (dropped later as unknown), never
 * the merged object's prototype, whose fields the schema walk would otherwise read unchecked.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else {
      setOwn(out, k, mergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v));
    }
  }
  return out;
}
