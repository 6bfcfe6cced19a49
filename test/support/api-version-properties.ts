/**
 * The conversion properties every api-version has, run by the conversion.test.ts in each version's
 * folder (operators/frontend/api/<version>/) with bodies drawn from that version's own schemas:
 *   - a body created in the version comes back from the internal model as the same body (what the
 *     version can express survives, the model's defaults for fields it cannot see stay out of it);
 *   - a body of the version applied over a resource stored through any version changes what the
 *     version sees and keeps what it cannot see (carryHidden), and the version's folder names
 *     those fields, so that a field it stops seeing, or starts to, is a test to update.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  carryHidden,
  toInternalProperties,
  toVersioned,
  type VersionedBody,
} from "../../operators/frontend/api/conversion.ts";
import {
  withInternalDefaults,
  type InternalKind,
  type InternalProperties,
  type InternalResource,
} from "../../operators/frontend/api/internal.ts";
import { isObject } from "../../operators/frontend/api/json.ts";
import { API_VERSIONS, schemaFor, type ApiVersion } from "../../operators/frontend/api/registry.ts";
import { readPutBody } from "../../operators/frontend/api/request-body.ts";
import { checkRequired, readValue } from "../../operators/frontend/api/schema-walks.ts";
import type { FieldError } from "../../operators/frontend/errors.ts";
import { resourceType, type ResourceId } from "../../operators/frontend/resource-id.ts";
import { validBodyOf } from "./schema-arbitrary.ts";

const KINDS: readonly InternalKind[] = ["cluster", "nodePool", "externalAuth"];
const RUNS = 200;

const ID_OF: Record<InternalKind, ResourceId> = {
  cluster: { kind: "cluster", subscriptionId: "sub", resourceGroup: "rg", cluster: "c1" },
  nodePool: { kind: "nodePool", subscriptionId: "sub", resourceGroup: "rg", cluster: "c1", nodePool: "np1" },
  externalAuth: {
    kind: "externalAuth",
    subscriptionId: "sub",
    resourceGroup: "rg",
    cluster: "c1",
    externalAuth: "ea1",
  },
};

/** The internal fields (dotted paths) a version cannot see, by kind. */
export type HiddenFields = Record<InternalKind, readonly string[]>;

/** A resource of the model with `properties` and the envelope of `doc`. */
function resourceOf(
  kind: InternalKind,
  doc: VersionedBody,
  properties: InternalProperties,
): InternalResource {
  const { location = "", tags, identity } = doc;
  return {
    id: "/id",
    name: "n",
    type: resourceType(kind),
    location,
    ...(tags ? { tags } : {}),
    ...(identity ? { identity } : {}),
    properties,
  };
}

/** A create in `version`: its body read as the frontend reads it, stored with the model's defaults. */
function created(version: ApiVersion, kind: InternalKind, body: unknown): InternalResource {
  const doc = readPutBody({ apiVersion: version, body }, ID_OF[kind], undefined);
  return resourceOf(kind, doc, withInternalDefaults(toInternalProperties(doc, version, kind), kind));
}

/** A body of `version` as a PUT over a stored resource reads it (create-only rules aside). */
function readUpdate(version: ApiVersion, kind: InternalKind, body: unknown): VersionedBody {
  const errors: FieldError[] = [];
  const doc = readValue(schemaFor(version, kind), body, "", errors) ?? {};
  checkRequired(schemaFor(version, kind), doc, "", errors);
  expect(errors).toEqual([]);
  return doc;
}

type Path = readonly string[];

/** Every leaf of a JSON value with its path; arrays and empty objects are leaves, as carry sees them. */
function leaves(v: unknown, path: Path = []): Array<[Path, unknown]> {
  if (!isObject(v) || (Object.keys(v).length === 0 && path.length > 0)) return [[path, v]];
  return Object.entries(v).flatMap(([k, x]) => leaves(x, [...path, k]));
}

function at(v: unknown, path: Path): unknown {
  let here = v;
  for (const key of path) here = isObject(here) && Object.hasOwn(here, key) ? here[key] : undefined;
  return here;
}

/** The shortest prefix of `path` that `seen` lacks: the field a version cannot see. */
function unseenField(seen: unknown, path: Path): Path | undefined {
  for (let i = 1; i <= path.length; i++)
    if (at(seen, path.slice(0, i)) === undefined) return path.slice(0, i);
  return undefined;
}

/**
 * Whether the request left the hidden `field` alone: every field around it that the version sees
 * is an object in the request too, and the request does not set the field itself.
 */
function leftAlone(next: unknown, field: Path): boolean {
  for (let i = 1; i < field.length; i++) if (!isObject(at(next, field.slice(0, i)))) return false;
  return at(next, field) === undefined;
}

function checkRoundTrip(version: ApiVersion, kind: InternalKind): void {
  fc.assert(
    fc.property(validBodyOf(schemaFor(version, kind)), (body) => {
      const doc = readPutBody({ apiVersion: version, body }, ID_OF[kind], undefined);
      const back = toVersioned(created(version, kind, body), version, kind);
      expect(back).toEqual({ ...doc, id: "/id", name: "n", type: resourceType(kind) });
    }),
    { numRuns: RUNS },
  );
}

/** The hidden fields carried over the runs, to check against what the version's folder names. */
function checkCarried(version: ApiVersion, kind: InternalKind, carried: Set<string>): void {
  const stored = fc
    .constantFrom(...API_VERSIONS)
    .chain((from) => validBodyOf(schemaFor(from, kind)).map((body) => created(from, kind, body)));
  fc.assert(
    fc.property(stored, validBodyOf(schemaFor(version, kind)), (old, body) => {
      const next = toInternalProperties(readUpdate(version, kind, body), version, kind);
      const seen = toInternalProperties(toVersioned(old, version, kind), version, kind);
      const result = carryHidden(old.properties, seen, next);
      // The request wins wherever it says something.
      for (const [path, value] of leaves(next)) {
        // An empty object the request sends may still take the hidden fields stored inside it.
        if (isObject(value)) expect(isObject(at(result, path)), path.join(".")).toBe(true);
        else expect(at(result, path), path.join(".")).toEqual(value);
      }
      // What the version cannot see is kept, unless the request replaced what holds it.
      const hidden = new Set<string>();
      for (const [path, value] of leaves(old.properties)) {
        const field = unseenField(seen, path);
        if (field === undefined || !leftAlone(next, field)) continue;
        expect(at(result, path), path.join(".")).toEqual(value);
        hidden.add(path.join("."));
        carried.add(field.join("."));
      }
      // And nothing else is.
      for (const [path] of leaves(result))
        expect(at(next, path) !== undefined || hidden.has(path.join(".")), path.join(".")).toBe(true);
    }),
    { numRuns: RUNS },
  );
}

/** The properties of `version`'s conversions; `hidden` names what of the model it cannot see. */
export function conversionProperties(version: ApiVersion, hidden: HiddenFields): void {
  describe(`${version} ⇄ the internal model`, () => {
    for (const kind of KINDS) {
      it(`a ${kind} body created in ${version} comes back the same`, () => checkRoundTrip(version, kind));

      it(`a ${kind} body of ${version} keeps what only other versions see`, () => {
        const carried = new Set<string>();
        checkCarried(version, kind, carried);
        expect([...carried].sort()).toEqual([...hidden[kind]].sort());
      });
    }
  });
}
