/**
 * Generated raw HTTP requests against a running frontend on the real service apiserver: any
 * method, a path from the route table changed segment by segment, any query, hostile headers and
 * bodies, each written byte for byte on its own TLS connection with ARM's client certificate.
 * Every answer is a success or a 4xx CloudError whose code is in the body and the header and whose
 * target is a field of the request; never a 5xx; and the frontend answers normally afterwards.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { connect } from "node:tls";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, NodePoolResource } from "../../operators/api/v1alpha1/index.ts";
import { API_VERSIONS } from "../../operators/frontend/api/registry.ts";
import { subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import { REQUEST_ID_ANNOTATIONS } from "../../operators/api/v1alpha1/labels.ts";
import { isCarriableRequestId } from "../../operators/hcp/requests.ts";
import { hostileJson, hostileString, type Json } from "../fuzz/arbitraries.ts";
import { fuzzTarget } from "../fuzz/fuzz.ts";
import { armBody, armPath } from "../fuzz/requests.ts";
import { clientFor } from "../support/fixtures.ts";
import { clusterBody, clusterPath } from "../support/frontend.ts";
import {
  removeSubscription,
  startFrontendFixture,
  type FrontendFixture,
} from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
let fixture: FrontendFixture;
let tls: { ca: Buffer; cert: Buffer; key: Buffer };
let port = 0;

/** Where a refusal may point: a field of the request body, or a query parameter. */
const REQUEST_FIELD =
  /^(properties|location|tags|identity|name|id)(\.|\[|$)|^(api-version|\$skipToken)$|^x-ms-[a-z-]+$/;
/** The longest message an answer may carry: a value it quotes is cut short. */
const MAX_MESSAGE = 1024;
const CR_INTERNALS = /metadata\.|status\.|<nil>|\bself\b|hcp\.aro\.dev|HcpCluster|NodePool\b/;

interface RawRequest {
  method: string;
  path: string;
  query: Array<[string, string]>;
  headers: Array<[string, string]>;
  body: { json: Json } | { text: string } | null;
}

const query = fc.array(
  fc.oneof(
    fc
      .constantFrom(...API_VERSIONS, "2.0", "", "2099-01-01")
      .map((v): [string, string] => ["api-version", v]),
    hostileString.map((v): [string, string] => ["$skipToken", v]),
    fc.tuple(fc.constantFrom("api-version", "$skipToken", "$top", "x"), hostileString),
  ),
  { maxLength: 3 },
);

/** A header whose value travels onto the CR (request IDs, the caller's identity), in any bytes. */
const carriedHeader: fc.Arbitrary<[string, string]> = fc.tuple(
  fc.constantFrom(
    "x-ms-client-request-id",
    "x-ms-correlation-request-id",
    "x-ms-client-principal-name",
    "x-ms-client-object-id",
    "x-ms-home-tenant-id",
  ),
  hostileString,
);

const headers = fc.array(
  fc.oneof(
    fc
      .constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "")
      .map((v): [string, string] => ["content-type", v]),
    hostileJson(2).map((v): [string, string] => ["x-ms-arm-resource-system-data", JSON.stringify(v)]),
    hostileString.map((v): [string, string] => ["referer", v]),
    hostileString.map((v): [string, string] => ["x-forwarded-proto", v]),
    carriedHeader,
    fc.constantFrom("true", "TRUE", "1").map((v): [string, string] => ["x-ms-return-client-request-id", v]),
  ),
  { maxLength: 3 },
);

const anyRequest: fc.Arbitrary<RawRequest> = fc.record({
  method: fc.constantFrom("GET", "PUT", "PATCH", "DELETE", "POST", "HEAD", "OPTIONS", "get", "PROPFIND"),
  path: armPath(sub),
  query,
  headers,
  body: fc.oneof(
    fc.constant(null),
    fc
      .constantFrom("cluster" as const, "nodePool" as const)
      .chain((k) => armBody(k, sub))
      .map((json) => ({ json })),
    hostileString.map((text) => ({ text })),
  ),
});

/** A create that succeeds but for its headers: what they carry reaches a CR. */
const validWrite: fc.Arbitrary<RawRequest> = fc.record({
  method: fc.constant("PUT"),
  path: fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/).map((name) => clusterPath(sub, "rg-fuzz", `w-${name}`)),
  query: fc.constant<Array<[string, string]>>([["api-version", "2026-06-30-preview"]]),
  headers: fc
    .array(carriedHeader, { minLength: 1, maxLength: 3 })
    .map((carried): Array<[string, string]> => [["content-type", "application/json"], ...carried]),
  body: fc.constant({ json: clusterBody(sub) as Json }),
});

const rawRequest = fc.oneof({ weight: 4, arbitrary: anyRequest }, { weight: 1, arbitrary: validWrite });

/**
 * A header value as HTTP carries it: on one line, without the control characters that would end
 * it, in any other bytes (the request is written as UTF-8; the frontend reads it as Latin-1).
 */
// eslint-disable-next-line no-control-regex -- the characters that break a header line
const headerValue = (v: string): string => v.toWellFormed().replace(/[\x00-\x1f\x7f]/g, "?");

/** The request's bytes: the path percent-encoded only where HTTP requires it. */
function wire(r: RawRequest): string {
  const path = r.path.toWellFormed();
  const target = encodeURI(path.startsWith("/") ? path : `/${path}`).replace(/%25([0-9A-Fa-f]{2})/g, "%$1");
  const encode = (v: string): string => encodeURIComponent(v.toWellFormed());
  const q = r.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&");
  const body = r.body === null ? "" : "json" in r.body ? JSON.stringify(r.body.json) : r.body.text;
  const lines = [
    `${r.method} ${target}${q ? `?${q}` : ""} HTTP/1.1`,
    "Host: localhost",
    "Connection: close",
    ...r.headers.map(([k, v]) => `${k}: ${headerValue(v)}`),
    ...(r.body === null ? [] : [`Content-Length: ${Buffer.byteLength(body)}`]),
  ];
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf("\r\n", at);
    const size = parseInt(body.subarray(at, eol).toString("latin1"), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

function parseResponse(raw: Buffer): RawResponse {
  const end = raw.indexOf("\r\n\r\n");
  const head = raw
    .subarray(0, end === -1 ? raw.length : end)
    .toString("latin1")
    .split("\r\n");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? "")?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(":");
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  const rest = end === -1 ? Buffer.alloc(0) : raw.subarray(end + 4);
  const body = headers["transfer-encoding"] === "chunked" ? dechunk(rest) : rest;
  return { status, headers, body: body.toString("utf8") };
}

/**
 * Sends the bytes on a fresh connection and reads until the frontend closes it (the request says
 * `Connection: close`). The client does not half-close: over TLS Node's server takes a client's
 * end as the end of the connection, and answers nothing still in progress.
 */
function send(bytes: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, servername: "localhost", ...tls }, () =>
      socket.write(bytes),
    );
    const chunks: Buffer[] = [];
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", reject);
    socket.on("close", () => resolve(parseResponse(Buffer.concat(chunks))));
  });
}

interface CloudErrorJson {
  code?: unknown;
  message?: unknown;
  target?: unknown;
}

/** The CloudError of an answer's body; a failure when the body is not one. */
function cloudErrorOf(res: RawResponse, what: string): CloudErrorJson {
  try {
    const body = JSON.parse(res.body) as { error?: CloudErrorJson };
    if (typeof body.error === "object" && body.error !== null) return body.error;
  } catch {
    // reported below
  }
  throw new Error(`a ${res.status} that is not a CloudError: ${what}`);
}

function expectAnswer(r: RawRequest, res: RawResponse): void {
  const what = `${res.status} ${res.body.slice(0, 500)}`;
  expect(res.status, what).toBeGreaterThanOrEqual(200);
  expect(res.status, what).toBeLessThan(500);
  if (res.status < 400 || r.method === "HEAD") return;
  const error = cloudErrorOf(res, what);
  expect(typeof error.code, what).toBe("string");
  expect(res.headers["x-ms-error-code"], what).toBe(error.code);
  const message = typeof error.message === "string" ? error.message : "";
  expect(message.length, what).toBeGreaterThan(0);
  expect(message.length, what).toBeLessThanOrEqual(MAX_MESSAGE);
  const target = error.target;
  if (target !== undefined) expect(typeof target === "string" && REQUEST_FIELD.test(target), what).toBe(true);
  // Unless the request itself said it (an api-version of "<nil>"), the answer names no CR internals.
  // The wire form percent-encodes the path and query, so they are looked at as they were given too.
  const said = [wire(r), r.path, ...r.query.flat()].some((part) => CR_INTERNALS.test(part));
  if (!said) expect(JSON.stringify(error), what).not.toMatch(CR_INTERNALS);
}

beforeAll(async () => {
  fixture = await startFrontendFixture({ client: service, name: "frontend-fuzz" });
  port = Number(new URL(fixture.fe.url).port);
  tls = {
    ca: await readFile(fixture.certs.servingCA),
    cert: await readFile(fixture.certs.arm.certPath),
    key: await readFile(fixture.certs.arm.keyPath),
  };
  const registered = await fixture.putSubscription(sub, "Registered");
  expect(registered.status, JSON.stringify(registered.body)).toBe(200);
  // One cluster, so that requests on it and its node pools reach the handlers' later checks.
  const created = await fixture.arm.send("PUT", clusterPath(sub, "rg-fuzz", "c1"), {
    body: clusterBody(sub),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  await removeSubscription(service, sub);
});

/**
 * Every request ID a CR of the subscription carries can travel onto its ManifestWork: one that
 * could not would make every apply of the work fail, and the resource wedge.
 */
async function expectCarriableRequestIds(): Promise<void> {
  const ns = subscriptionNamespace(sub);
  const lists = await Promise.all(
    [HcpClusterResource, NodePoolResource].map((t) => service.listAll(t, { namespace: ns })),
  );
  const ids = lists
    .flatMap((l) => l.items)
    .flatMap((o) => REQUEST_ID_ANNOTATIONS.map((key) => [key, o.metadata.annotations?.[key]] as const));
  for (const [key, value] of ids)
    if (value !== undefined)
      expect(isCarriableRequestId(value), `${key}: ${JSON.stringify(value)}`).toBe(true);
}

fuzzTarget<RawRequest>({
  name: "frontend-http",
  arbitrary: rawRequest,
  runs: 500,
  maxMsPerInput: 10_000,
  async property(r) {
    expectAnswer(r, await send(wire(r)));
    await expectCarriableRequestIds();
  },
});

describe("after the generated requests", () => {
  it("the frontend still answers", async () => {
    expect((await fixture.arm.send("GET", "/healthz", { apiVersion: null })).status).toBe(200);
    const sub2 = await fixture.arm.send("GET", `/subscriptions/${sub}`, { apiVersion: "2.0" });
    expect(sub2.status, JSON.stringify(sub2.body)).toBe(200);
  });
});
