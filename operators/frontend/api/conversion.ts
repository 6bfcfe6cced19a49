/**
 * Versioned ARM bodies ⇄ the internal model, for any registered api-version: what a request in
 * one version means for the stored resource, and what a stored resource looks like in one
 * version. Fields a version does not know survive its updates (carryHidden: a 2024-06-10-preview
 * PATCH keeps a cluster's ingress settings).
 */
import type { Identity } from "./arm-resource.ts";
import type { InternalKind, InternalProperties, InternalResource, PropertiesOf } from "./internal.ts";
import { isObject, setOwn, type JsonObject } from "./json.ts";
import { schemaFor, versionOf, type ApiVersion } from "./registry.ts";
import { project } from "./schema-walks.ts";

/**
 * A request or response body of one api-version, as read by its schema: the envelope typed, the
 * properties those of the version's own shape (the version's conversion reads them).
 */
export interface VersionedBody {
  id?: string;
  name?: string;
  type?: string;
  location?: string;
  tags?: Record<string, string>;
  systemData?: unknown;
  identity?: Identity;
  properties?: JsonObject;
}

/** A resource of the internal model as one api-version shows it. */
export function toVersioned(res: InternalResource, version: ApiVersion, kind: InternalKind): VersionedBody {
  // The conversion of `kind` takes properties of `kind`: `res` is a resource of that kind.
  const convert = versionOf(version).conversions[kind] as unknown as {
    fromInternal(p: InternalProperties): JsonObject;
  };
  const properties = convert.fromInternal(res.properties);
  return project(schemaFor(version, kind), { ...res, properties }) ?? {};
}

/** The properties of a versioned body (read and checked by its version's schema) in the model. */
export function toInternalProperties<K extends InternalKind>(
  doc: VersionedBody,
  version: ApiVersion,
  kind: K,
): PropertiesOf[K] {
  const convert = versionOf(version).conversions[kind] as unknown as {
    toInternal(p: JsonObject): PropertiesOf[K];
  };
  return convert.toInternal(doc.properties ?? {});
}

/** An own field's value: a key such as "constructor" must not find Object.prototype's. */
const own = (o: JsonObject, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);

function carry(old: unknown, seen: unknown, next: unknown): unknown {
  if (!isObject(old)) return next;
  const out: JsonObject = isObject(next) ? { ...next } : {};
  const visible = isObject(seen) ? seen : {};
  for (const [key, value] of Object.entries(old)) {
    const shown = own(visible, key);
    const sent = own(out, key);
    if (shown === undefined) {
      if (sent === undefined) setOwn(out, key, value);
    } else if (isObject(value) && isObject(sent)) {
      setOwn(out, key, carry(value, shown, sent));
    }
  }
  return out;
}

/**
 * Keeps what `old` holds that the request's version could not see (`seen`: old as that version
 * shows it, converted back) in `next`.
 */
export function carryHidden<P extends object>(old: object, seen: object, next: P): P {
  // Every field comes from `old` or `next`: properties of the same kind.
  return carry(old, seen, next) as P;
}
