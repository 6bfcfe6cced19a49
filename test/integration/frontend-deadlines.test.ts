/**
 * Operation deadlines and Azure-AsyncNotificationUri against the real service apiserver, with no
 * controllers running (the test writes the CRs' status as they would): an operation past its
 * bound ends Failed with InternalServerError and the last progress message, GET agrees, and ARM
 * may then send the next request; a notification reaches an https receiver once, with the status
 * body, when the operation succeeds, fails by its deadline or is canceled, with nobody polling,
 * sent by whichever of two notifier replicas holds the lease.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, NodePoolResource } from "../../operators/api/v1alpha1/index.ts";
import {
  clusterCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import { configMapType } from "../../operators/releases/catalog.ts";
import { writeSummaryStatus } from "../support/summary-conditions.ts";
import type { KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { Registry } from "prom-client";
import { leaseType } from "../../operators/runtime/leaderelection.ts";
import { Manager } from "../../operators/runtime/manager.ts";
import { OperationNotifier } from "../../operators/frontend/operations/notifier.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "../support/fixtures.ts";
import { clusterBody, clusterPath, nodePoolBody, nodePoolPath, type ArmClient } from "../support/frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";
import { startNotificationReceiver, type NotificationReceiver } from "../support/notification-receiver.ts";

const service = clientFor("service");
const sub = randomUUID();
const ns = subscriptionNamespace(sub);
const rg = "Rg-Deadlines";
const SECOND = 1000;
/** Short bounds, each its own, so a message shows which one applied; other updates get ten minutes. */
const deadlines = {
  clusterCreate: 3 * SECOND,
  nodePoolCreate: 4 * SECOND,
  upgrade: 5 * SECOND,
  delete: 6 * SECOND,
  update: 600 * SECOND,
};
const registry = new Registry();
let fixture: FrontendFixture;
let arm: ArmClient;
let receiver: NotificationReceiver;
let scratch: { path: string; remove(): Promise<void> };
const LEASE = `hcp-frontend-${randomUUID().slice(0, 8)}`;
/** Notifier replicas by identity, as frontend replicas run them: only the lease holder's works. */
const replicas = new Map<string, { stop(): Promise<void> }>();

/** A frontend replica's Manager with its notifier, under leader election (a short lease). */
function startReplica(identity: string): void {
  const manager = new Manager({
    httpAddress: "127.0.0.1:0",
    gracefulShutdownMs: 5_000,
    leaderElection: {
      client: service,
      namespace: ns,
      name: LEASE,
      identity,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 500,
    },
  });
  manager.add(
    new OperationNotifier({
      client: service,
      allowedHosts: ["127.0.0.1"],
      ca: receiver.ca,
      firstRetryMs: 100,
      maxAttempts: 3,
      registry,
    }),
  );
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  replicas.set(identity, {
    stop: async () => {
      stop.abort();
      await running;
      replicas.delete(identity);
    },
  });
}

async function leader(): Promise<string> {
  let holder = "";
  await eventually("a notifier replica to lead", async () => {
    const lease = await service.find<KubeObject & { spec?: { holderIdentity?: string } }>(
      leaseType,
      LEASE,
      ns,
    );
    holder = lease?.spec?.holderIdentity ?? "";
    return replicas.has(holder);
  });
  return holder;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

const PROGRESS = "Waiting for the hosted control plane to become available";

/** Writes status as a controller would: observedGeneration = the current generation. */
function setStatus(type: ResourceType, name: string, state: "ready" | "progressing"): Promise<void> {
  const progress = { reason: "WaitingForAvailable", message: PROGRESS };
  return writeSummaryStatus(service, type, { name, namespace: ns }, { state, progress });
}

async function provisioningState(path: string): Promise<string> {
  return String(((await arm.send("GET", path)).body as Json).properties?.provisioningState);
}

/** A Succeeded cluster: created, then its status written ready well within its 3 s bound. */
async function readyCluster(name: string): Promise<string> {
  const path = clusterPath(sub, rg, name);
  const r = await arm.send("PUT", path, { body: clusterBody(sub) });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await setStatus(HcpClusterResource, clusterCRName(rg, name), "ready");
  expect((await arm.poll(r.headers["azure-asyncoperation"]!)).status).toBe("Succeeded");
  return path;
}

async function hold(type: ResourceType, name: string, finalizers: string[] | null): Promise<void> {
  await service.mergePatch(type, { name, namespace: ns }, { metadata: { finalizers } });
}

const deadlineError = (bound: string): Json => ({
  code: "InternalServerError",
  message: `The operation did not finish within ${bound}. Last status: ${PROGRESS}`,
});

beforeAll(async () => {
  scratch = await scratchDir("frontend-deadlines");
  receiver = await startNotificationReceiver(scratch.path);
  fixture = await startFrontendFixture({
    client: service,
    name: "frontend-deadlines",
    scratchPath: scratch.path,
    deadlines,
    registry,
    notificationHosts: ["127.0.0.1"],
    headers: { "x-ms-home-tenant-id": "72f988bf-86f1-41af-91ab-2d7cd011db47" },
  });
  arm = fixture.arm;
  expect(
    (await fixture.putSubscription(sub, "Registered", "72f988bf-86f1-41af-91ab-2d7cd011db47")).status,
  ).toBe(200);
  for (const identity of ["replica-a", "replica-b"]) startReplica(identity);
}, 60_000);

afterAll(async () => {
  for (const r of [...replicas.values()]) await r.stop();
  await fixture?.stop();
  await receiver?.close();
  for (const t of [HcpClusterResource, NodePoolResource]) {
    const list = await service.listAll(t, { namespace: ns });
    for (const o of list.items) {
      await hold(t, o.metadata.name!, null);
      await service.delete(t, { name: o.metadata.name!, namespace: ns });
    }
  }
  await service.delete(namespaceType, { name: ns });
  await scratch?.remove();
});

describe("operation deadlines", () => {
  it("a cluster create past its bound ends Failed with the last progress message; GET agrees and a PATCH is accepted", async () => {
    const path = clusterPath(sub, rg, "Slow-Create");
    const name = clusterCRName(rg, "Slow-Create");
    const r = await arm.send("PUT", path, { body: clusterBody(sub) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    await setStatus(HcpClusterResource, name, "progressing");
    const op = await arm.poll(r.headers["azure-asyncoperation"]!, 30_000);
    expect(op).toMatchObject({ status: "Failed", error: deadlineError("3 seconds") });
    expect(Date.parse(String(op["endTime"])) - Date.parse(String(op["startTime"]))).toBe(3 * SECOND);
    expect(await provisioningState(path)).toBe("Failed");

    // ARM may send the next request; it starts a new operation, which runs as usual.
    const patch = await arm.send("PATCH", path, { body: { properties: { nodeDrainTimeoutMinutes: 45 } } });
    expect(patch.status, JSON.stringify(patch.body)).toBe(202);
    expect(await provisioningState(path)).toBe("Accepted");
    await setStatus(HcpClusterResource, name, "ready");
    expect((await arm.poll(patch.headers["azure-asyncoperation"]!)).status).toBe("Succeeded");
    expect(await provisioningState(path)).toBe("Succeeded");
    // The create stays as it ended.
    expect((await arm.send("GET", r.headers["azure-asyncoperation"]!)).body).toMatchObject(op);
  });

  it("a node pool create past its bound ends Failed; the pool may then be deleted", async () => {
    await readyCluster("Pool-Parent");
    const pool = nodePoolPath(sub, rg, "Pool-Parent", "Slow");
    const r = await arm.send("PUT", pool, { body: nodePoolBody() });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    await setStatus(NodePoolResource, nodePoolCRName(rg, "Pool-Parent", "Slow"), "progressing");
    expect(await arm.poll(r.headers["azure-asyncoperation"]!, 30_000)).toMatchObject({
      status: "Failed",
      error: deadlineError("4 seconds"),
    });
    expect(await provisioningState(pool)).toBe("Failed");
    const del = await arm.send("DELETE", pool);
    expect(del.status, JSON.stringify(del.body)).toBe(202);
    expect((await arm.poll(del.headers["azure-asyncoperation"]!)).status).toBe("Succeeded");
  });

  it("an upgrade (a new version.id) has the upgrade bound", async () => {
    const path = await readyCluster("Slow-Upgrade");
    const r = await arm.send("PATCH", path, { body: { properties: { version: { id: "4.20" } } } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await setStatus(HcpClusterResource, clusterCRName(rg, "Slow-Upgrade"), "progressing");
    expect(await arm.poll(r.headers["azure-asyncoperation"]!, 30_000)).toMatchObject({
      status: "Failed",
      error: deadlineError("5 seconds"),
    });
    expect(await provisioningState(path)).toBe("Failed");
  });

  it("a delete past its bound ends Failed, GET shows Failed, and a second DELETE starts a new operation", async () => {
    const path = await readyCluster("Slow-Delete");
    const name = clusterCRName(rg, "Slow-Delete");
    await hold(HcpClusterResource, name, ["test/hold"]);
    await setStatus(HcpClusterResource, name, "progressing");
    const first = await arm.send("DELETE", path);
    expect(first.status).toBe(202);
    expect(await provisioningState(path)).toBe("Deleting");
    expect((await arm.send("DELETE", path)).status).toBe(409);
    const failed = await arm.poll(first.headers["azure-asyncoperation"]!, 30_000);
    expect(failed).toMatchObject({ status: "Failed", error: deadlineError("6 seconds") });
    expect(await provisioningState(path)).toBe("Failed");
    // A deleting cluster takes no update, and nothing new goes under it.
    expect((await arm.send("PATCH", path, { body: { tags: { a: "b" } } })).status).toBe(409);
    const child = await arm.send("PUT", nodePoolPath(sub, rg, "Slow-Delete", "late"), {
      body: nodePoolBody(),
    });
    expect(child.status).toBe(409);

    const second = await arm.send("DELETE", path);
    expect(second.status, JSON.stringify(second.body)).toBe(202);
    expect(second.headers["azure-asyncoperation"]).not.toBe(first.headers["azure-asyncoperation"]);
    expect(((await arm.send("GET", second.headers["azure-asyncoperation"]!)).body as Json).status).toBe(
      "Deleting",
    );
    expect(await provisioningState(path)).toBe("Deleting");
    await hold(HcpClusterResource, name, null);
    expect((await arm.poll(second.headers["azure-asyncoperation"]!)).status).toBe("Succeeded");
    expect((await arm.send("GET", first.headers["azure-asyncoperation"]!)).body).toMatchObject(failed);
  });
});

describe("Azure-AsyncNotificationUri", () => {
  const notify = (uri: string): { headers: Record<string, string> } => ({
    headers: { "azure-asyncnotificationuri": uri },
  });

  /** The ConfigMap of an operation, once the notifier has recorded its delivery. */
  async function notified(statusUrl: string): Promise<KubeObject> {
    const id = new URL(statusUrl).pathname.split("/").pop()!;
    let cm: KubeObject | undefined;
    await eventually("the notifier's record", async () => {
      cm = await service.find<KubeObject>(configMapType, `op-${id}`, ns);
      return cm?.metadata.labels?.["hcp.aro.dev/arm-notified"] !== undefined;
    });
    return cm!;
  }

  async function deliveries(path: string, n: number, timeoutMs = 30_000): Promise<Json[]> {
    await eventually(`${n} notification(s) to ${path}`, () => receiver.received(path).length >= n, timeoutMs);
    return receiver.received(path).map((r) => r.body as Json);
  }

  /** The status endpoint's answer, which the notification must equal. */
  async function statusOf(statusUrl: string): Promise<Json> {
    return (await arm.send("GET", statusUrl)).body as Json;
  }

  it("notifies an update's success once, with the status body, as the CR changes (no poll, no deadline)", async () => {
    const path = await readyCluster("Notified");
    const r = await arm.send("PATCH", path, {
      body: { properties: { nodeDrainTimeoutMinutes: 30 } },
      ...notify(receiver.uri("/ok")),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.headers["azure-asyncnotification"]).toBe("Enabled");
    await setStatus(HcpClusterResource, clusterCRName(rg, "Notified"), "ready");
    // Sooner than the notifier's 15 s recheck, and far within the update's ten-minute bound: the
    // CR's change woke the notifier.
    const [body] = await deliveries("/ok", 1, 10_000);
    expect(body).toMatchObject({ status: "Succeeded" });
    const cm = await notified(r.headers["azure-asyncoperation"]!);
    expect(cm.metadata.labels?.["hcp.aro.dev/arm-notified"]).toBe("sent");
    expect(body).toEqual(await statusOf(r.headers["azure-asyncoperation"]!));
    // The leader goes (a rollout); the other replica takes over, finds nothing left to send, and
    // sends the next notification.
    await replicas.get(await leader())!.stop();
    const successor = await leader();
    arm = await fixture.restart();
    const del = await arm.send("DELETE", path, notify(receiver.uri("/ok-delete")));
    expect(del.status).toBe(202);
    expect(del.headers["azure-asyncnotification"]).toBe("Enabled");
    const [deleted] = await deliveries("/ok-delete", 1);
    expect(deleted).toMatchObject({ status: "Succeeded" });
    expect(deleted).toEqual(await statusOf(del.headers["azure-asyncoperation"]!));
    expect(receiver.received("/ok")).toHaveLength(1);
    startReplica(successor === "replica-a" ? "replica-b" : "replica-a");
  });

  it("notifies a deadline's Failed when it passes, with nobody polling", async () => {
    const r = await arm.send("PUT", clusterPath(sub, rg, "Notified-Late"), {
      body: clusterBody(sub),
      ...notify(receiver.uri("/late")),
    });
    expect(r.status).toBe(201);
    await setStatus(HcpClusterResource, clusterCRName(rg, "Notified-Late"), "progressing");
    const [body] = await deliveries("/late", 1);
    expect(body).toMatchObject({ status: "Failed", error: deadlineError("3 seconds") });
    await notified(r.headers["azure-asyncoperation"]!);
    expect(receiver.received("/late")).toHaveLength(1);
    expect(body).toEqual(await statusOf(r.headers["azure-asyncoperation"]!));
  });

  it("notifies an operation a DELETE cancels", async () => {
    const path = clusterPath(sub, rg, "Notified-Canceled");
    const r = await arm.send("PUT", path, { body: clusterBody(sub), ...notify(receiver.uri("/canceled")) });
    expect(r.status).toBe(201);
    expect((await arm.send("DELETE", path)).status).toBe(202);
    const [body] = await deliveries("/canceled", 1);
    expect(body).toMatchObject({
      status: "Canceled",
      error: { code: "Canceled", message: "This operation was superseded by another" },
    });
    await notified(r.headers["azure-asyncoperation"]!);
    expect(receiver.received("/canceled")).toHaveLength(1);
    expect(body).toEqual(await statusOf(r.headers["azure-asyncoperation"]!));
  });

  it("retries a refused notification, and gives up after the bounded attempts", async () => {
    receiver.refuse("/flaky", 1);
    const flaky = await arm.send("PUT", clusterPath(sub, rg, "Notified-Flaky"), {
      body: clusterBody(sub),
      ...notify(receiver.uri("/flaky")),
    });
    expect(flaky.status).toBe(201);
    await setStatus(HcpClusterResource, clusterCRName(rg, "Notified-Flaky"), "ready");
    await notified(flaky.headers["azure-asyncoperation"]!);
    expect(receiver.received("/flaky").map((n) => n.status)).toEqual([503, 200]);

    receiver.refuse("/down", 0);
    const down = await arm.send("PUT", clusterPath(sub, rg, "Notified-Down"), {
      body: clusterBody(sub),
      ...notify(receiver.uri("/down")),
    });
    expect(down.status).toBe(201);
    await setStatus(HcpClusterResource, clusterCRName(rg, "Notified-Down"), "ready");
    const cm = await notified(down.headers["azure-asyncoperation"]!);
    expect(cm.metadata.labels?.["hcp.aro.dev/arm-notified"]).toBe("abandoned");
    // Three attempts, each after a doubling delay (100 ms, then 200 ms).
    const times = receiver.received("/down").map((n) => n.at);
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(100);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(200);
    // The notifier counts a result after it records it on the operation's ConfigMap: the count
    // may follow what the ConfigMap shows, so it is waited for, not read at once.
    const counted = () => registry.getSingleMetricAsString("hcp_frontend_operation_notifications_total");
    await eventually("the sent and the abandoned notification counted", async () => {
      const metrics = await counted();
      return /result="abandoned"} [1-9]/.test(metrics) && /result="sent"} [1-9]/.test(metrics);
    });
    const metrics = await counted();
    expect(metrics).toMatch(/result="abandoned"} [1-9]/);
    expect(metrics).toMatch(/result="sent"} [1-9]/);
  });

  it.each([
    ["plain http", "http://127.0.0.1/x", "is not an https URI"],
    ["another host", "https://attacker.example.com/x", "names a host that is not allowed"],
    ["the allowed host as a prefix", "https://127.0.0.1.example.com/x", "names a host that is not allowed"],
    ["credentials", "https://user:pw@127.0.0.1/x", "carries credentials"],
    ["2,100 characters", `https://127.0.0.1/${"a".repeat(2100)}`, "is longer than 2048 characters"],
    ["not a URI", "not a uri", "is not an absolute URI"],
  ])("refuses %s with 400 naming the header, and writes nothing", async (_, uri, why) => {
    const path = clusterPath(sub, rg, `refused-${randomUUID().slice(0, 8)}`);
    const r = await arm.send("PUT", path, { body: clusterBody(sub), ...notify(uri) });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      error: {
        code: "InvalidParameter",
        target: "Azure-AsyncNotificationUri",
        message: expect.stringContaining(why) as string,
      },
    });
    expect((await arm.send("GET", path)).status).toBe(404);
  });
});
