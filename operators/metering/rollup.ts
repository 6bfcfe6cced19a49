/**
 * The roll-up: hourly usage rows from the segments, for every complete hour, written with
 * INSERT … ON CONFLICT DO NOTHING on (resource, dimension, hour), so a roll-up run twice (a crash,
 * two leaders) writes each hour once. One statement does the arithmetic inside PostgreSQL
 * (numeric, the integral of the rate over the hour, rounded to 6 places), so the operator's memory
 * does not grow with the ledger.
 *
 * A run covers the hours [rolled_up_to, cutoff) for the segments overlapping them (the open ones
 * and those closed since: index scans, not the ledger's history), plus the hours before
 * rolled_up_to of segments recorded since the last run (late data: an agent offline for a while).
 * An hour already written is never rewritten: it may have been reported.
 */
import type pg from "pg";
import { hourOf, inTransaction, requireTime } from "./db.ts";

/** Roll-ups serialise on this transaction-level advisory lock (a second waits, then finds little to do). */
const ROLLUP_LOCK = 0x6863705f72756c;

export interface RollUpOptions {
  now: Date;
  /**
   * How long after an hour ends it is rolled up (default 0): time for the last observations of
   * the hour to arrive, since a boundary recorded in an hour already written does not change it.
   */
  settleMs?: number;
}

export interface RollUpResult {
  /** Hours [from, to) were rolled up (from = to: nothing new was complete). */
  from: Date;
  to: Date;
  /** Rows this run wrote; rows another run had written already are not counted. */
  written: number;
}

interface State {
  rolled_up_to: Date | null;
  last_segment_id: string;
  max_segment_id: string | null;
  first_start: Date | null;
}

/**
 * Pieces of each segment per hour within its window [lo, hi) (hour-aligned), summed per resource,
 * dimension and hour. Segments of the window and late segments each bring their own window.
 */
const ROLL_UP = `
WITH windowed AS (
  SELECT s.*, $1::timestamptz AS lo, $2::timestamptz AS hi FROM usage_segments s
   WHERE s.started_at < $2 AND (s.ended_at IS NULL OR s.ended_at > $1)
  UNION ALL
  SELECT s.*, '-infinity'::timestamptz, $1::timestamptz FROM usage_segments s
   WHERE s.id > $3 AND s.id <= $4 AND s.started_at < $1
), pieces AS (
  SELECT w.resource_uid, w.dimension, w.cluster_id, w.resource_id, h AS hour_start,
         w.rate * extract(epoch FROM
           LEAST(coalesce(w.ended_at, 'infinity'), h + interval '1 hour')
           - GREATEST(w.started_at, h)) / 3600 AS quantity
    FROM windowed w,
         generate_series(date_bin('1 hour', GREATEST(w.started_at, w.lo), 'epoch'),
                         LEAST(coalesce(w.ended_at, 'infinity'), w.hi) - interval '1 microsecond',
                         interval '1 hour') AS h
)
INSERT INTO usage_hours (resource_uid, dimension, hour_start, quantity, cluster_id, subscription_id, resource_id)
SELECT p.resource_uid, p.dimension, p.hour_start, round(sum(p.quantity), 6),
       p.cluster_id, b.subscription_id, p.resource_id
  FROM pieces p JOIN billing_records b USING (cluster_id)
 GROUP BY p.resource_uid, p.dimension, p.hour_start, p.cluster_id, b.subscription_id, p.resource_id
HAVING round(sum(p.quantity), 6) > 0
 ORDER BY p.hour_start, p.resource_uid, p.dimension
    ON CONFLICT ON CONSTRAINT usage_hours_once DO NOTHING`;

export async function rollUp(pool: pg.Pool, opts: RollUpOptions): Promise<RollUpResult> {
  requireTime("now", opts.now);
  const cutoff = rollUpCutoff(opts.now, opts.settleMs);
  return inTransaction(pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [ROLLUP_LOCK]);
    // Writers of segments finish before, and wait until after: what this run reads is complete.
    await tx.query("LOCK TABLE usage_segments IN SHARE MODE");
    const res = await tx.query<State>(
      `SELECT rolled_up_to, last_segment_id,
              (SELECT max(id) FROM usage_segments) AS max_segment_id,
              CASE WHEN rolled_up_to IS NULL THEN (SELECT min(started_at) FROM usage_segments) END AS first_start
         FROM rollup_state`,
    );
    const state = res.rows[0];
    if (!state) throw new Error("rollup_state has no row: the ledger's migrations did not run");
    const from = state.rolled_up_to ?? (state.first_start ? hourOf(state.first_start) : cutoff);
    const to = cutoff > from ? cutoff : from;
    const maxId = state.max_segment_id ?? state.last_segment_id;
    const written = await tx.query(ROLL_UP, [from, to, state.last_segment_id, maxId]);
    await tx.query("UPDATE rollup_state SET rolled_up_to = $1, last_segment_id = $2", [to, maxId]);
    return { from, to, written: written.rowCount ?? 0 };
  });
}

/** The hours a run at `now` would roll up to (exclusive). */
export function rollUpCutoff(now: Date, settleMs = 0): Date {
  return hourOf(new Date(now.getTime() - settleMs));
}
