/**
 * Hostile values for the fuzz targets: strings that break parsers and lookups (prototype keys,
 * numbers spelled every way, control characters, long runs, non-BMP characters), numbers at and
 * past the edges of the safe integers, deep and wide JSON, and mutations of a valid value at a
 * random place (replace, delete, wrap, repeat).
 */
import fc from "fast-check";

/**
 * The most JSON text an input may stand for (1 MiB, twice the broker's packet limit and the
 * frontend's body limit): repeats of repeats would otherwise grow past anything a peer can send.
 */
export const MAX_INPUT_CHARS = 1024 * 1024;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Strings that mean something to a parser, a lookup or a pattern. */
export const TRICKY_STRINGS = [
  "",
  " ",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "<nil>",
  "null",
  "undefined",
  "true",
  "0",
  "-1",
  "00",
  "0x10",
  "1e3",
  " 7 ",
  "1.5",
  "NaN",
  "Infinity",
  "9007199254740993",
  "18446744073709551616",
  "99999999999999999999",
  "\u0000",
  "\ud800",
  "\u202e",
  "😀",
  "a.b.c.d.e",
  "../..",
  "%ZZ",
  "%2F",
  "a/b",
  "{}",
  "[]",
  '{"a":',
] as const;

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ minLength: 1, maxLength: 3 }), fc.integer({ min: 100, max: 20_000 }))
      .map(([s, n]) => s.repeat(n)),
  },
);

/** Numbers JSON can carry, edges first. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    1,
    -1,
    0.5,
    2 ** 31,
    2 ** 32,
    2 ** 53,
    2 ** 53 + 2,
    2 ** 63,
    2 ** 64,
    1e21,
    1e300,
    -1e300,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ maxLength: 8 }) },
);

/** Any JSON value, with hostile keys, strings and numbers, up to `depth` deep. */
export function hostileJson(depth = 4): fc.Arbitrary<Json> {
  const { value } = fc.letrec<{ value: Json }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", maxDepth: depth },
      fc.constant(null),
      fc.boolean(),
      hostileNumber,
      hostileString,
      fc.array(tie("value"), { maxLength: 6 }),
      fc.dictionary(hostileKey, tie("value"), { maxKeys: 6 }),
    ),
  }));
  return value;
}

/** A value deeper than any parser should recurse: `[[[...]]]` or `{"a":{"a":...}}`. */
export const deepJson: fc.Arbitrary<Json> = fc
  .tuple(fc.integer({ min: 100, max: 5000 }), fc.boolean())
  .map(([n, arrays]) => {
    let v: Json = "x";
    for (let i = 0; i < n; i++) v = arrays ? [v] : { a: v };
    return v;
  });

/** One change at one place of a JSON value. */
export type Mutation =
  | { op: "set"; at: number[]; value: Json }
  | { op: "delete"; at: number[] }
  | { op: "wrap"; at: number[] }
  | { op: "repeat"; at: number[]; times: number };

export const mutation: fc.Arbitrary<Mutation> = (() => {
  const at = fc.array(fc.nat(), { minLength: 1, maxLength: 6 });
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant("set" as const), at, value: hostileJson(3) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant("delete" as const), at }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("wrap" as const), at }) },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant("repeat" as const),
        at,
        times: fc.integer({ min: 2, max: 3000 }),
      }),
    },
  );
})();

type Container = Json[] | { [key: string]: Json };

const isContainer = (v: Json): v is Container => typeof v === "object" && v !== null;

function keysOf(c: Container): Array<string | number> {
  return Array.isArray(c) ? c.map((_, i) => i) : Object.keys(c);
}

function get(c: Container, k: string | number): Json {
  return Array.isArray(c) ? (c[Number(k)] ?? null) : (c[String(k)] ?? null);
}

function changed(v: Json, m: Mutation): Json | undefined {
  switch (m.op) {
    case "set":
      return m.value;
    case "delete":
      return undefined;
    case "wrap":
      return [v];
    case "repeat":
      // A string is not repeated past the input limit (a longer one cannot even be built).
      return typeof v === "string"
        ? v.repeat(Math.min(m.times, Math.floor(MAX_INPUT_CHARS / Math.max(1, v.length))))
        : Array.isArray(v)
          ? Array<Json>(m.times).fill(v)
          : v;
  }
}

/** `value` with the mutation applied at the place its indexes pick (each index modulo the keys there). */
export function applyMutation(value: Json, m: Mutation): Json {
  const root: Json[] = [structuredClone(value)];
  let parent: Container = root;
  let key: string | number = 0;
  for (const i of m.at) {
    const here = get(parent, key);
    if (!isContainer(here)) break;
    const keys = keysOf(here);
    if (keys.length === 0) break;
    parent = here;
    key = keys[i % keys.length] ?? 0;
  }
  const next = changed(get(parent, key), m);
  if (Array.isArray(parent)) {
    if (next === undefined) parent.splice(Number(key), 1);
    else parent[Number(key)] = next;
  } else if (next === undefined) delete parent[String(key)];
  else
    Object.defineProperty(parent, String(key), {
      value: next,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return root[0] ?? null;
}

/** Whether `v` stands for more than `budget` characters of JSON; iterative, as `v` may be deep. */
function larger(v: Json, budget: { left: number }): boolean {
  const pending: Json[] = [v];
  for (let x = pending.pop(); x !== undefined; x = pending.pop()) {
    budget.left -= typeof x === "string" ? x.length + 2 : 4;
    if (budget.left < 0) return true;
    if (typeof x !== "object" || x === null) continue;
    for (const [k, child] of Object.entries(x)) {
      budget.left -= k.length;
      pending.push(child);
    }
  }
  return budget.left < 0;
}

/** A valid value with up to `max` mutations; one that would make it too large is left out. */
export function mutated<T extends Json>(valid: fc.Arbitrary<T>, max = 4): fc.Arbitrary<Json> {
  return fc.tuple(valid, fc.array(mutation, { maxLength: max })).map(([v, ms]) =>
    ms.reduce<Json>((acc, m) => {
      const next = applyMutation(acc, m);
      return larger(next, { left: MAX_INPUT_CHARS }) ? acc : next;
    }, v),
  );
}
