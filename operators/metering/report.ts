/**
 * Reads of the usage ledger for people (`hcpctl usage`): whether the schema is there, which
 * clusters a name stands for, and totals per cluster and dimension with how many of the hours are
 * in each export state. Read-only: nothing here migrates or writes. The hourly rows themselves
 * are usage.ts's `usageRows` (keyset batches).
 */
import { readdirSync } from "node:fs";
import { LedgerInputError, requireText, requireTime, type Queryable } from "./db.ts";
import { MIGRATIONS_DIR, MIGRATIONS_TABLE } from "./migrate.ts";
import type { Dimension } from "./segments.ts";

/** The migrations this code expects, by node-pg-migrate's name (the file name without `.sql`). */
export function expectedMigrations(dir = MIGRATIONS_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .map((f) => f.slice(0, -".sql".length))
    .sort();
}

/**
 * The expected migrations the database has not applied: all of them when it has no migrations
 * table (an empty database, or the wrong one), none when the schema is current.
 */
export async function missingMigrations(db: Queryable): Promise<string[]> {
  const expected = expectedMigrations();
  const table = await db.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [
    MIGRATIONS_TABLE,
  ]);
  if (!table.rows[0]?.present) return expected;
  const applied = await db.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`);
  const names = new Set(applied.rows.map((r) => r.name));
  return expected.filter((m) => !names.has(m));
}

/** A cluster as its billing record names it. */
export interface ClusterRef {
  clusterId: string;
  resourceId: string;
  subscriptionId: string;
  createdAt: Date;
  deletedAt?: Date;
}

/**
 * The clusters `ref` stands for, oldest first: the cluster with that ID; else every cluster
 * recorded under that ARM resource ID (a cluster deleted and created again under the same name is
 * another cluster, with its own ID); else every cluster named `ref` (`name` or
 * `resourceGroup/name`, matched against its ARM ID's tail, ignoring case as ARM does).
 */
export async function findClusters(
  db: Queryable,
  ref: string,
  subscriptionId?: string,
): Promise<ClusterRef[]> {
  requireText("cluster", ref);
  const sub =
    subscriptionId === undefined ? null : requireText("subscriptionId", subscriptionId).toLowerCase();
  const select = `SELECT cluster_id, resource_id, subscription_id, created_at, deleted_at FROM billing_records`;
  const bySub = `($2::text IS NULL OR subscription_id = $2)`;
  const byId = await db.query<Row>(`${select} WHERE cluster_id = $1 AND ${bySub}`, [ref, sub]);
  if (byId.rows.length > 0) return byId.rows.map(toRef);
  let res;
  if (ref.startsWith("/")) {
    res = await db.query<Row>(
      `${select} WHERE lower(resource_id) = lower($1) AND ${bySub} ORDER BY created_at`,
      [ref, sub],
    );
  } else {
    const parts = ref.toLowerCase().split("/");
    if (parts.length > 2 || parts.some((p) => p === ""))
      throw new LedgerInputError(
        `cluster "${ref}" is none of a cluster ID, an ARM resource ID, name or resourceGroup/name`,
      );
    const [group, name] = parts.length === 2 ? parts : [undefined, parts[0]];
    // The tail compared as text, not LIKE: names may hold characters LIKE treats as wildcards.
    res = await db.query<Row>(
      `${select} WHERE right(lower(resource_id), length($1) + 1) = '/' || $1
          AND ($3::text IS NULL OR strpos(lower(resource_id), '/resourcegroups/' || $3 || '/providers/') > 0)
          AND ${bySub} ORDER BY created_at`,
      [name, sub, group ?? null],
    );
  }
  return res.rows.map(toRef);
}

interface Row {
  cluster_id: string;
  resource_id: string;
  subscription_id: string;
  created_at: Date;
  deleted_at: Date | null;
}

function toRef(r: Row): ClusterRef {
  return {
    clusterId: r.cluster_id,
    resourceId: r.resource_id,
    subscriptionId: r.subscription_id,
    createdAt: r.created_at,
    ...(r.deleted_at && { deletedAt: r.deleted_at }),
  };
}

/** Usage of the region, a subscription or some clusters over hours [from, to). */
export interface SummaryFilter {
  subscriptionId?: string;
  /** Only these clusters (what `findClusters` found). */
  clusterIds?: readonly string[];
  from: Date;
  to: Date;
}

/** One cluster's usage of one dimension over the period, and how many of its hours stand where. */
export interface UsageSummary {
  subscriptionId: string;
  clusterId: string;
  /** The cluster's ARM resource ID (its billing record's). */
  resourceId: string;
  dimension: Dimension;
  /** The sum over the period, decimal text with 6 places. */
  quantity: string;
  hours: number;
  reportedHours: number;
  unreportedHours: number;
  rejectedHours: number;
  expiredHours: number;
}

/**
 * Totals per cluster and dimension, ordered by subscription, cluster (ARM ID, then creation) and
 * dimension: one aggregate over an index range (by subscription, cluster or hour).
 */
export async function usageSummary(db: Queryable, f: SummaryFilter): Promise<UsageSummary[]> {
  requireTime("from", f.from);
  requireTime("to", f.to);
  if (f.to <= f.from)
    throw new LedgerInputError(
      `period ends (${f.to.toISOString()}) at or before it begins (${f.from.toISOString()})`,
    );
  const params: unknown[] = [f.from, f.to];
  const clauses = ["u.hour_start >= $1", "u.hour_start < $2"];
  if (f.subscriptionId !== undefined) {
    params.push(requireText("subscriptionId", f.subscriptionId).toLowerCase());
    clauses.push(`u.subscription_id = $${params.length}`);
  }
  if (f.clusterIds !== undefined) {
    params.push([...f.clusterIds]);
    clauses.push(`u.cluster_id = ANY($${params.length}::text[])`);
  }
  const res = await db.query<{
    subscription_id: string;
    cluster_id: string;
    resource_id: string;
    dimension: Dimension;
    quantity: string;
    hours: string;
    reported: string;
    unreported: string;
    rejected: string;
    expired: string;
  }>(
    `SELECT u.subscription_id, u.cluster_id, b.resource_id, u.dimension, sum(u.quantity) AS quantity,
            count(*) AS hours,
            count(*) FILTER (WHERE u.state = 'reported') AS reported,
            count(*) FILTER (WHERE u.state = 'unreported') AS unreported,
            count(*) FILTER (WHERE u.state = 'rejected') AS rejected,
            count(*) FILTER (WHERE u.state = 'expired') AS expired
       FROM usage_hours u JOIN billing_records b USING (cluster_id)
      WHERE ${clauses.join(" AND ")}
      GROUP BY u.subscription_id, u.cluster_id, b.resource_id, b.created_at, u.dimension
      ORDER BY u.subscription_id, lower(b.resource_id), b.created_at, u.cluster_id, u.dimension`,
    params,
  );
  return res.rows.map((r) => ({
    subscriptionId: r.subscription_id,
    clusterId: r.cluster_id,
    resourceId: r.resource_id,
    dimension: r.dimension,
    quantity: r.quantity,
    hours: Number(r.hours),
    reportedHours: Number(r.reported),
    unreportedHours: Number(r.unreported),
    rejectedHours: Number(r.rejected),
    expiredHours: Number(r.expired),
  }));
}
