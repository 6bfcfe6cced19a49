/**
 * Valid request bodies drawn from a schema of the frontend's schema language
 * (operators/frontend/api/schema.ts): every field the schema has may appear, required ones always,
 * each value within its type, enum, pattern, format, length and range. Read-only fields are left
 * out, as a request's are dropped. Walking the schema, not a list of fields, covers every field of
 * every api-version, including versions added later.
 */
import fc from "fast-check";
import type {
  ArraySchema,
  IntegerSchema,
  MapSchema,
  ObjectSchema,
  Schema,
  StringSchema,
} from "../../operators/frontend/api/schema.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** How many items or entries a generated array or map has at most: enough to vary, small to read. */
const MAX_ITEMS = 3;
/** An optional field is left out one time in `OPTIONAL_FREQ`: most runs reach the deep fields. */
const OPTIONAL_FREQ = 4;
/** Integers without a bound stay within what every consumer of the field carries (int32). */
const INT32 = 2 ** 31 - 1;

function cidr(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.ipV4(),
    fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 })).map(([a, p]) => `${a}/${p}`),
    fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 128 })).map(([a, p]) => `${a}/${p}`),
  );
}

function stringOf(s: StringSchema): fc.Arbitrary<string> {
  if (s.enum) return fc.constantFrom(...s.enum);
  const minLength = s.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 24, 24));
  let text: fc.Arbitrary<string>;
  if (s.format === "cidr") text = cidr();
  else if (s.pattern) text = fc.stringMatching(s.pattern);
  else text = fc.string({ minLength, maxLength });
  return text.filter((v) => v.length >= minLength && v.length <= (s.maxLength ?? Infinity));
}

function integerOf(s: IntegerSchema): fc.Arbitrary<number> {
  return fc.integer({ min: s.minimum ?? -INT32, max: s.maximum ?? INT32 });
}

function objectOf(s: ObjectSchema): fc.Arbitrary<{ [key: string]: Json }> {
  const required = new Set<string>(s.required ?? []);
  const fields = Object.entries(s.properties).flatMap(([key, child]) =>
    child && !child.readOnly && child.type !== "any" ? [[key, child] as const] : [],
  );
  const values = fields.map(([key, child]) =>
    required.has(key) ? valueOf(child) : fc.option(valueOf(child), { freq: OPTIONAL_FREQ, nil: undefined }),
  );
  return fc.tuple(...values).map((drawn) => {
    const out: { [key: string]: Json } = {};
    drawn.forEach((v, i) => {
      const key = fields[i]?.[0];
      if (key !== undefined && v !== undefined) out[key] = v;
    });
    return out;
  });
}

function mapOf(s: MapSchema): fc.Arbitrary<{ [key: string]: Json }> {
  const keys = s.keys;
  const key = fc
    .string({ minLength: 1, maxLength: Math.min(keys?.maxLength ?? 12, 12) })
    .filter((k) => !keys?.forbidden?.test(k));
  return fc
    .uniqueArray(fc.tuple(key, valueOf(s.values)), {
      selector: ([k]) => k,
      maxLength: Math.min(s.maxProperties ?? MAX_ITEMS, MAX_ITEMS),
    })
    .map((entries) => Object.fromEntries(entries));
}

function arrayOf(s: ArraySchema): fc.Arbitrary<Json[]> {
  const minLength = s.minItems ?? 0;
  return fc.array(valueOf(s.items), {
    minLength,
    maxLength: Math.max(minLength, Math.min(s.maxItems ?? MAX_ITEMS, MAX_ITEMS)),
  });
}

function valueOf(s: Schema): fc.Arbitrary<Json> {
  switch (s.type) {
    case "string":
      return stringOf(s);
    case "integer":
      return integerOf(s);
    case "boolean":
      return fc.boolean();
    case "object":
      return objectOf(s);
    case "map":
      return mapOf(s);
    case "array":
      return arrayOf(s);
    case "any":
      return fc.constant(null);
  }
}

/**
 * A request body valid against `schema`, as the server reads it: through JSON, so a key such as
 * "__proto__" is an own field, as JSON.parse makes it.
 */
export function validBodyOf(schema: ObjectSchema): fc.Arbitrary<{ [key: string]: Json }> {
  return objectOf(schema).map((body) => JSON.parse(JSON.stringify(body)) as { [key: string]: Json });
}
