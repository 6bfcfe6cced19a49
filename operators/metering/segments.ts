/**
 * Usage segments: what the controllers observe, per metered resource and dimension, as intervals
 * [start, end) at a constant rate. Observing is level-triggered and idempotent: the same state
 * again writes nothing; a different rate closes the open segment at the observation time and
 * opens the next; rate 0 only closes. Writers of one resource are serialised by an advisory lock,
 * so two leaders cannot both open a segment (the partial unique index would refuse it anyway).
 */
import type pg from "pg";
import {
  LedgerInputError,
  canonicalDecimal,
  inTransaction,
  requireQuantity,
  requireText,
  requireTime,
  sqlState,
  type Queryable,
} from "./db.ts";

/** The metered dimensions: a cluster's control plane by the hour, a node pool's vCPUs by the hour. */
export const DIMENSIONS = ["controlPlaneHours", "vCPUHours"] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export interface Observation {
  /** The cluster the usage belongs to (its billing record must exist). */
  clusterId: string;
  /** The metered resource's own uid: the cluster ID, or a node pool's original uid. */
  resourceUid: string;
  /** Its ARM resource ID, as reported to the metering API. */
  resourceId: string;
  dimension: Dimension;
  /** Units per hour from `at` on: 1 for a control plane, nodes × vCPUs for a pool; 0 when not metered. */
  rate: number | string;
  at: Date;
}

/**
 * unchanged: the ledger already held this state. opened/changed/closed: a segment was opened, a
 * rate changed, or the open one closed. stale: an observation older than the resource's latest
 * boundary, not written (the ledger does not rewrite the past out of order).
 */
export type ObserveChange = "unchanged" | "opened" | "changed" | "closed" | "stale";

export interface ObserveResult {
  change: ObserveChange;
  /** The write fell in an hour already rolled up: that hour keeps what it was written with. */
  late: boolean;
}

interface SegmentRow {
  id: string;
  rate: string;
  started_at: Date;
  ended_at: Date | null;
}

function checkObservation(o: Observation): string {
  requireText("clusterId", o.clusterId);
  requireText("resourceUid", o.resourceUid);
  requireText("resourceId", o.resourceId);
  if (!DIMENSIONS.includes(o.dimension))
    throw new LedgerInputError(`dimension "${String(o.dimension)}" is none of ${DIMENSIONS.join(", ")}`);
  requireTime("at", o.at);
  return canonicalDecimal(requireQuantity("rate", o.rate));
}

async function isLate(db: Queryable, at: Date): Promise<boolean> {
  const res = await db.query<{ late: boolean }>(
    "SELECT coalesce($1 < rolled_up_to, false) AS late FROM rollup_state",
    [at],
  );
  return res.rows[0]?.late === true;
}

/**
 * Refuses usage of a cluster the ledger does not know, and usage after its deletion or from before
 * its latest undelete: segments of the time before were closed by that deletion, and a late
 * observation must not open one again across the deleted window.
 */
async function checkCluster(db: Queryable, o: Observation): Promise<void> {
  const res = await db.query<{ deleted_at: Date | null; undeleted_at: Date | null }>(
    `SELECT deleted_at,
            (SELECT max(undeleted_at) FROM cluster_undeletions u WHERE u.cluster_id = b.cluster_id) AS undeleted_at
       FROM billing_records b WHERE cluster_id = $1`,
    [o.clusterId],
  );
  const row = res.rows[0];
  if (!row)
    throw new LedgerInputError(`cluster ${o.clusterId} has no billing record; record it before its usage`);
  if (row.deleted_at && o.at >= row.deleted_at)
    throw new LedgerInputError(
      `cluster ${o.clusterId} was deleted at ${row.deleted_at.toISOString()}; no usage of ${o.resourceUid} from ${o.at.toISOString()}`,
    );
  if (row.undeleted_at && o.at < row.undeleted_at)
    throw new LedgerInputError(
      `cluster ${o.clusterId} was undeleted at ${row.undeleted_at.toISOString()}; no usage of ${o.resourceUid} from before, at ${o.at.toISOString()}`,
    );
}

async function open(db: Queryable, o: Observation, rate: string): Promise<void> {
  await db.query(
    `INSERT INTO usage_segments (resource_uid, dimension, cluster_id, resource_id, rate, started_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [o.resourceUid, o.dimension, o.clusterId, o.resourceId, rate, o.at],
  );
}

/** The decision for an open segment `s` (at ≥ its start) given the observed rate. */
async function onOpen(db: Queryable, s: SegmentRow, o: Observation, rate: string): Promise<ObserveChange> {
  if (canonicalDecimal(s.rate) === rate) return "unchanged";
  const zero = rate === "0";
  if (o.at.getTime() === s.started_at.getTime()) {
    // Nothing elapsed at the old rate: correct the segment rather than leave an empty one.
    if (zero) await db.query("DELETE FROM usage_segments WHERE id = $1", [s.id]);
    else await db.query("UPDATE usage_segments SET rate = $2 WHERE id = $1", [s.id, rate]);
    return zero ? "closed" : "changed";
  }
  await db.query("UPDATE usage_segments SET ended_at = $2 WHERE id = $1", [s.id, o.at]);
  if (zero) return "closed";
  await open(db, o, rate);
  return "changed";
}

export async function observe(pool: pg.Pool, o: Observation): Promise<ObserveResult> {
  const rate = checkObservation(o);
  return inTransaction(pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [o.resourceUid, o.dimension]);
    const res = await tx.query<SegmentRow>(
      `SELECT id, rate, started_at, ended_at FROM usage_segments
       WHERE resource_uid = $1 AND dimension = $2 ORDER BY started_at DESC LIMIT 1`,
      [o.resourceUid, o.dimension],
    );
    const latest = res.rows[0];
    const boundary = latest ? (latest.ended_at ?? latest.started_at) : undefined;
    if (boundary && o.at < boundary) return { change: "stale", late: false };
    const late = await isLate(tx, o.at);
    if (latest && latest.ended_at === null) return { change: await onOpen(tx, latest, o, rate), late };
    if (rate === "0") return { change: "unchanged", late: false };
    await checkCluster(tx, o);
    try {
      await open(tx, o, rate);
    } catch (err) {
      if (sqlState(err) === "23503")
        throw new LedgerInputError(`cluster ${o.clusterId} has no billing record`);
      throw err;
    }
    return { change: "opened", late };
  });
}

/** An open segment's resource: what the usage recorder checks against the objects that exist. */
export interface OpenSegment {
  clusterId: string;
  resourceUid: string;
  dimension: Dimension;
}

/**
 * Every open segment's resource (the partial index of open segments per cluster): as many as
 * there are metered resources alive, however long the ledger.
 */
export async function openSegments(db: Queryable): Promise<OpenSegment[]> {
  const res = await db.query<{ cluster_id: string; resource_uid: string; dimension: Dimension }>(
    "SELECT cluster_id, resource_uid, dimension FROM usage_segments WHERE ended_at IS NULL ORDER BY cluster_id",
  );
  return res.rows.map((r) => ({
    clusterId: r.cluster_id,
    resourceUid: r.resource_uid,
    dimension: r.dimension,
  }));
}
