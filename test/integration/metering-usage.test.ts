/**
 * The usage controller end to end (issue 35's Done-when): HcpClusters and NodePools on the shared
 * service kube-apiserver, with the statuses the cluster and pool controllers would write; the
 * recorder reading them through real informers into a real PostgreSQL ledger; the exporter
 * reporting to the marketplace emulator over https with Entra ID tokens from the ARM emulator.
 * Time is a clock the test moves (the recorder's, the exporter's and the emulator's); the
 * apiserver's own times (creation, deletion) are real, so the simulated hours end where real time
 * is now. Nothing sleeps: the test waits for ledger rows with a deadline, and runs export passes.
 *
 * - Ready for three hours with a pool of two 8-vCPU nodes: exactly 3 control-plane rows of 1 and
 *   3 vCPU rows of 16, each accepted once, the emulator's events equal to the ledger's reported
 *   rows; a second pass sends nothing. Deleted: the hour of the deletion holds the partial
 *   quantity up to its deletionTimestamp, and no later hour has a row.
 * - The answer dropped after the API accepted; the exporter stopped between acceptance and mark
 *   (a new instance on a new connection pool stands for the restart): the re-send is answered
 *   Duplicate and marked reported, nothing twice, nothing lost.
 * - 503, then 429 with Retry-After: rows left unreported, the next pass not before Retry-After,
 *   then each reported once, in batches of at most 25; hours older than 24 h expired without a
 *   call; the oldest-unreported gauge follows.
 */
import { ClientSecretCredential } from "@azure/identity";
import pg from "pg";
import { load } from "js-yaml";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { rootCertificates } from "node:tls";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArmEmulator, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import {
  startMarketplaceEmulator,
  type AcceptedUsageEvent,
  type MarketplaceEmulator,
} from "../../hack/harness/marketplace-emulator/index.ts";
import { ARM_ANNOTATIONS } from "../../operators/api/v1alpha1/arm.ts";
import { ORIGINAL_UID_ANNOTATION } from "../../operators/api/v1alpha1/labels.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { sdkTlsSettings } from "../../operators/azure/config.ts";
import { Ledger, type UsageHour } from "../../operators/metering/ledger.ts";
import { MarketplaceMeteringClient } from "../../operators/metering/marketplace.ts";
import { ClusterRegistry, type Cluster } from "../../operators/runtime/clusters.ts";
import { metricsRegistry } from "../../operators/runtime/metrics.ts";
import { UsageExporter } from "../../operators/usage/exporter.ts";
import { UsageRecorder } from "../../operators/usage/recorder.ts";
import { clientFor, eventually, scratchDir, tempNamespace } from "../support/fixtures.ts";
import { privatePostgres, testDatabase, type TestDatabase } from "../support/postgres.ts";
import { clusterInfo } from "../support/region.ts";

const HOUR = 3_600_000;
const PLAN = "hcp-standard";
const HOLD = "test.hcp.aro.dev/hold";
const client = clientFor("service");
const sample = async <T>(file: string): Promise<T> =>
  load(await readFile(new URL(`../../config/samples/${file}`, import.meta.url), "utf8")) as T;
const hourOf = (ms: number): number => Math.floor(ms / HOUR) * HOUR;
/** The hour real time is in: the simulated hours end here, where the apiserver's clock is. */
const H = hourOf(Date.now());

let clock = new Date(H);
const now = (): Date => clock;
const registry = new Registry();
let arm: ArmEmulator;
let market: MarketplaceEmulator;
let meteringClient: MarketplaceMeteringClient;
/** One namespace per scenario: each recorder watches its own, into its own ledger. */
let ns: { name: string; remove(): Promise<void> };
let work: { path: string; remove(): Promise<void> };
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  work = await scratchDir("metering-usage");
  arm = await startArmEmulator({ workDir: work.path });
  market = await startMarketplaceEmulator({ workDir: work.path, now, verifyBearer: arm.verifyBearer });
  const credential = new ClientSecretCredential(arm.tenantId, arm.clientId, arm.clientSecret, {
    authorityHost: arm.endpoint,
    disableInstanceDiscovery: true,
    tlsOptions: { ca: await readFile(arm.caPath, "utf8") },
  });
  const tls = sdkTlsSettings([...rootCertificates, await readFile(market.caPath, "utf8")]);
  meteringClient = new MarketplaceMeteringClient({ credential, endpoint: market.endpoint, tls });
});

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  await meteringClient?.close();
  await market?.stop();
  await arm?.stop();
  await work?.remove();
});

interface Scenario {
  ledger: Ledger;
  db: TestDatabase;
  cluster: HcpCluster;
  pool: NodePool;
  clusterId: string;
  poolId: string;
  exporter: () => UsageExporter;
}

/**
 * A cluster Ready since `readyAt` with a pool of two Standard_D8s_v3 nodes seen at that time, its
 * usage recorded by a running recorder into a fresh ledger; the clock is left at `readyAt`.
 */
async function readyCluster(readyAt: number): Promise<Scenario> {
  clock = new Date(readyAt);
  const namespace = await tempNamespace(client, "usage");
  ns = namespace;
  cleanups.push(async () => {
    for (const c of (await client.list<HcpCluster>(HcpClusterResource, { namespace: namespace.name })).items)
      await client.mergePatch(
        HcpClusterResource,
        { name: c.metadata.name ?? "", namespace: namespace.name },
        {
          metadata: { finalizers: null },
        },
      );
    await namespace.remove();
  });
  const db = await testDatabase("usage");
  const ledger = await Ledger.open(db.url);
  cleanups.push(async () => {
    await ledger.close();
    await db.drop();
  });
  const name = `c${randomUUID().slice(0, 8)}`;
  const clusterArmId = `/subscriptions/${randomUUID()}/resourceGroups/rg-${name}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;
  const poolArmId = `${clusterArmId}/nodePools/workers`;
  for (const resourceId of [clusterArmId, poolArmId])
    market.register({ resourceId, planId: PLAN, dimensions: ["controlPlaneHours", "vCPUHours"] });
  const c = await sample<HcpCluster>("hcpcluster.yaml");
  c.metadata = {
    name,
    namespace: ns.name,
    finalizers: [HOLD],
    annotations: { [ARM_ANNOTATIONS.resourceId]: clusterArmId },
  };
  c.spec.dns.baseDomainPrefix = name;
  const cluster = await client.create(HcpClusterResource, c);
  const p = await sample<NodePool>("nodepool-fixed.yaml");
  p.metadata = {
    name: `${name}-workers`,
    namespace: ns.name,
    annotations: { [ARM_ANNOTATIONS.resourceId]: poolArmId },
  };
  p.spec.clusterRef.name = name;
  const pool = await client.create(NodePoolResource, p);
  const ref = { name, namespace: ns.name };
  await client.mergePatch(
    HcpClusterResource,
    ref,
    {
      status: {
        conditions: [
          {
            type: "Ready",
            status: "True",
            lastTransitionTime: new Date(readyAt).toISOString().slice(0, 19) + "Z",
            reason: "AsExpected",
            message: "The cluster is ready",
          },
        ],
      },
    },
    "status",
  );
  await client.mergePatch(
    NodePoolResource,
    { name: p.metadata.name ?? "", namespace: ns.name },
    { status: { replicas: 2, readyReplicas: 2 } },
    "status",
  );
  startRecorder(ledger);
  const clusterId = cluster.metadata.uid ?? "";
  await eventually("the recorder to open the control-plane and vCPU segments", async () => {
    const open = await ledger.openSegments();
    return open.filter((s) => s.clusterId === clusterId).length === 2;
  });
  const exporter = (): UsageExporter =>
    new UsageExporter({ ledger, client: meteringClient, planId: PLAN, settleMs: 0, now, registry });
  return { ledger, db, cluster, pool, clusterId, poolId: pool.metadata.uid ?? "", exporter };
}

function startRecorder(ledger: Ledger): void {
  const service: Cluster = new ClusterRegistry().add("service", {
    path: clusterInfo("service").kubeconfigPath,
  });
  const stop = new AbortController();
  const recorder = new UsageRecorder({ cluster: service, ledger, now, namespace: ns.name, registry });
  const running = recorder.start(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await running;
    service.stop();
  });
}

/** The cluster's rows by hour, then dimension (the ledger orders an hour's rows by resource uid). */
async function rowsOf(ledger: Ledger, clusterId: string): Promise<UsageHour[]> {
  const out: UsageHour[] = [];
  for await (const batch of ledger.usageRows(
    { clusterId, from: new Date(0), to: new Date(H + 48 * HOUR) },
    500,
  ))
    out.push(...batch);
  return out.sort(
    (a, b) => a.hourStart.getTime() - b.hourStart.getTime() || a.dimension.localeCompare(b.dimension),
  );
}

const key = (resourceId: string, dimension: string, hour: Date | string): string =>
  `${resourceId.toLowerCase()}|${dimension}|${new Date(hour).toISOString()}`;

/** The emulator's accepted events for these resources, by key; fails on any key accepted twice. */
function acceptedFor(...resourceIds: string[]): Map<string, AcceptedUsageEvent> {
  const wanted = new Set(resourceIds.map((r) => r.toLowerCase()));
  const byKey = new Map<string, AcceptedUsageEvent>();
  for (const e of market.accepted().filter((e) => wanted.has(e.resourceId.toLowerCase()))) {
    const k = key(e.resourceId, e.dimension, e.hour);
    expect(byKey.has(k), `${k} accepted twice`).toBe(false);
    byKey.set(k, e);
  }
  return byKey;
}

/** Every reported row is the emulator's accepted event of its key (same ID, same quantity), and nothing else was accepted. */
function expectLedgerEqualsEmulator(rows: UsageHour[], resourceIds: string[]): void {
  const accepted = acceptedFor(...resourceIds);
  const reported = rows.filter((r) => r.state === "reported");
  expect(reported.length).toBe(accepted.size);
  for (const r of reported) {
    const e = accepted.get(key(r.resourceId, r.dimension, r.hourStart));
    expect(e, `${r.dimension} ${r.hourStart.toISOString()}`).toBeDefined();
    expect(r.usageEventId).toBe(e?.usageEventId);
    expect(e?.quantity).toBe(Number(r.quantity));
  }
}

const armIds = (s: Scenario): string[] => [
  s.cluster.metadata.annotations?.[ARM_ANNOTATIONS.resourceId] ?? "",
  s.pool.metadata.annotations?.[ARM_ANNOTATIONS.resourceId] ?? "",
];

async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = registry.getSingleMetric(name);
  if (!m) return 0;
  const values = (await m.get()).values.filter((v) =>
    Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want),
  );
  return values.reduce((sum, v) => sum + v.value, 0);
}

describe("the usage controller", () => {
  it("records three Ready hours of a cluster and its two-node pool, exports each once, and stops counting at the deletion", async () => {
    const s = await readyCluster(H - 3 * HOUR);
    const record = await s.ledger.billingRecord(s.clusterId);
    expect(record?.firstSucceededAt?.getTime()).toBe(H - 3 * HOUR);
    expect(record?.resourceId).toBe(armIds(s)[0]);

    clock = new Date(H);
    const exportedBefore = await metric("hcp_usage_hours_exported_total");
    const pass = await s.exporter().runOnce();
    expect(pass).toMatchObject({ rolledUp: 6, reported: 6, duplicates: 0, rejected: 0, expired: 0 });
    expect(await metric("hcp_usage_hours_exported_total")).toBe(exportedBefore + 6);
    expect(await metric("hcp_usage_oldest_unreported_hour_age_seconds")).toBe(0);
    const rows = await rowsOf(s.ledger, s.clusterId);
    const summary = rows.map((r) => [r.dimension, r.hourStart.getTime() - H, r.quantity, r.state]);
    expect(summary).toEqual(
      [-3, -2, -1].flatMap((h) => [
        ["controlPlaneHours", h * HOUR, "1.000000", "reported"],
        ["vCPUHours", h * HOUR, "16.000000", "reported"],
      ]),
    );
    expectLedgerEqualsEmulator(rows, armIds(s));
    expect(await s.exporter().runOnce()).toMatchObject({ rolledUp: 0, reported: 0 });

    // A restart (a second recorder, empty memory) observes everything again and writes nothing.
    const observed = await metric("hcp_usage_observations_total");
    const reconciles = async (): Promise<number> =>
      ((await metricsRegistry.getSingleMetric("controller_runtime_reconcile_total")?.get())?.values ?? [])
        .filter((v) => v.labels["controller"] === "usage-recorder")
        .reduce((sum, v) => sum + v.value, 0);
    const before = await reconciles();
    startRecorder(s.ledger);
    await eventually(
      "the restarted recorder to reconcile the cluster",
      async () => (await reconciles()) > before,
    );
    expect(await metric("hcp_usage_observations_total")).toBe(observed);
    expect((await s.ledger.openSegments()).length).toBe(2);

    // Deleted (held by a finalizer, as the cluster controller's would): counting ends at its deletionTimestamp.
    await client.delete(HcpClusterResource, { name: s.cluster.metadata.name ?? "", namespace: ns.name });
    const deleting = await client.get<HcpCluster>(HcpClusterResource, s.cluster.metadata.name ?? "", ns.name);
    const deletedAt = Date.parse(deleting.metadata.deletionTimestamp ?? "");
    await eventually("the deletion recorded", async () => {
      return (await s.ledger.billingRecord(s.clusterId))?.deletedAt?.getTime() === deletedAt;
    });
    expect(await s.ledger.openSegments()).toEqual([]);
    await client.mergePatch(
      HcpClusterResource,
      { name: s.cluster.metadata.name ?? "", namespace: ns.name },
      {
        metadata: { finalizers: null },
      },
    );
    clock = new Date(hourOf(deletedAt) + 3 * HOUR);
    const after = await s.exporter().runOnce();
    const all = await rowsOf(s.ledger, s.clusterId);
    const later = all.filter((r) => r.hourStart.getTime() >= H);
    const expected = [];
    for (let h = H; h <= hourOf(deletedAt); h += HOUR) {
      const seconds = (Math.min(deletedAt, h + HOUR) - h) / 1000;
      if (seconds === 0) continue;
      expected.push(["controlPlaneHours", h - H, (seconds / 3600).toFixed(6), "reported"]);
      expected.push(["vCPUHours", h - H, ((16 * seconds) / 3600).toFixed(6), "reported"]);
    }
    expect(later.map((r) => [r.dimension, r.hourStart.getTime() - H, r.quantity, r.state])).toEqual(expected);
    expect(after).toMatchObject({ rolledUp: expected.length, reported: expected.length });
    expectLedgerEqualsEmulator(all, armIds(s));
  });

  it("reports an hour accepted before its answer was lost, or before the exporter was stopped, once: the re-send is Duplicate", async () => {
    const s = await readyCluster(H - 3 * HOUR);
    clock = new Date(H);
    market.faults.add({ times: 1, fault: { kind: "drop-after" } });
    const dropped = await s.exporter().runOnce();
    expect(dropped.reported).toBe(0);
    expect(dropped.failure?.failure).toBe("connection");
    expect(acceptedFor(...armIds(s)).size).toBe(6);
    expect((await rowsOf(s.ledger, s.clusterId)).every((r) => r.state === "unreported")).toBe(true);
    expect(await s.exporter().runOnce()).toMatchObject({ reported: 6, duplicates: 6 });
    expectLedgerEqualsEmulator(await rowsOf(s.ledger, s.clusterId), armIds(s));

    // The exporter stopped (the operators killed) after the API accepted, before the marks.
    const t = await readyCluster(H - 2 * HOUR);
    clock = new Date(H);
    market.faults.add({ times: 1, fault: { kind: "slow", ms: 60_000 } });
    const stop = new AbortController();
    const killed = t.exporter().runOnce(stop.signal);
    await eventually("the API to accept the events", () => acceptedFor(...armIds(t)).size === 4);
    stop.abort();
    await expect(killed).rejects.toThrow();
    expect((await rowsOf(t.ledger, t.clusterId)).every((r) => r.state === "unreported")).toBe(true);
    const restarted = await Ledger.open(t.db.url);
    try {
      const again = new UsageExporter({
        ledger: restarted,
        client: meteringClient,
        planId: PLAN,
        settleMs: 0,
        now,
        registry,
      });
      expect(await again.runOnce()).toMatchObject({ reported: 4, duplicates: 4 });
    } finally {
      await restarted.close();
    }
    expectLedgerEqualsEmulator(await rowsOf(t.ledger, t.clusterId), armIds(t));
  });

  it("retries after 503 and 429 (not before Retry-After), batches by 25, and expires hours older than the API takes without a call", async () => {
    const s = await readyCluster(H - 26 * HOUR);
    clock = new Date(H);
    const requestsBefore = market.requests().length;
    market.faults.add({ times: 1, fault: { kind: "status", status: 503 } });
    const failed = await s.exporter().runOnce();
    // The two hours older than 24 h are expired first, without a call; the first batch meets the 503.
    expect(failed).toMatchObject({ rolledUp: 52, reported: 0, expired: 4 });
    expect(failed.failure?.failure).toBe("server");
    expect(failed.nextPassMs).toBe(60_000);
    expect(await metric("hcp_usage_oldest_unreported_hour_age_seconds")).toBe(24 * 3600);
    expect(await metric("hcp_usage_export_failures_total", { failure: "server" })).toBeGreaterThanOrEqual(1);

    market.faults.add({ times: 1, fault: { kind: "throttle", retryAfterSeconds: 120 } });
    const throttled = await s.exporter().runOnce();
    expect(throttled).toMatchObject({ reported: 0, nextPassMs: 120_000 });
    expect(throttled.failure?.failure).toBe("throttled");

    expect(await s.exporter().runOnce()).toMatchObject({ reported: 48, duplicates: 0 });
    const rows = await rowsOf(s.ledger, s.clusterId);
    expect(
      rows
        .filter((r) => r.state === "expired")
        .map((r) => [r.hourStart.getTime() - H, r.reason?.split(":")[0]]),
    ).toEqual([
      [-26 * HOUR, "lateness"],
      [-26 * HOUR, "lateness"],
      [-25 * HOUR, "lateness"],
      [-25 * HOUR, "lateness"],
    ]);
    expectLedgerEqualsEmulator(rows, armIds(s));
    const calls = market.requests().slice(requestsBefore);
    // The refused calls' events are not counted by the emulator (it never read them).
    expect(calls.map((r) => [r.status, r.events])).toEqual([
      [503, 0],
      [429, 0],
      [200, 25],
      [200, 23],
    ]);
    expect(await metric("hcp_usage_oldest_unreported_hour_age_seconds")).toBe(0);
  });

  it("sends the rows of one ARM resource ID, dimension and hour (a cluster created again under its name) as one event of their sum, even across a batch's end", async () => {
    const db = await testDatabase("usage");
    const ledger = await Ledger.open(db.url);
    cleanups.push(async () => {
      await ledger.close();
      await db.drop();
    });
    const hour = H - 2 * HOUR;
    const sub = randomUUID();
    const armId = (name: string): string =>
      `/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;
    const meter = async (clusterId: string, resourceId: string, from: number, to: number): Promise<void> => {
      await ledger.recordCluster({
        clusterId,
        resourceId,
        subscriptionId: sub,
        location: "westeurope",
        createdAt: new Date(from),
      });
      const o = { clusterId, resourceUid: clusterId, resourceId, dimension: "controlPlaneHours" as const };
      await ledger.observe({ ...o, rate: 1, at: new Date(from) });
      await ledger.recordDeleted(clusterId, new Date(to));
    };
    // 24 clusters sort before "zz" in the hour: the read of 26 rows ends inside zz's two rows.
    const others = Array.from({ length: 24 }, (_, i) => armId(`a${String(i).padStart(2, "0")}`));
    for (const id of others) await meter(randomUUID(), id, hour, hour + HOUR);
    const reborn = armId("zz");
    await meter(randomUUID(), reborn, hour, hour + 20 * 60_000);
    await meter(randomUUID(), reborn.toUpperCase(), hour + 30 * 60_000, hour + 45 * 60_000);
    for (const resourceId of [...others, reborn])
      market.register({ resourceId, planId: PLAN, dimensions: ["controlPlaneHours"] });

    clock = new Date(H);
    const requestsBefore = market.requests().length;
    const pass = await new UsageExporter({
      ledger,
      client: meteringClient,
      planId: PLAN,
      settleMs: 0,
      now,
      registry,
    }).runOnce();
    expect(pass).toMatchObject({ rolledUp: 26, reported: 26, duplicates: 0, rejected: 0 });
    expect(
      market
        .requests()
        .slice(requestsBefore)
        .map((r) => [r.status, r.events]),
    ).toEqual([
      [200, 24],
      [200, 1],
    ]);
    const [event, ...more] = market
      .accepted()
      .filter((e) => e.resourceId.toLowerCase() === reborn.toLowerCase());
    expect(more).toEqual([]);
    expect(event?.quantity).toBe(Number((20 / 60).toFixed(6)) + Number((15 / 60).toFixed(6)));
    const rows: UsageHour[] = [];
    for await (const batch of ledger.usageRows(
      { subscriptionId: sub, from: new Date(hour), to: new Date(H) },
      100,
    ))
      rows.push(...batch);
    const zz = rows.filter((r) => r.resourceId.toLowerCase() === reborn.toLowerCase());
    expect(zz.map((r) => [r.state, r.usageEventId])).toEqual([
      ["reported", event?.usageEventId],
      ["reported", event?.usageEventId],
    ]);
  });

  it("counts a cluster undeleted under its ID again from its new creation, and nothing of the deleted time", async () => {
    const s = await readyCluster(H - 2 * HOUR);
    const name = s.cluster.metadata.name ?? "";
    await client.delete(HcpClusterResource, { name, namespace: ns.name });
    await eventually(
      "the deletion recorded",
      async () => !!(await s.ledger.billingRecord(s.clusterId))?.deletedAt,
    );
    await client.mergePatch(
      HcpClusterResource,
      { name, namespace: ns.name },
      { metadata: { finalizers: null } },
    );
    await eventually("the cluster gone", async () => {
      const left = await client.list<HcpCluster>(HcpClusterResource, { namespace: ns.name });
      return !left.items.some((c) => c.metadata.name === name);
    });
    const deletedAt = (await s.ledger.billingRecord(s.clusterId))?.deletedAt;

    // hcpctl cluster undelete makes it again under its cluster ID (the original-uid annotation).
    const again = await client.create<HcpCluster>(HcpClusterResource, {
      ...s.cluster,
      metadata: {
        name,
        namespace: ns.name,
        finalizers: [HOLD],
        annotations: { ...s.cluster.metadata.annotations, [ORIGINAL_UID_ANNOTATION]: s.clusterId },
      },
    });
    const undeletedAt = new Date(again.metadata.creationTimestamp ?? "");
    clock = new Date(undeletedAt.getTime() + 1000);
    await eventually("the undelete recorded and the control plane counted again", async () => {
      const open = await s.ledger.openSegments();
      return open.some((o) => o.clusterId === s.clusterId && o.dimension === "controlPlaneHours");
    });
    const record = await s.ledger.billingRecord(s.clusterId);
    expect([record?.deletedAt, record?.undeletedAt]).toEqual([undefined, undeletedAt]);
    expect(deletedAt && deletedAt <= undeletedAt).toBe(true);
    const db = new pg.Client({ connectionString: s.db.url });
    await db.connect();
    try {
      const segments = await db.query<{ dimension: string; started_at: Date; ended_at: Date | null }>(
        "SELECT dimension, started_at, ended_at FROM usage_segments WHERE cluster_id = $1 ORDER BY started_at, dimension",
        [s.clusterId],
      );
      // Before: both ended at the deletion. After: the control plane from the undelete, the pool from when it was seen again.
      expect(segments.rows.map((r) => [r.dimension, r.started_at, r.ended_at])).toEqual([
        ["controlPlaneHours", new Date(H - 2 * HOUR), deletedAt],
        ["vCPUHours", new Date(H - 2 * HOUR), deletedAt],
        ["controlPlaneHours", undeletedAt, null],
        ["vCPUHours", clock, null],
      ]);
    } finally {
      await db.end();
    }
  });

  it("loses no hour and reports none twice when PostgreSQL crashes after the API accepted a batch and before the marks", async () => {
    const server = await privatePostgres();
    cleanups.push(() => server.stop());
    const ledger = await Ledger.open(server.url);
    cleanups.push(() => ledger.close());
    const sub = randomUUID();
    const hour = H - 3 * HOUR;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const clusterId = randomUUID();
      const resourceId = `/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c${i}`;
      ids.push(resourceId);
      market.register({ resourceId, planId: PLAN, dimensions: ["controlPlaneHours"] });
      await ledger.recordCluster({
        clusterId,
        resourceId,
        subscriptionId: sub,
        location: "westeurope",
        createdAt: new Date(hour),
      });
      await ledger.observe({
        clusterId,
        resourceUid: clusterId,
        resourceId,
        dimension: "controlPlaneHours",
        rate: 1,
        at: new Date(hour),
      });
      await ledger.recordDeleted(clusterId, new Date(hour + 2 * HOUR));
    }
    clock = new Date(H);
    const exporter = (): UsageExporter =>
      new UsageExporter({ ledger, client: meteringClient, planId: PLAN, settleMs: 0, now, registry });
    // The API accepts the first batch and answers late; PostgreSQL dies meanwhile, so the marks fail.
    market.faults.add({ times: 1, fault: { kind: "slow", ms: 3_000 } });
    const crashed = exporter().runOnce();
    await eventually("the API to accept the first batch", () => acceptedFor(...ids).size === 25);
    await server.restart({ kill: true, whileDown: () => expect(crashed).rejects.toThrow() });
    const rows = async (): Promise<UsageHour[]> => {
      const out: UsageHour[] = [];
      for await (const b of ledger.usageRows(
        { subscriptionId: sub, from: new Date(hour), to: new Date(H) },
        100,
      ))
        out.push(...b);
      return out;
    };
    expect((await rows()).every((r) => r.state === "unreported")).toBe(true);
    // The next pass (PostgreSQL back): the accepted batch is answered Duplicate, the rest accepted.
    expect(await exporter().runOnce()).toMatchObject({ rolledUp: 0, reported: 60, duplicates: 25 });
    expectLedgerEqualsEmulator(await rows(), ids);
    expect((await rows()).every((r) => r.state === "reported")).toBe(true);
  });
});
