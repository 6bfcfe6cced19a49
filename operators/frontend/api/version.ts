/**
 * What an api-version folder gives the registry: its name, the schemas of its bodies, how its
 * properties of each kind convert to and from the internal model, and what else differs.
 */
import type { ObjectSchema, Properties } from "./schema.ts";
import type { InternalKind, PropertiesOf } from "./internal.ts";
import type { JsonObject } from "./json.ts";

/** A version's body schemas: a TrackedResource or ProxyResource with its `properties`. */
export type VersionSchemas = Record<InternalKind, ObjectSchema<Properties, string>>;

/** One kind's properties in one version (`V`) ⇄ the internal model's (`I`). */
export interface Conversion<V, I> {
  /** The properties of a body this version's schema read and checked. */
  toInternal(properties: V): I;
  /** The internal properties in this version's shape; the version's schema projects them after. */
  fromInternal(properties: I): V;
}

export interface ApiVersionDefinition<
  Name extends string = string,
  S extends VersionSchemas = VersionSchemas,
> {
  readonly name: Name;
  readonly schemas: S;
  readonly conversions: { [K in InternalKind]: Conversion<JsonObject, PropertiesOf[K]> };
  /** Whether requestAdminCredential takes the client's own certificate signing request. */
  readonly acceptsCredentialCsr: boolean;
}

/**
 * A version's typed conversion as the registry calls it: with the properties of a body its own
 * schema read (so of its own type `V`), never another version's.
 */
export function registered<V, I>(conversion: Conversion<V, I>): Conversion<JsonObject, I> {
  return conversion as unknown as Conversion<JsonObject, I>;
}

/** The conversion of a version whose shape of a kind is the internal model's. */
export function sameShape<I>(): Conversion<JsonObject, I> {
  return { toInternal: (p) => p as I, fromInternal: (p) => p as JsonObject };
}
