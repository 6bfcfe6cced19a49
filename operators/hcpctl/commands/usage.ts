/**
 * `hcpctl usage`: the usage ledger (issue 35, decision 0013) for people, read straight from its
 * PostgreSQL on a read-only session. hcpctl never migrates: a database without the schema is an
 * error that says who applies it. Totals per cluster and dimension by default; `--hours` streams
 * the hourly rows in batches (keyset reads), so memory stays flat however long the period.
 */
import pg from "pg";
import { once } from "node:events";
import { Option, type Command } from "commander";
import { LedgerInputError } from "../../metering/db.ts";
import { findClusters, missingMigrations, usageSummary, type ClusterRef } from "../../metering/report.ts";
import { usageRows, type UsageHour } from "../../metering/usage.ts";
import { CliError } from "../errors.ts";
import type { Io } from "../io.ts";
import { optionParser } from "./maintenance-cli.ts";
import { hourText, parseBound, periodOf, type Period } from "./usage-period.ts";
import { hoursStream, renderTotals, type RenderOptions, type UsageFormat } from "./usage-render.ts";

export const DATABASE_URL_ENV = "HCP_METERING_DATABASE_URL";
/** Rows per keyset read of `--hours`: a batch is rendered and written before the next is read. */
const BATCH = 1000;
const CONNECT_TIMEOUT_MS = 10_000;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface UsageFlags {
  databaseUrl?: string;
  subscription?: string;
  cluster?: string;
  from?: Date;
  to?: Date;
  hours: boolean;
  output: UsageFormat;
}

/** Where the ledger is, as typed, and which flag or variable said so (for messages). */
interface Source {
  url: string;
  shown: string;
  name: string;
}

/** The URL with its password masked, as messages show it. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url;
  }
}

function sourceOf(flags: UsageFlags, env: NodeJS.ProcessEnv): Source {
  const [url, name] = flags.databaseUrl
    ? [flags.databaseUrl, "--database-url"]
    : [env[DATABASE_URL_ENV], DATABASE_URL_ENV];
  if (!url) throw new CliError(`no ledger to read: give --database-url or set ${DATABASE_URL_ENV}`);
  const shown = redactUrl(url);
  let protocol: string | undefined;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== "postgres:" && protocol !== "postgresql:")
    throw new CliError(`invalid ${name} "${shown}": expected postgres://USER@HOST:PORT/DATABASE`);
  return { url, shown, name };
}

const NETWORK = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ETIMEDOUT",
  "EAI_AGAIN",
]);

function ledgerError(err: unknown, src: Source): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof LedgerInputError) return new CliError(err.message, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof Error ? String((err as { code?: unknown }).code) : "";
  const where = `the ledger at ${src.shown} (${src.name})`;
  if (NETWORK.has(code) || /timeout|terminated/i.test(message))
    return new CliError(`cannot reach ${where}: ${message}`, { cause: err });
  return new CliError(`${where}: ${message}`, { cause: err });
}

async function connect(src: Source): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: src.url,
    application_name: "hcpctl usage",
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // A dropped connection also rejects the query in flight; without a listener it would crash.
  client.on("error", () => {});
  await client.connect();
  // Every statement of this session is read-only, whatever the URL's user may do.
  await client.query("SET default_transaction_read_only = on");
  return client;
}

async function checkSchema(db: pg.Client, src: Source): Promise<void> {
  const missing = await missingMigrations(db);
  if (missing.length === 0) return;
  throw new CliError(
    `the ledger at ${src.shown} (${src.name}) lacks the usage ledger's migrations ${missing.join(", ")}: ` +
      "hcpctl only reads; the region's operators apply them when they start with this database " +
      "(or check that the URL names the ledger's database)",
  );
}

async function resolveClusters(db: pg.Client, flags: UsageFlags): Promise<ClusterRef[] | undefined> {
  if (flags.cluster === undefined) return undefined;
  const found = await findClusters(db, flags.cluster, flags.subscription);
  const within = flags.subscription ? ` in subscription ${flags.subscription}` : "";
  if (found.length === 0)
    throw new CliError(
      `--cluster "${flags.cluster}": no cluster in the ledger has that ID, ARM resource ID or name${within}`,
    );
  const ids = [...new Set(found.map((c) => c.resourceId.toLowerCase()))];
  if (ids.length > 1)
    throw new CliError(
      `--cluster "${flags.cluster}" names ${ids.length} clusters${within}: ${found.map((c) => c.resourceId).join(", ")}; ` +
        "give its ARM resource ID, resourceGroup/name, cluster ID or --subscription",
    );
  return found;
}

/** Writes, waiting while the stream is full; false once the reader has gone (a closed pipe). */
async function writeOut(
  out: NodeJS.WritableStream,
  text: string,
  gone: { closed: boolean },
): Promise<boolean> {
  if (gone.closed) return false;
  if (text && !out.write(text)) await Promise.race([once(out, "drain"), once(out, "close")]);
  return !gone.closed;
}

/** What one run reads: the flags, the period, how to render, and the clusters --cluster named. */
interface UsageQuery {
  flags: UsageFlags;
  period: Period;
  opts: RenderOptions;
  clusters?: ClusterRef[];
}

/** The hourly rows of the query, batch by batch: one cluster after the other, or all at once. */
async function* hourBatches(db: pg.Client, q: UsageQuery): AsyncGenerator<UsageHour[]> {
  for (const clusterId of q.clusters ? q.clusters.map((c) => c.clusterId) : [undefined]) {
    const filter = {
      ...q.period,
      ...(q.flags.subscription && { subscriptionId: q.flags.subscription }),
      ...(clusterId && { clusterId }),
    };
    yield* usageRows(db, filter, BATCH);
  }
}

async function streamHours(io: Io, db: pg.Client, q: UsageQuery): Promise<number> {
  const stream = hoursStream(q.flags.output, q.opts);
  const gone = { closed: false };
  const onError = (err: NodeJS.ErrnoException): void => {
    gone.closed = true;
    if (err.code !== "EPIPE") io.stderr.write(`error: writing the output: ${err.message}\n`);
  };
  io.stdout.on("error", onError);
  let count = 0;
  try {
    if (!(await writeOut(io.stdout, stream.head(), gone))) return count;
    for await (const batch of hourBatches(db, q)) {
      count += batch.length;
      if (io.signal.aborted || !(await writeOut(io.stdout, stream.batch(batch), gone))) return count;
    }
    await writeOut(io.stdout, stream.tail(), gone);
    return count;
  } finally {
    io.stdout.off("error", onError);
  }
}

/** The totals of the query, written at once (one row per cluster and dimension). */
async function writeTotals(io: Io, db: pg.Client, q: UsageQuery): Promise<number> {
  const totals = await usageSummary(db, {
    ...q.period,
    ...(q.flags.subscription && { subscriptionId: q.flags.subscription }),
    ...(q.clusters && { clusterIds: q.clusters.map((c) => c.clusterId) }),
  });
  io.stdout.write(renderTotals(totals, q.flags.output, q.opts));
  return totals.length;
}

/** Refuses a bad --subscription or an empty --cluster, naming it, before anything connects. */
function checkFlags(flags: UsageFlags): void {
  if (flags.subscription !== undefined && !GUID.test(flags.subscription))
    throw new CliError(`invalid --subscription "${flags.subscription}": expected a subscription ID (a GUID)`);
  if (flags.cluster !== undefined && flags.cluster.trim() === "")
    throw new CliError(
      `invalid --cluster "": expected a cluster ID, ARM resource ID, name or resourceGroup/name`,
    );
}

export async function runUsage(
  io: Io,
  flags: UsageFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  checkFlags(flags);
  const period = periodOf(flags, io.now());
  const src = sourceOf(flags, env);
  let db: pg.Client | undefined;
  try {
    db = await connect(src);
    await checkSchema(db, src);
    const clusters = await resolveClusters(db, flags);
    const opts: RenderOptions = { period, subscriptionColumn: !flags.subscription && !clusters };
    const q: UsageQuery = { flags, period, opts, ...(clusters && { clusters }) };
    const count = flags.hours ? await streamHours(io, db, q) : await writeTotals(io, db, q);
    if (count === 0 && flags.output === "table")
      io.stderr.write(`No usage recorded from ${hourText(period.from)} to ${hourText(period.to)}.\n`);
  } catch (err) {
    throw ledgerError(err, src);
  } finally {
    await db?.end().catch(() => {});
  }
}

function parseFormat(value: string): UsageFormat {
  if (value === "table" || value === "json" || value === "csv") return value;
  throw new CliError(`unknown output format "${value}": expected one of table, json, csv`);
}

export function addUsage(program: Command, io: Io): void {
  program
    .command("usage")
    .description(
      "metered usage from the usage ledger (PostgreSQL): totals per cluster and dimension, or the hourly rows, with their export state",
    )
    .option("--database-url <url>", `the ledger's PostgreSQL (default: $${DATABASE_URL_ENV})`)
    .option("--subscription <id>", "only this subscription's clusters")
    .option("--cluster <cluster>", "only this cluster: its ID, ARM resource ID, name or resourceGroup/name")
    .addOption(
      new Option(
        "--from <time>",
        "first hour (UTC): 2026-05, 2026-05-01 or 2026-05-01T13:00Z (default: this month's start)",
      ).argParser(optionParser(parseBound)),
    )
    .addOption(
      new Option(
        "--to <time>",
        "end of the period, exclusive, in the same forms (default: next month's start)",
      ).argParser(optionParser(parseBound)),
    )
    .option("--hours", "the hourly rows instead of totals, streamed", false)
    .addOption(
      new Option("-o, --output <format>", "table, json or csv (CSV: RFC 4180, with a header)")
        .argParser(optionParser(parseFormat))
        .default("table" satisfies UsageFormat),
    )
    .action(async (flags: UsageFlags) => {
      await runUsage(io, flags);
    });
}
