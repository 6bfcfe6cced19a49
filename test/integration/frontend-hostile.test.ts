/**
 * The frontend against a hostile client, on the wire and against the real service apiserver:
 * malformed paths and tokens, bodies too large for the frontend or for the CR, values ARM
 * forbids, refusals that must not show the CR's shape; slow and numerous connections; and the
 * trace a failed request leaves (route-labelled metrics, one JSON log line per 5xx).
 */
import { KubeConfig } from "@kubernetes/client-node";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { connect as connectTcp, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, NodePoolResource } from "../../operators/api/v1alpha1/index.ts";
import {
  clusterCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import { PATTERNS } from "../../operators/frontend/http/routes.ts";
import { KubeClient } from "../../operators/runtime/kube.ts";
import type { Logger, LogValues } from "../../operators/runtime/logger.ts";
import { clientFor, namespaceType } from "../support/fixtures.ts";
import {
  ArmClient,
  clusterBody,
  clusterPath,
  nodePoolBody,
  nodePoolPath,
  startTestFrontend,
  type ArmResponse,
  type TestFrontend,
} from "../support/frontend.ts";
import {
  createSettledCluster,
  removeSubscription,
  startFrontendFixture,
  type FrontendFixture,
} from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
const rg = "rg-hostile";
let fixture: FrontendFixture;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

/** A CloudError reply: status, code in body and header, a message, and optionally more of the body. */
function expectError(r: ArmResponse, status: number, code: string, more: Json = {}): string {
  expect(r.status, JSON.stringify(r.body).slice(0, 2000)).toBe(status);
  expect(r.headers["x-ms-error-code"]).toBe(code);
  expect(r.headers["content-type"]).toContain("application/json");
  expect(r.body).toMatchObject({ error: { code, ...more } });
  const message: unknown = (r.body as Json).error.message;
  expect(message).toBeTypeOf("string");
  return String(message);
}

beforeAll(async () => {
  fixture = await startFrontendFixture({ client: service, name: "frontend-hostile" });
  arm = fixture.arm;
  const r = await fixture.putSubscription(sub, "Registered");
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  await removeSubscription(service, sub);
});

async function expectNoCluster(name: string): Promise<void> {
  expect(await service.find(HcpClusterResource, clusterCRName(rg, name), subscriptionNamespace(sub))).toBe(
    undefined,
  );
}

describe("client errors are 4xx CloudErrors naming what is wrong", () => {
  it("refuses malformed percent-encoding in a path parameter; in a literal segment nothing matches", async () => {
    const message = expectError(
      await arm.send("GET", clusterPath(sub, rg, "probe%ZZ")),
      400,
      "InvalidParameter",
    );
    expect(message).toContain("probe%ZZ");
    expect(message).toContain("percent-encoding");
    const literal = `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.RedHatOpenShift/hcp%ZZ/x`;
    expectError(await arm.send("GET", literal), 404, "NotFound");
  });

  it("refuses a $skipToken the service did not issue", async () => {
    const list = `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters`;
    const r = await arm.send("GET", `${list}?$skipToken=garbage`);
    expect(expectError(r, 400, "InvalidParameter", { target: "$skipToken" })).toContain("nextLink");
  });

  it("refuses bodies over the frontend's limit with 413, naming the limit (below the apiserver's 3 MiB)", async () => {
    const path = clusterPath(sub, rg, "huge");
    for (const size of [3_600_000, 10_000_000]) {
      const raw = JSON.stringify({ ...clusterBody(sub), padding: "x".repeat(size) });
      const message = expectError(await arm.send("PUT", path, { raw }), 413, "InvalidResource");
      expect(message).toContain("1048576 bytes (1 MiB)");
      expect(message).toContain(`${raw.length} bytes`);
    }
    await expectNoCluster("huge");
  });

  it("refuses ARM-only properties too large to store, naming the field, not the CR's annotations", async () => {
    const body = clusterBody(sub);
    (body["properties"] as Json).imageDigestMirrors = [
      { source: "quay.io/x", mirrors: ["m".repeat(300_000)] },
    ];
    const r = await arm.send("PUT", clusterPath(sub, rg, "stuffed"), { body });
    const message = expectError(r, 400, "InvalidRequestContent", { target: "properties.imageDigestMirrors" });
    expect(message).toContain("131072 bytes");
    expect(JSON.stringify(r.body)).not.toMatch(/metadata|annotation|<nil>/);
    await expectNoCluster("stuffed");
  });

  it("refuses a subscription document too large for its namespace annotation", async () => {
    const id = randomUUID();
    const r = await arm.send("PUT", `/subscriptions/${id}`, {
      apiVersion: "2.0",
      body: {
        state: "Registered",
        registrationDate: new Date().toISOString(),
        properties: { tenantId: randomUUID(), padding: "p".repeat(300_000) },
      },
    });
    expect(expectError(r, 400, "InvalidRequestContent", { target: "properties" })).toContain("65536 bytes");
    expect(await service.find(namespaceType, subscriptionNamespace(id))).toBeUndefined();
  });

  it("refuses authorizedCidrs that are not CIDRs", async () => {
    const body = clusterBody(sub);
    (body["properties"] as Json).api.authorizedCidrs = ["10.0.0.0/8", "not-a-cidr", "10.0.0.0/33"];
    const r = await arm.send("PUT", clusterPath(sub, rg, "cidrs"), { body });
    expectError(r, 400, "MultipleErrorsOccurred");
    const details = (r.body as Json).error.details as Json[];
    expect(details.map((d) => String(d.target))).toEqual([
      "properties.api.authorizedCidrs[1]",
      "properties.api.authorizedCidrs[2]",
    ]);
    expect(String(details[0]?.message)).toContain("'not-a-cidr'");
    await expectNoCluster("cidrs");
  });

  it("holds tags to ARM's limits: names 512 characters without < > % & \\ ? /, values 256, 50 tags", async () => {
    const path = clusterPath(sub, rg, "tagged");
    const longName = await arm.send("PUT", path, {
      body: { ...clusterBody(sub), tags: { ["k".repeat(5000)]: "v" } },
    });
    const message = expectError(longName, 400, "InvalidRequestContent", { target: "tags" });
    expect(message).toContain("5000 characters long, more than 512");
    expect(JSON.stringify(longName.body).length).toBeLessThan(1000);
    const badName = await arm.send("PUT", path, { body: { ...clusterBody(sub), tags: { "a/b": "v" } } });
    expectError(badName, 400, "InvalidRequestContent", { target: "tags" });
    const longValue = await arm.send("PUT", path, {
      body: { ...clusterBody(sub), tags: { team: "v".repeat(257) } },
    });
    expectError(longValue, 400, "InvalidRequestContent", { target: "tags.team" });
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`t${i}`, "v"]));
    expectError(
      await arm.send("PUT", path, { body: { ...clusterBody(sub), tags: many } }),
      400,
      "InvalidRequestContent",
      {
        target: "tags",
      },
    );
    await expectNoCluster("tagged");
  });

  it("refuses a blank location rather than echoing it into IDs and operation URLs", async () => {
    for (const location of ["", "   ", "east/us"]) {
      const r = await arm.send("PUT", clusterPath(sub, rg, "nowhere"), {
        body: { ...clusterBody(sub), location },
      });
      expectError(r, 400, "InvalidRequestContent", { target: "location" });
    }
    await expectNoCluster("nowhere");
    // A node pool's location is in no CR field the API server checks: only the frontend can refuse it.
    await settledCluster("parent");
    for (const location of ["", "   "]) {
      const r = await arm.send("PUT", nodePoolPath(sub, rg, "parent", "np"), {
        body: { ...nodePoolBody(), location },
      });
      expectError(r, 400, "InvalidRequestContent", { target: "location" });
    }
    expect(
      await service.find(NodePoolResource, nodePoolCRName(rg, "parent", "np"), subscriptionNamespace(sub)),
    ).toBe(undefined);
  });
});

/** Creates a cluster and marks it Ready without controllers, so that node pools may be added. */
const settledCluster = (name: string): Promise<void> => createSettledCluster(arm, service, { sub, rg, name });

describe("the trace of a request", () => {
  it("labels metrics by the matched route template; 'unmatched' only for paths no route matches", async () => {
    expectError(await arm.send("GET", clusterPath(sub, rg, "probe%ZZ")), 400, "InvalidParameter");
    expectError(await arm.send("GET", `/subscriptions/${sub}/nowhere`), 404, "NotFound");
    const metrics = String((await arm.send("GET", "/metrics", { apiVersion: null })).body);
    const lines = metrics.split("\n").filter((l) => l.startsWith("hcp_frontend_requests_total{"));
    expect(lines.some((l) => l.includes(`route="${PATTERNS.cluster}"`) && l.includes('code="400"'))).toBe(
      true,
    );
    const unmatched = lines.filter((l) => l.includes('route="unmatched"'));
    expect(unmatched.length).toBeGreaterThan(0);
    for (const l of unmatched) expect(l).toContain('code="404"');
  });

  it("logs every 5xx as an error with its correlation ID, and every request at debug", async () => {
    const entries: Array<{ level: string; msg: string; values: LogValues }> = [];
    const recording = (base: LogValues): Logger => ({
      info: (msg, values) => entries.push({ level: "info", msg, values: { ...base, ...values } }),
      debug: (msg, values) => entries.push({ level: "debug", msg, values: { ...base, ...values } }),
      error: (msg, err, values) =>
        entries.push({ level: "error", msg, values: { ...base, ...values, err: String(err) } }),
      child: (values) => recording({ ...base, ...values }),
    });
    // An apiserver that is not there: every read fails, so the frontend answers 500.
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "gone", server: "https://127.0.0.1:1", skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "gone", cluster: "gone", user: "u" }],
      currentContext: "gone",
    });
    const registry = new Registry();
    const fe = await startTestFrontend({
      client: new KubeClient("service", kc),
      certs: fixture.certs,
      catalogNamespace: fixture.catalogNamespace,
      log: recording({}),
      registry,
    });
    const client = await ArmClient.create(fe.url, fixture.certs);
    try {
      const r = await client.send("GET", clusterPath(sub, rg, "c"), {
        headers: { "x-ms-correlation-request-id": "corr-500" },
      });
      expectError(r, 500, "InternalServerError");
      expect((await client.send("GET", "/healthz", { apiVersion: null })).status).toBe(200);
      const failed = entries.filter(
        (e) => e.level === "error" && e.values["correlationRequestId"] === "corr-500",
      );
      expect(failed).toHaveLength(1);
      expect(failed[0]?.values).toMatchObject({
        status: 500,
        method: "GET",
        route: PATTERNS.cluster,
        requestId: r.headers["x-ms-request-id"],
      });
      expect(failed[0]?.values["err"]).toBeTypeOf("string");
      expect(entries.some((e) => e.level === "debug" && e.values["route"] === "/healthz")).toBe(true);
      const counted = await registry.getSingleMetric("hcp_frontend_requests_total")?.get();
      expect(counted?.values.find((v) => v.labels["code"] === "500")?.labels["route"]).toBe(PATTERNS.cluster);
    } finally {
      await client.close();
      await fe.stop();
    }
  });
});

/** Resolves when the socket closes, with what it received; fails after `deadlineMs`. */
function closed(socket: Socket, deadlineMs: number): Promise<string> {
  let received = "";
  socket.on("data", (d: Buffer) => (received += d.toString("latin1")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the frontend kept the connection open for ${deadlineMs} ms`));
    }, deadlineMs);
    socket.on("error", () => undefined);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

describe("slow and numerous clients", () => {
  let fe: TestFrontend;
  let port: number;

  beforeAll(async () => {
    fe = await startTestFrontend({
      client: service,
      certs: fixture.certs,
      catalogNamespace: fixture.catalogNamespace,
      registry: new Registry(),
      connections: { handshakeTimeoutMs: 300, headersTimeoutMs: 400, requestTimeoutMs: 600 },
    });
    port = Number(new URL(fe.url).port);
  });
  afterAll(() => fe?.stop());

  const armTls = async () => ({
    ca: await readFile(fixture.certs.servingCA),
    cert: await readFile(fixture.certs.arm.certPath),
    key: await readFile(fixture.certs.arm.keyPath),
  });

  it("closes a connection that never finishes the TLS handshake", async () => {
    const socket = connectTcp(port, "127.0.0.1");
    await expect(closed(socket, 10_000)).resolves.toBe("");
  });

  it("cuts off a request whose body arrives too slowly (408)", async () => {
    const socket = connectTls({ host: "127.0.0.1", port, servername: "localhost", ...(await armTls()) });
    await new Promise<void>((resolve) => socket.once("secureConnect", () => resolve()));
    socket.write(
      `PUT /subscriptions/${randomUUID()}?api-version=2.0 HTTP/1.1\r\nHost: localhost\r\n` +
        "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
    );
    // The client keeps sending, a byte at a time, for as long as the connection stays open.
    const drip = setInterval(() => socket.writable && socket.write(" "), 50);
    try {
      expect(await closed(socket, 10_000)).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(drip);
    }
  });

  it("cuts off a request whose headers arrive too slowly (408)", async () => {
    const socket = connectTls({ host: "127.0.0.1", port, servername: "localhost", ...(await armTls()) });
    await new Promise<void>((resolve) => socket.once("secureConnect", () => resolve()));
    socket.write(`GET /subscriptions/${randomUUID()}?api-version=2.0 HTTP/1.1\r\nHost: localhost\r\n`);
    // One more header line at a time, never the blank line that ends them.
    let line = 0;
    const drip = setInterval(() => socket.writable && socket.write(`X-Drip-${line++}: 1\r\n`), 50);
    try {
      expect(await closed(socket, 10_000)).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(drip);
    }
  });

  it("closes a keep-alive connection left idle after its answer", async () => {
    // Node's own keep-alive timeout is 5 s: the connection must go well before that.
    const idle = await startTestFrontend({
      client: service,
      certs: fixture.certs,
      catalogNamespace: fixture.catalogNamespace,
      registry: new Registry(),
      connections: { idleTimeoutMs: 300 },
    });
    try {
      const idlePort = Number(new URL(idle.url).port);
      const socket = connectTls({
        host: "127.0.0.1",
        port: idlePort,
        servername: "localhost",
        ...(await armTls()),
      });
      await new Promise<void>((resolve) => socket.once("secureConnect", () => resolve()));
      socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n");
      expect(await closed(socket, 4_000)).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      await idle.stop();
    }
  });

  it("closes connections past the cap as they arrive", async () => {
    const capped = await startTestFrontend({
      client: service,
      certs: fixture.certs,
      catalogNamespace: fixture.catalogNamespace,
      registry: new Registry(),
      connections: { maxConnections: 2 },
    });
    const cappedPort = Number(new URL(capped.url).port);
    const tls = await armTls();
    const open = await Promise.all(
      [1, 2].map(async () => {
        const s = connectTls({ host: "127.0.0.1", port: cappedPort, servername: "localhost", ...tls });
        await new Promise<void>((resolve) => s.once("secureConnect", () => resolve()));
        return s;
      }),
    );
    try {
      const third = connectTcp(cappedPort, "127.0.0.1");
      await expect(closed(third, 10_000)).resolves.toBe("");
      for (const s of open) expect(s.destroyed).toBe(false);
    } finally {
      for (const s of open) s.destroy();
      await capped.stop();
    }
  });
});
