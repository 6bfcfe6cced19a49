/**
 * `hcpctl usage` against a real PostgreSQL (issue 35): the ledger written through its API as the
 * recorder and the exporter write it (simulated hours in March 2026, one cluster in the current
 * month for the default period), then hcpctl run on it, in-process and as its own process.
 */
import pg from "pg";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ledger, type UsageHour } from "../../operators/metering/ledger.ts";
import { nodePoolRate } from "../../operators/metering/vm-sizes.ts";
import { toJson } from "../../operators/hcpctl/output.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { testDatabase, type TestDatabase } from "../support/postgres.ts";

const exec = promisify(execFile);
const hcpctlBin = fileURLToPath(new URL("../../operators/hcpctl/hcpctl.ts", import.meta.url));

const T0 = new Date("2026-03-02T10:00:00Z");
const at = (minutes: number, base = T0): Date => new Date(base.getTime() + minutes * 60_000);
const SUB_A = "1d3f0c5e-8d4a-4b59-9b1f-2f2d6c1a7e10";
const SUB_B = "7b2e9a44-0c61-4f3e-a8d5-5e9c3b1f2a60";
const SUB_C = "c0ffee00-1111-4222-8333-444455556666";
const DEMO = "11111111-1111-4111-8111-111111111111";
const DEMO_POOL = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa";
const SHOP = "22222222-2222-4222-8222-222222222222";
const SHOP_AGAIN = "55555555-5555-4555-8555-555555555555";
const DEMO_B = "33333333-3333-4333-8333-333333333333";
const NOW_CLUSTER = "44444444-4444-4444-8444-444444444444";
const armId = (sub: string, rg: string, name: string): string =>
  `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;
const DEMO_ID = armId(SUB_A, "rg1", "demo");
const SHOP_ID = armId(SUB_A, "rg2", "shop");
const MARCH = ["--from", "2026-03", "--to", "2026-04"];
const REJECTED = 'quota, "exceeded"';

let db: TestDatabase;
let empty: TestDatabase;
let ledger: Ledger;
let url: string;

/** A cluster's control plane metered from `start` until its deletion at `end` (minutes from `base`). */
async function cluster(
  c: { id: string; resourceId: string; sub: string },
  start: number,
  end: number,
  base = T0,
): Promise<void> {
  await ledger.recordCluster({
    clusterId: c.id,
    resourceId: c.resourceId,
    subscriptionId: c.sub,
    location: "westeurope",
    createdAt: at(start - 10, base),
  });
  await ledger.observe({
    clusterId: c.id,
    resourceUid: c.id,
    resourceId: c.resourceId,
    dimension: "controlPlaneHours",
    rate: 1,
    at: at(start, base),
  });
  if (c.id === DEMO)
    await ledger.observe({
      clusterId: DEMO,
      resourceUid: DEMO_POOL,
      resourceId: `${DEMO_ID}/nodePools/workers`,
      dimension: "vCPUHours",
      rate: nodePoolRate("Standard_D8s_v3", 2),
      at: at(start, base),
    });
  await ledger.recordDeleted(c.id, at(end, base));
}

async function rows(clusterId: string): Promise<UsageHour[]> {
  const all: UsageHour[] = [];
  for await (const b of ledger.usageRows({ clusterId, from: at(-24 * 60), to: at(24 * 60) }, 100))
    all.push(...b);
  return all;
}

beforeAll(async () => {
  db = await testDatabase("hcpctl_usage");
  empty = await testDatabase("hcpctl_usage_empty");
  url = db.url;
  ledger = await Ledger.open(url);
  await cluster({ id: DEMO, resourceId: DEMO_ID, sub: SUB_A }, 0, 180);
  await cluster({ id: SHOP, resourceId: SHOP_ID, sub: SUB_A }, 0, 120);
  // Deleted and created again under the same name: another cluster, with an ID of its own.
  await cluster({ id: SHOP_AGAIN, resourceId: SHOP_ID, sub: SUB_A }, 180, 240);
  await cluster({ id: DEMO_B, resourceId: armId(SUB_B, "rg1", "demo"), sub: SUB_B }, 60, 120);
  expect((await ledger.rollUp({ now: at(300) })).written).toBe(10);
  const [cp10, vcpu10, cp11, , cp12] = await rows(DEMO);
  if (!cp10 || !vcpu10 || !cp11 || !cp12) throw new Error("demo's hours were not rolled up");
  await ledger.markReported(
    [
      { id: cp10.id, usageEventId: "evt-1" },
      { id: vcpu10.id, usageEventId: "evt-2" },
    ],
    at(310),
  );
  await ledger.markRejected([{ id: cp11.id, reason: REJECTED }]);
  await ledger.markExpired([{ id: cp12.id, reason: "older than 24 hours" }]);
  // The default period is this month: one hour of a cluster at its start.
  const month = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1));
  await cluster({ id: NOW_CLUSTER, resourceId: armId(SUB_C, "rg3", "now1"), sub: SUB_C }, 0, 60, month);
  await ledger.rollUp({ now: at(120, month) });
});

afterAll(async () => {
  await ledger?.close();
  await db?.drop();
  await empty?.drop();
});

const usage = (...args: string[]) => runHcpctl("usage", "--database-url", url, ...args);

describe("hcpctl usage", () => {
  it("prints a subscription's totals per cluster and dimension with the hours in each export state", async () => {
    const out = await usage("--subscription", SUB_A.toUpperCase(), ...MARCH);
    expect(out).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `CLUSTER   CLUSTER ID                             DIMENSION           QUANTITY   HOURS   REPORTED   UNREPORTED   REJECTED   EXPIRED`,
        `demo      ${DEMO}   controlPlaneHours   3          3       1          0            1          1`,
        `demo      ${DEMO}   vCPUHours           48         3       1          2            0          0`,
        `shop      ${SHOP}   controlPlaneHours   2          2       0          2            0          0`,
        `shop      ${SHOP_AGAIN}   controlPlaneHours   1          1       0          1            0          0`,
        "",
      ].join("\n"),
    });
  });

  it("prints the totals as JSON and as CSV with a header", async () => {
    const total = (
      [clusterId, resourceId]: [string, string],
      dimension: string,
      quantity: string,
      n: number[],
    ) => ({
      subscriptionId: SUB_A,
      clusterId,
      resourceId,
      dimension,
      quantity,
      hours: n[0],
      reportedHours: n[1],
      unreportedHours: n[2],
      rejectedHours: n[3],
      expiredHours: n[4],
    });
    const items = [
      total([DEMO, DEMO_ID], "controlPlaneHours", "3.000000", [3, 1, 0, 1, 1]),
      total([DEMO, DEMO_ID], "vCPUHours", "48.000000", [3, 1, 2, 0, 0]),
      total([SHOP, SHOP_ID], "controlPlaneHours", "2.000000", [2, 0, 2, 0, 0]),
      total([SHOP_AGAIN, SHOP_ID], "controlPlaneHours", "1.000000", [1, 0, 1, 0, 0]),
    ];
    const json = await usage("--subscription", SUB_A, ...MARCH, "-o", "json");
    expect(json).toEqual({
      code: 0,
      stderr: "",
      stdout: toJson({ from: "2026-03-01T00:00:00.000Z", to: "2026-04-01T00:00:00.000Z", items }),
    });
    const csv = await usage("--subscription", SUB_A, ...MARCH, "-o", "csv");
    expect(csv).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "subscriptionId,clusterId,resourceId,dimension,quantity,hours,reportedHours,unreportedHours,rejectedHours,expiredHours",
        `${SUB_A},${DEMO},${DEMO_ID},controlPlaneHours,3.000000,3,1,0,1,1`,
        `${SUB_A},${DEMO},${DEMO_ID},vCPUHours,48.000000,3,1,2,0,0`,
        `${SUB_A},${SHOP},${SHOP_ID},controlPlaneHours,2.000000,2,0,2,0,0`,
        `${SUB_A},${SHOP_AGAIN},${SHOP_ID},controlPlaneHours,1.000000,1,0,1,0,0`,
        "",
      ].join("\r\n"),
    });
  });

  it("streams one cluster's hourly rows as a table, CSV (RFC 4180 quoting) and JSON", async () => {
    const demo = await rows(DEMO);
    const table = await usage("--cluster", "demo", "--subscription", SUB_A, ...MARCH, "--hours");
    expect(table).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "HOUR                CLUSTER   POOL      DIMENSION           QUANTITY   STATE        REASON",
        "2026-03-02T10:00Z   demo      -         controlPlaneHours   1          reported",
        "2026-03-02T10:00Z   demo      workers   vCPUHours           16         reported",
        `2026-03-02T11:00Z   demo      -         controlPlaneHours   1          rejected     ${REJECTED}`,
        "2026-03-02T11:00Z   demo      workers   vCPUHours           16         unreported",
        "2026-03-02T12:00Z   demo      -         controlPlaneHours   1          expired      older than 24 hours",
        "2026-03-02T12:00Z   demo      workers   vCPUHours           16         unreported",
        "",
      ].join("\n"),
    });

    const csv = await usage("--cluster", DEMO, ...MARCH, "--hours", "-o", "csv");
    const recorded = (i: number): string => demo[i]?.recordedAt.toISOString() ?? "";
    const pool = `${DEMO_ID}/nodePools/workers`;
    expect(csv.stderr).toBe("");
    expect(csv.stdout).toBe(
      [
        "hourStart,subscriptionId,clusterId,resourceId,resourceUid,dimension,quantity,state,recordedAt,reportedAt,usageEventId,reason",
        `2026-03-02T10:00:00.000Z,${SUB_A},${DEMO},${DEMO_ID},${DEMO},controlPlaneHours,1.000000,reported,${recorded(0)},2026-03-02T15:10:00.000Z,evt-1,`,
        `2026-03-02T10:00:00.000Z,${SUB_A},${DEMO},${pool},${DEMO_POOL},vCPUHours,16.000000,reported,${recorded(1)},2026-03-02T15:10:00.000Z,evt-2,`,
        `2026-03-02T11:00:00.000Z,${SUB_A},${DEMO},${DEMO_ID},${DEMO},controlPlaneHours,1.000000,rejected,${recorded(2)},,,"quota, ""exceeded"""`,
        `2026-03-02T11:00:00.000Z,${SUB_A},${DEMO},${pool},${DEMO_POOL},vCPUHours,16.000000,unreported,${recorded(3)},,,`,
        `2026-03-02T12:00:00.000Z,${SUB_A},${DEMO},${DEMO_ID},${DEMO},controlPlaneHours,1.000000,expired,${recorded(4)},,,older than 24 hours`,
        `2026-03-02T12:00:00.000Z,${SUB_A},${DEMO},${pool},${DEMO_POOL},vCPUHours,16.000000,unreported,${recorded(5)},,,`,
        "",
      ].join("\r\n"),
    );

    // By resourceGroup/name: both clusters that carried the name, oldest first.
    const shop = [...(await rows(SHOP)), ...(await rows(SHOP_AGAIN))];
    const json = await usage("--cluster", "RG2/Shop", ...MARCH, "--hours", "-o", "json");
    expect(json.stderr).toBe("");
    expect(json.stdout).toBe(
      toJson({
        from: "2026-03-01T00:00:00.000Z",
        to: "2026-04-01T00:00:00.000Z",
        items: shop.map((h) => ({
          hourStart: h.hourStart.toISOString(),
          subscriptionId: SUB_A,
          clusterId: h.clusterId,
          resourceId: SHOP_ID,
          resourceUid: h.clusterId,
          dimension: "controlPlaneHours",
          quantity: "1.000000",
          state: "unreported",
          recordedAt: h.recordedAt.toISOString(),
        })),
      }),
    );
    expect(shop.map((h) => [h.clusterId, h.hourStart.toISOString()])).toEqual([
      [SHOP, "2026-03-02T10:00:00.000Z"],
      [SHOP, "2026-03-02T11:00:00.000Z"],
      [SHOP_AGAIN, "2026-03-02T13:00:00.000Z"],
    ]);
  });

  it("filters by period, cluster ID and ARM ID, and refuses a name that stands for clusters in two subscriptions", async () => {
    const hour11 = await usage("--from", "2026-03-02T11:00Z", "--to", "2026-03-02T12", "-o", "csv");
    expect(hour11.stdout.split("\r\n").map((l) => l.split(",").slice(0, 5).join(","))).toEqual([
      "subscriptionId,clusterId,resourceId,dimension,quantity",
      `${SUB_A},${DEMO},${DEMO_ID},controlPlaneHours,1.000000`,
      `${SUB_A},${DEMO},${DEMO_ID},vCPUHours,16.000000`,
      `${SUB_A},${SHOP},${SHOP_ID},controlPlaneHours,1.000000`,
      `${SUB_B},${DEMO_B},${armId(SUB_B, "rg1", "demo")},controlPlaneHours,1.000000`,
      "",
    ]);
    const byId = await usage("--cluster", DEMO_B, ...MARCH);
    expect(byId.stdout).toBe(
      [
        "CLUSTER   CLUSTER ID                             DIMENSION           QUANTITY   HOURS   REPORTED   UNREPORTED   REJECTED   EXPIRED",
        `demo      ${DEMO_B}   controlPlaneHours   1          1       0          1            0          0`,
        "",
      ].join("\n"),
    );
    const byArmId = await usage("--cluster", SHOP_ID.toLowerCase(), ...MARCH, "-o", "csv");
    expect(byArmId.stdout.split("\r\n").map((l) => l.split(",")[1] ?? "")).toEqual([
      "clusterId",
      SHOP,
      SHOP_AGAIN,
      "",
    ]);

    const ambiguous = await usage("--cluster", "demo", ...MARCH);
    expect(ambiguous).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: --cluster "demo" names 2 clusters: ${DEMO_ID}, ${armId(SUB_B, "rg1", "demo")}; give its ARM resource ID, resourceGroup/name, cluster ID or --subscription\n`,
    });
    const unknown = await usage("--cluster", "nope", "--subscription", SUB_B, ...MARCH);
    expect(unknown).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: --cluster "nope": no cluster in the ledger has that ID, ARM resource ID or name in subscription ${SUB_B}\n`,
    });
  });

  it("reads the current UTC month by default", async () => {
    const out = await usage();
    expect(out).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "SUBSCRIPTION                           CLUSTER   CLUSTER ID                             DIMENSION           QUANTITY   HOURS   REPORTED   UNREPORTED   REJECTED   EXPIRED",
        `${SUB_C}   now1      ${NOW_CLUSTER}   controlPlaneHours   1          1       0          1            0          0`,
        "",
      ].join("\n"),
    });
  });

  it("says so for a period without usage: nothing on stdout for a table, an empty list, a header alone", async () => {
    const period = ["--from", "2025-01", "--to", "2025-02"];
    expect(await usage(...period)).toEqual({
      code: 0,
      stdout: "",
      stderr: "No usage recorded from 2025-01-01T00:00Z to 2025-02-01T00:00Z.\n",
    });
    expect(await usage(...period, "--hours")).toEqual({
      code: 0,
      stdout: "",
      stderr: "No usage recorded from 2025-01-01T00:00Z to 2025-02-01T00:00Z.\n",
    });
    const items: unknown[] = [];
    expect(await usage(...period, "--hours", "-o", "json")).toEqual({
      code: 0,
      stderr: "",
      stdout: toJson({ from: "2025-01-01T00:00:00.000Z", to: "2025-02-01T00:00:00.000Z", items }),
    });
    expect(await usage(...period, "-o", "csv")).toEqual({
      code: 0,
      stderr: "",
      stdout:
        "subscriptionId,clusterId,resourceId,dimension,quantity,hours,reportedHours,unreportedHours,rejectedHours,expiredHours\r\n",
    });
  });

  it("names the flag and the value of bad input, before it connects", async () => {
    const nowhere = ["--database-url", "postgres://postgres@127.0.0.1:1/none"];
    expect(await runHcpctl("usage", ...nowhere, "--from", "2026-13")).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "error: option '--from <time>' argument '2026-13' is invalid. no such time in the calendar; expected a month, a day or a whole hour (UTC unless an offset is given): 2026-05, 2026-05-01 or 2026-05-01T13:00Z\n(run hcpctl --help for usage)\n",
    });
    const halfHour = await runHcpctl("usage", ...nowhere, "--to", "2026-03-02T11:30Z");
    expect(halfHour.stderr).toContain(
      "option '--to <time>' argument '2026-03-02T11:30Z' is invalid. usage is counted by the whole hour; give one, such as 2026-03-02T11:00Z",
    );
    expect(await runHcpctl("usage", ...nowhere, "--subscription", "sub-a")).toEqual({
      code: 1,
      stdout: "",
      stderr: 'error: invalid --subscription "sub-a": expected a subscription ID (a GUID)\n',
    });
    expect(await runHcpctl("usage", "--database-url", "mysql://u:secret@h/db")).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'error: invalid --database-url "mysql://u:***@h/db": expected postgres://USER@HOST:PORT/DATABASE\n',
    });
    const refused = await runHcpctl("usage", ...nowhere);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: cannot reach the ledger at postgres:\/\/postgres@127\.0\.0\.1:1\/none \(--database-url\): .*ECONNREFUSED/,
    );
  });

  it("refuses a database without the ledger's schema and creates nothing in it", async () => {
    const out = await runHcpctl("usage", "--database-url", empty.url);
    expect(out).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: the ledger at ${empty.url} (--database-url) lacks the usage ledger's migrations 0001_usage-ledger, 0002_undelete-and-export-order: hcpctl only reads; the region's operators apply them when they start with this database (or check that the URL names the ledger's database)\n`,
    });
    const client = new pg.Client({ connectionString: empty.url });
    await client.connect();
    try {
      const tables = await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
      expect(tables.rows).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it("runs as its own process with the ledger named by HCP_METERING_DATABASE_URL", async () => {
    const { stdout, stderr } = await exec(
      process.execPath,
      [hcpctlBin, "usage", "--subscription", SUB_B, ...MARCH, "-o", "csv"],
      { env: { ...process.env, HCP_METERING_DATABASE_URL: url }, timeout: 60_000 },
    );
    expect(stderr).toBe("");
    expect(stdout).toBe(
      [
        "subscriptionId,clusterId,resourceId,dimension,quantity,hours,reportedHours,unreportedHours,rejectedHours,expiredHours",
        `${SUB_B},${DEMO_B},${armId(SUB_B, "rg1", "demo")},controlPlaneHours,1.000000,1,0,1,0,0`,
        "",
      ].join("\r\n"),
    );
  });
});
