/**
 * The usage ledger against a real PostgreSQL (issue 35): each test takes a fresh database on the
 * run's server, migrated by node-pg-migrate, and drives the ledger as the recorder and the
 * exporter will, with simulated times. The restart test runs a server of its own.
 */
import pg from "pg";
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  Ledger,
  LedgerConflictError,
  queueCursor,
  type Dimension,
  type UsageHour,
} from "../../operators/metering/ledger.ts";
import { nodePoolRate } from "../../operators/metering/vm-sizes.ts";
import { privatePostgres, testDatabase, type TestDatabase } from "../support/postgres.ts";

const T0 = new Date("2026-03-02T10:00:00Z");
const at = (minutes: number): Date => new Date(T0.getTime() + minutes * 60_000);
const SUBSCRIPTION = "1d3f0c5e-8d4a-4b59-9b1f-2f2d6c1a7e10";

const opened: Array<{ ledger: Ledger; db?: TestDatabase }> = [];
afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.ledger.close();
    await o.db?.drop();
  }
});

async function freshLedger(): Promise<{ ledger: Ledger; url: string }> {
  const db = await testDatabase("ledger");
  const ledger = await Ledger.open(db.url);
  opened.push({ ledger, db });
  return { ledger, url: db.url };
}

interface TestCluster {
  clusterId: string;
  resourceId: string;
  poolUid: string;
  poolId: string;
}

async function createCluster(ledger: Ledger, createdMinutes = -20): Promise<TestCluster> {
  const clusterId = randomUUID();
  const name = `c-${clusterId.slice(0, 8)}`;
  const resourceId = `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;
  await ledger.recordCluster({
    clusterId,
    resourceId,
    subscriptionId: SUBSCRIPTION,
    location: "westeurope",
    createdAt: at(createdMinutes),
  });
  return { clusterId, resourceId, poolUid: randomUUID(), poolId: `${resourceId}/nodePools/workers` };
}

function controlPlane(c: TestCluster, rate: number, minutes: number) {
  return {
    clusterId: c.clusterId,
    resourceUid: c.clusterId,
    resourceId: c.resourceId,
    dimension: "controlPlaneHours" as const,
    rate,
    at: at(minutes),
  };
}

function pool(c: TestCluster, vmSize: string, nodes: number, minutes: number) {
  return {
    clusterId: c.clusterId,
    resourceUid: c.poolUid,
    resourceId: c.poolId,
    dimension: "vCPUHours" as const,
    rate: nodePoolRate(vmSize, nodes),
    at: at(minutes),
  };
}

async function allRows(ledger: Ledger, filter: { clusterId?: string } = {}): Promise<UsageHour[]> {
  const rows: UsageHour[] = [];
  for await (const batch of ledger.usageRows({ ...filter, from: at(-24 * 60), to: at(48 * 60) }, 100))
    rows.push(...batch);
  return rows;
}

/** [hour offset, quantity] per row of one dimension, in hour order. */
function hours(rows: UsageHour[], dimension: Dimension): Array<[number, string]> {
  return rows
    .filter((r) => r.dimension === dimension)
    .map((r): [number, string] => [(r.hourStart.getTime() - T0.getTime()) / 3_600_000, r.quantity]);
}

describe("the usage ledger", () => {
  it("counts a cluster Ready for exactly three hours with a pool of two nodes as 3 control-plane hours and 3 vCPU-hours rows", async () => {
    const { ledger } = await freshLedger();
    const c = await createCluster(ledger);
    expect(await ledger.recordFirstSucceeded(c.clusterId, at(0))).toBe("recorded");
    expect(await ledger.observe(controlPlane(c, 1, 0))).toEqual({ change: "opened", late: false });
    expect(await ledger.observe(pool(c, "Standard_D8s_v3", 2, 0))).toEqual({ change: "opened", late: false });
    // Observed again every resync: nothing changes.
    for (const minutes of [17, 60, 121])
      expect((await ledger.observe(controlPlane(c, 1, minutes))).change).toBe("unchanged");
    expect(await ledger.recordDeleted(c.clusterId, at(180))).toBe("recorded");

    const run = await ledger.rollUp({ now: at(300) });
    expect(run).toEqual({ from: at(0), to: at(300), written: 6 });
    const rows = await allRows(ledger, { clusterId: c.clusterId });
    expect(hours(rows, "controlPlaneHours")).toEqual([
      [0, "1.000000"],
      [1, "1.000000"],
      [2, "1.000000"],
    ]);
    expect(hours(rows, "vCPUHours")).toEqual([
      [0, "16.000000"],
      [1, "16.000000"],
      [2, "16.000000"],
    ]);
    expect(rows.every((r) => r.state === "unreported" && r.subscriptionId === SUBSCRIPTION)).toBe(true);
    expect(
      await ledger.usageTotals({ subscriptionId: SUBSCRIPTION.toUpperCase(), from: at(0), to: at(600) }),
    ).toEqual([
      {
        subscriptionId: SUBSCRIPTION,
        clusterId: c.clusterId,
        dimension: "controlPlaneHours",
        quantity: "3.000000",
        hours: 3,
        reportedHours: 0,
      },
      {
        subscriptionId: SUBSCRIPTION,
        clusterId: c.clusterId,
        dimension: "vCPUHours",
        quantity: "48.000000",
        hours: 3,
        reportedHours: 0,
      },
    ]);
  });

  it("counts partial hours and a pool's scaling by the minute", async () => {
    const { ledger } = await freshLedger();
    const c = await createCluster(ledger);
    await ledger.observe(controlPlane(c, 1, 15));
    await ledger.observe(pool(c, "Standard_D4s_v3", 2, 15));
    expect((await ledger.observe(pool(c, "Standard_D4s_v3", 3, 90))).change).toBe("changed");
    await ledger.recordDeleted(c.clusterId, at(160));
    await ledger.rollUp({ now: at(240) });
    const rows = await allRows(ledger, { clusterId: c.clusterId });
    expect(hours(rows, "controlPlaneHours")).toEqual([
      [0, "0.750000"],
      [1, "1.000000"],
      [2, "0.666667"],
    ]);
    // 8 vCPUs for 45 min; 8 for 30 min and 12 for 30; 12 for 40 min.
    expect(hours(rows, "vCPUHours")).toEqual([
      [0, "6.000000"],
      [1, "10.000000"],
      [2, "8.000000"],
    ]);
  });

  it("rolls up complete hours only, and stops counting within the hour a cluster is deleted", async () => {
    const { ledger } = await freshLedger();
    const c = await createCluster(ledger);
    await ledger.observe(controlPlane(c, 1, 0));
    expect(await ledger.rollUp({ now: at(119) })).toMatchObject({ to: at(60), written: 1 });
    await ledger.recordDeleted(c.clusterId, at(80));
    await expect(ledger.observe(controlPlane(c, 1, 90))).rejects.toThrow(
      `cluster ${c.clusterId} was deleted at ${at(80).toISOString()}`,
    );
    await ledger.rollUp({ now: at(600) });
    expect(hours(await allRows(ledger), "controlPlaneHours")).toEqual([
      [0, "1.000000"],
      [1, "0.333333"],
    ]);
  });

  it("writes nothing for the same state again or for an observation older than the latest, and refuses what it cannot meter", async () => {
    const { ledger } = await freshLedger();
    const c = await createCluster(ledger);
    expect((await ledger.observe(pool(c, "Standard_E16ds_v5", 1, 30))).change).toBe("opened");
    expect((await ledger.observe(pool(c, "standard_e16ds_v5", 1, 40))).change).toBe("unchanged");
    expect((await ledger.observe(pool(c, "Standard_E16ds_v5", 2, 20))).change).toBe("stale");
    expect((await ledger.observe(pool(c, "Standard_E16ds_v5", 0, 50))).change).toBe("closed");
    expect((await ledger.observe(pool(c, "Standard_E16ds_v5", 0, 55))).change).toBe("unchanged");
    expect(() => pool(c, "Standard_X999_v9", 2, 60)).toThrow(
      'VM size "Standard_X999_v9" has no known vCPU count',
    );
    await expect(ledger.observe({ ...controlPlane(c, 1, 60), clusterId: "no-such-cluster" })).rejects.toThrow(
      "cluster no-such-cluster has no billing record",
    );
    await ledger.rollUp({ now: at(120) });
    expect(hours(await allRows(ledger), "vCPUHours")).toEqual([[0, "5.333333"]]);
  });

  it("writes each hour once when roll-ups run twice and concurrently (two leaders, a retried crash)", async () => {
    const { ledger, url } = await freshLedger();
    const second = await Ledger.open(url);
    opened.push({ ledger: second });
    const clusters = await Promise.all(Array.from({ length: 20 }, () => createCluster(ledger)));
    for (const c of clusters) {
      await ledger.observe(controlPlane(c, 1, 0));
      await ledger.observe(pool(c, "Standard_D8s_v3", 2, 30));
    }
    const runs = await Promise.all([
      ledger.rollUp({ now: at(240) }),
      second.rollUp({ now: at(240) }),
      ledger.rollUp({ now: at(241) }),
    ]);
    // Four hours of control plane and four of vCPUs (from 10:30) per cluster.
    expect(runs.reduce((sum, r) => sum + r.written, 0)).toBe(20 * 8);
    expect((await second.rollUp({ now: at(250) })).written).toBe(0);
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const counts = await check.query<{ rows: string; keys: string }>(
      "SELECT count(*) AS rows, count(DISTINCT (resource_uid, dimension, hour_start)) AS keys FROM usage_hours",
    );
    await check.end();
    expect(counts.rows[0]).toEqual({ rows: "160", keys: "160" });
  });

  it("opens one segment when two leaders observe the same state at once", async () => {
    const { ledger, url } = await freshLedger();
    const second = await Ledger.open(url);
    opened.push({ ledger: second });
    const c = await createCluster(ledger);
    const facts = {
      clusterId: c.clusterId,
      resourceId: c.resourceId,
      subscriptionId: SUBSCRIPTION,
      location: "westeurope",
      createdAt: at(-20),
    };
    expect(await Promise.all([ledger.recordCluster(facts), second.recordCluster(facts)])).toEqual([
      "unchanged",
      "unchanged",
    ]);
    const changes = await Promise.all(
      [ledger, second, ledger, second].map((l) =>
        l.observe(pool(c, "Standard_D8s_v3", 2, 0)).then((r) => r.change),
      ),
    );
    expect(changes.sort()).toEqual(["opened", "unchanged", "unchanged", "unchanged"]);
    await ledger.rollUp({ now: at(60) });
    expect(hours(await allRows(second), "vCPUHours")).toEqual([[0, "16.000000"]]);
  });

  it("marks a row reported once, from unreported only, and serves the exporter oldest first in batches", async () => {
    const { ledger } = await freshLedger();
    const c = await createCluster(ledger);
    await ledger.observe(controlPlane(c, 1, 0));
    await ledger.rollUp({ now: at(300) });
    expect(await ledger.oldestUnreportedHour()).toEqual(at(0));
    const batches: string[][] = [];
    for await (const batch of ledger.unreported(2)) batches.push(batch.map((r) => r.hourStart.toISOString()));
    expect(batches).toEqual([
      [at(0).toISOString(), at(60).toISOString()],
      [at(120).toISOString(), at(180).toISOString()],
      [at(240).toISOString()],
    ]);
    const [first, second, third] = await ledger.unreportedBatch(3);
    if (!first || !second || !third) throw new Error("expected three unreported rows");
    const reported = [
      { id: first.id, usageEventId: "evt-1" },
      { id: second.id, usageEventId: "evt-2" },
    ];
    expect(await ledger.markReported(reported, at(301))).toEqual([first.id, second.id]);
    expect(await ledger.markReported(reported, at(302))).toEqual([]);
    expect(await ledger.markRejected([{ id: first.id, reason: "late" }])).toEqual([]);
    expect(
      await ledger.markExpired([{ id: third.id, reason: "older than the API's 24 h lateness" }]),
    ).toEqual([third.id]);
    expect(await ledger.markReported([{ id: third.id, usageEventId: "evt-3" }], at(303))).toEqual([]);
    expect(await ledger.oldestUnreportedHour()).toEqual(at(180));
    const rows = await allRows(ledger);
    expect(rows.map((r) => [r.state, r.usageEventId, r.reportedAt, r.reason])).toEqual([
      ["reported", "evt-1", at(301), undefined],
      ["reported", "evt-2", at(301), undefined],
      ["expired", undefined, undefined, "older than the API's 24 h lateness"],
      ["unreported", undefined, undefined, undefined],
      ["unreported", undefined, undefined, undefined],
    ]);
  });

  it("counts an undeleted cluster again from its undelete, never inside the deleted window, and takes the undelete once", async () => {
    const { ledger } = await freshLedger();
    const c = await createCluster(ledger);
    await ledger.observe(controlPlane(c, 1, 0));
    await ledger.recordDeleted(c.clusterId, at(90));
    await expect(ledger.observe(controlPlane(c, 1, 100))).rejects.toThrow(/was deleted at/);
    await expect(ledger.recordUndeleted(c.clusterId, at(80))).rejects.toThrow(/before its deletion/);
    expect(await ledger.recordUndeleted(c.clusterId, at(150))).toBe("recorded");
    expect(await ledger.recordUndeleted(c.clusterId, at(150))).toBe("unchanged");
    const record = await ledger.billingRecord(c.clusterId);
    expect([record?.deletedAt, record?.undeletedAt]).toEqual([undefined, at(150)]);
    // The first deletion told again (a replay) changes nothing; one inside the window is refused.
    expect(await ledger.recordDeleted(c.clusterId, at(90))).toBe("unchanged");
    await expect(ledger.recordDeleted(c.clusterId, at(120))).rejects.toThrow(/before its latest undelete/);
    await expect(ledger.observe(controlPlane(c, 1, 120))).rejects.toThrow(/undeleted at/);
    expect(await ledger.observe(controlPlane(c, 1, 150))).toEqual({ change: "opened", late: false });
    await ledger.recordDeleted(c.clusterId, at(210));
    await ledger.rollUp({ now: at(300) });
    expect(hours(await allRows(ledger), "controlPlaneHours")).toEqual([
      [0, "1.000000"],
      [1, "0.500000"],
      [2, "0.500000"],
      [3, "0.500000"],
    ]);
    await expect(ledger.recordUndeleted(randomUUID(), at(150))).rejects.toThrow(/none exists/);
    const alive = await createCluster(ledger);
    await expect(ledger.recordUndeleted(alive.clusterId, at(150))).rejects.toThrow(/not deleted/);
  });

  it("serves the exporter's queue with rows of one ARM resource ID, dimension and hour adjacent, and reads on from a cursor", async () => {
    const { ledger } = await freshLedger();
    const first = await createCluster(ledger);
    const other = await createCluster(ledger);
    // Deleted and created again under the same name within the hour (the ID's case differs, as ARM allows).
    const again = { ...(await createCluster(ledger)), resourceId: first.resourceId.toUpperCase() };
    await ledger.recordCluster({
      clusterId: again.clusterId + "-again",
      resourceId: again.resourceId,
      subscriptionId: SUBSCRIPTION,
      location: "westeurope",
      createdAt: at(-20),
    });
    const reborn = { ...again, clusterId: again.clusterId + "-again" };
    await ledger.observe(controlPlane(first, 1, 0));
    await ledger.observe(controlPlane(other, 1, 0));
    await ledger.recordDeleted(first.clusterId, at(20));
    await ledger.observe(controlPlane(reborn, 1, 30));
    await ledger.rollUp({ now: at(70) });
    const queue = await ledger.unreportedBatch(10);
    const key = (r: UsageHour): string => r.resourceId.toLowerCase();
    const firstKey = first.resourceId.toLowerCase();
    const positions = queue.flatMap((r, i) => (key(r) === firstKey ? [i] : []));
    expect(queue).toHaveLength(3);
    expect(positions).toHaveLength(2);
    expect(Math.abs((positions[0] ?? 0) - (positions[1] ?? 9))).toBe(1);
    const [head] = queue;
    if (!head) throw new Error("expected a row");
    const rest = await ledger.unreportedBatch(10, queueCursor(head));
    expect(rest.map((r) => r.id)).toEqual(queue.slice(1).map((r) => r.id));
  });

  it("writes the earlier hours of usage recorded late (an agent offline) at the next roll-up", async () => {
    const { ledger } = await freshLedger();
    const early = await createCluster(ledger);
    await ledger.observe(controlPlane(early, 1, 0));
    await ledger.rollUp({ now: at(180) });
    const late = await createCluster(ledger);
    expect(await ledger.observe(controlPlane(late, 1, 30))).toEqual({ change: "opened", late: true });
    await ledger.rollUp({ now: at(240) });
    expect(hours(await allRows(ledger, { clusterId: late.clusterId }), "controlPlaneHours")).toEqual([
      [0, "0.500000"],
      [1, "1.000000"],
      [2, "1.000000"],
      [3, "1.000000"],
    ]);
  });

  it("refuses a billing fact that conflicts with the recorded one, naming it, and accepts the same fact again", async () => {
    const { ledger } = await freshLedger();
    const c = await createCluster(ledger);
    const facts = {
      clusterId: c.clusterId,
      resourceId: c.resourceId,
      subscriptionId: SUBSCRIPTION,
      location: "westeurope",
      createdAt: at(-20),
    };
    expect(await ledger.recordCluster({ ...facts, resourceId: c.resourceId.toUpperCase() })).toBe(
      "unchanged",
    );
    expect(await ledger.recordCluster({ ...facts, tenantId: "tenant-a" })).toBe("recorded");
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: unknown) => err,
      );
    const moved = await refusal(ledger.recordCluster({ ...facts, location: "eastus" }));
    expect(moved).toBeInstanceOf(LedgerConflictError);
    expect(moved).toMatchObject({
      field: "location",
      message: expect.stringContaining(
        `cluster ${c.clusterId}: location is already recorded as "westeurope"; refusing "eastus"`,
      ),
    });
    await expect(ledger.recordCluster({ ...facts, tenantId: "tenant-b" })).rejects.toThrow(
      "tenantId is already recorded",
    );
    await expect(ledger.recordCluster({ ...facts, resourceId: `${c.resourceId}x` })).rejects.toThrow(
      "resourceId is already recorded",
    );
    expect(await ledger.recordFirstSucceeded(c.clusterId, at(5))).toBe("recorded");
    expect(await ledger.recordFirstSucceeded(c.clusterId, at(5))).toBe("unchanged");
    await expect(ledger.recordFirstSucceeded(c.clusterId, at(6))).rejects.toThrow(
      "firstSucceededAt is already recorded",
    );
    expect(await ledger.recordDeleted(c.clusterId, at(90))).toBe("recorded");
    expect(await ledger.recordDeleted(c.clusterId, at(90))).toBe("unchanged");
    await expect(ledger.recordDeleted(c.clusterId, at(91))).rejects.toThrow(
      `billing record of cluster ${c.clusterId}: deletedAt is already recorded`,
    );
    await expect(ledger.recordDeleted("nobody", at(1))).rejects.toThrow(
      "billing record of cluster nobody: none exists",
    );
    expect(await ledger.billingRecord(c.clusterId)).toEqual({
      ...facts,
      tenantId: "tenant-a",
      firstSucceededAt: at(5),
      deletedAt: at(90),
    });
  });
});

describe("the usage ledger across a PostgreSQL restart", () => {
  const servers: Array<{ stop(): Promise<void> }> = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it("loses nothing when PostgreSQL is killed and restarted between writes", async () => {
    const server = await privatePostgres();
    servers.push(server);
    const ledger = await Ledger.open(server.url);
    opened.push({ ledger });
    const c = await createCluster(ledger);
    await ledger.observe(controlPlane(c, 1, 0));
    await ledger.observe(pool(c, "Standard_D16s_v5", 2, 0));
    await ledger.rollUp({ now: at(60) });

    // A write while the server is down fails outright; the retry after it is back is the same write.
    const deletion = (): Promise<unknown> => ledger.recordDeleted(c.clusterId, at(150));
    await server.restart({ kill: true, whileDown: () => expect(deletion()).rejects.toThrow() });
    // The pool replaces the connections the crash ended; the same Ledger writes on.
    expect((await ledger.observe(pool(c, "Standard_D16s_v5", 2, 61))).change).toBe("unchanged");
    expect(await deletion()).toBe("recorded");
    await server.restart();
    expect(await ledger.rollUp({ now: at(600) })).toMatchObject({ from: at(60), written: 4 });
    const rows = await allRows(ledger);
    expect(hours(rows, "controlPlaneHours")).toEqual([
      [0, "1.000000"],
      [1, "1.000000"],
      [2, "0.500000"],
    ]);
    expect(hours(rows, "vCPUHours")).toEqual([
      [0, "32.000000"],
      [1, "32.000000"],
      [2, "16.000000"],
    ]);
  });
});
