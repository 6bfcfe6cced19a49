/**
 * `npm run bench -- --scenario metering [--n 1000] [--hours 24] [--concurrency 8]`: the usage
 * ledger and its exporter over a simulated day (issue 35).
 *
 * A private PostgreSQL; N clusters with one node pool each recorded through the Ledger API
 * (billing record, first success, a control-plane and a vCPU segment; every 10th pool scales up
 * in the middle of an hour of the day, hack/bench/metering-fleet.ts). The day is rolled up hour by
 * hour (rows written per second), beside the floor: the same rows inserted by a raw `pg` client in
 * one INSERT … SELECT FROM unnest per hour into an identical, freshly migrated ledger on the same
 * server. Then the real UsageExporter, against the marketplace emulator over https, exports the
 * day in one pass (rows exported per second), beside the floor: the same events POSTed straight
 * to a fresh emulator, 25 a request, one request at a time as the exporter sends them. Also the
 * ledger's size (pg_total_relation_size of its tables) per cluster-day, and the exporter's memory.
 *
 * The exporter runs in this process, measured around its pass (live heap after a forced full
 * collection, RSS, and their peaks sampled while it runs); the emulators run in processes of their
 * own, since they keep every accepted event in memory. Tokens are a fixed string: the emulators
 * check none, so the figures hold no token traffic (the real credential caches its token).
 */
import type { AccessToken, TokenCredential } from "@azure/identity";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { rootCertificates } from "node:tls";
import { parseArgs } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import pg from "pg";
import { Registry } from "prom-client";
import { Agent, request } from "undici";
import { sdkTlsSettings } from "../../operators/azure/config.ts";
import { Ledger } from "../../operators/metering/ledger.ts";
import { MarketplaceMeteringClient } from "../../operators/metering/marketplace.ts";
import { UsageExporter, type ExporterLedger } from "../../operators/usage/exporter.ts";
import { killOnExit } from "../harness/process.ts";
import { startPostgres } from "../harness/postgres.ts";
import {
  expectedDayTotal,
  fleetCluster,
  HOUR_MS,
  hourUsage,
  PLAN_ID,
  POOL_VCPUS,
  rowsPerDay,
  SCALED_POOL_VCPUS,
  scalingIn,
  tenTimesRegionRate,
} from "./metering-fleet.ts";
import { currentRssMb } from "./usage.ts";
import { compare, type Comparison, type Figure, type Scenario } from "./types.ts";
import { inParallel } from "./write-cost.ts";

/** The simulated day: a fixed UTC midnight; every clock of the scenario is set from it. */
const DAY_START = Date.parse("2026-11-01T00:00:00Z");
const BATCH = 25;
const TARGET_CLUSTERS = 10_000;
const LEDGER_TABLES = ["billing_records", "usage_segments", "usage_hours", "rollup_state"];

function progress(message: string): void {
  process.stderr.write(`[bench metering] ${new Date().toISOString()} ${message}\n`);
}

export interface MeteringOptions {
  n: number;
  hours: number;
  /** Ledger connections and recording writes in flight. */
  concurrency: number;
}

interface Memory {
  /** Live heap after a forced full collection, MB. */
  heapMb: number;
  rssMb: number;
}

export interface MeteringReport {
  n: number;
  hours: number;
  rows: number;
  record: { ms: number; writes: number };
  rollUp: { ms: number; floorMs: number };
  export: {
    ms: number;
    floorMs: number;
    /** Where the pass's time went: the ledger's calls and the API's, ms. */
    split: Record<string, number>;
    calls: number;
    /** unreportedBatch's ms per call in each tenth of the pass: does the queue's read slow as it goes? */
    readMsByTenth: number[];
  };
  ledgerBytes: {
    afterRollUp: number;
    afterExport: number;
    /** After VACUUM FULL: the reported day without its rows' dead versions (autovacuum's reuse). */
    compact: number;
    /** usage_hours alone, compacted, and its reported rows' own bytes. */
    usageHours: number;
    /** Each table's heap and each index, compacted, bytes: where the size is. */
    relations: Record<string, number>;
    rowData: number;
  };
  memory: { start: Memory; end: Memory; peakHeapMb: number; peakRssMb: number; emulatorRssMb: number };
  load: { start: number[]; end: number[] };
}

// ---- processes ---------------------------------------------------------------------------------

interface Market {
  endpoint: string;
  caPath: string;
  pid: number;
  stop(): Promise<void>;
}

async function startMarket(workDir: string, n: number, now: Date): Promise<Market> {
  const script = new URL("./metering-market.ts", import.meta.url).pathname;
  const child = spawn(process.execPath, [script, JSON.stringify({ workDir, n, now: now.toISOString() })], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  killOnExit(child);
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`the marketplace emulator's process exited (${String(code)}) before it answered`);
  });
  const line = (async () => {
    for await (const l of createInterface({ input: child.stdout })) return l;
    return "";
  })();
  const info = JSON.parse(await Promise.race([line, exited])) as Omit<Market, "stop">;
  exited.catch(() => undefined);
  return {
    ...info,
    stop: async () => {
      if (child.exitCode !== null) return;
      const gone = once(child, "exit");
      child.kill("SIGTERM");
      await gone;
    },
  };
}

const credential: TokenCredential = {
  getToken: (): Promise<AccessToken> =>
    Promise.resolve({ token: "bench", expiresOnTimestamp: Date.now() + HOUR_MS }),
};

// ---- recording and roll-up ---------------------------------------------------------------------

const at = (hours: number): Date => new Date(DAY_START + hours * HOUR_MS);

/** Every cluster and its pool Ready from the day's start: 4 ledger writes each. */
async function recordFleet(ledger: Ledger, opts: MeteringOptions): Promise<number> {
  await inParallel(opts.n, opts.concurrency, async (i) => {
    const c = fleetCluster(i);
    const createdAt = at(0);
    await ledger.recordCluster({
      clusterId: c.clusterId,
      resourceId: c.clusterResourceId,
      subscriptionId: c.subscriptionId,
      location: "eastus",
      createdAt,
    });
    await ledger.recordFirstSucceeded(c.clusterId, createdAt);
    const cluster = { clusterId: c.clusterId, at: createdAt };
    await ledger.observe({
      ...cluster,
      resourceUid: c.clusterId,
      resourceId: c.clusterResourceId,
      dimension: "controlPlaneHours",
      rate: 1,
    });
    await ledger.observe({
      ...cluster,
      resourceUid: c.poolUid,
      resourceId: c.poolResourceId,
      dimension: "vCPUHours",
      rate: POOL_VCPUS,
    });
  });
  return opts.n * 4;
}

async function scale(ledger: Ledger, opts: MeteringOptions, hour: number): Promise<number> {
  const scaling = scalingIn(opts.n, hour);
  await inParallel(scaling.length, opts.concurrency, async (k) => {
    const c = fleetCluster(scaling[k] ?? 0);
    await ledger.observe({
      clusterId: c.clusterId,
      resourceUid: c.poolUid,
      resourceId: c.poolResourceId,
      dimension: "vCPUHours",
      rate: SCALED_POOL_VCPUS,
      at: at(hour + 0.5),
    });
  });
  return scaling.length;
}

/** The floor's ledger: migrated as the real one, its billing records in one INSERT. */
async function floorLedger(url: string, n: number): Promise<pg.Client> {
  await (await Ledger.open(url)).close();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const cs = Array.from({ length: n }, (_, i) => fleetCluster(i));
  await db.query(
    `INSERT INTO billing_records (cluster_id, resource_id, subscription_id, location, created_at, first_succeeded_at)
     SELECT c, r, s, 'eastus', $4, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS v(c, r, s)`,
    [cs.map((c) => c.clusterId), cs.map((c) => c.clusterResourceId), cs.map((c) => c.subscriptionId), at(0)],
  );
  return db;
}

/** One hour's rows in one INSERT … SELECT FROM unnest: what writing them costs at least. */
async function floorInsertMs(db: pg.Client, n: number, hour: number): Promise<number> {
  const rows = hourUsage(n, hour);
  const cols = [
    rows.map((r) => r.resourceUid),
    rows.map((r) => r.dimension),
    rows.map((r) => String(r.quantity)),
    rows.map((r) => r.cluster.clusterId),
    rows.map((r) => r.cluster.subscriptionId),
    rows.map((r) => r.resourceId),
  ];
  const started = performance.now();
  await db.query(
    `INSERT INTO usage_hours (resource_uid, dimension, hour_start, quantity, cluster_id, subscription_id, resource_id)
     SELECT u, d, $7, q, c, s, r FROM unnest($1::text[], $2::text[], $3::numeric[], $4::text[], $5::text[], $6::text[]) AS v(u, d, q, c, s, r)`,
    [...cols, at(hour)],
  );
  return performance.now() - started;
}

async function recordAndRollUp(
  ledger: Ledger,
  floor: pg.Client,
  opts: MeteringOptions,
): Promise<Pick<MeteringReport, "record" | "rollUp">> {
  const started = performance.now();
  let writes = await recordFleet(ledger, opts);
  const recordMs = performance.now() - started;
  progress(`${opts.n} clusters recorded (${writes} writes) in ${Math.round(recordMs)} ms`);
  let ms = 0;
  let floorMs = 0;
  let rows = 0;
  for (let h = 0; h < opts.hours; h++) {
    writes += await scale(ledger, opts, h);
    const t = performance.now();
    rows += (await ledger.rollUp({ now: at(h + 1), settleMs: 0 })).written;
    ms += performance.now() - t;
    floorMs += await floorInsertMs(floor, opts.n, h);
  }
  progress(`rolled up ${rows} rows in ${Math.round(ms)} ms (floor ${Math.round(floorMs)} ms)`);
  return { record: { ms: recordMs, writes }, rollUp: { ms, floorMs } };
}

/** The roll-up must bill exactly what the fleet used, or its speed means nothing. */
async function checkDay(db: pg.Client, opts: MeteringOptions): Promise<number> {
  const res = await db.query<{ rows: string; total: string }>(
    "SELECT count(*) AS rows, coalesce(sum(quantity), 0) AS total FROM usage_hours",
  );
  const rows = Number(res.rows[0]?.rows);
  const total = Number(res.rows[0]?.total);
  const want = { rows: rowsPerDay(opts.n, opts.hours), total: expectedDayTotal(opts.n, opts.hours) };
  if (rows !== want.rows || Math.abs(total - want.total) > 1e-6)
    throw new Error(
      `the ledger holds ${rows} rows totalling ${total}; the day should make ${want.rows} totalling ${want.total}`,
    );
  return rows;
}

async function ledgerBytes(db: pg.Client, tables = LEDGER_TABLES): Promise<number> {
  const res = await db.query<{ bytes: string }>(
    "SELECT sum(pg_total_relation_size(t::regclass)) AS bytes FROM unnest($1::text[]) AS t",
    [tables],
  );
  return Number(res.rows[0]?.bytes);
}

async function relationBytes(db: pg.Client): Promise<Record<string, number>> {
  const res = await db.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_class c
      WHERE c.oid IN (SELECT unnest($1::text[])::regclass)
         OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT unnest($1::text[])::regclass))
      ORDER BY pg_relation_size(c.oid) DESC`,
    [LEDGER_TABLES],
  );
  return Object.fromEntries(res.rows.map((r) => [r.name, Number(r.bytes)]));
}

// ---- export ------------------------------------------------------------------------------------

const gc = ((): (() => void) => {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();

function memoryNow(): Memory {
  gc();
  const m = process.memoryUsage();
  return { heapMb: m.heapUsed / 2 ** 20, rssMb: m.rss / 2 ** 20 };
}

/**
 * The exporter's ledger and client, each call's time added to `split` under its name, and each
 * queue read's to its tenth of the `calls` expected in `byTenth` (sums; per call once divided).
 */
function timed(
  ledger: ExporterLedger,
  client: MarketplaceMeteringClient,
  split: Record<string, number>,
  reads: { calls: number; byTenth: number[] },
): { ledger: ExporterLedger; client: Pick<MarketplaceMeteringClient, "report"> } {
  let read = 0;
  const time =
    <A extends unknown[], R>(name: string, f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const t = performance.now();
      try {
        return await f(...a);
      } finally {
        split[name] = (split[name] ?? 0) + performance.now() - t;
      }
    };
  return {
    ledger: {
      rollUp: time("rollUp", (o) => ledger.rollUp(o)),
      unreportedBatch: time("unreportedBatch", async (l, a) => {
        const t = performance.now();
        const rows = await ledger.unreportedBatch(l, a);
        const tenth = Math.min(9, Math.floor((read++ / reads.calls) * 10));
        reads.byTenth[tenth] = (reads.byTenth[tenth] ?? 0) + performance.now() - t;
        return rows;
      }),
      markReported: time("markReported", (r, a) => ledger.markReported(r, a)),
      markRejected: time("markRejected+markExpired", (r) => ledger.markRejected(r)),
      markExpired: time("markRejected+markExpired", (r) => ledger.markExpired(r)),
      oldestUnreportedHour: time("oldestUnreportedHour", () => ledger.oldestUnreportedHour()),
    },
    client: { report: time("report (https)", (e, o) => client.report(e, o)) },
  };
}

async function exportDay(
  ledger: Ledger,
  market: Market,
  rows: number,
  end: Date,
): Promise<Pick<MeteringReport, "export"> & { memory: Omit<MeteringReport["memory"], "emulatorRssMb"> }> {
  const tls = sdkTlsSettings([...rootCertificates, await readFile(market.caPath, "utf8")]);
  const client = new MarketplaceMeteringClient({ credential, endpoint: market.endpoint, tls });
  const split: Record<string, number> = {};
  const reads = { calls: Math.ceil(rows / BATCH), byTenth: Array<number>(10).fill(0) };
  const calls = timed(ledger, client, split, reads);
  const exporter = new UsageExporter({
    ...calls,
    planId: PLAN_ID,
    now: () => end,
    settleMs: 0,
    registry: new Registry(),
  });
  const start = memoryNow();
  let peakHeapMb = start.heapMb;
  let peakRssMb = start.rssMb;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakHeapMb = Math.max(peakHeapMb, m.heapUsed / 2 ** 20);
    peakRssMb = Math.max(peakRssMb, m.rss / 2 ** 20);
  }, 100);
  const t = performance.now();
  try {
    const pass = await exporter.runOnce();
    const ms = performance.now() - t;
    if (pass.failure || pass.reported !== rows || pass.duplicates + pass.rejected + pass.expired > 0)
      throw new Error(
        `the export pass reported ${pass.reported} of ${rows} rows (duplicates ${pass.duplicates}, rejected ${pass.rejected}, expired ${pass.expired})${pass.failure ? `: ${pass.failure.message}` : ""}`,
      );
    const endMemory = memoryNow();
    progress(`exported ${pass.reported} rows in ${Math.round(ms)} ms`);
    return {
      export: {
        ms,
        floorMs: 0,
        split,
        calls: reads.calls,
        readMsByTenth: reads.byTenth.map((v) => Math.round((v / (reads.calls / 10)) * 1000) / 1000),
      },
      memory: { start, end: endMemory, peakHeapMb, peakRssMb },
    };
  } finally {
    clearInterval(sampler);
    await client.close();
  }
}

/** The day's events, POSTed straight to a fresh emulator, 25 a request, one request at a time. */
async function exportFloorMs(market: Market, opts: MeteringOptions): Promise<number> {
  const agent = new Agent({ connect: { ca: await readFile(market.caPath, "utf8") } });
  const url = `${market.endpoint}/api/batchUsageEvent?api-version=2018-08-31`;
  let batch: Array<Record<string, string | number>> = [];
  let accepted = 0;
  const post = async (): Promise<void> => {
    const res = await request(url, {
      method: "POST",
      dispatcher: agent,
      headers: { authorization: "Bearer bench", "content-type": "application/json" },
      body: JSON.stringify({ request: batch }),
    });
    const body = (await res.body.json()) as { result?: Array<{ status?: string }> };
    accepted += (body.result ?? []).filter((r) => r.status === "Accepted").length;
    batch = [];
  };
  const started = performance.now();
  for (let h = 0; h < opts.hours; h++)
    for (const u of hourUsage(opts.n, h)) {
      const { resourceId, dimension, quantity } = u;
      batch.push({
        resourceId,
        planId: PLAN_ID,
        dimension,
        quantity,
        effectiveStartTime: at(h).toISOString(),
      });
      if (batch.length === BATCH) await post();
    }
  if (batch.length > 0) await post();
  const ms = performance.now() - started;
  await agent.close();
  if (accepted !== rowsPerDay(opts.n, opts.hours))
    throw new Error(`the export floor had ${accepted} of ${rowsPerDay(opts.n, opts.hours)} events accepted`);
  return ms;
}

// ---- the scenario ------------------------------------------------------------------------------

export async function benchMetering(opts: MeteringOptions): Promise<MeteringReport> {
  const load = { start: loadavg(), end: [] as number[] };
  const workDir = await mkdtemp(join(tmpdir(), "hcp-bench-metering-"));
  const postgres = await startPostgres({ workDir, database: "ledger" });
  const markets: Market[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  try {
    const ledger = await Ledger.open(postgres.url, { maxConnections: opts.concurrency });
    closers.push(() => ledger.close());
    const db = new pg.Client({ connectionString: postgres.url });
    await db.connect();
    closers.push(() => db.end());
    const floor = await floorLedger(await postgres.createDatabase("floor"), opts.n);
    closers.push(() => floor.end());

    const { record, rollUp } = await recordAndRollUp(ledger, floor, opts);
    const rows = await checkDay(db, opts);
    const afterRollUp = await ledgerBytes(db);

    const market = await startMarket(workDir, opts.n, at(opts.hours));
    markets.push(market);
    const exported = await exportDay(ledger, market, rows, at(opts.hours));
    const emulatorRssMb = await currentRssMb(market.pid);
    await market.stop();
    const floorMarket = await startMarket(workDir, opts.n, at(opts.hours));
    markets.push(floorMarket);
    exported.export.floorMs = await exportFloorMs(floorMarket, opts);
    progress(`export floor: ${Math.round(exported.export.floorMs)} ms`);
    load.end = loadavg();
    const afterExport = await ledgerBytes(db);
    await db.query(`VACUUM FULL ${LEDGER_TABLES.join(", ")}`);
    const rowData = await db.query<{ bytes: string }>(
      "SELECT sum(pg_column_size(u.*)) AS bytes FROM usage_hours u",
    );
    return {
      n: opts.n,
      hours: opts.hours,
      rows,
      record,
      rollUp,
      export: exported.export,
      ledgerBytes: {
        afterRollUp,
        afterExport,
        compact: await ledgerBytes(db),
        usageHours: await ledgerBytes(db, ["usage_hours"]),
        relations: await relationBytes(db),
        rowData: Number(rowData.rows[0]?.bytes),
      },
      memory: { ...exported.memory, emulatorRssMb },
      load,
    };
  } finally {
    for (const m of markets) await m.stop().catch(() => undefined);
    for (const c of closers.reverse()) await c().catch(() => undefined);
    await postgres.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

const s = (ms: number): number => Math.round(ms / 10) / 100;
const mb = (v: number): number => Math.round(v * 10) / 10;
const perSecond = (count: number, ms: number): number => Math.round(count / (ms / 1000));
const loads = (l: number[]): string => l.map((x) => x.toFixed(2)).join(" ");

function figures(r: MeteringReport, opts: MeteringOptions): Figure[] {
  const clusterDays = (r.n * r.hours) / 24;
  const split = Object.entries(r.export.split)
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${k} ${s(v)} s (${Math.round((v / r.export.ms) * 100)}%)`)
    .join(", ");
  return [
    {
      name: "recording: ledger writes per second",
      value: perSecond(r.record.writes, r.record.ms),
      unit: "writes/s",
      detail: `${r.record.writes} writes (record, first success, 2 observes per cluster; the scale-ups) at ${opts.concurrency} in flight`,
    },
    {
      name: "roll-up: rows written per second",
      value: perSecond(r.rows, r.rollUp.ms),
      unit: "rows/s",
      detail: `${r.rows} rows (${r.n} clusters × 2 × ${r.hours} h) in ${s(r.rollUp.ms)} s, one roll-up per hour`,
    },
    {
      name: "export: rows exported per second",
      value: perSecond(r.rows, r.export.ms),
      unit: "rows/s",
      detail: `one pass of the real UsageExporter, ${r.export.calls} calls of 25 over https in ${s(r.export.ms)} s`,
    },
    { name: "export: where the time went", value: s(r.export.ms), unit: "s", detail: split },
    {
      name: "export: queue read per call, by tenth",
      value: r.export.readMsByTenth[9] ?? NaN,
      unit: "ms",
      detail: `unreportedBatch in each tenth of the pass: ${r.export.readMsByTenth.join(", ")}`,
    },
    {
      name: "ledger: size per cluster-day",
      value: Math.round(r.ledgerBytes.afterExport / clusterDays),
      unit: "bytes",
      detail: `${mb(r.ledgerBytes.afterExport / 2 ** 20)} MB after the export, tables and indexes (${mb(r.ledgerBytes.afterRollUp / 2 ** 20)} MB before it): each row's unreported version is dead`,
    },
    {
      name: "ledger: size per cluster-day, compacted",
      value: Math.round(r.ledgerBytes.compact / clusterDays),
      unit: "bytes",
      detail: `${mb(r.ledgerBytes.compact / 2 ** 20)} MB after VACUUM FULL: the reported day alone, as in a steady state where autovacuum's freed space takes the next day's rows; usage_hours ${mb(r.ledgerBytes.usageHours / 2 ** 20)} MB of it: ${Object.entries(
        r.ledgerBytes.relations,
      )
        .slice(0, 6)
        .map(([k, v]) => `${k} ${mb(v / 2 ** 20)}`)
        .join(", ")}`,
    },
    {
      name: "exporter: live heap start → end",
      value: mb(r.memory.end.heapMb),
      unit: "MB",
      detail: `from ${mb(r.memory.start.heapMb)} MB (after a full collection); peak sampled ${mb(r.memory.peakHeapMb)} MB`,
    },
    {
      name: "exporter: RSS start → end",
      value: mb(r.memory.end.rssMb),
      unit: "MB",
      detail: `from ${mb(r.memory.start.rssMb)} MB; peak ${mb(r.memory.peakRssMb)} MB (the bench's process); the emulator's own ${r.memory.emulatorRssMb} MB`,
    },
    {
      name: "machine load (1/5/15 min)",
      value: Math.round((r.load.end[0] ?? NaN) * 100) / 100,
      unit: "",
      detail: `start ${loads(r.load.start)}, end ${loads(r.load.end)}`,
    },
  ];
}

function comparisons(r: MeteringReport): Comparison[] {
  const exportRate = r.rows / (r.export.ms / 1000);
  return [
    compare({
      name: "roll-up",
      unit: "ms",
      ours: Math.round(r.rollUp.ms),
      against: "raw INSERT … FROM unnest of each hour's rows into the same schema",
      peer: Math.round(r.rollUp.floorMs),
    }),
    compare({
      name: "export",
      unit: "ms",
      ours: Math.round(r.export.ms),
      against: "the same events POSTed straight to the emulator, 25 a request, one at a time",
      peer: Math.round(r.export.floorMs),
    }),
    compare(
      {
        name: "export rate vs 10× the region's",
        unit: "rows/s",
        ours: Math.round(exportRate * 10) / 10,
        against: `10 × the rows/s of a ${TARGET_CLUSTERS.toLocaleString("en")}-cluster region (2 rows per cluster-hour)`,
        peer: Math.round(tenTimesRegionRate(TARGET_CLUSTERS) * 10) / 10,
      },
      { atLeast: 1 },
    ),
    compare(
      {
        name: "exporter live heap end/start",
        unit: "MB",
        ours: mb(r.memory.end.heapMb),
        against: "the live heap before the pass (flat: it streams)",
        peer: mb(r.memory.start.heapMb),
      },
      { atMost: 1.1 },
    ),
    compare({
      name: "usage_hours (compacted) vs rows",
      unit: "MB",
      ours: mb(r.ledgerBytes.usageHours / 2 ** 20),
      against: "sum of pg_column_size of its rows (no page, index or dead-tuple overhead)",
      peer: mb(r.ledgerBytes.rowData / 2 ** 20),
    }),
  ];
}

function flag(argv: string[], name: string, fallback: number, max = Infinity): number {
  const { values } = parseArgs({ args: argv, strict: false, options: { [name]: { type: "string" } } });
  const raw = values[name];
  const value = typeof raw === "string" ? Number(raw) : fallback;
  if (!Number.isInteger(value) || value <= 0 || value > max)
    throw new Error(`--${name} must be a whole number from 1 to ${max}, not "${String(raw)}"`);
  return value;
}

export const meteringScenario: Scenario = {
  describe:
    "usage ledger over a simulated day: roll-up, export, size, exporter memory (raw pg and POST floors)",
  async run({ n, argv }) {
    const opts: MeteringOptions = {
      n: n ?? 1000,
      hours: flag(argv, "hours", 24, 24),
      concurrency: flag(argv, "concurrency", 8),
    };
    const report = await benchMetering(opts);
    return { figures: figures(report, opts), comparisons: comparisons(report), report };
  },
};
