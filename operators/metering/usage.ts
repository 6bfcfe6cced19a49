/**
 * Hourly usage rows out of the ledger: the exporter's queue (unreported rows oldest first, in
 * batches) and its compare-and-set marks, and the reads for people (`hcpctl usage`) by
 * subscription, cluster and period. Every read is an index range scan read in batches (keyset
 * pagination), so no caller ever holds the whole ledger.
 */
import type pg from "pg";
import { LedgerInputError, requireText, requireTime, type Queryable } from "./db.ts";
import type { Dimension } from "./segments.ts";

export type UsageState = "unreported" | "reported" | "rejected" | "expired";

export interface UsageHour {
  /** The row's own key (a bigint, as decimal text). */
  id: string;
  resourceUid: string;
  dimension: Dimension;
  hourStart: Date;
  /** Decimal text with 6 places, e.g. "16.000000". */
  quantity: string;
  clusterId: string;
  subscriptionId: string;
  resourceId: string;
  recordedAt: Date;
  state: UsageState;
  reportedAt?: Date;
  /** The metering API's ID for the accepted event (Azure's usageEventId). */
  usageEventId?: string;
  /** Why it was rejected or expired. */
  reason?: string;
}

interface Row {
  id: string;
  resource_uid: string;
  dimension: Dimension;
  hour_start: Date;
  quantity: string;
  cluster_id: string;
  subscription_id: string;
  resource_id: string;
  recorded_at: Date;
  state: UsageState;
  reported_at: Date | null;
  usage_event_id: string | null;
  reason: string | null;
}

function toHour(r: Row): UsageHour {
  return {
    id: r.id,
    resourceUid: r.resource_uid,
    dimension: r.dimension,
    hourStart: r.hour_start,
    quantity: r.quantity,
    clusterId: r.cluster_id,
    subscriptionId: r.subscription_id,
    resourceId: r.resource_id,
    recordedAt: r.recorded_at,
    state: r.state,
    ...(r.reported_at && { reportedAt: r.reported_at }),
    ...(r.usage_event_id !== null && { usageEventId: r.usage_event_id }),
    ...(r.reason !== null && { reason: r.reason }),
  };
}

/** Where a keyset read stopped: the last row's (hour, id). */
export interface Cursor {
  hourStart: Date;
  id: string;
}

function checkBatch(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new LedgerInputError(`batch size must be a whole number in 1..10000, got ${String(limit)}`);
}

/**
 * Where the exporter's queue read stopped: the last row's place in the queue's order (hour, ARM
 * resource ID lower-cased, dimension, id), the partial index's.
 */
export interface QueueCursor {
  hourStart: Date;
  resourceKey: string;
  dimension: Dimension;
  id: string;
}

/** The queue position of `row`, to read on after it. */
export function queueCursor(row: UsageHour): QueueCursor {
  return {
    hourStart: row.hourStart,
    resourceKey: row.resourceId.toLowerCase(),
    dimension: row.dimension,
    id: row.id,
  };
}

/**
 * Up to `limit` unreported rows after `after`, oldest hour first; within an hour in the metering
 * API's key order (ARM resource ID ignoring case, dimension), so rows sharing a key are adjacent.
 */
export async function unreportedBatch(
  db: Queryable,
  limit: number,
  after?: QueueCursor,
): Promise<UsageHour[]> {
  checkBatch(limit);
  const res = await db.query<Row>(
    `SELECT * FROM usage_hours WHERE state = 'unreported'
        ${after ? "AND (hour_start, lower(resource_id), dimension, id) > ($2, $3, $4, $5::bigint)" : ""}
      ORDER BY hour_start, lower(resource_id), dimension, id LIMIT $1`,
    after ? [limit, after.hourStart, after.resourceKey, after.dimension, after.id] : [limit],
  );
  return res.rows.map(toHour);
}

/** Every unreported row in the queue's order, `batchSize` at a time. */
export async function* unreported(db: Queryable, batchSize: number): AsyncGenerator<UsageHour[]> {
  let after: QueueCursor | undefined;
  for (;;) {
    const batch = await unreportedBatch(db, batchSize, after);
    if (batch.length === 0) return;
    yield batch;
    const last = batch[batch.length - 1];
    if (!last || batch.length < batchSize) return;
    after = queueCursor(last);
  }
}

/** The oldest hour not yet reported (the exporter's lag), or undefined when all are. */
export async function oldestUnreportedHour(db: Queryable): Promise<Date | undefined> {
  const res = await db.query<{ hour_start: Date }>(
    "SELECT hour_start FROM usage_hours WHERE state = 'unreported' ORDER BY hour_start LIMIT 1",
  );
  return res.rows[0]?.hour_start;
}

export interface Accepted {
  id: string;
  /** The metering API's ID for the event that carried the row. */
  usageEventId: string;
}

/**
 * Marks rows reported, each only from unreported (compare-and-set): marking twice, or a row
 * already rejected or expired, changes nothing. Returns the ids this call changed.
 */
export async function markReported(pool: pg.Pool, accepted: Accepted[], at: Date): Promise<string[]> {
  requireTime("at", at);
  for (const a of accepted) requireText("usageEventId", a.usageEventId);
  // Nothing to mark is no round trip: the exporter marks after every batch, mostly with none.
  if (accepted.length === 0) return [];
  const res = await pool.query<{ id: string }>(
    `UPDATE usage_hours u SET state = 'reported', reported_at = $3, usage_event_id = v.event_id
       FROM unnest($1::bigint[], $2::text[]) AS v(id, event_id)
      WHERE u.id = v.id AND u.state = 'unreported' RETURNING u.id`,
    [accepted.map((a) => a.id), accepted.map((a) => a.usageEventId), at],
  );
  return res.rows.map((r) => r.id);
}

export interface Refused {
  id: string;
  reason: string;
}

/** Marks rows rejected (the API refused them) or expired (too late for it), only from unreported. */
export async function markUnreportable(
  pool: pg.Pool,
  state: "rejected" | "expired",
  refused: Refused[],
): Promise<string[]> {
  for (const r of refused) requireText("reason", r.reason);
  if (refused.length === 0) return [];
  const res = await pool.query<{ id: string }>(
    `UPDATE usage_hours u SET state = $3, reason = v.reason
       FROM unnest($1::bigint[], $2::text[]) AS v(id, reason)
      WHERE u.id = v.id AND u.state = 'unreported' RETURNING u.id`,
    [refused.map((r) => r.id), refused.map((r) => r.reason), state],
  );
  return res.rows.map((r) => r.id);
}

/** Usage of one subscription or cluster (or the region) over hours [from, to). */
export interface UsageFilter {
  subscriptionId?: string;
  clusterId?: string;
  from: Date;
  to: Date;
}

export interface UsageTotal {
  subscriptionId: string;
  clusterId: string;
  dimension: Dimension;
  /** The sum over the period, decimal text. */
  quantity: string;
  hours: number;
  reportedHours: number;
}

function where(f: UsageFilter): { sql: string; params: unknown[] } {
  requireTime("from", f.from);
  requireTime("to", f.to);
  if (f.to < f.from)
    throw new LedgerInputError(
      `period ends (${f.to.toISOString()}) before it begins (${f.from.toISOString()})`,
    );
  const params: unknown[] = [f.from, f.to];
  const clauses = ["hour_start >= $1", "hour_start < $2"];
  if (f.subscriptionId !== undefined) {
    params.push(requireText("subscriptionId", f.subscriptionId).toLowerCase());
    clauses.push(`subscription_id = $${params.length}`);
  }
  if (f.clusterId !== undefined) {
    params.push(requireText("clusterId", f.clusterId));
    clauses.push(`cluster_id = $${params.length}`);
  }
  return { sql: clauses.join(" AND "), params };
}

/** Totals per cluster and dimension (one row each, however many hours). */
export async function usageTotals(db: Queryable, f: UsageFilter): Promise<UsageTotal[]> {
  const w = where(f);
  const res = await db.query<{
    subscription_id: string;
    cluster_id: string;
    dimension: Dimension;
    quantity: string;
    hours: string;
    reported: string;
  }>(
    `SELECT subscription_id, cluster_id, dimension, sum(quantity) AS quantity, count(*) AS hours,
            count(*) FILTER (WHERE state = 'reported') AS reported
       FROM usage_hours WHERE ${w.sql}
      GROUP BY subscription_id, cluster_id, dimension ORDER BY subscription_id, cluster_id, dimension`,
    w.params,
  );
  return res.rows.map((r) => ({
    subscriptionId: r.subscription_id,
    clusterId: r.cluster_id,
    dimension: r.dimension,
    quantity: r.quantity,
    hours: Number(r.hours),
    reportedHours: Number(r.reported),
  }));
}

/** Every row the filter selects, by hour then id, `batchSize` at a time. */
export async function* usageRows(
  db: Queryable,
  f: UsageFilter,
  batchSize: number,
): AsyncGenerator<UsageHour[]> {
  checkBatch(batchSize);
  const w = where(f);
  const n = w.params.length;
  let after: Cursor | undefined;
  for (;;) {
    const page = after ? ` AND (hour_start, id) > ($${n + 2}, $${n + 3}::bigint)` : "";
    const res = await db.query<Row>(
      `SELECT * FROM usage_hours WHERE ${w.sql}${page} ORDER BY hour_start, id LIMIT $${n + 1}`,
      after ? [...w.params, batchSize, after.hourStart, after.id] : [...w.params, batchSize],
    );
    if (res.rows.length === 0) return;
    const batch = res.rows.map(toHour);
    yield batch;
    const last = batch[batch.length - 1];
    if (!last || batch.length < batchSize) return;
    after = { hourStart: last.hourStart, id: last.id };
  }
}
