/**
 * The usage ledger (issue 35, decision 0013): billing records per cluster, usage segments as the
 * controllers observe them, hourly usage rows rolled up from them, and the export state of each
 * row, in PostgreSQL. Every write is idempotent under its key, so a retry after a crash, a
 * timeout, a restarted server or a second leader changes nothing it should not.
 *
 *   const ledger = await Ledger.open(url);         // migrates, then pools connections
 *   await ledger.recordCluster({ clusterId, resourceId, subscriptionId, location, createdAt });
 *   await ledger.observe({ clusterId, resourceUid: clusterId, resourceId, dimension: "controlPlaneHours", rate: 1, at });
 *   await ledger.rollUp({ now: new Date() });
 *   for await (const batch of ledger.unreported(500)) { ... await ledger.markReported(accepted, new Date()); }
 */
import pg from "pg";
import {
  billingRecord,
  recordCluster,
  recordDeleted,
  recordFirstSucceeded,
  recordUndeleted,
  type BillingRecord,
  type ClusterFacts,
  type FactWrite,
} from "./billing.ts";
import { migrateLedger } from "./migrate.ts";
import { rollUp, type RollUpOptions, type RollUpResult } from "./rollup.ts";
import { observe, openSegments, type Observation, type ObserveResult, type OpenSegment } from "./segments.ts";
import {
  markReported,
  markUnreportable,
  oldestUnreportedHour,
  unreported,
  unreportedBatch,
  usageRows,
  usageTotals,
  type Accepted,
  type QueueCursor,
  type Refused,
  type UsageFilter,
  type UsageHour,
  type UsageTotal,
} from "./usage.ts";

export { LedgerConflictError, LedgerInputError } from "./db.ts";
export type { BillingRecord, ClusterFacts, FactWrite } from "./billing.ts";
export type { RollUpOptions, RollUpResult } from "./rollup.ts";
export {
  DIMENSIONS,
  type Dimension,
  type Observation,
  type ObserveChange,
  type ObserveResult,
  type OpenSegment,
} from "./segments.ts";
export { queueCursor } from "./usage.ts";
export type {
  Accepted,
  Cursor,
  QueueCursor,
  Refused,
  UsageFilter,
  UsageHour,
  UsageState,
  UsageTotal,
} from "./usage.ts";

export interface LedgerOptions {
  /** Connections at most (default 4: the ledger's writes are short). */
  maxConnections?: number;
  /** Errors of idle connections (a restarted server); the pool replaces them. Default: ignored. */
  onConnectionError?: (err: Error) => void;
  /** node-pg-migrate's log lines. */
  log?: (line: string) => void;
}

export class Ledger {
  private readonly pool: pg.Pool;

  private constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Applies pending migrations, then opens a pool to `url`. */
  static async open(url: string, opts: LedgerOptions = {}): Promise<Ledger> {
    await migrateLedger(url, opts.log);
    const pool = new pg.Pool({ connectionString: url, max: opts.maxConnections ?? 4 });
    // Without a listener an idle connection's error (the server restarted) would crash the process.
    pool.on("error", (err) => opts.onConnectionError?.(err));
    return new Ledger(pool);
  }

  recordCluster(facts: ClusterFacts): Promise<FactWrite> {
    return recordCluster(this.pool, facts);
  }

  recordFirstSucceeded(clusterId: string, at: Date): Promise<FactWrite> {
    return recordFirstSucceeded(this.pool, clusterId, at);
  }

  /** Also ends the cluster's open segments at `at`: nothing is counted after a deletion. */
  recordDeleted(clusterId: string, at: Date): Promise<FactWrite> {
    return recordDeleted(this.pool, clusterId, at);
  }

  /** The cluster is alive again from `at` (undeleted under its ID): usage counts from then on. */
  recordUndeleted(clusterId: string, at: Date): Promise<FactWrite> {
    return recordUndeleted(this.pool, clusterId, at);
  }

  billingRecord(clusterId: string): Promise<BillingRecord | undefined> {
    return billingRecord(this.pool, clusterId);
  }

  observe(o: Observation): Promise<ObserveResult> {
    return observe(this.pool, o);
  }

  /** The resources with an open segment (as many as are metered now). */
  openSegments(): Promise<OpenSegment[]> {
    return openSegments(this.pool);
  }

  rollUp(opts: RollUpOptions): Promise<RollUpResult> {
    return rollUp(this.pool, opts);
  }

  unreportedBatch(limit: number, after?: QueueCursor): Promise<UsageHour[]> {
    return unreportedBatch(this.pool, limit, after);
  }

  unreported(batchSize: number): AsyncGenerator<UsageHour[]> {
    return unreported(this.pool, batchSize);
  }

  oldestUnreportedHour(): Promise<Date | undefined> {
    return oldestUnreportedHour(this.pool);
  }

  markReported(accepted: Accepted[], at: Date): Promise<string[]> {
    return markReported(this.pool, accepted, at);
  }

  markRejected(refused: Refused[]): Promise<string[]> {
    return markUnreportable(this.pool, "rejected", refused);
  }

  markExpired(refused: Refused[]): Promise<string[]> {
    return markUnreportable(this.pool, "expired", refused);
  }

  usageTotals(filter: UsageFilter): Promise<UsageTotal[]> {
    return usageTotals(this.pool, filter);
  }

  usageRows(filter: UsageFilter, batchSize: number): AsyncGenerator<UsageHour[]> {
    return usageRows(this.pool, filter, batchSize);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
