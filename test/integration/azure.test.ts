/**
 * The Azure layer (operators/azure) with the real Azure SDK clients against the ARM emulator over
 * https: token acquisition with the emulator as authority host and its CA trusted only by these
 * clients; a cluster's resources created in order, idempotently and with owner tags; throttling,
 * server errors, user errors and conflicts classified; long-running operations awaited a bounded
 * time and resumed without a second write; deletes in reverse order leaving nothing behind.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ARM_REQUEST_LIMITS,
  startArmEmulator,
  USER_ERRORS,
  type ArmEmulator,
  type StartArmEmulatorOptions,
} from "../../hack/harness/arm-emulator/index.ts";
import type { AzureClients } from "../../operators/azure/index.ts";
import { eventually } from "../support/fixtures.ts";
import {
  AzureConflictError,
  AzureRetryableError,
  AzureUserError,
  createAzureClients,
  deleteARecord,
  deleteDnsZone,
  deleteLoadBalancer,
  deleteNsDelegation,
  deletePublicIp,
  deleteResourceGroup,
  ensureARecord,
  ensureDnsZone,
  ensureLoadBalancer,
  ensureNsDelegation,
  ensurePublicIp,
  ensureResourceGroup,
  OWNER_TAG,
  RESOURCE_OWNED_BY_ANOTHER,
  type AzureConfig,
  type Outcome,
  type Owner,
  type Ready,
} from "../../operators/azure/index.ts";
import { AzureClusterInfrastructure } from "../../operators/cluster/azure.ts";
import type { StepState } from "../../operators/hcp/steps.ts";
import type { InfraResult, IngressPlan } from "../../operators/cluster/infrastructure.ts";
import { rejection } from "../support/rejection.ts";

const location = "eastus";
const platform: Owner = { id: "platform-uid", cluster: "service" };
const writes = { method: ["PUT", "PATCH", "DELETE"] };

interface Env {
  emu: ArmEmulator;
  azure: AzureClients;
  registry: Registry;
  sub: string;
  /** Clients with other settings against the same emulator (a restart, a wrong secret). */
  clients(overrides?: Partial<AzureConfig>): Promise<AzureClients>;
  stop(): Promise<void>;
}

/** An emulator of its own and fast-polling clients for it. */
async function startEnv(
  overrides: Partial<AzureConfig> = {},
  emulator: Partial<StartArmEmulatorOptions> = {},
): Promise<Env> {
  const workDir = await mkdtemp(join(tmpdir(), "azure-test-"));
  const emu = await startArmEmulator({ workDir, asyncDelayMs: 20, ...emulator });
  const registry = new Registry();
  const clients = (more: Partial<AzureConfig> = {}): Promise<AzureClients> =>
    createAzureClients({
      armEndpoint: emu.endpoint,
      authorityHost: emu.endpoint,
      caFile: emu.caPath,
      credential: { tenantId: emu.tenantId, clientId: emu.clientId, clientSecret: emu.clientSecret },
      retry: { maxRetries: 2, retryDelayMs: 10, maxRetryDelayMs: 50, maxRetryAfterMs: 2_000 },
      requestTimeoutMs: 3_000,
      operationWaitMs: 3_000,
      pollIntervalMs: 10,
      inProgressRequeueMs: 20,
      registry,
      ...overrides,
      ...more,
    });
  return {
    emu,
    azure: await clients(),
    registry,
    sub: randomUUID(),
    clients,
    stop: async () => {
      await emu.stop();
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

/**
 * Calls again while the answer asks to (`retryAfter` gives how long to wait, as the controller's
 * requeue would), and returns the first answer that does not.
 */
async function callWhilePending<R>(
  call: () => Promise<R>,
  retryAfter: (r: R) => number | undefined,
  attempts = 100,
): Promise<R> {
  for (let i = 0; i < attempts; i++) {
    const r = await call();
    const after = retryAfter(r);
    if (after === undefined) return r;
    await new Promise((resolve) => setTimeout(resolve, after));
  }
  throw new Error(`still in progress after ${attempts} calls`);
}

/** Calls an ensure or delete until it is done, as the controller's requeues would. */
async function settle<T>(call: () => Promise<Outcome<T>>, attempts = 100): Promise<Ready<T>> {
  const outcome = await callWhilePending(call, (o) => (o.done ? undefined : o.retryAfterMs), attempts);
  if (!outcome.done) throw new Error("callWhilePending returned an outcome in progress");
  return outcome;
}

/** A raw https request to the emulator, trusting its CA for this request only. */
async function raw(
  emu: ArmEmulator,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { error?: { code?: string } } & Record<string, unknown>;
}> {
  const ca = await readFile(emu.caPath);
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, emu.endpoint), { method, ca, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: text ? (JSON.parse(text) as Record<string, never>) : {},
        });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

function statuses(emu: ArmEmulator, method: string, path: string): number[] {
  return emu.requests({ method, path }).map((r) => r.status);
}

describe("identity and TLS", () => {
  let env: Env;
  beforeAll(async () => (env = await startEnv()));
  afterAll(() => env.stop());

  it("gets a token with the emulator as authority host (OpenID configuration, then the token endpoint)", async () => {
    const token = await env.azure.credential.getToken(env.azure.scope);
    expect(token?.token.split(".")).toHaveLength(3);
    expect(
      env.emu.requests({ path: "/v2.0/.well-known/openid-configuration" }).map((r) => r.status),
    ).toContain(200);
    expect(statuses(env.emu, "POST", "/oauth2/v2.0/token")).toContain(200);
  });

  it("trusts the emulator's CA in these clients only, not process-wide", async () => {
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => {
      const req = request(new URL("/", env.emu.endpoint), (res) =>
        resolve(new Error(`answered ${res.statusCode}`)),
      );
      req.on("error", resolve);
      req.end();
    });
    expect(err.code).toMatch(/CERT|SIGNATURE|ISSUER/);
  });

  it("ARM refuses requests without a valid bearer token, or without api-version", async () => {
    const path = `/subscriptions/${env.sub}/resourcegroups?api-version=2025-04-01`;
    const none = await raw(env.emu, "GET", path);
    expect(none.status).toBe(401);
    expect(none.body.error?.code).toBe("AuthenticationFailed");
    const forged = await raw(env.emu, "GET", path, { authorization: "Bearer a.b.c" });
    expect(forged.status).toBe(401);
    expect(forged.body.error?.code).toBe("AuthenticationFailed");
    const token = await env.azure.credential.getToken(env.azure.scope);
    const noVersion = await raw(env.emu, "GET", `/subscriptions/${env.sub}/resourcegroups`, {
      authorization: `Bearer ${token?.token ?? ""}`,
    });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.error?.code).toBe("MissingApiVersionParameter");
  });

  it("a wrong client secret is a user error with Entra ID's code and description", async () => {
    const wrong = await env.clients({
      credential: { tenantId: env.emu.tenantId, clientId: env.emu.clientId, clientSecret: "not-the-secret" },
    });
    const err = await rejection(
      ensureResourceGroup(wrong, { subscriptionId: env.sub, name: "rg", location, owner: platform }),
    );
    expect(err).toBeInstanceOf(AzureUserError);
    expect(err).toMatchObject({ code: "invalid_client", message: expect.stringMatching(/^AADSTS7000215/) });
    expect(statuses(env.emu, "POST", "/oauth2/v2.0/token")).toContain(401);
  });
});

describe("a cluster's resources, created and deleted", () => {
  let env: Env;
  const owner: Owner = { id: randomUUID(), cluster: "customer-ns/c1" };
  const rg = "hcp-c1";
  const serviceRg = "hcp-service";
  const parentZone = "hcp.example.com";
  const zoneName = `c1.${parentZone}`;
  let pip: { id: string; ipAddress: string };

  beforeAll(async () => {
    env = await startEnv();
    await ensureResourceGroup(env.azure, {
      subscriptionId: env.sub,
      name: serviceRg,
      location,
      owner: platform,
    });
    await ensureDnsZone(env.azure, {
      subscriptionId: env.sub,
      resourceGroup: serviceRg,
      zoneName: parentZone,
      owner: platform,
    });
  });
  afterAll(() => env.stop());

  const at = (): { subscriptionId: string; resourceGroup: string; owner: Owner } => ({
    subscriptionId: env.sub,
    resourceGroup: rg,
    owner,
  });

  /** Everything a cluster needs, in order; returns what each step reported. */
  async function createAll(): Promise<Ready<unknown>[]> {
    const steps: Ready<unknown>[] = [];
    steps.push(await ensureResourceGroup(env.azure, { subscriptionId: env.sub, name: rg, location, owner }));
    const zone = await ensureDnsZone(env.azure, { ...at(), zoneName });
    steps.push(zone);
    steps.push(
      await ensureNsDelegation(env.azure, {
        subscriptionId: env.sub,
        resourceGroup: serviceRg,
        parentZone,
        childLabel: "c1",
        nameServers: zone.value.nameServers,
        owner,
      }),
    );
    const ip = await settle(() => ensurePublicIp(env.azure, { ...at(), name: "c1-api", location }));
    pip = ip.value;
    steps.push(ip);
    steps.push(
      await settle(() =>
        ensureLoadBalancer(env.azure, { ...at(), name: "c1-lb", location, publicIpId: pip.id }),
      ),
    );
    for (const name of ["api", "*.apps"]) {
      steps.push(await ensureARecord(env.azure, { ...at(), zoneName, name, ipv4Addresses: [pip.ipAddress] }));
    }
    return steps;
  }

  it("creates everything in order, each carrying the owner", async () => {
    const steps = await createAll();
    expect(steps.map((s) => s.changed)).toEqual([true, true, true, true, true, true, true]);
    const zone = steps[1]?.value as { nameServers: string[] };
    expect(zone.nameServers).toHaveLength(4);
    expect(zone.nameServers[0]).toMatch(/^ns1-0\d\.azure-dns\.com\.$/);
    expect(pip.ipAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);

    const delegation = await env.azure.dns(env.sub).recordSets.get(serviceRg, parentZone, "c1", "NS");
    expect(delegation.nsRecords?.map((r) => r.nsdname)).toEqual(zone.nameServers);
    const apps = await env.azure.dns(env.sub).recordSets.get(rg, zoneName, "*.apps", "A");
    expect(apps.aRecords).toEqual([{ ipv4Address: pip.ipAddress }]);
    expect(apps.fqdn).toBe(`*.apps.${zoneName}.`);

    const ours = env.emu.resources().filter((r) => r.resourceGroup === rg || r.name === "c1");
    const owned = (r: (typeof ours)[number]): string | undefined =>
      r.tags[OWNER_TAG] ?? (r.properties["metadata"] as Record<string, string> | undefined)?.[OWNER_TAG];
    // The zone's apex NS and SOA are Azure's, made with the zone; everything else is ours and says so.
    const mine = ours.filter((r) => r.name !== "@");
    expect(mine.map((r) => r.type).sort()).toEqual(
      [
        "Microsoft.Resources/resourceGroups",
        "Microsoft.Network/dnszones",
        "Microsoft.Network/dnszones/NS",
        "Microsoft.Network/publicIPAddresses",
        "Microsoft.Network/loadBalancers",
        "Microsoft.Network/dnszones/A",
        "Microsoft.Network/dnszones/A",
      ].sort(),
    );
    expect(mine.map(owned)).toEqual(mine.map(() => owner.id));
  });

  it("re-running changes nothing and sends no write", async () => {
    env.emu.clearRequests();
    const steps = await createAll();
    expect(steps.every((s) => !s.changed)).toBe(true);
    expect(env.emu.requests(writes)).toEqual([]);
    expect(env.emu.requests({ method: "POST" })).toEqual([]); // the token is cached
  });

  it("refuses resources that belong to another cluster, and leaves them alone on delete", async () => {
    const intruder: Owner = { id: randomUUID(), cluster: "other-ns/c2" };
    env.emu.clearRequests();
    const zone = await rejection(ensureDnsZone(env.azure, { ...at(), owner: intruder, zoneName }));
    expect(zone).toBeInstanceOf(AzureUserError);
    expect(zone).toMatchObject({ code: RESOURCE_OWNED_BY_ANOTHER });
    expect((zone as Error).message).not.toContain(owner.id);
    const ip = await rejection(
      ensurePublicIp(env.azure, { ...at(), owner: intruder, name: "c1-api", location }),
    );
    expect(ip).toMatchObject({ code: RESOURCE_OWNED_BY_ANOTHER });
    const deleted = await deleteDnsZone(env.azure, { ...at(), owner: intruder, zoneName });
    expect(deleted).toEqual({ done: true, changed: false, value: "ownedByAnother" });
    const group = await deleteResourceGroup(env.azure, {
      subscriptionId: env.sub,
      name: rg,
      owner: intruder,
    });
    expect(group).toMatchObject({ value: "ownedByAnother" });
    expect(env.emu.requests(writes)).toEqual([]);
  });

  it("create-first: a new zone and record are one conditional PUT each; one that exists is read and its owner checked", async () => {
    const fresh = `first-${randomUUID().slice(0, 8)}.example.com`;
    env.emu.clearRequests();
    const zone = await ensureDnsZone(env.azure, { ...at(), zoneName: fresh }, { createFirst: true });
    const record = await ensureARecord(
      env.azure,
      { ...at(), zoneName: fresh, name: "api", ipv4Addresses: ["10.0.0.1"] },
      { createFirst: true },
    );
    expect([zone.changed, record.changed]).toEqual([true, true]);
    expect(zone.value.nameServers).toHaveLength(4);
    expect(env.emu.requests({ method: "GET" }).map((r) => r.path)).toEqual([]);
    expect(env.emu.requests({ method: "PUT" }).map((r) => r.status)).toEqual([201, 201]);

    // Made already (a crash before the status said so): 412, then the read-first path.
    env.emu.clearRequests();
    const again = await ensureARecord(
      env.azure,
      { ...at(), zoneName: fresh, name: "api", ipv4Addresses: ["10.0.0.1"] },
      { createFirst: true },
    );
    expect(again.changed).toBe(false);
    expect(env.emu.requests().map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 412", "GET 200"]);
    const intruder: Owner = { id: randomUUID(), cluster: "other-ns/c3" };
    const taken = await rejection(
      ensureDnsZone(env.azure, { ...at(), owner: intruder, zoneName: fresh }, { createFirst: true }),
    );
    expect(taken).toMatchObject({ code: RESOURCE_OWNED_BY_ANOTHER });
    const kept = await env.azure.dns(env.sub).zones.get(rg, fresh);
    expect(kept.tags?.[OWNER_TAG]).toBe(owner.id);
  });

  it("ARM refuses to delete a public IP its load balancer still uses", async () => {
    const err = await rejection(deletePublicIp(env.azure, { ...at(), name: "c1-api" }));
    expect(err).toBeInstanceOf(AzureUserError);
    expect(err).toMatchObject({ code: "PublicIPAddressInUse", statusCode: 400 });
  });

  it("deletes in reverse order, leaves nothing behind, and deleting again is fine", async () => {
    const deleteAll = async (): Promise<string[]> => {
      const results: string[] = [];
      for (const name of ["*.apps", "api"]) {
        results.push((await settle(() => deleteARecord(env.azure, { ...at(), zoneName, name }))).value);
      }
      results.push((await settle(() => deleteLoadBalancer(env.azure, { ...at(), name: "c1-lb" }))).value);
      results.push((await settle(() => deletePublicIp(env.azure, { ...at(), name: "c1-api" }))).value);
      const ns = { subscriptionId: env.sub, resourceGroup: serviceRg, parentZone, childLabel: "c1", owner };
      results.push((await settle(() => deleteNsDelegation(env.azure, ns))).value);
      results.push((await settle(() => deleteDnsZone(env.azure, { ...at(), zoneName }))).value);
      const group = { subscriptionId: env.sub, name: rg, owner };
      results.push((await settle(() => deleteResourceGroup(env.azure, group))).value);
      return results;
    };
    expect(await deleteAll()).toEqual(Array(7).fill("deleted"));
    expect(env.emu.resources().filter((r) => r.resourceGroup === rg || r.name === "c1")).toEqual([]);
    expect(await deleteAll()).toEqual(Array(7).fill("absent"));

    const platformZone = {
      subscriptionId: env.sub,
      resourceGroup: serviceRg,
      zoneName: parentZone,
      owner: platform,
    };
    expect((await settle(() => deleteDnsZone(env.azure, platformZone))).value).toBe("deleted");
    const service = { subscriptionId: env.sub, name: serviceRg, owner: platform };
    expect((await settle(() => deleteResourceGroup(env.azure, service))).value).toBe("deleted");
    expect(env.emu.resources()).toEqual([]);
  });
});

describe("throttling, server errors, user errors, conflicts", () => {
  let env: Env;
  const owner: Owner = { id: randomUUID(), cluster: "ns/faults" };
  const rg = "faults";
  beforeAll(async () => {
    env = await startEnv();
    await ensureResourceGroup(env.azure, { subscriptionId: env.sub, name: rg, location, owner });
  });
  afterAll(() => env.stop());

  const ip = (name: string, azure = env.azure): Promise<Outcome<{ id: string; ipAddress: string }>> =>
    ensurePublicIp(azure, { subscriptionId: env.sub, resourceGroup: rg, name, location, owner });

  it("waits out a 429 with Retry-After inside the call", async () => {
    env.emu.faults.throttle(
      { method: "PUT", path: "/publicIPAddresses/throttled-1" },
      { retryAfterSeconds: 1 },
    );
    const started = Date.now();
    expect((await settle(() => ip("throttled-1"))).changed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(statuses(env.emu, "PUT", "/throttled-1")).toEqual([429, 201]);
  });

  it("retries a 429 without Retry-After with its own short backoff", async () => {
    env.emu.faults.throttle({ method: "PUT", path: "/publicIPAddresses/throttled-2" });
    expect((await settle(() => ip("throttled-2"))).changed).toBe(true);
    expect(statuses(env.emu, "PUT", "/throttled-2")).toEqual([429, 201]);
  });

  it("hands a long Retry-After back to the controller instead of sleeping on it", async () => {
    env.emu.faults.throttle(
      { method: "PUT", path: "/publicIPAddresses/throttled-3" },
      { retryAfterSeconds: 120 },
    );
    const started = Date.now();
    const err = await rejection(ip("throttled-3"));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(err).toBeInstanceOf(AzureRetryableError);
    expect(err).toMatchObject({ statusCode: 429, retryAfterMs: 120_000 });
    expect((await settle(() => ip("throttled-3"))).changed).toBe(true);
    expect(statuses(env.emu, "PUT", "/throttled-3")).toEqual([429, 201]);
  });

  it("retries 500s inside the call", async () => {
    env.emu.faults.serverError({ method: "PUT", path: "/publicIPAddresses/flaky" }, { times: 2 });
    expect((await settle(() => ip("flaky"))).changed).toBe(true);
    expect(statuses(env.emu, "PUT", "/flaky")).toEqual([500, 500, 201]);
  });

  it("gives up after a few retries with a retryable error, and the next call succeeds", async () => {
    env.emu.faults.serverError({ method: "PUT", path: "/publicIPAddresses/down" }, { times: 3, status: 503 });
    const err = await rejection(ip("down"));
    expect(err).toBeInstanceOf(AzureRetryableError);
    expect(err).toMatchObject({ statusCode: 503, code: "ServiceUnavailable" });
    expect((await settle(() => ip("down"))).changed).toBe(true);
    expect(statuses(env.emu, "PUT", "/down")).toEqual([503, 503, 503, 201]);
  });

  it("QuotaExceeded is a user error with ARM's code and message, and is not retried", async () => {
    env.emu.faults.error({ method: "PUT", path: "/publicIPAddresses/quota" }, USER_ERRORS.quotaExceeded);
    const err = await rejection(ip("quota"));
    expect(err).toBeInstanceOf(AzureUserError);
    expect(err).toMatchObject({
      code: "QuotaExceeded",
      message: USER_ERRORS.quotaExceeded.message,
      statusCode: 400,
    });
    expect(statuses(env.emu, "PUT", "/quota")).toEqual([400]);
  });

  it("AuthorizationFailed (403) is a user error", async () => {
    env.emu.faults.error(
      { method: "GET", path: "/publicIPAddresses/forbidden" },
      USER_ERRORS.authorizationFailed,
    );
    const err = await rejection(ip("forbidden"));
    expect(err).toMatchObject({ kind: "user", code: "AuthorizationFailed", statusCode: 403 });
  });

  it("a load balancer on a public IP that does not exist is a user error (InvalidResourceReference)", async () => {
    const publicIpId = `/subscriptions/${env.sub}/resourceGroups/${rg}/providers/Microsoft.Network/publicIPAddresses/nope`;
    const err = await rejection(
      ensureLoadBalancer(env.azure, {
        subscriptionId: env.sub,
        resourceGroup: rg,
        name: "lb",
        location,
        publicIpId,
        owner,
      }),
    );
    expect(err).toBeInstanceOf(AzureUserError);
    expect(err).toMatchObject({
      code: "InvalidResourceReference",
      message: expect.stringContaining(publicIpId),
    });
  });

  it("a failed operation is classified by its code; the next call writes again", async () => {
    env.emu.faults.failOperation(
      { method: "PUT", path: "/publicIPAddresses/failing" },
      { code: "InternalServerError", message: "An error occurred." },
    );
    const err = await rejection(ip("failing"));
    expect(err).toBeInstanceOf(AzureRetryableError);
    expect(err).toMatchObject({ code: "InternalServerError", message: "An error occurred." });
    const done = await settle(() => ip("failing"));
    expect(done.changed).toBe(true);
    expect(statuses(env.emu, "PUT", "/failing")).toEqual([201, 200]);

    env.emu.faults.failOperation(
      { method: "PUT", path: "/publicIPAddresses/failing-user" },
      USER_ERRORS.invalidSubnet,
    );
    expect(await rejection(ip("failing-user"))).toMatchObject({ kind: "user", code: "InvalidSubnet" });
  });

  it("a request that never answers times out as retryable", async () => {
    const impatient = await env.clients({ requestTimeoutMs: 300 });
    const hang = env.emu.faults.hangRequest({ method: "GET", path: "/publicIPAddresses/hung" });
    const err = await rejection(ip("hung", impatient));
    hang.release();
    expect(err).toBeInstanceOf(AzureRetryableError);
    expect(err).toMatchObject({ code: "RequestTimeout" });
  });

  it("a concurrent create is a conflict, and the other writer's record is never adopted", async () => {
    const zoneName = "race.example.com";
    await ensureDnsZone(env.azure, { subscriptionId: env.sub, resourceGroup: rg, zoneName, owner });
    // Our PUT arrives first and is held back; the other writer creates the record meanwhile.
    const hold = env.emu.faults.hangRequest({ method: "PUT", path: "/A/api" }, { times: 1 });
    const ours = rejection(
      ensureARecord(env.azure, {
        subscriptionId: env.sub,
        resourceGroup: rg,
        zoneName,
        name: "api",
        ipv4Addresses: ["20.0.0.1"],
        owner,
      }),
    );
    await eventually("our PUT to be held", () => hold.held === 1, 5_000);
    await env.azure.dns(env.sub).recordSets.createOrUpdate(rg, zoneName, "api", "A", {
      ttl: 60,
      aRecords: [{ ipv4Address: "20.0.0.2" }],
    });
    hold.release();
    const err = await ours;
    expect(err).toBeInstanceOf(AzureConflictError);
    expect(err).toMatchObject({ code: "PreconditionFailed", statusCode: 412 });
    const again = await rejection(
      ensureARecord(env.azure, {
        subscriptionId: env.sub,
        resourceGroup: rg,
        zoneName,
        name: "api",
        ipv4Addresses: ["20.0.0.1"],
        owner,
      }),
    );
    expect(again).toMatchObject({ code: RESOURCE_OWNED_BY_ANOTHER });
  });

  it("counts ARM requests by operation and status code", async () => {
    const text = await env.registry.metrics();
    expect(text).toContain(
      'hcp_azure_arm_requests_total{operation="Microsoft.Network/publicIPAddresses/write",code="429"} 3',
    );
    expect(text).toContain(
      'hcp_azure_arm_requests_total{operation="Microsoft.Network/publicIPAddresses/write",code="500"} 2',
    );
    expect(text).toMatch(/hcp_azure_arm_requests_total\{operation="operations\/read",code="200"\} \d+/);
  });
});

describe("ARM's request limits", () => {
  let env: Env;
  const owner: Owner = { id: randomUUID(), cluster: "ns/limits" };
  const rg = "limits";
  // ARM's shape, small enough to empty: a write bucket of 3 that regains a token every 4 s (so
  // a slow machine cannot refill it between the writes), and clients that wait out that long.
  const writeBucket = { capacity: 3, refillPerSecond: 0.25 };
  beforeAll(async () => {
    env = await startEnv(
      { retry: { maxRetries: 2, retryDelayMs: 10, maxRetryDelayMs: 50, maxRetryAfterMs: 5_000 } },
      { requestLimits: { ...ARM_REQUEST_LIMITS, writes: writeBucket } },
    );
  });
  afterAll(() => env.stop());

  const ip = (name: string): Promise<Outcome<{ id: string; ipAddress: string }>> =>
    ensurePublicIp(env.azure, { subscriptionId: env.sub, resourceGroup: rg, name, location, owner });

  it("answers every request with what is left of its subscription's bucket", async () => {
    const token = await env.azure.credential.getToken(env.azure.scope);
    const list = await raw(
      env.emu,
      "GET",
      `/subscriptions/${env.sub}/resourcegroups?api-version=2025-04-01`,
      {
        authorization: `Bearer ${token?.token}`,
      },
    );
    expect(list.status).toBe(200);
    expect(Number(list.headers["x-ms-ratelimit-remaining-subscription-reads"])).toBe(249);
  });

  it("throttles a burst beyond the subscription's writes with Retry-After, which the clients wait out", async () => {
    await ensureResourceGroup(env.azure, { subscriptionId: env.sub, name: rg, location, owner });
    expect((await settle(() => ip("first"))).changed).toBe(true);
    expect((await settle(() => ip("second"))).changed).toBe(true);
    const started = Date.now();
    expect((await settle(() => ip("third"))).changed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const third = env.emu.requests({ method: "PUT", path: "/publicIPAddresses/third" });
    expect(third.map((r) => [r.status, r.code])).toEqual([
      [429, "SubscriptionRequestsThrottled"],
      [201, undefined],
    ]);
    // Another subscription has a bucket of its own.
    const elsewhere = randomUUID();
    await ensureResourceGroup(env.azure, { subscriptionId: elsewhere, name: rg, location, owner });
    expect(
      env.emu.requests({ method: "PUT", path: `/subscriptions/${elsewhere}/` }).map((r) => r.status),
    ).toEqual([201]);
  });
});

describe("a cluster's infrastructure, deleted through ClusterInfrastructure", () => {
  let env: Env;
  let infra: AzureClusterInfrastructure;
  const parent = { resourceGroup: "region", name: "infra.example.com" };
  const specFor = (owner: Owner, group: string, label: string) => ({
    owner: owner.id,
    ownerName: owner.cluster,
    subscriptionId: env.sub,
    location,
    managedResourceGroup: group,
    zoneName: `${label}.${parent.name}`,
    delegationLabel: label,
    ingressName: label,
    publicIpName: `${label}-pip`,
    ingress: { type: "Public" } as IngressPlan,
  });
  type Spec = ReturnType<typeof specFor>;

  /** Calls a step until it is no longer pending, waiting what it asks between calls. */
  const untilSettled = (call: () => Promise<InfraResult>): Promise<InfraResult> =>
    callWhilePending(call, ({ step }) => (step.state === "pending" ? (step.retryAfterMs ?? 0) : undefined));

  /** Every step of a cluster's infrastructure, each expected ready; what each step said, in order. */
  async function createAll(spec: Spec): Promise<StepState[]> {
    const group = await infra.ensureResourceGroup(spec);
    expect(group.step.state).toBe("ready");
    const zone = await infra.ensureDnsZone(spec);
    const delegation = await infra.ensureDelegation(spec, zone.nameServers ?? []);
    expect(delegation.step.state).toBe("ready");
    const ingress = await untilSettled(() => infra.ensureIngress(spec));
    expect(ingress.step.state).toBe("ready");
    const records = await infra.ensureRecords(spec, { api: ingress.apiIp ?? "", apps: ingress.ingressIp });
    expect(records.step.state).toBe("ready");
    return [group, zone, delegation, ingress, records].map((r) => r.step);
  }

  beforeAll(async () => {
    env = await startEnv();
    infra = new AzureClusterInfrastructure(env.azure, { subscriptionId: env.sub, ...parent });
    await infra.ensureParentZone(location);
  });
  afterAll(() => env.stop());

  it("says the same of each step whether the call created its resource or found it, so a recheck rewrites no status", async () => {
    const spec = specFor({ id: randomUUID(), cluster: "ns/same" }, "same-rg", "same");
    const created = await createAll(spec);
    expect(created.map((s) => s.state)).toEqual(["ready", "ready", "ready", "ready", "ready"]);
    expect(await createAll(spec)).toEqual(created);
    expect((await untilSettled(() => infra.deleteAll(spec))).step.state).toBe("ready");
  });

  it("deletes the delegation, then the cluster's group with everything in it: one long-running operation", async () => {
    const owner: Owner = { id: randomUUID(), cluster: "ns/whole" };
    const spec = specFor(owner, "whole-rg", "whole");
    await createAll(spec);
    expect(env.emu.resources().filter((r) => r.resourceGroup === "whole-rg").length).toBeGreaterThanOrEqual(
      5,
    );
    const before = env.emu.requests({ method: "DELETE" }).length;

    const done = await untilSettled(() => infra.deleteAll(spec));
    expect(done.step).toMatchObject({
      state: "ready",
      message: "Every Azure resource of the cluster is gone",
    });
    const deletes = env.emu.requests({ method: "DELETE" }).slice(before);
    expect(deletes.map((r) => r.path.replace(/^.*\/providers\//, "").toLowerCase())).toEqual([
      "microsoft.network/dnszones/infra.example.com/ns/whole",
      expect.stringMatching(/resourcegroups\/whole-rg$/),
    ]);
    expect(env.emu.resources().filter((r) => r.resourceGroup === "whole-rg" || r.name === "whole")).toEqual(
      [],
    );
    expect((await infra.deleteAll(spec)).step.state).toBe("ready");
    expect(env.emu.requests({ method: "DELETE" }).length).toBe(before + 2);
  });

  it("in a group that is not the cluster's, deletes what the cluster made one by one and leaves the group", async () => {
    const owner: Owner = { id: randomUUID(), cluster: "ns/guest" };
    const host: Owner = { id: randomUUID(), cluster: "ns/host" };
    const spec = specFor(owner, "shared-rg", "guest");
    await ensureResourceGroup(env.azure, {
      subscriptionId: env.sub,
      name: "shared-rg",
      location,
      owner: host,
    });
    const at = { subscriptionId: env.sub, resourceGroup: "shared-rg", owner, location };
    await settle(() => ensurePublicIp(env.azure, { ...at, name: "guest-pip" }));

    const done = await untilSettled(() => infra.deleteAll(spec));
    expect(done.step).toMatchObject({
      state: "ready",
      message: expect.stringContaining("shared-rg is not the cluster's and stays"),
    });
    const left = env.emu.resources().filter((r) => r.resourceGroup === "shared-rg");
    expect(left.map((r) => [r.type, r.name, r.tags[OWNER_TAG]])).toEqual([
      ["Microsoft.Resources/resourceGroups", "shared-rg", host.id],
    ]);
  });
});

describe("virtual networks, and a cluster's ingress in the node subnet or none at all", () => {
  let env: Env;
  let infra: AzureClusterInfrastructure;
  const parent = { resourceGroup: "region", name: "net.example.com" };
  const customer: Owner = { id: randomUUID(), cluster: "customer" };
  const netRg = "customer-net";
  const subnet = (name: string): string =>
    `/subscriptions/${env.sub}/resourceGroups/${netRg}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/${name}`;
  const specFor = (label: string, group: string, ingress: IngressPlan) => ({
    owner: randomUUID(),
    ownerName: `ns/${label}`,
    subscriptionId: env.sub,
    location,
    managedResourceGroup: group,
    zoneName: `${label}.${parent.name}`,
    delegationLabel: label,
    ingressName: `${label}-ingress`,
    publicIpName: `${label}-api-pip`,
    ingress,
  });
  type Spec = ReturnType<typeof specFor>;
  const untilSettled = (call: () => Promise<InfraResult>): Promise<InfraResult> =>
    callWhilePending(call, ({ step }) => (step.state === "pending" ? (step.retryAfterMs ?? 0) : undefined));

  /** The clusters made here, for the deletion test. */
  const made: Spec[] = [];

  /** The cluster's group, zone, delegation, ingress and records; the ingress step's result. */
  async function createAll(spec: Spec): Promise<InfraResult> {
    made.push(spec);
    expect((await infra.ensureResourceGroup(spec)).step.state).toBe("ready");
    const zone = await infra.ensureDnsZone(spec);
    expect((await infra.ensureDelegation(spec, zone.nameServers ?? [])).step.state).toBe("ready");
    const ingress = await untilSettled(() => infra.ensureIngress(spec));
    expect(ingress.step.state, ingress.step.message).toBe("ready");
    const records = await infra.ensureRecords(spec, { api: ingress.apiIp ?? "", apps: ingress.ingressIp });
    expect(records.step.state).toBe("ready");
    return ingress;
  }
  const aRecord = (spec: Spec, name: string): string[] | undefined => {
    const found = env.emu
      .resources()
      .find((r) => r.type === "Microsoft.Network/dnszones/A" && r.id.includes(`/${spec.zoneName}/A/${name}`));
    return found
      ? (found.properties["ARecords"] as Array<{ ipv4Address: string }>).map((a) => a.ipv4Address)
      : undefined;
  };
  const ofCluster = (spec: Spec) =>
    env.emu.resources().filter((r) => r.resourceGroup === spec.managedResourceGroup && r.name !== "@");

  beforeAll(async () => {
    env = await startEnv();
    infra = new AzureClusterInfrastructure(env.azure, { subscriptionId: env.sub, ...parent });
    await infra.ensureParentZone(location);
    // The customer's network, made before the cluster as a customer does.
    await ensureResourceGroup(env.azure, { subscriptionId: env.sub, name: netRg, location, owner: customer });
    await env.azure.network(env.sub).virtualNetworks.beginCreateOrUpdateAndWait(netRg, "vnet", {
      location,
      addressSpace: { addressPrefixes: ["10.0.0.0/16"] },
      subnets: [
        { name: "nodes", addressPrefix: "10.0.0.0/24" },
        {
          name: "integration",
          addressPrefix: "10.0.1.0/24",
          delegations: [{ name: "aro-hcp", serviceName: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters" }],
        },
      ],
    });
  });
  afterAll(() => env.stop());

  it("a network's subnets and their delegations read back through the SDK", async () => {
    const got = await env.azure.network(env.sub).subnets.get(netRg, "vnet", "integration");
    expect(got.id).toBe(subnet("integration"));
    expect(got.addressPrefix).toBe("10.0.1.0/24");
    expect(got.delegations?.map((d) => d.serviceName)).toEqual([
      "Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
    ]);
    await expect(env.azure.network(env.sub).subnets.get(netRg, "vnet", "missing")).rejects.toMatchObject({
      statusCode: 404,
    });
  });

  it("a subnet outside the network's space or overlapping another is refused as Azure refuses it", async () => {
    const put = (subnets: Array<{ name: string; addressPrefix: string }>) =>
      rejection(
        env.azure.network(env.sub).virtualNetworks.beginCreateOrUpdateAndWait(netRg, "other", {
          location,
          addressSpace: { addressPrefixes: ["10.1.0.0/16"] },
          subnets,
        }),
      );
    expect(await put([{ name: "out", addressPrefix: "10.2.0.0/24" }])).toMatchObject({
      code: "NetcfgSubnetRangeOutsideVnet",
    });
    expect(
      await put([
        { name: "a", addressPrefix: "10.1.0.0/24" },
        { name: "b", addressPrefix: "10.1.0.128/25" },
      ]),
    ).toMatchObject({ code: "NetcfgSubnetRangesOverlap" });
  });

  it("Private: the load balancer's frontend gets the node subnet's next free address; *.apps points there, api at the API's public IP", async () => {
    const first = specFor("priv1", "priv1-rg", { type: "Private", subnetId: subnet("nodes") });
    const ingress = await createAll(first);
    // Azure reserves the subnet's first four addresses.
    expect(ingress.ingressIp).toBe("10.0.0.4");
    expect(ingress.step.message).toBe(
      `Ingress at 10.0.0.4 (private) through priv1-ingress-lb; the API at ${ingress.apiIp} (priv1-api-pip)`,
    );
    const lb = await env.azure.network(env.sub).loadBalancers.get("priv1-rg", "priv1-ingress-lb");
    expect(
      lb.frontendIPConfigurations?.map((f) => [f.subnet?.id, f.privateIPAddress, f.publicIPAddress]),
    ).toEqual([[subnet("nodes"), "10.0.0.4", undefined]]);
    const pip = await env.azure.network(env.sub).publicIPAddresses.get("priv1-rg", "priv1-api-pip");
    expect(pip.ipConfiguration, "the public IP is in front of no load balancer").toBeUndefined();
    expect(aRecord(first, "*.apps")).toEqual(["10.0.0.4"]);
    expect(aRecord(first, "api")).toEqual([ingress.apiIp]);

    // Another cluster in the same subnet gets the next address; a recheck keeps each address and writes nothing.
    const second = specFor("priv2", "priv2-rg", { type: "Private", subnetId: subnet("nodes") });
    expect((await createAll(second)).ingressIp).toBe("10.0.0.5");
    env.emu.clearRequests();
    expect((await infra.ensureIngress(first)).ingressIp).toBe("10.0.0.4");
    expect(env.emu.requests(writes)).toEqual([]);
  });

  it("Disabled: the API's public IP and its record, no load balancer and no *.apps record", async () => {
    const spec = specFor("off", "off-rg", { type: "Disabled" });
    const ingress = await createAll(spec);
    expect(ingress.ingressIp).toBeUndefined();
    expect(ingress.step.message).toBe(`No ingress (disabled); the API at ${ingress.apiIp} (off-api-pip)`);
    expect(
      ofCluster(spec)
        .map((r) => r.type)
        .sort(),
    ).toEqual(
      [
        "Microsoft.Network/dnszones",
        "Microsoft.Network/dnszones/A",
        "Microsoft.Network/publicIPAddresses",
        "Microsoft.Resources/resourceGroups",
      ].sort(),
    );
    expect(aRecord(spec, "api")).toEqual([ingress.apiIp]);
    expect(aRecord(spec, "*.apps")).toBeUndefined();
  });

  it("a subnet in use cannot go; deleting the clusters leaves nothing of theirs, then it can", async () => {
    const vnets = env.azure.network(env.sub).virtualNetworks;
    expect(await rejection(vnets.beginDeleteAndWait(netRg, "vnet"))).toMatchObject({
      code: "InUseSubnetCannotBeDeleted",
    });
    for (const spec of made.splice(0)) {
      expect((await untilSettled(() => infra.deleteAll(spec))).step.state).toBe("ready");
      expect(ofCluster(spec)).toEqual([]);
    }
    await vnets.beginDeleteAndWait(netRg, "vnet");
    expect(env.emu.resources().filter((r) => r.type === "Microsoft.Network/virtualNetworks")).toEqual([]);
  });

  it("in a group that is not the cluster's, a private ingress's load balancer and the API's IP go one by one", async () => {
    await env.azure.network(env.sub).virtualNetworks.beginCreateOrUpdateAndWait(netRg, "vnet2", {
      location,
      addressSpace: { addressPrefixes: ["10.9.0.0/16"] },
      subnets: [{ name: "nodes", addressPrefix: "10.9.0.0/24" }],
    });
    const host: Owner = { id: randomUUID(), cluster: "ns/host" };
    await ensureResourceGroup(env.azure, {
      subscriptionId: env.sub,
      name: "shared-net-rg",
      location,
      owner: host,
    });
    const nodes = subnet("nodes").replace("/vnet/", "/vnet2/");
    const spec = specFor("guest", "shared-net-rg", { type: "Private", subnetId: nodes });
    // What the cluster made there before it found the group was not its own.
    const at = {
      subscriptionId: env.sub,
      resourceGroup: "shared-net-rg",
      owner: { id: spec.owner, cluster: spec.ownerName },
      location,
    };
    await settle(() => ensurePublicIp(env.azure, { ...at, name: spec.publicIpName }));
    await settle(() => ensureLoadBalancer(env.azure, { ...at, name: "guest-ingress-lb", subnetId: nodes }));

    const done = await untilSettled(() => infra.deleteAll(spec));
    expect(done.step.message).toContain("shared-net-rg is not the cluster's and stays");
    expect(ofCluster(spec).map((r) => [r.type, r.name])).toEqual([
      ["Microsoft.Resources/resourceGroups", "shared-net-rg"],
    ]);
  });
});

describe("long-running operations", () => {
  let env: Env;
  const owner: Owner = { id: randomUUID(), cluster: "ns/lro" };
  const rg = "lro";
  beforeAll(async () => {
    env = await startEnv({ operationWaitMs: 200 });
    await ensureResourceGroup(env.azure, { subscriptionId: env.sub, name: rg, location, owner });
  });
  afterAll(() => env.stop());

  it("the SDK's own pollers run against the emulator (Azure-AsyncOperation and Location)", async () => {
    const network = env.azure.network(env.sub);
    const created = await network.publicIPAddresses.beginCreateOrUpdateAndWait(
      rg,
      "sdk-ip",
      { location, sku: { name: "Standard" }, publicIPAllocationMethod: "Static" },
      { updateIntervalInMs: 10 },
    );
    expect(created).toMatchObject({ provisioningState: "Succeeded", ipAddress: expect.any(String) });
    await network.publicIPAddresses.beginDeleteAndWait(rg, "sdk-ip", { updateIntervalInMs: 10 });
    expect(statuses(env.emu, "DELETE", "/sdk-ip")).toEqual([202]);

    const groups = env.azure.resources(env.sub).resourceGroups;
    await groups.createOrUpdate("sdk-rg", { location });
    await env.azure.dns(env.sub).zones.createOrUpdate("sdk-rg", "sdk.example.com", { location: "global" });
    await groups.beginDeleteAndWait("sdk-rg", { updateIntervalInMs: 10 });
    const polls = statuses(env.emu, "GET", "/operationresults/");
    expect(polls.at(-1)).toBe(200);
    expect(polls.slice(0, -1).every((s) => s === 202)).toBe(true);
    expect(env.emu.resources().filter((r) => r.resourceGroup === "sdk-rg")).toEqual([]);
  });

  it("by default a call never waits on an operation: it returns at once, the next call polls it once", async () => {
    // A poll interval no test outlives: any wait in line would time the test out.
    const azure = await env.clients({ operationWaitMs: undefined, pollIntervalMs: 600_000 });
    const target = { subscriptionId: env.sub, resourceGroup: rg, name: "unheld-ip", location, owner };
    expect(await ensurePublicIp(azure, target)).toMatchObject({
      done: false,
      retryAfterMs: 600_000,
      reason: expect.stringContaining("waiting for"),
    });
    await eventually("the emulator finishes the operation", () =>
      env.emu.resources().some((r) => r.name === "unheld-ip" && r.provisioningState === "Succeeded"),
    );
    const polls = statuses(env.emu, "GET", "/operations/").length;
    expect(await ensurePublicIp(azure, target)).toMatchObject({ done: true, changed: true });
    expect(statuses(env.emu, "GET", "/operations/").length).toBe(polls + 1);
    expect(statuses(env.emu, "PUT", "/unheld-ip")).toEqual([201]);
    expect(await ensurePublicIp(azure, target)).toMatchObject({ done: true, changed: false });
  });

  it("a cluster's step waiting on its operation says to look again after the poll interval", async () => {
    const azure = await env.clients({ operationWaitMs: undefined, pollIntervalMs: 600_000 });
    const infra = new AzureClusterInfrastructure(azure, {
      subscriptionId: env.sub,
      resourceGroup: "service",
      name: "lro.example.com",
    });
    const spec = {
      owner: owner.id,
      ownerName: owner.cluster,
      subscriptionId: env.sub,
      location,
      managedResourceGroup: rg,
      zoneName: "p.lro.example.com",
      delegationLabel: "p",
      ingressName: "pending",
      publicIpName: "pending-pip",
      ingress: { type: "Public" } as const,
    };
    expect((await infra.ensureIngress(spec)).step).toMatchObject({
      state: "pending",
      reason: "InProgress",
      retryAfterMs: 600_000,
    });
  });

  it("a hung operation returns 'in progress', then resumes without a second PUT", async () => {
    const ipId = (
      await settle(() =>
        ensurePublicIp(env.azure, {
          subscriptionId: env.sub,
          resourceGroup: rg,
          name: "hung-ip",
          location,
          owner,
        }),
      )
    ).value.id;
    const lb = (azure: AzureClients): ReturnType<typeof ensureLoadBalancer> =>
      ensureLoadBalancer(azure, {
        subscriptionId: env.sub,
        resourceGroup: rg,
        name: "hung-lb",
        location,
        publicIpId: ipId,
        owner,
      });
    const hold = env.emu.faults.hangOperation({ method: "PUT", path: "/loadBalancers/hung-lb" });

    const started = Date.now();
    // Our own operation: poll again after the poll interval (10 ms here).
    expect(await lb(env.azure)).toMatchObject({ done: false, retryAfterMs: 10 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(await lb(env.azure)).toMatchObject({ done: false });
    // Another process (a restarted operator) has no poller to resume: it reads Updating and waits
    // the longer in-progress requeue (20 ms here).
    const restarted = await env.clients();
    expect(await lb(restarted)).toMatchObject({
      done: false,
      retryAfterMs: 20,
      reason: expect.stringContaining("changing"),
    });
    expect(statuses(env.emu, "PUT", "/hung-lb")).toEqual([201]);

    hold.release();
    const done = await settle(() => lb(env.azure));
    expect(done.changed).toBe(true);
    expect(done.value.frontendIpConfigurationId).toMatch(/\/frontendIPConfigurations\/frontend$/);
    expect(await lb(restarted)).toMatchObject({ done: true, changed: false });
    expect(statuses(env.emu, "PUT", "/hung-lb")).toEqual([201]);
  });

  it("a hung delete resumes the same way", async () => {
    const target = { subscriptionId: env.sub, resourceGroup: rg, name: "hung-lb", owner };
    const hold = env.emu.faults.hangOperation({ method: "DELETE", path: "/loadBalancers/hung-lb" });
    expect(await deleteLoadBalancer(env.azure, target)).toMatchObject({ done: false });
    expect(await deleteLoadBalancer(env.azure, target)).toMatchObject({ done: false });
    hold.release();
    expect(await settle(() => deleteLoadBalancer(env.azure, target))).toMatchObject({
      changed: true,
      value: "deleted",
    });
    expect(statuses(env.emu, "DELETE", "/hung-lb")).toEqual([202]);
  });

  it("deleting the resource group takes what is in it", async () => {
    await ensureDnsZone(env.azure, {
      subscriptionId: env.sub,
      resourceGroup: rg,
      zoneName: "lro.example.com",
      owner,
    });
    expect(env.emu.resources().filter((r) => r.resourceGroup === rg).length).toBeGreaterThan(3);
    const group = { subscriptionId: env.sub, name: rg, owner };
    expect((await settle(() => deleteResourceGroup(env.azure, group))).value).toBe("deleted");
    expect(env.emu.resources()).toEqual([]);
  });
});

describe("ARM semantics of the emulator", () => {
  let env: Env;
  let auth: Record<string, string>;
  const owner: Owner = { id: randomUUID(), cluster: "ns/sem" };
  beforeAll(async () => {
    env = await startEnv();
    const token = await env.azure.credential.getToken(env.azure.scope);
    auth = { authorization: `Bearer ${token?.token ?? ""}` };
    await ensureResourceGroup(env.azure, { subscriptionId: env.sub, name: "Sem-RG", location, owner });
  });
  afterAll(() => env.stop());

  const v = "?api-version=2025-05-01";

  it("paths are case-insensitive; ids keep the casing they were created with", async () => {
    const got = await raw(env.emu, "GET", `/SUBSCRIPTIONS/${env.sub}/RESOURCEGROUPS/sem-rg${v}`, auth);
    expect(got.status).toBe(200);
    expect(got.body["id"]).toBe(`/subscriptions/${env.sub}/resourceGroups/Sem-RG`);
  });

  it("answers missing things with ARM's codes", async () => {
    const base = `/subscriptions/${env.sub}/resourceGroups`;
    const cases: [string, string, number, string | undefined][] = [
      ["GET", `${base}/nope${v}`, 404, "ResourceGroupNotFound"],
      [
        "PUT",
        `${base}/nope/providers/Microsoft.Network/dnszones/x.example.com${v}`,
        404,
        "ResourceGroupNotFound",
      ],
      [
        "GET",
        `${base}/Sem-RG/providers/Microsoft.Network/publicIPAddresses/nope${v}`,
        404,
        "ResourceNotFound",
      ],
      [
        "PUT",
        `${base}/Sem-RG/providers/Microsoft.Network/dnszones/nope.example.com/A/api${v}`,
        404,
        "ParentResourceNotFound",
      ],
      ["DELETE", `${base}/Sem-RG/providers/Microsoft.Network/dnszones/nope.example.com${v}`, 204, undefined],
      ["DELETE", `${base}/Sem-RG/providers/Microsoft.Network/publicIPAddresses/nope${v}`, 204, undefined],
      [
        "GET",
        `${base}/Sem-RG/providers/Microsoft.Compute/virtualMachines/vm${v}`,
        400,
        "InvalidResourceType",
      ],
    ];
    for (const [method, path, status, code] of cases) {
      const got = await raw(env.emu, method, path, { ...auth, "content-type": "application/json" });
      expect({ method, path, status: got.status, code: got.body.error?.code }).toEqual({
        method,
        path,
        status,
        code,
      });
    }
  });

  it("PATCH replaces the tags where the SDK offers it", async () => {
    const ip = await env.azure
      .network(env.sub)
      .publicIPAddresses.beginCreateOrUpdateAndWait(
        "Sem-RG",
        "patched",
        { location, tags: { a: "1" } },
        { updateIntervalInMs: 10 },
      );
    expect(ip.tags).toEqual({ a: "1" });
    const patched = await env.azure
      .network(env.sub)
      .publicIPAddresses.updateTags("Sem-RG", "patched", { tags: { b: "2" } });
    expect(patched.tags).toEqual({ b: "2" });
    await env.azure
      .dns(env.sub)
      .zones.createOrUpdate("Sem-RG", "patched.example.com", { location: "global" });
    const zone = await env.azure
      .dns(env.sub)
      .zones.update("Sem-RG", "patched.example.com", { tags: { c: "3" } });
    expect(zone.tags).toEqual({ c: "3" });
    const group = await env.azure.resources(env.sub).resourceGroups.update("Sem-RG", { tags: { d: "4" } });
    expect(group.tags).toEqual({ d: "4" });
    expect(env.emu.requests({ method: "PATCH" }).map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it("refuses tag names ARM refuses (a '/' among them)", async () => {
    const err = await rejection(
      env.azure
        .resources(env.sub)
        .resourceGroups.createOrUpdate("tags", { location, tags: { "hcp.aro.dev/owner": "x" } }),
    );
    expect(err).toMatchObject({ statusCode: 400, code: "InvalidTagNameCharacters" });
  });
});

describe("cancellation", () => {
  let env: Env;
  const owner: Owner = { id: randomUUID(), cluster: "ns/cancel" };
  const rg = "cancel";
  // Waits long enough that only the abort can end them within a test.
  const patient: Partial<AzureConfig> = {
    operationWaitMs: 60_000,
    requestTimeoutMs: 60_000,
    retry: { maxRetries: 2, retryDelayMs: 10, maxRetryDelayMs: 50, maxRetryAfterMs: 60_000 },
  };
  beforeAll(async () => {
    env = await startEnv(patient);
    await ensureResourceGroup(env.azure, { subscriptionId: env.sub, name: rg, location, owner });
  });
  afterAll(() => env.stop());

  const ip = (name: string, signal?: AbortSignal): ReturnType<typeof ensurePublicIp> =>
    ensurePublicIp(
      env.azure,
      { subscriptionId: env.sub, resourceGroup: rg, name, location, owner },
      { signal },
    );

  it("an abort abandons a request the emulator holds, rejecting with the signal's reason", async () => {
    const hold = env.emu.faults.hangRequest({ method: "GET", path: "/publicIPAddresses/held" });
    const abort = new AbortController();
    const call = rejection(ip("held", abort.signal));
    await expect.poll(() => hold.held).toBe(1);
    const reason = new Error("reconcile cancelled");
    abort.abort(reason);
    expect(await call).toBe(reason);
    // Still held: the call ended because of the abort, not an answer or a timeout.
    expect(hold.held).toBe(1);
    hold.release();
    expect(statuses(env.emu, "PUT", "/publicIPAddresses/held")).toEqual([]);
  });

  it("an abort ends the wait for a Retry-After at once, without a retry", async () => {
    env.emu.faults.throttle(
      { method: "PUT", path: "/publicIPAddresses/throttled" },
      { retryAfterSeconds: 60 },
    );
    const abort = new AbortController();
    const call = rejection(ip("throttled", abort.signal));
    await expect.poll(() => statuses(env.emu, "PUT", "/publicIPAddresses/throttled")).toEqual([429]);
    const abortedAt = Date.now();
    abort.abort();
    expect(await call).toMatchObject({ name: "AbortError" });
    expect(Date.now() - abortedAt).toBeLessThan(10_000);
    expect(statuses(env.emu, "PUT", "/publicIPAddresses/throttled")).toEqual([429]);
  });

  it("an abort ends the wait for a long-running operation, which the next call resumes", async () => {
    const hold = env.emu.faults.hangOperation({ method: "PUT", path: "/publicIPAddresses/slow" });
    const polls = (): number => env.emu.requests({ method: "GET", path: "/operations/" }).length;
    const pollsBefore = polls();
    const abort = new AbortController();
    const call = rejection(ip("slow", abort.signal));
    await expect.poll(() => hold.held).toBe(1);
    // The PUT's answer has reached the call once it polls: an abort before that only ends the PUT.
    await expect.poll(polls).toBeGreaterThan(pollsBefore);
    const reason = new Error("stopping");
    abort.abort(reason);
    expect(await call).toBe(reason);
    expect([...env.azure.pendingOperations.keys()]).toEqual([
      expect.stringMatching(/\/publicipaddresses\/slow$/),
    ]);
    hold.release();
    expect((await settle(() => ip("slow"))).changed).toBe(true);
    expect(statuses(env.emu, "PUT", "/publicIPAddresses/slow")).toEqual([201]);
  });

  it("ClusterInfrastructure passes the signal down: an aborted step rejects instead of failing", async () => {
    const infra = new AzureClusterInfrastructure(env.azure, {
      subscriptionId: env.sub,
      resourceGroup: "service",
      name: "cancel.example.com",
    });
    const spec = {
      owner: owner.id,
      ownerName: owner.cluster,
      subscriptionId: env.sub,
      location,
      managedResourceGroup: "cancel-infra",
      zoneName: "c.cancel.example.com",
      delegationLabel: "c",
      ingressName: "c",
      publicIpName: "c-pip",
      ingress: { type: "Public" } as const,
    };
    const hold = env.emu.faults.hangRequest({ method: "GET", path: "/resourcegroups/cancel-infra" });
    const abort = new AbortController();
    const call = rejection(infra.ensureResourceGroup(spec, { signal: abort.signal }));
    await expect.poll(() => hold.held).toBe(1);
    const reason = new Error("cancelled");
    abort.abort(reason);
    expect(await call).toBe(reason);
    hold.release();
  });
});
