/**
 * The metering client against the marketplace emulator over https, with Entra ID tokens from the
 * ARM emulator for the marketplace audience: accepted; the same batch again is all Duplicate and
 * counts as reported; expired and unknown resources; 5xx and 429 retried (Retry-After honoured
 * through an injected sleep, so nothing waits); a connection dropped or an answer lost to a
 * timeout after the events were accepted, then the re-send answered Duplicate, and the emulator
 * holding each event once. Then the emulator's own answers to raw requests: the single-event call,
 * the batch limit, the token check and fields named in errors.
 */
import { ClientSecretCredential } from "@azure/identity";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sdkTlsSettings } from "../../../operators/azure/config.ts";
import {
  MARKETPLACE_SCOPE,
  MarketplaceMeteringClient,
  MeteringError,
  reportWithRetries,
  type UsageEvent,
} from "../../../operators/metering/marketplace.ts";
import { startArmEmulator, type ArmEmulator } from "../arm-emulator/index.ts";
import { startMarketplaceEmulator, type MarketplaceEmulator } from "./index.ts";

const PLAN = "hcp-standard";
const SUB_A = "0f6c5a3e-1d2b-4c8e-9a7f-3b2d1e0c9a81";
const SUB_B = "5e1d7c2b-8a9f-4e3d-b6c5-a4f3e2d1c0b9";
const SUSPENDED = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
const NOW = new Date("2026-11-28T15:20:00Z");
const hour = (iso: string): Date => new Date(iso);

let dir: string;
let arm: ArmEmulator;
let market: MarketplaceEmulator;
let client: MarketplaceMeteringClient;
let impatient: MarketplaceMeteringClient;
let credential: ClientSecretCredential;
let ca: string;
/** Numbers each test's own resource, so the duplicate rule never crosses tests. */
let testIndex = 0;

function events(n: number, resourceId = SUB_A): UsageEvent[] {
  const base = Date.parse("2026-11-28T14:00:00Z");
  return Array.from({ length: n }, (_, i) => ({
    resourceId,
    planId: PLAN,
    dimension: i % 2 === 0 ? "controlplane-hours" : "vcpu-hours",
    quantity: i % 2 === 0 ? 1 : 8,
    hour: new Date(base - Math.floor(i / 2) * 3600_000),
  }));
}

const sleeps: number[] = [];
const recordSleep = (ms: number): Promise<void> => {
  sleeps.push(ms);
  return Promise.resolve();
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "marketplace-emulator-"));
  arm = await startArmEmulator({ workDir: dir });
  market = await startMarketplaceEmulator({
    workDir: dir,
    now: () => NOW,
    verifyBearer: arm.verifyBearer,
    resources: [
      { resourceId: SUB_A, planId: PLAN, dimensions: ["controlplane-hours", "vcpu-hours"] },
      { resourceId: SUSPENDED, planId: PLAN, dimensions: ["controlplane-hours"], active: false },
    ],
  });
  ca = await readFile(market.caPath, "utf8");
  credential = new ClientSecretCredential(arm.tenantId, arm.clientId, arm.clientSecret, {
    authorityHost: arm.endpoint,
    disableInstanceDiscovery: true,
    tlsOptions: { ca: await readFile(arm.caPath, "utf8") },
  });
  const tls = sdkTlsSettings([...rootCertificates, ca]);
  client = new MarketplaceMeteringClient({ credential, endpoint: market.endpoint, tls });
  impatient = new MarketplaceMeteringClient({ credential, endpoint: market.endpoint, tls, timeoutMs: 1000 });
});

afterAll(async () => {
  await client?.close();
  await impatient?.close();
  await market?.stop();
  await arm?.stop();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  market.faults.clear();
  sleeps.splice(0);
  testIndex++;
});

/** A fresh resource per test keeps the duplicate rule to the test's own events. */
function freshResource(): string {
  const id = `00000000-0000-4000-8000-${String(testIndex).padStart(12, "0")}`;
  market.register({ resourceId: id, planId: PLAN, dimensions: ["controlplane-hours", "vcpu-hours"] });
  return id;
}

const acceptedOf = (resourceId: string) => market.accepted().filter((e) => e.resourceId === resourceId);

describe("the metering client against the marketplace emulator", () => {
  it("gets each event accepted with the API's usageEventId; the same batch again is all duplicate", async () => {
    const resource = freshResource();
    const batch = events(25, resource);
    const first = await client.report(batch);
    expect(first.map((o) => o.outcome)).toEqual(Array(25).fill("accepted"));
    const held = acceptedOf(resource);
    expect(held).toHaveLength(25);
    expect(first.map((o) => (o.outcome === "accepted" ? o.usageEventId : ""))).toEqual(
      held.map((e) => e.usageEventId),
    );
    expect(held[1]).toMatchObject({ dimension: "vcpu-hours", quantity: 8, hour: "2026-11-28T14:00:00.000Z" });

    const again = await client.report(batch);
    expect(again.map((o) => o.outcome)).toEqual(Array(25).fill("duplicate"));
    expect(again[0]).toMatchObject({ usageEventId: held[0]?.usageEventId, sameQuantity: true });
    expect(acceptedOf(resource)).toHaveLength(25);
  });

  it("refuses 26 events before any request, and two events of one hour", async () => {
    const resource = freshResource();
    const before = market.requests().length;
    await expect(client.report(events(26, resource))).rejects.toThrow(/at most 25 events, not 26/);
    const [e] = events(1, resource);
    await expect(client.report([e!, { ...e!, quantity: 2 }])).rejects.toThrow(
      /events\[1\] has the resource, dimension and hour of events\[0\]/,
    );
    expect(market.requests()).toHaveLength(before);
  });

  it("reports a duplicate of another quantity as reported, flagged", async () => {
    const resource = freshResource();
    const [e] = events(1, resource);
    await client.report([e!]);
    const [o] = await client.report([{ ...e!, quantity: 3 }]);
    expect(o).toMatchObject({ outcome: "duplicate", sameQuantity: false });
  });

  it("sorts expired, unknown, inactive and bad dimensions into expired and rejected with the API's code", async () => {
    const resource = freshResource();
    const [ok] = events(1, resource);
    const outcomes = await client.report([
      ok!,
      { ...ok!, hour: hour("2026-11-27T14:00:00Z") },
      { ...ok!, resourceId: SUB_B },
      { ...ok!, resourceId: SUSPENDED },
      { ...ok!, dimension: "gpu-hours" },
    ]);
    expect(outcomes.map((o) => o.outcome)).toEqual([
      "accepted",
      "expired",
      "rejected",
      "rejected",
      "rejected",
    ]);
    expect(outcomes.slice(2).map((o) => (o.outcome === "rejected" ? o.code : ""))).toEqual([
      "ResourceNotFound",
      "ResourceNotActive",
      "InvalidDimension",
    ]);
    expect(outcomes[2]).toMatchObject({ message: expect.stringContaining(SUB_B) as unknown });
    expect(acceptedOf(resource)).toHaveLength(1);
  });

  it("throws a retryable error naming the request ID on a 5xx, and succeeds when retried", async () => {
    const resource = freshResource();
    market.faults.add({ times: 1, fault: { kind: "status", status: 503, code: "ServiceUnavailable" } });
    const err = await client.report(events(2, resource)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MeteringError);
    const last = market.requests().at(-1)!;
    expect(err).toMatchObject({ retryable: true, failure: "server", status: 503, requestId: last.requestId });
    expect((err as Error).message).toContain(last.requestId);

    market.faults.add({ times: 2, fault: { kind: "status", status: 500 } });
    const outcomes = await reportWithRetries(client, events(2, resource), { sleep: recordSleep });
    expect(outcomes.map((o) => o.outcome)).toEqual(["accepted", "accepted"]);
    expect(sleeps).toEqual([1000, 2000]);
    expect(acceptedOf(resource)).toHaveLength(2);
  });

  it("honours Retry-After on a 429", async () => {
    const resource = freshResource();
    market.faults.add({ times: 1, fault: { kind: "throttle", retryAfterSeconds: 7 } });
    const err = await client.report(events(1, resource)).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true, failure: "throttled", status: 429, retryAfterMs: 7000 });

    market.faults.add({ times: 1, fault: { kind: "throttle", retryAfterSeconds: 7 } });
    const outcomes = await reportWithRetries(client, events(1, resource), { sleep: recordSleep });
    expect(outcomes.map((o) => o.outcome)).toEqual(["accepted"]);
    expect(sleeps).toEqual([7000]);
  });

  it("after a connection dropped past acceptance, the re-send is duplicate and each event is held once", async () => {
    const resource = freshResource();
    const batch = events(6, resource);
    market.faults.add({ times: 1, fault: { kind: "drop-after" } });
    const err = await client.report(batch).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true, failure: "connection", status: 0 });
    expect(acceptedOf(resource)).toHaveLength(6);

    market.faults.add({ times: 1, fault: { kind: "drop-after" } });
    const outcomes = await reportWithRetries(client, batch, { sleep: recordSleep });
    expect(outcomes.map((o) => o.outcome)).toEqual(Array(6).fill("duplicate"));
    const held = acceptedOf(resource);
    expect(held).toHaveLength(6);
    expect(new Set(held.map((e) => `${e.dimension}|${e.hour}`)).size).toBe(6);
  });

  it("a connection dropped before acceptance loses nothing: the retry is accepted", async () => {
    const resource = freshResource();
    market.faults.add({ times: 1, fault: { kind: "drop-before" } });
    const outcomes = await reportWithRetries(client, events(2, resource), { sleep: recordSleep });
    expect(outcomes.map((o) => o.outcome)).toEqual(["accepted", "accepted"]);
    expect(sleeps).toHaveLength(1);
  });

  it("times out on a slow answer (the events accepted meanwhile), and the re-send is duplicate", async () => {
    const resource = freshResource();
    const [warm, ...batch] = events(3, resource);
    // A first call holds the token and a kept-alive connection, so the short timeout is all answer.
    expect((await impatient.report([warm!]))[0]?.outcome).toBe("accepted");
    market.faults.add({ times: 1, fault: { kind: "slow", ms: 60_000 } });
    const err = await impatient.report(batch).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true, failure: "timeout", status: 0 });
    expect(market.requests().at(-1)).toMatchObject({ injected: "slow", status: 0 });
    const outcomes = await client.report(batch);
    expect(outcomes.map((o) => o.outcome)).toEqual(["duplicate", "duplicate"]);
    expect(acceptedOf(resource)).toHaveLength(3);
  });
});

interface Raw {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Raw> {
  const token = await credential.getToken(MARKETPLACE_SCOPE);
  return new Promise((resolve, reject) => {
    const req = request(
      `${market.endpoint}${path}`,
      {
        method: "POST",
        ca,
        headers: { "content-type": "application/json", authorization: `Bearer ${token.token}`, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
            headers: res.headers,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(typeof body === "string" ? body : JSON.stringify(body));
  });
}

describe("the marketplace emulator's answers", () => {
  const single = "/api/usageEvent?api-version=2018-08-31";
  const batch = "/api/batchUsageEvent?api-version=2018-08-31";
  const wire = (resourceId: string, over: Record<string, unknown> = {}) => ({
    resourceId,
    quantity: 2.5,
    dimension: "vcpu-hours",
    effectiveStartTime: "2026-11-28T13:15:00",
    planId: PLAN,
    ...over,
  });

  it("answers one event 200, its second in the hour 409 with the original, and echoes the request IDs", async () => {
    const resource = freshResource();
    const first = await post(single, wire(resource), {
      "x-ms-requestid": "r-1",
      "x-ms-correlationid": "c-1",
    });
    expect(first).toMatchObject({
      status: 200,
      body: { status: "Accepted", quantity: 2.5, resourceId: resource },
      headers: { "x-ms-requestid": "r-1", "x-ms-correlationid": "c-1" },
    });
    const again = await post(
      single,
      wire(resource, { effectiveStartTime: "2026-11-28T13:59:59Z", quantity: 9 }),
    );
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: "Conflict",
      additionalInfo: { acceptedMessage: { usageEventId: first.body["usageEventId"], quantity: 2.5 } },
    });
    expect(typeof again.headers["x-ms-requestid"]).toBe("string");
  });

  it("names the bad field: quantity, a missing dimension, the time, the api-version", async () => {
    const resource = freshResource();
    expect(await post(single, wire(resource, { quantity: 0 }))).toMatchObject({
      status: 400,
      body: { code: "InvalidQuantity", details: [{ target: "quantity" }] },
    });
    expect(await post(single, wire(resource, { dimension: undefined }))).toMatchObject({
      status: 400,
      body: { details: [{ code: "BadArgument", target: "dimension" }] },
    });
    expect(await post(single, wire(resource, { effectiveStartTime: "yesterday" }))).toMatchObject({
      status: 400,
      body: { details: [{ target: "effectiveStartTime" }] },
    });
    expect(await post(single, wire(resource, { effectiveStartTime: "2026-11-28T16:00:00Z" }))).toMatchObject({
      status: 400,
      body: {
        details: [{ target: "effectiveStartTime", message: expect.stringMatching(/future/) as unknown }],
      },
    });
    expect(await post("/api/usageEvent", wire(resource))).toMatchObject({
      status: 400,
      body: { target: "api-version" },
    });
    expect(await post(batch, "{not json")).toMatchObject({ status: 400, body: { target: "body" } });
  });

  it("refuses a batch of 26 or of none whole, and answers each event of a mixed batch", async () => {
    const resource = freshResource();
    const many = Array.from({ length: 26 }, (_, i) =>
      wire(resource, {
        effectiveStartTime: new Date(Date.parse("2026-11-28T14:00:00Z") - i * 3600_000).toISOString(),
      }),
    );
    expect(await post(batch, { request: many })).toMatchObject({
      status: 400,
      body: {
        code: "BadArgument",
        target: "request",
        message: expect.stringMatching(/26 events/) as unknown,
      },
    });
    expect(await post(batch, { request: [] })).toMatchObject({ status: 400, body: { target: "request" } });
    const mixed = await post(batch, {
      request: [wire(resource), wire(resource), wire(resource, { quantity: -1 }), "x"],
    });
    expect(mixed.status).toBe(200);
    expect(mixed.body["count"]).toBe(4);
    expect((mixed.body["result"] as { status: string }[]).map((r) => r.status)).toEqual([
      "Accepted",
      "Duplicate",
      "InvalidQuantity",
      "BadArgument",
    ]);
    expect(market.accepted().filter((e) => e.resourceId === resource)).toHaveLength(1);
  });

  it("refuses a request without a token, or with a token for ARM, with 403", async () => {
    const resource = freshResource();
    expect(await post(batch, { request: [wire(resource)] }, { authorization: "" })).toMatchObject({
      status: 403,
      body: { code: "Forbidden" },
    });
    const armToken = await credential.getToken(`${arm.endpoint}/.default`);
    expect(
      await post(batch, { request: [wire(resource)] }, { authorization: `Bearer ${armToken.token}` }),
    ).toMatchObject({ status: 403, body: { message: expect.stringMatching(/audience/) as unknown } });
    expect(market.accepted().filter((e) => e.resourceId === resource)).toHaveLength(0);
  });
});

describe("the marketplace emulator with registerUnknown (the local region's)", () => {
  it("registers an unknown resource at its first event on the given plan and still judges plan and dimension", async () => {
    const open = await startMarketplaceEmulator({
      workDir: dir,
      now: () => NOW,
      verifyBearer: arm.verifyBearer,
      registerUnknown: { planId: PLAN, dimensions: ["controlplane-hours", "vcpu-hours"] },
    });
    const tls = sdkTlsSettings([...rootCertificates, await readFile(open.caPath, "utf8")]);
    const local = new MarketplaceMeteringClient({ credential, endpoint: open.endpoint, tls });
    try {
      const made =
        "/subscriptions/6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10/resourceGroups/demo/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/demo";
      const [e] = events(1, made);
      const outcomes = await local.report([
        e!,
        { ...e!, resourceId: SUB_B, planId: "another-plan" },
        { ...e!, resourceId: SUB_A, dimension: "gpu-hours" },
      ]);
      expect(outcomes.map((o) => (o.outcome === "rejected" ? o.code : o.outcome))).toEqual([
        "accepted",
        "ResourceNotAuthorized",
        "InvalidDimension",
      ]);
      expect((await local.report([e!]))[0]).toMatchObject({ outcome: "duplicate" });
      expect(open.accepted().map((a) => a.resourceId)).toEqual([made]);
    } finally {
      await local.close();
      await open.stop();
    }
    // The default stays strict: the shared emulator does not know SUB_B.
    const [strict] = await client.report([{ ...events(1)[0]!, resourceId: SUB_B }]);
    expect(strict).toMatchObject({ outcome: "rejected", code: "ResourceNotFound" });
  });
});
