/**
 * Billing records: one per cluster, keyed by its cluster ID (the HcpCluster's original uid). Each
 * fact is written once: the same fact again changes nothing, a different one is refused with a
 * LedgerConflictError naming it. A deletion also closes the cluster's open usage segments at the
 * deletion time, in the same transaction, so counting stops within the hour it was deleted in.
 */
import type pg from "pg";
import {
  LedgerConflictError,
  LedgerInputError,
  inTransaction,
  requireText,
  requireTime,
  type Queryable,
} from "./db.ts";

export interface ClusterFacts {
  /** The cluster ID: operators/api/v1alpha1/labels.ts originalUid() of the HcpCluster. */
  clusterId: string;
  /** Its ARM resource ID (compared case-insensitively, as ARM does). */
  resourceId: string;
  /** Stored lower-cased, as the frontend keeps it. */
  subscriptionId: string;
  tenantId?: string;
  location: string;
  createdAt: Date;
}

export interface BillingRecord extends ClusterFacts {
  firstSucceededAt?: Date;
  /** While it is deleted; an undelete clears it (the window is kept in cluster_undeletions). */
  deletedAt?: Date;
  /** Its latest undelete: usage counts again from here. */
  undeletedAt?: Date;
}

/** What a write did: wrote a fact, or found it already there. */
export type FactWrite = "recorded" | "unchanged";

interface Row {
  cluster_id: string;
  resource_id: string;
  subscription_id: string;
  tenant_id: string | null;
  location: string;
  created_at: Date;
  first_succeeded_at: Date | null;
  deleted_at: Date | null;
  undeleted_at?: Date | null;
}

function toRecord(r: Row): BillingRecord {
  return {
    clusterId: r.cluster_id,
    resourceId: r.resource_id,
    subscriptionId: r.subscription_id,
    ...(r.tenant_id !== null && { tenantId: r.tenant_id }),
    location: r.location,
    createdAt: r.created_at,
    ...(r.first_succeeded_at && { firstSucceededAt: r.first_succeeded_at }),
    ...(r.deleted_at && { deletedAt: r.deleted_at }),
    ...(r.undeleted_at && { undeletedAt: r.undeleted_at }),
  };
}

async function lockRecord(db: Queryable, clusterId: string): Promise<Row | undefined> {
  const res = await db.query<Row>("SELECT * FROM billing_records WHERE cluster_id = $1 FOR UPDATE", [
    clusterId,
  ]);
  return res.rows[0];
}

export async function billingRecord(db: Queryable, clusterId: string): Promise<BillingRecord | undefined> {
  const res = await db.query<Row>(
    `SELECT b.*, (SELECT max(undeleted_at) FROM cluster_undeletions u WHERE u.cluster_id = b.cluster_id) AS undeleted_at
       FROM billing_records b WHERE cluster_id = $1`,
    [clusterId],
  );
  return res.rows[0] && toRecord(res.rows[0]);
}

/**
 * Throws unless `recorded` is absent or equal to `offered`, ignoring case (ARM IDs, GUIDs, regions
 * and ISO times all compare so); true when it is absent, to be written.
 */
function setOnce(subject: string, field: string, recorded: string | undefined, offered: string): boolean {
  if (recorded === undefined) return true;
  if (recorded.toLowerCase() !== offered.toLowerCase())
    throw new LedgerConflictError(subject, field, JSON.stringify(recorded), JSON.stringify(offered));
  return false;
}

function checkFacts(f: ClusterFacts): void {
  for (const field of ["clusterId", "resourceId", "subscriptionId", "location"] as const)
    requireText(field, f[field]);
  if (f.tenantId !== undefined) requireText("tenantId", f.tenantId);
  requireTime("createdAt", f.createdAt);
}

/** Records a cluster's identity and creation; the tenant may be filled in later, once. */
export async function recordCluster(pool: pg.Pool, f: ClusterFacts): Promise<FactWrite> {
  checkFacts(f);
  return inTransaction(pool, async (tx) => {
    const inserted = await tx.query(
      `INSERT INTO billing_records (cluster_id, resource_id, subscription_id, tenant_id, location, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (cluster_id) DO NOTHING`,
      [
        f.clusterId,
        f.resourceId,
        f.subscriptionId.toLowerCase(),
        f.tenantId ?? null,
        f.location,
        f.createdAt,
      ],
    );
    if (inserted.rowCount === 1) return "recorded";
    const row = await lockRecord(tx, f.clusterId);
    if (!row) throw new Error(`billing record of cluster ${f.clusterId} vanished while being written`);
    const subject = `billing record of cluster ${f.clusterId}`;
    setOnce(subject, "resourceId", row.resource_id, f.resourceId);
    setOnce(subject, "subscriptionId", row.subscription_id, f.subscriptionId);
    setOnce(subject, "location", row.location, f.location);
    setOnce(subject, "createdAt", row.created_at.toISOString(), f.createdAt.toISOString());
    if (f.tenantId === undefined || !setOnce(subject, "tenantId", row.tenant_id ?? undefined, f.tenantId))
      return "unchanged";
    await tx.query("UPDATE billing_records SET tenant_id = $2 WHERE cluster_id = $1", [
      f.clusterId,
      f.tenantId,
    ]);
    return "recorded";
  });
}

type TimeFact = "firstSucceededAt" | "deletedAt";
const COLUMN: Record<TimeFact, "first_succeeded_at" | "deleted_at"> = {
  firstSucceededAt: "first_succeeded_at",
  deletedAt: "deleted_at",
};

/** Sets one time fact once; `then` runs in the same transaction when it was written now. */
async function recordTime(
  pool: pg.Pool,
  { clusterId, fact, at }: { clusterId: string; fact: TimeFact; at: Date },
  then?: (tx: pg.PoolClient) => Promise<void>,
): Promise<FactWrite> {
  requireText("clusterId", clusterId);
  requireTime(fact, at);
  return inTransaction(pool, async (tx) => {
    const row = await lockRecord(tx, clusterId);
    const subject = `billing record of cluster ${clusterId}`;
    if (!row) throw new LedgerInputError(`${subject}: none exists; record the cluster before its ${fact}`);
    if (at < row.created_at)
      throw new LedgerInputError(
        `${subject}: ${fact} ${at.toISOString()} is before createdAt ${row.created_at.toISOString()}`,
      );
    if (fact === "deletedAt" && !row.deleted_at && (await pastDeletion(tx, subject, clusterId, at)))
      return "unchanged";
    if (!setOnce(subject, fact, row[COLUMN[fact]]?.toISOString(), at.toISOString())) return "unchanged";
    await tx.query(`UPDATE billing_records SET ${COLUMN[fact]} = $2 WHERE cluster_id = $1`, [clusterId, at]);
    await then?.(tx);
    return "recorded";
  });
}

/**
 * True when a deletion at `at` is one an undelete already ended (the same deletion told again);
 * refuses one from before the latest undelete that is not.
 */
async function pastDeletion(tx: Queryable, subject: string, clusterId: string, at: Date): Promise<boolean> {
  const res = await tx.query<{ same: boolean; undeleted_at: Date | null }>(
    `SELECT bool_or(deleted_at = $2) AS same, max(undeleted_at) AS undeleted_at
       FROM cluster_undeletions WHERE cluster_id = $1`,
    [clusterId, at],
  );
  const r = res.rows[0];
  if (r?.same) return true;
  if (r?.undeleted_at && at < r.undeleted_at)
    throw new LedgerInputError(
      `${subject}: deletedAt ${at.toISOString()} is before its latest undelete at ${r.undeleted_at.toISOString()}`,
    );
  return false;
}

/** When the cluster first succeeded (provisioning done): billing starts to matter from here. */
export function recordFirstSucceeded(pool: pg.Pool, clusterId: string, at: Date): Promise<FactWrite> {
  return recordTime(pool, { clusterId, fact: "firstSucceededAt", at });
}

/**
 * When the cluster was deleted. Its open segments end then; one opened at or after it (an
 * observation that raced the deletion) is dropped: nothing is billed after a deletion.
 */
export function recordDeleted(pool: pg.Pool, clusterId: string, at: Date): Promise<FactWrite> {
  return recordTime(pool, { clusterId, fact: "deletedAt", at }, async (tx) => {
    await tx.query(
      "DELETE FROM usage_segments WHERE cluster_id = $1 AND ended_at IS NULL AND started_at >= $2",
      [clusterId, at],
    );
    await tx.query("UPDATE usage_segments SET ended_at = $2 WHERE cluster_id = $1 AND ended_at IS NULL", [
      clusterId,
      at,
    ]);
  });
}

/**
 * The cluster was undeleted at `at` (its object made again under its cluster ID): the deletion
 * moves into cluster_undeletions and the record reads as alive, so usage counts again from `at`.
 * Idempotent: the same undelete again is "unchanged"; one of a cluster not deleted, or before its
 * deletion, is refused.
 */
export async function recordUndeleted(pool: pg.Pool, clusterId: string, at: Date): Promise<FactWrite> {
  requireText("clusterId", clusterId);
  requireTime("undeletedAt", at);
  return inTransaction(pool, async (tx) => {
    const row = await lockRecord(tx, clusterId);
    const subject = `billing record of cluster ${clusterId}`;
    if (!row) throw new LedgerInputError(`${subject}: none exists; an undelete needs a deleted cluster`);
    if (!row.deleted_at) {
      const same = await tx.query(
        "SELECT 1 FROM cluster_undeletions WHERE cluster_id = $1 AND undeleted_at = $2",
        [clusterId, at],
      );
      if (same.rowCount) return "unchanged";
      throw new LedgerInputError(`${subject}: not deleted, so it cannot be undeleted at ${at.toISOString()}`);
    }
    if (at < row.deleted_at)
      throw new LedgerInputError(
        `${subject}: undeletedAt ${at.toISOString()} is before its deletion at ${row.deleted_at.toISOString()}`,
      );
    await tx.query(
      "INSERT INTO cluster_undeletions (cluster_id, deleted_at, undeleted_at) VALUES ($1, $2, $3)",
      [clusterId, row.deleted_at, at],
    );
    await tx.query("UPDATE billing_records SET deleted_at = NULL WHERE cluster_id = $1", [clusterId]);
    return "recorded";
  });
}
