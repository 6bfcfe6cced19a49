/**
 * A small schema language for ARM bodies: what a body of one api-version looks like, and what the
 * internal model holds. A schema names the TypeScript type it reads to: `TypeOf` (every field
 * optional: a PATCH body is partial, and required fields are a walk of their own) and `Complete`
 * (required fields required: a value that passed that walk). The walks over a schema are in
 * schema-walks.ts.
 */

interface Common {
  /** Set by the service; ignored in requests, shown in responses. */
  readOnly?: boolean;
  /** Set at creation only ("r,c" in the OpenAPI); later requests may repeat it but not change it. */
  createOnly?: boolean;
  /** Applied on creation when the field is absent (objects: `{}` so their own defaults apply). */
  default?: unknown;
}

/** Carries the TypeScript type a schema reads to; type-level only, never set. */
declare const readsTo: unique symbol;
interface Typed<T> {
  readonly [readsTo]?: T;
}

/** Formats a string is checked against (schema-walks.ts says what each means). */
export type StringFormat = "cidr";

export interface StringSchema<T extends string = string> extends Common, Typed<T> {
  type: "string";
  enum?: readonly T[];
  pattern?: RegExp;
  /** Said instead of the pattern's source when a value does not match. */
  patternText?: string;
  format?: StringFormat;
  maxLength?: number;
  minLength?: number;
  /** An ARM identifier (a resource ID, a resource group): equal to another whatever its casing. */
  caseInsensitive?: boolean;
}
export interface IntegerSchema extends Common {
  type: "integer";
  minimum?: number;
  maximum?: number;
}
export interface BooleanSchema extends Common {
  type: "boolean";
}
export interface Properties {
  [key: string]: Schema | undefined;
}
/** `R`: the names of the required fields, which `Complete` makes required. */
export interface ObjectSchema<P extends Properties = Properties, R extends string = string> extends Common {
  type: "object";
  properties: P;
  required?: readonly R[];
}
export interface MapSchema<V extends Schema = Schema> extends Common {
  type: "map";
  values: V;
  maxProperties?: number;
  /** What each key must be (e.g. ARM's tag names). */
  keys?: { maxLength?: number; forbidden?: RegExp; forbiddenText?: string };
}
export interface ArraySchema<I extends Schema = Schema> extends Common {
  type: "array";
  items: I;
  maxItems?: number;
  minItems?: number;
}
/** Any JSON value, kept as is (e.g. systemData). */
export interface AnySchema extends Common {
  type: "any";
}

export type Schema =
  StringSchema | IntegerSchema | BooleanSchema | ObjectSchema | MapSchema | ArraySchema | AnySchema;

/** The value a schema reads to, every object field optional. */
export type TypeOf<S> =
  S extends StringSchema<infer T>
    ? T
    : S extends IntegerSchema
      ? number
      : S extends BooleanSchema
        ? boolean
        : S extends ObjectSchema<infer P>
          ? string extends keyof P
            ? Record<string, unknown> // a schema known only as some object's (a registry's): JSON
            : { [K in keyof P]?: TypeOf<NonNullable<P[K]>> }
          : S extends MapSchema<infer V>
            ? Record<string, TypeOf<V>>
            : S extends ArraySchema<infer I>
              ? Array<TypeOf<I>>
              : unknown;

type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The value of a schema whose required fields are present (checked by `checkRequired`). */
export type Complete<S> =
  S extends StringSchema<infer T>
    ? T
    : S extends IntegerSchema
      ? number
      : S extends BooleanSchema
        ? boolean
        : S extends ObjectSchema<infer P, infer R>
          ? Flat<
              { [K in keyof P as K extends R ? K : never]-?: Complete<NonNullable<P[K]>> } & {
                [K in keyof P as K extends R ? never : K]?: Complete<NonNullable<P[K]>>;
              }
            >
          : S extends MapSchema<infer V>
            ? Record<string, Complete<V>>
            : S extends ArraySchema<infer I>
              ? Array<Complete<I>>
              : unknown;

// ---- builders ----

type Extra<S extends Schema> = Omit<S, "type" | "properties" | "values" | "items">;

export const str = <const T extends string = string>(
  extra: Common & Omit<StringSchema<T>, "type" | keyof Common | typeof readsTo> = {},
): StringSchema<T> => ({
  type: "string",
  ...extra,
});
export const int = (minimum?: number, maximum?: number): IntegerSchema => ({
  type: "integer",
  minimum,
  maximum,
});
export const bool = (extra: Extra<BooleanSchema> = {}): BooleanSchema => ({ type: "boolean", ...extra });
export const anyValue = (extra: Extra<AnySchema> = {}): AnySchema => ({ type: "any", ...extra });
export const obj = <P extends Properties, const R extends keyof P & string = never>(
  properties: P,
  extra: Omit<Extra<ObjectSchema>, "required"> & { required?: readonly R[] } = {},
): ObjectSchema<P, NoInfer<R>> => ({
  type: "object",
  properties,
  ...extra,
});
export const map = <V extends Schema>(values: V, extra: Extra<MapSchema> = {}): MapSchema<V> => ({
  type: "map",
  values,
  ...extra,
});
export const arr = <I extends Schema>(items: I, extra: Extra<ArraySchema> = {}): ArraySchema<I> => ({
  type: "array",
  items,
  ...extra,
});
/** Read-only: set by the service. */
export const ro = <S extends Schema>(s: S): S => ({ ...s, readOnly: true });
/** Create-only: set at creation, never changed. */
export const co = <S extends Schema>(s: S): S => ({ ...s, createOnly: true });
