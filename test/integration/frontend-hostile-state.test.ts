/**
 * Hostile requests that would leave state behind, against the real service apiserver: header
 * values that travel onto a CR, bodies nested deep enough to exhaust a recursive walk, DNS prefixes
 * chosen to collide with another customer's, identifiers cased otherwise than at creation, and the
 * merge-patch and number edge cases of ARM's bodies. Each is a clear 4xx naming what is wrong, or
 * is accepted and works; none leaves a CR that later requests cannot change.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, NodePoolResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { ARM_ANNOTATIONS } from "../../operators/api/v1alpha1/index.ts";
import {
  clusterCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import type { NodePool } from "../../operators/api/v1alpha1/index.ts";
import { clientFor } from "../support/fixtures.ts";
import {
  clusterBody,
  clusterPath,
  nodePoolBody,
  nodePoolPath,
  type ArmClient,
  type ArmResponse,
} from "../support/frontend.ts";
import {
  createSettledCluster,
  removeSubscription,
  settleCluster,
  startFrontendFixture,
  type FrontendFixture,
} from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
const otherSub = randomUUID();
const rg = "rg-state";
let fixture: FrontendFixture;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

/** A header value as a client sends UTF-8 text: its bytes, which Node reads as Latin-1. */
const onTheWire = (text: string): string => Buffer.from(text, "utf8").toString("latin1");

function expectError(r: ArmResponse, status: number, code: string, target?: string): string {
  expect(r.status, JSON.stringify(r.body).slice(0, 2000)).toBe(status);
  expect(r.headers["x-ms-error-code"]).toBe(code);
  const error = (r.body as Json).error as Json;
  if (target !== undefined) expect(error.target ?? error.details?.[0]?.target).toBe(target);
  return String(error.message);
}

function nested(depth: number): string {
  return `${'{"a":['.repeat(depth)}1${"]}".repeat(depth)}`;
}

beforeAll(async () => {
  fixture = await startFrontendFixture({ client: service, name: "frontend-state" });
  arm = fixture.arm;
  for (const s of [sub, otherSub]) {
    const r = await fixture.putSubscription(s, "Registered");
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  for (const s of [sub, otherSub]) await removeSubscription(service, s);
});

const clusterCR = (s: string, name: string): Promise<HcpCluster | undefined> =>
  service.find<HcpCluster>(HcpClusterResource, clusterCRName(rg, name), subscriptionNamespace(s));

const settledCluster = (name: string, headers: Record<string, string> = {}): Promise<void> =>
  createSettledCluster(arm, service, { sub, rg, name }, { headers });

describe("header values that travel onto a resource", () => {
  it("refuses a non-ASCII request ID with a 400 naming the header, and writes nothing", async () => {
    for (const name of ["x-ms-client-request-id", "x-ms-correlation-request-id"]) {
      const r = await arm.send("PUT", clusterPath(sub, rg, "snowman"), {
        body: clusterBody(sub),
        headers: { [name]: onTheWire("☃") },
      });
      expect(expectError(r, 400, "InvalidParameter", name)).toContain(name);
      expect(r.headers[name]).toBeUndefined();
    }
    expect(await clusterCR(sub, "snowman")).toBeUndefined();
  });

  it("refuses one on a PATCH of a cluster and of a node pool, which stay as they were and take the next request", async () => {
    await settledCluster("wedge");
    const before = await clusterCR(sub, "wedge");
    const bad = { "x-ms-client-request-id": onTheWire("☃"), "x-ms-correlation-request-id": onTheWire("é") };
    const patch = { properties: { nodeDrainTimeoutMinutes: 5 } };
    const r = await arm.send("PATCH", clusterPath(sub, rg, "wedge"), { body: patch, headers: bad });
    expectError(r, 400, "InvalidParameter");
    expect((await clusterCR(sub, "wedge"))?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    const pool = await arm.send("PUT", nodePoolPath(sub, rg, "wedge", "np"), {
      body: nodePoolBody(),
      headers: bad,
    });
    expectError(pool, 400, "InvalidParameter");
    const ok = await arm.send("PATCH", clusterPath(sub, rg, "wedge"), {
      body: patch,
      headers: { "x-ms-client-request-id": "client-2" },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
  });

  it("replaces the last request's IDs on the CR: a request without them leaves none behind", async () => {
    await settledCluster("ids", { "x-ms-client-request-id": "first", "x-ms-correlation-request-id": "c1" });
    const created = await clusterCR(sub, "ids");
    expect(created?.metadata.annotations?.[ARM_ANNOTATIONS.clientRequestId]).toBe("first");
    const r = await arm.send("PATCH", clusterPath(sub, rg, "ids"), {
      body: { properties: { nodeDrainTimeoutMinutes: 7 } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const after = await clusterCR(sub, "ids");
    expect(after?.metadata.annotations?.[ARM_ANNOTATIONS.clientRequestId]).toBeUndefined();
    expect(after?.metadata.annotations?.[ARM_ANNOTATIONS.correlationRequestId]).toBeUndefined();
  });

  it("refuses system data that is not a JSON object, naming the header", async () => {
    const r = await arm.send("PUT", clusterPath(sub, rg, "sysdata"), {
      body: clusterBody(sub),
      headers: { "x-ms-arm-resource-system-data": "[1,2]" },
    });
    expectError(r, 400, "InvalidParameter", "x-ms-arm-resource-system-data");
    expect(await clusterCR(sub, "sysdata")).toBeUndefined();
  });
});

describe("bodies nested deeper than any ARM body", () => {
  it("are a 400 naming the limit on a PATCH, a subscription PUT and a preflight alike (never a 500)", async () => {
    await settledCluster("deep");
    const body = nested(5_000);
    const paths: Array<[string, string, string | null]> = [
      ["PATCH", clusterPath(sub, rg, "deep"), null],
      ["PUT", `/subscriptions/${sub}`, "2.0"],
      [
        "POST",
        `/subscriptions/${sub}/resourcegroups/${rg}/providers/Microsoft.RedHatOpenShift/deployments/d/preflight`,
        "2020-01-01",
      ],
    ];
    for (const [method, path, apiVersion] of paths) {
      const r = await arm.send(method, path, { raw: body, ...(apiVersion ? { apiVersion } : {}) });
      expect(expectError(r, 400, "InvalidRequestContent")).toContain("64 levels");
    }
  });
});

describe("DNS prefixes", () => {
  it("refuses a new cluster whose prefix another subscription's cluster has, naming the field", async () => {
    const first = await arm.send("PUT", clusterPath(sub, rg, "first"), {
      body: clusterBody(sub, { prefix: "collide" }),
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const second = await arm.send("PUT", clusterPath(otherSub, rg, "second"), {
      body: clusterBody(otherSub, { prefix: "collide" }),
    });
    expect(expectError(second, 400, "InvalidRequestContent", "properties.dns.baseDomainPrefix")).toContain(
      "collide",
    );
    expect(await clusterCR(otherSub, "second")).toBeUndefined();
    // A PUT of the first again is an update of it, not a collision with itself.
    const again = await arm.send("PUT", clusterPath(sub, rg, "first"), {
      body: clusterBody(sub, { prefix: "collide" }),
    });
    expect(again.status).not.toBe(400);
  });

  it("draws different default prefixes for the same name in two subscriptions", async () => {
    const prefixes: string[] = [];
    for (const s of [sub, otherSub]) {
      const r = await arm.send("PUT", clusterPath(s, rg, "same-name"), { body: clusterBody(s) });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      prefixes.push(String((r.body as Json).properties.dns.baseDomainPrefix));
    }
    expect(prefixes[0]).toMatch(/^same-[a-z0-9]{10}$/);
    expect(prefixes[1]).toMatch(/^same-[a-z0-9]{10}$/);
    expect(prefixes[0]).not.toBe(prefixes[1]);
  });
});

describe("identifiers in another casing", () => {
  it("takes PUT and PATCH with the subscription, resource group and subnet cased otherwise", async () => {
    await settledCluster("cased");
    const upper = clusterPath(sub.toUpperCase(), rg.toUpperCase(), "CASED");
    const body = clusterBody(sub) as Json;
    body.properties.platform.subnetId = String(body.properties.platform.subnetId).toUpperCase();
    const put = await arm.send("PUT", upper, { body });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await settleCluster(service, { sub, rg, name: "cased" });
    const patch = await arm.send("PATCH", upper, { body: { properties: { nodeDrainTimeoutMinutes: 9 } } });
    expect(patch.status, JSON.stringify(patch.body)).toBe(202);
    const cr = await clusterCR(sub, "cased");
    expect(cr?.spec.platform.azure.subscriptionId).toBe(sub);
    expect(cr?.spec.nodeDrainTimeoutMinutes).toBe(9);
    const got = await arm.send("GET", clusterPath(sub, rg, "cased"));
    expect((got.body as Json).id).toContain(`/subscriptions/${sub}/`);
  });
});

describe("values at the edges of JSON and JavaScript", () => {
  it("quotes at most a prefix of a huge body name", async () => {
    const r = await arm.send("PUT", clusterPath(sub, rg, "named"), {
      body: { ...clusterBody(sub), name: "n".repeat(900_000) },
    });
    expect(expectError(r, 400, "InvalidRequestContent", "name").length).toBeLessThan(300);
    expect(JSON.stringify(r.body).length).toBeLessThan(2_000);
  });

  it("removes a tag a PATCH sets to null, as ARM does", async () => {
    await settledCluster("tags");
    const r = await arm.send("PATCH", clusterPath(sub, rg, "tags"), {
      body: { tags: { team: null, added: "yes" } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect((r.body as Json).tags).toEqual({ added: "yes" });
  });

  it("takes node pool label keys named like Object.prototype's fields", async () => {
    await settledCluster("labels");
    const keys = ["constructor", "toString", "valueOf"];
    const body = nodePoolBody() as Json;
    body.properties.labels = keys.map((key) => ({ key, value: "v" }));
    const r = await arm.send("PUT", nodePoolPath(sub, rg, "labels", "np"), { body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const pool = await service.get<NodePool>(
      NodePoolResource,
      nodePoolCRName(rg, "labels", "np"),
      subscriptionNamespace(sub),
    );
    expect(Object.keys(pool.spec.labels ?? {}).sort()).toEqual([...keys].sort());
  });

  it("refuses integers JSON numbers cannot carry exactly (1e308, 2^53+1), naming the field", async () => {
    await settledCluster("numbers");
    for (const replicas of ["1e308", "9007199254740993"]) {
      const raw = JSON.stringify(nodePoolBody()).replace('"replicas":2', `"replicas":${replicas}`);
      const r = await arm.send("PUT", nodePoolPath(sub, rg, "numbers", "np"), { raw });
      expectError(r, 400, "InvalidRequestContent", "properties.replicas");
    }
  });
});
