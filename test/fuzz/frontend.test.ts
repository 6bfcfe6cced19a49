/**
 * Fuzz targets of the ARM frontend's request parsing, on its pure functions: paths (routing and
 * the names in them), PUT and PATCH bodies against each api-version's schema, the JSON merge
 * patch, and the API server's refusals as ARM reports them. Whatever comes in, the answer is a
 * parsed value or a 4xx CloudError whose targets are fields of the request and whose messages
 * are short and name no CR internals; nothing else is thrown.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { API_VERSIONS, type ApiVersion } from "../../operators/frontend/api-version-schemas.ts";
import { isObject, mergePatch, type Schema } from "../../operators/frontend/body-schema.ts";
import { CloudError, type CloudErrorBody } from "../../operators/frontend/errors.ts";
import { schemaFor, type VersionedBody } from "../../operators/frontend/hub-conversion.ts";
import { readPatchBody, readPutBody } from "../../operators/frontend/request-body.ts";
import {
  resourceIdFromPath,
  type ResourceId,
  type ResourceKind,
} from "../../operators/frontend/resource-id.ts";
import { badEncoding, match, PATTERNS, route } from "../../operators/frontend/routes.ts";
import { cloudErrorFromKube } from "../../operators/frontend/service-cluster.ts";
import { KubeApiError } from "../../operators/runtime/kube.ts";
import { hostileJson, hostileString, TRICKY_STRINGS, type Json } from "./arbitraries.ts";
import { fuzzTarget } from "./fuzz.ts";
import { armBody, armPath, validBody } from "./requests.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";
/** The longest message a refusal may carry: a value it quotes is cut short. */
const MAX_MESSAGE = 1024;
/** Where a refusal may point: a field of the request body, or a query parameter. */
const REQUEST_FIELD = /^(properties|location|tags|identity|name|id)(\.|\[|$)|^(api-version|\$skipToken)$/;
const CR_INTERNALS =
  /metadata\.|status\.|<nil>|\bself\b|hcp\.aro\.dev|HcpCluster|NodePool\b|\[object Object\]/;

/** A 4xx CloudError that says what is wrong, briefly, in the request's terms. */
function expectClientError(err: unknown): CloudError {
  if (!(err instanceof CloudError))
    throw new Error(`threw ${err instanceof Error ? err.name : typeof err}, not a CloudError`, {
      cause: err,
    });
  expect(err.status, err.message).toBeGreaterThanOrEqual(400);
  expect(err.status, err.message).toBeLessThan(500);
  const check = (b: CloudErrorBody): void => {
    expect(b.code).toMatch(/^[A-Z][A-Za-z]+$/);
    expect(b.message.length, b.message.slice(0, 200)).toBeGreaterThan(0);
    expect(b.message.length, `message of ${b.message.length} characters`).toBeLessThanOrEqual(MAX_MESSAGE);
    if (b.target !== undefined) expect(b.target).toMatch(REQUEST_FIELD);
    for (const d of b.details ?? []) check(d);
  };
  check(err.body);
  return err;
}

// ---- paths ----

const ROUTES = Object.values(PATTERNS).map((pattern) => route({ pattern, methods: {} }));

const pathInput = armPath(SUB).map((path) => ({ path }));

fuzzTarget<{ path: string }>({
  name: "frontend-path",
  arbitrary: pathInput,
  runs: 10_000,
  property({ path }) {
    const url = URL.parse(path, "https://frontend");
    if (!url) return; // answered 400 before routing
    const found = match(ROUTES, url.pathname);
    if (!found) return; // answered 404
    if (found.malformed !== undefined) {
      expectClientError(badEncoding(found.malformed));
      return;
    }
    try {
      resourceIdFromPath(found.params);
    } catch (err) {
      expectClientError(err);
    }
  },
});

// ---- bodies ----

/** Whether `path` (as a refusal names it) is a field of the schema. */
function inSchema(s: Schema, path: string): boolean {
  if (path === "") return true;
  if (s.type === "object") {
    const m = /^\.?([A-Za-z][A-Za-z0-9]*)/.exec(path);
    const child = m ? s.properties[m[1] ?? ""] : undefined;
    return child !== undefined && m !== null && inSchema(child, path.slice(m[0].length));
  }
  if (s.type === "array") {
    const m = /^\[(\d+)\]/.exec(path);
    return m !== null && inSchema(s.items, path.slice(m[0].length));
  }
  // A map's key is the rest of the path (its values here are strings or any value).
  if (s.type === "map") return path.startsWith(".") || path === "";
  return false;
}

interface BodyInput {
  apiVersion: ApiVersion;
  kind: ResourceKind;
  method: "PUT" | "PATCH";
  /** A PUT over an existing resource. */
  update: boolean;
  body: Json;
}

const bodyInput: fc.Arbitrary<BodyInput> = fc
  .record({
    apiVersion: fc.constantFrom(...API_VERSIONS),
    kind: fc.constantFrom<ResourceKind>("cluster", "nodePool"),
    method: fc.constantFrom("PUT" as const, "PATCH" as const),
    update: fc.boolean(),
  })
  .chain((i) => armBody(i.kind, SUB).map((body) => ({ ...i, body })));

function idOf(kind: ResourceKind): ResourceId {
  return kind === "cluster"
    ? { kind, subscriptionId: SUB, resourceGroup: "rg-fuzz", cluster: "c1" }
    : { kind, subscriptionId: SUB, resourceGroup: "rg-fuzz", cluster: "c1", nodePool: "np1" };
}

/** The stored resource of a valid create, as a PATCH or an update sees it. */
function stored(apiVersion: ApiVersion, kind: ResourceKind): VersionedBody {
  return readPutBody({ apiVersion, body: validBody(kind, SUB) }, idOf(kind), undefined);
}

fuzzTarget<BodyInput>({
  name: "frontend-body",
  arbitrary: bodyInput,
  runs: 1500,
  property({ apiVersion, kind, method, update, body }) {
    const id = idOf(kind);
    const req = { apiVersion, body };
    try {
      if (method === "PATCH") readPatchBody(req, id, stored(apiVersion, kind));
      else readPutBody(req, id, update ? stored(apiVersion, kind) : undefined);
    } catch (err) {
      const e = expectClientError(err);
      const schema = schemaFor(apiVersion, kind);
      for (const d of [e.body, ...(e.body.details ?? [])])
        if (d.target !== undefined) expect(inSchema(schema, d.target), `target ${d.target}`).toBe(true);
      // A refusal is not much larger than what it refuses.
      const size = JSON.stringify(body).length;
      expect(JSON.stringify(e.body).length).toBeLessThanOrEqual(4 * size + 16 * 1024);
    }
  },
});

// ---- merge patch ----

/** RFC 7386 over own properties, written plainly: the reference mergePatch must agree with. */
function referenceMerge(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out = new Map<string, unknown>(isObject(target) ? Object.entries(target) : []);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) out.delete(k);
    else out.set(k, referenceMerge(out.get(k), v));
  }
  return Object.fromEntries(out);
}

/** Every object in `v` is a plain one: its prototype was not replaced by a key of the input. */
function expectPlain(v: unknown): void {
  if (typeof v !== "object" || v === null) return;
  const proto: unknown = Object.getPrototypeOf(v);
  expect(proto === Object.prototype || proto === Array.prototype || proto === null, "prototype").toBe(true);
  for (const x of Object.values(v)) expectPlain(x);
}

const withProtoKeys = hostileJson(3).map((v) => JSON.parse(JSON.stringify(v)) as Json);

fuzzTarget<{ target: Json; patch: Json }>({
  name: "frontend-merge-patch",
  arbitrary: fc.record({ target: withProtoKeys, patch: withProtoKeys }),
  runs: 5000,
  property({ target, patch }) {
    const merged = mergePatch(target, patch);
    expectPlain(merged);
    expect(JSON.stringify(merged)).toBe(JSON.stringify(referenceMerge(target, patch)));
  },
});

// ---- the API server's refusals ----

const CR_FIELDS = [
  "spec",
  "spec.network.podCidr",
  "spec.platform.azure.location",
  "spec.platform.azure.identities.controlPlaneOperators",
  "spec.version.id",
  "spec.clusterRef.name",
  "spec.replicas",
  "metadata.name",
  "metadata.annotations",
  "metadata.labels",
  "status.conditions",
  "<nil>",
  "",
];

const crText = fc.oneof(
  fc.constantFrom(
    ...CR_FIELDS,
    'Invalid value: "x": self == oldSelf',
    'HcpCluster.hcp.aro.dev "x" is invalid',
  ),
  fc
    .tuple(fc.constantFrom(...CR_FIELDS), fc.constantFrom(...TRICKY_STRINGS))
    .map(([f, s]) => `${f}: Invalid value: "${s}": must be valid`),
  hostileString,
);

interface Refusal {
  code: number;
  reason: string;
  message: string;
  causes: Array<{ field?: string | undefined; message?: string | undefined }>;
}

const refusal: fc.Arbitrary<Refusal> = fc.record({
  code: fc.constantFrom(400, 404, 409, 413, 422, 500),
  reason: fc.constantFrom("Invalid", "BadRequest", "Conflict", "RequestEntityTooLarge", ""),
  message: crText,
  causes: fc.array(
    fc.record({
      // The API server names a field by its path (an index or a key may follow); the message is free text.
      field: fc.option(
        fc
          .tuple(fc.constantFrom(...CR_FIELDS), fc.constantFrom("", "[0]", "[12]", ".name"))
          .map(([f, suffix]) => f + suffix),
        { nil: undefined },
      ),
      message: fc.option(crText, { nil: undefined }),
    }),
    { maxLength: 4 },
  ),
});

fuzzTarget<Refusal>({
  name: "frontend-kube-refusal",
  arbitrary: refusal,
  runs: 3000,
  property({ code, reason, message, causes }) {
    const status = { kind: "Status", code, reason, message, details: { causes } };
    const err = cloudErrorFromKube(new KubeApiError(code, reason, message, status));
    if (err === undefined) {
      expect([404, 500]).toContain(code); // ours to answer as an internal error or not found
      return;
    }
    expectClientError(err);
    for (const b of [err.body, ...(err.body.details ?? [])]) expect(b.message).not.toMatch(CR_INTERNALS);
  },
});
