/**
 * Fuzz targets of the ARM frontend's request parsing, on its pure functions: paths (routing and
 * the names in them), PUT and PATCH bodies against each api-version's schema, the JSON merge
 * patch, and the API server's refusals as ARM reports them. Whatever comes in, the answer is a
 * parsed value or a 4xx CloudError whose targets are fields of the request and whose messages
 * are short and name no CR internals; nothing else is thrown.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { API_VERSIONS, type ApiVersion } from "../../operators/frontend/api/registry.ts";
import { isObject } from "../../operators/frontend/api/json.ts";
import { mergePatch } from "../../operators/frontend/api/schema-walks.ts";
import type { Schema } from "../../operators/frontend/api/schema.ts";
import { CloudError, type CloudErrorBody } from "../../operators/frontend/errors.ts";
import { toInternalProperties, type VersionedBody } from "../../operators/frontend/api/conversion.ts";
import { schemaFor } from "../../operators/frontend/api/registry.ts";
import { readPatchBody, readPutBody } from "../../operators/frontend/api/request-body.ts";
import { parseRequestBody } from "../../operators/frontend/http/media-type.ts";
import { nodePoolToCR } from "../../operators/frontend/mapping/node-pool.ts";
import { targetOf } from "../../operators/frontend/handlers/target.ts";
import { defaultDnsPrefix } from "../../operators/frontend/mapping/names.ts";
import type { ResourceId, ResourceKind } from "../../operators/frontend/resource-id.ts";
import { CLUSTER_NAME, resourceIdFromPath } from "../../operators/frontend/http/names.ts";
import { badEncoding, match, PATTERNS, route } from "../../operators/frontend/http/routes.ts";
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
    let id: ResourceId | undefined;
    try {
      id = resourceIdFromPath(found.params);
    } catch (err) {
      expectClientError(err);
    }
    // ARM identifiers ignore case: a path cased otherwise finds the same CR.
    if (id) {
      const lower = Object.fromEntries(
        Object.entries(id).map(([k, v]) => [k, k === "kind" ? v : String(v).toLowerCase()]),
      );
      const where = ({ namespace, name, clusterName }: ReturnType<typeof targetOf>) => ({
        namespace,
        name,
        clusterName,
      });
      expect(where(targetOf(id))).toEqual(where(targetOf({ ...id, ...lower })));
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

/** A value nested `depth` deep under a top-level key, written as text (no walk builds it). */
interface Nesting {
  key: string;
  depth: number;
  arrays: boolean;
}

interface BodyInput {
  apiVersion: ApiVersion;
  kind: ResourceKind;
  method: "PUT" | "PATCH";
  /** A PUT over an existing resource. */
  update: boolean;
  body: Json;
  /** Absent in corpus entries saved before it. */
  nesting?: Nesting | null;
}

const nesting: fc.Arbitrary<Nesting | null> = fc.option(
  fc.record({
    key: fc.constantFrom("properties", "tags", "identity", "extra"),
    depth: fc.integer({ min: 10, max: 20_000 }),
    arrays: fc.boolean(),
  }),
  { freq: 8 },
);

const bodyInput: fc.Arbitrary<BodyInput> = fc
  .record({
    apiVersion: fc.constantFrom(...API_VERSIONS),
    kind: fc.constantFrom<ResourceKind>("cluster", "nodePool"),
    method: fc.constantFrom("PUT" as const, "PATCH" as const),
    update: fc.boolean(),
    nesting,
  })
  .chain((i) => armBody(i.kind, SUB).map((body) => ({ ...i, body })))
  .chain((i) =>
    // Label keys that name things to a parser or a lookup, each once.
    fc
      .option(fc.uniqueArray(fc.constantFrom(...TRICKY_STRINGS), { minLength: 1, maxLength: 4 }), { freq: 4 })
      .map((keys) => (keys && i.kind === "nodePool" ? { ...i, body: withLabelKeys(i.body, keys) } : i)),
  );

function withLabelKeys(body: Json, keys: string[]): Json {
  if (!isObject(body) || !isObject(body["properties"])) return body;
  const labels = keys.map((key) => ({ key, value: "v" }));
  return { ...body, properties: { ...body["properties"], labels } };
}

/** The request's text: the body, with the nested value in place of its key when there is one. */
function bodyText(body: Json, n: Nesting | null | undefined): string {
  const text = JSON.stringify(body);
  if (n == null || !isObject(body)) return text;
  const deep = n.arrays
    ? `${"[".repeat(n.depth)}1${"]".repeat(n.depth)}`
    : `${'{"a":'.repeat(n.depth)}1${"}".repeat(n.depth)}`;
  const rest = JSON.stringify(Object.fromEntries(Object.entries(body).filter(([k]) => k !== n.key)));
  return `{${JSON.stringify(n.key)}:${deep}${rest === "{}" ? "}" : `,${rest.slice(1)}`}`;
}

function idOf(kind: ResourceKind): ResourceId {
  return kind === "cluster"
    ? { kind, subscriptionId: SUB, resourceGroup: "rg-fuzz", cluster: "c1" }
    : { kind, subscriptionId: SUB, resourceGroup: "rg-fuzz", cluster: "c1", nodePool: "np1" };
}

/** The stored resource of a valid create, as a PATCH or an update sees it. */
function stored(apiVersion: ApiVersion, kind: ResourceKind): VersionedBody {
  return readPutBody({ apiVersion, body: validBody(kind, SUB) }, idOf(kind), undefined);
}

/** Every number accepted is the one the request's text said: none past 2^53-1 reads as another. */
function expectExactNumbers(v: unknown): void {
  if (typeof v === "number") expect(!Number.isInteger(v) || Number.isSafeInteger(v), String(v)).toBe(true);
  else if (typeof v === "object" && v !== null) for (const x of Object.values(v)) expectExactNumbers(x);
}

/** The body's value a refusal's target names, where a plain walk finds it (tag names may hold dots). */
function valueAt(body: Json, target: string): Json | undefined {
  const tag = /^tags\.(.*)$/s.exec(target);
  if (tag && isObject(body) && isObject(body["tags"])) {
    const tags = body["tags"] as Record<string, Json>;
    return Object.hasOwn(tags, tag[1] ?? "") ? tags[tag[1] ?? ""] : undefined;
  }
  let v: Json | undefined = body;
  for (const key of target.split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== "")) {
    if (typeof v !== "object" || v === null || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, Json>)[key];
  }
  return v;
}

/** The keys a node pool body's labels repeat. */
function repeatedLabelKeys(body: Json): boolean {
  const labels = isObject(body) && isObject(body["properties"]) ? body["properties"]["labels"] : undefined;
  if (!Array.isArray(labels)) return false;
  const keys = labels.map((l) => (isObject(l) ? l["key"] : undefined));
  return new Set(keys).size < keys.length;
}

/** The request as the server reads it, then as the handlers map it to a CR. */
function readAndMap({ apiVersion, kind, method, update, body, nesting }: BodyInput): void {
  const id = idOf(kind);
  const parsed = parseRequestBody(method, "application/json", Buffer.from(bodyText(body, nesting)));
  const req = { apiVersion, body: parsed };
  const doc =
    method === "PATCH"
      ? readPatchBody(req, id, stored(apiVersion, kind))
      : readPutBody(req, id, update ? stored(apiVersion, kind) : undefined);
  expectExactNumbers(doc.properties);
  const envelope = { id: "/x", name: "x", type: "t", location: "eastus" };
  const ctx = { id, namespace: "ns", name: "x", annotations: {}, clusterName: "c1" };
  if (kind === "nodePool")
    nodePoolToCR({ ...envelope, properties: toInternalProperties(doc, apiVersion, kind) }, ctx);
  else toInternalProperties(doc, apiVersion, kind);
}

fuzzTarget<BodyInput>({
  name: "frontend-body",
  arbitrary: bodyInput,
  runs: 1500,
  property(input) {
    const { apiVersion, kind, method, body } = input;
    try {
      readAndMap(input);
    } catch (err) {
      const e = expectClientError(err);
      const schema = schemaFor(apiVersion, kind);
      const refusals = [e.body, ...(e.body.details ?? [])];
      for (const d of refusals) {
        if (d.target === undefined) continue;
        expect(inSchema(schema, d.target), `target ${d.target}`).toBe(true);
        // In a merge patch null removes: it is never the value refused.
        const sent = input.nesting?.key === d.target.split(/[.[]/)[0] ? undefined : valueAt(body, d.target);
        // (A required field a null removes is missing, and said to be; an array's items are values.)
        if (method === "PATCH" && sent === null && !d.target.endsWith("]"))
          expect(d.message).toMatch(/^Missing required field/);
      }
      // A duplicate is one: keys such as "constructor" are keys like any other.
      if (refusals.some((d) => d.message.startsWith("Duplicate label key")))
        expect(repeatedLabelKeys(body)).toBe(true);
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

// ---- default names ----

fuzzTarget<{ name: string }>({
  name: "frontend-default-dns-prefix",
  arbitrary: fc.stringMatching(CLUSTER_NAME).map((name) => ({ name })),
  runs: 2000,
  property({ name }) {
    // Whatever the name, the default is a prefix the CRD takes, and no name decides its suffix.
    const [a, b] = [defaultDnsPrefix(name), defaultDnsPrefix(name)];
    for (const p of [a, b]) expect(p).toMatch(/^[a-z]([-a-z0-9]{0,13}[a-z0-9])?$/);
    expect(a).not.toBe(b);
  },
});
