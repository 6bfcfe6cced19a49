/**
 * The usage exporter (issue 35): on the leader, at start and then every interval, it rolls the
 * ledger's complete hours up and reports every unreported hourly row to the metering API, oldest
 * first, in batches of at most 25 events (one call each; rows of one API key, a cluster created
 * again under its name within the hour, travel as one event with their sum), marking each row by
 * the answer:
 *
 *   accepted, duplicate  → reported (compare-and-set from unreported, with the API's event ID)
 *   expired              → expired, reason "api" (the API said it is too late)
 *   rejected             → rejected, reason the API's code and message
 *   an hour older than the API's lateness (24 h) → expired without a call, reason "lateness"
 *
 * A call whose outcome is unknown (5xx, 429, a timeout, a dropped connection) leaves its rows
 * unreported and ends the pass; the next pass comes after the interval, or after Retry-After when
 * the API asked for longer. Memory holds one batch at a time, never the ledger.
 *
 * Exactly once: the ledger holds one row per (resource, dimension, hour), the API accepts one
 * event per (resource, dimension, hour), and a row is marked reported only after the API answered
 * for it. A crash (or a lost leadership, or a lost answer) between the API's acceptance and the
 * mark leaves the row unreported; the next pass, here or on the next leader, sends it again and
 * the API answers Duplicate, which marks it reported. Nothing is reported twice, nothing is lost.
 */
import { randomUUID } from "node:crypto";
import type { Registry } from "prom-client";
import {
  queueCursor,
  type Accepted,
  type Ledger,
  type QueueCursor,
  type Refused,
  type UsageHour,
} from "../metering/ledger.ts";
import {
  MAX_EVENTS_PER_BATCH,
  MeteringError,
  usageKey,
  type MarketplaceMeteringClient,
  type UsageEvent,
  type UsageOutcome,
} from "../metering/marketplace.ts";
import { sleep } from "../runtime/backoff.ts";
import { failpoint } from "../runtime/failpoints.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { usageMetrics, type UsageMetrics } from "./metrics.ts";

export const DEFAULT_EXPORT_INTERVAL_MS = 60_000;
/** How old an hour the Azure Marketplace metering API still takes. */
export const ACCEPTED_LATENESS_MS = 24 * 3600_000;
/**
 * How long after an hour ends it is rolled up: time for the observations of its last minutes to
 * be written (an hour once rolled up is never rewritten).
 */
export const DEFAULT_SETTLE_MS = 5 * 60_000;

export type ExporterLedger = Pick<
  Ledger,
  "rollUp" | "unreportedBatch" | "markReported" | "markRejected" | "markExpired" | "oldestUnreportedHour"
>;

export interface UsageExporterOptions {
  ledger: ExporterLedger;
  client: Pick<MarketplaceMeteringClient, "report">;
  /** The plan the usage is reported against (the marketplace offer's plan ID). */
  planId: string;
  intervalMs?: number;
  settleMs?: number;
  /** Default () => new Date(). */
  now?: () => Date;
  log?: Logger;
  registry?: Registry;
}

export interface ExportPass {
  /** Rows the roll-up wrote. */
  rolledUp: number;
  reported: number;
  duplicates: number;
  rejected: number;
  expired: number;
  /** Why the pass ended early, its rows left for the next pass. */
  failure?: MeteringError;
  /** How long until the next pass. */
  nextPassMs: number;
}

export class UsageExporter implements Runnable {
  readonly needLeaderElection = true;
  readonly #o: Required<Omit<UsageExporterOptions, "registry" | "log">>;
  readonly #log: Logger;
  readonly #metrics: UsageMetrics;

  constructor(opts: UsageExporterOptions) {
    if (!opts.planId.trim()) throw new Error("the usage exporter needs a plan ID (--metering-plan-id)");
    this.#o = {
      ledger: opts.ledger,
      client: opts.client,
      planId: opts.planId,
      intervalMs: opts.intervalMs ?? DEFAULT_EXPORT_INTERVAL_MS,
      settleMs: opts.settleMs ?? DEFAULT_SETTLE_MS,
      now: opts.now ?? (() => new Date()),
    };
    this.#log = (opts.log ?? silentLogger).child({ component: "usage-exporter" });
    this.#metrics = usageMetrics(opts.registry);
    this.#metrics.lag.now = this.#o.now;
  }

  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let wait = this.#o.intervalMs;
      try {
        wait = (await this.runOnce(signal)).nextPassMs;
      } catch (err) {
        if (!signal.aborted) this.#log.error("Usage export pass failed", err);
      }
      await sleep(wait, signal);
    }
    // No longer the leader (or stopping): the leader's gauge is the one that counts, this one says 0.
    this.#metrics.lag.oldest = undefined;
    this.#metrics.lag.stalledSince = undefined;
  }

  /**
   * One pass: roll up, then report every unreported row (or until a call fails). A pass that
   * throws (the ledger unreachable) counts as stalled for the lag gauge from its time on.
   */
  async runOnce(signal?: AbortSignal): Promise<ExportPass> {
    const now = this.#o.now();
    const { lag } = this.#metrics;
    try {
      const pass = await this.#pass(now, signal);
      lag.stalledSince = undefined;
      return pass;
    } catch (err) {
      if (!signal?.aborted) lag.stalledSince ??= now;
      throw err;
    } finally {
      lag.oldest = await this.#o.ledger.oldestUnreportedHour().catch(() => lag.oldest);
    }
  }

  async #pass(now: Date, signal: AbortSignal | undefined): Promise<ExportPass> {
    const { written } = await this.#o.ledger.rollUp({ now, settleMs: this.#o.settleMs });
    this.#metrics.hoursRecorded.inc(written);
    const pass: ExportPass = {
      rolledUp: written,
      reported: 0,
      duplicates: 0,
      rejected: 0,
      expired: 0,
      nextPassMs: this.#o.intervalMs,
    };
    const correlationId = randomUUID();
    // One read of the queue per batch, on from where the last one stopped: rows marked meanwhile
    // are behind the cursor, and rows left unreported by a failure end the pass.
    let after: QueueCursor | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const read = await this.#o.ledger.unreportedBatch(MAX_EVENTS_PER_BATCH + 1, after);
      if (read.length === 0) break;
      const batch = wholeKeys(read, MAX_EVENTS_PER_BATCH);
      const last = batch[batch.length - 1];
      if (last) after = queueCursor(last);
      const sendable = await this.#expireLate(batch, now, pass);
      if (sendable.length === 0) continue;
      const failure = await this.#send(byKey(sendable), pass, { correlationId, signal });
      if (failure) {
        pass.failure = failure;
        pass.nextPassMs = Math.max(this.#o.intervalMs, failure.retryAfterMs ?? 0);
        break;
      }
    }
    if (pass.rolledUp + pass.reported + pass.rejected + pass.expired > 0 || pass.failure)
      this.#log.info("Usage export pass", {
        rolledUp: pass.rolledUp,
        reported: pass.reported,
        duplicates: pass.duplicates,
        rejected: pass.rejected,
        expired: pass.expired,
        ...(pass.failure ? { failure: pass.failure.message, nextPassMs: pass.nextPassMs } : {}),
      });
    return pass;
  }

  /** Marks the rows the API would no longer take expired, without a call; returns the others. */
  async #expireLate(batch: UsageHour[], now: Date, pass: ExportPass): Promise<UsageHour[]> {
    const oldest = now.getTime() - ACCEPTED_LATENESS_MS;
    const late = batch.filter((r) => r.hourStart.getTime() < oldest);
    if (late.length === 0) return batch;
    const reason = `lateness: the hour began more than 24 h before ${now.toISOString()}, later than the metering API takes`;
    const marked = await this.#o.ledger.markExpired(late.map((r) => ({ id: r.id, reason })));
    pass.expired += marked.length;
    this.#metrics.unreportable.inc({ state: "expired", reason: "lateness" }, marked.length);
    this.#log.error("Usage hours expired unreported: older than the metering API takes", undefined, {
      rows: marked.length,
      oldest: late[0]?.hourStart.toISOString(),
    });
    return batch.filter((r) => r.hourStart.getTime() >= oldest);
  }

  /** One call for `groups` (one event each); the failure when its outcome is unknown. */
  async #send(
    groups: UsageHour[][],
    pass: ExportPass,
    opts: { correlationId: string; signal: AbortSignal | undefined },
  ): Promise<MeteringError | undefined> {
    const events = groups.map((g) => this.#event(g));
    let outcomes: UsageOutcome[];
    try {
      outcomes = await this.#o.client.report(events, {
        correlationId: opts.correlationId,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (err) {
      if (!(err instanceof MeteringError)) throw err;
      this.#metrics.exportFailures.inc({ failure: err.failure });
      this.#log.error("Metering API call failed; its hours stay unreported for the next pass", err, {
        rows: groups.flat().length,
        retryable: err.retryable,
      });
      return err;
    }
    failpoint("usage/after-export-before-mark");
    await this.#mark(groups, outcomes, pass);
    return undefined;
  }

  /** Marks every row of each group by its event's outcome. */
  async #mark(groups: UsageHour[][], outcomes: UsageOutcome[], pass: ExportPass): Promise<void> {
    const reported: Accepted[] = [];
    const rejected: Refused[] = [];
    const expired: Refused[] = [];
    const counts = new Map<string, { dimension: string; outcome: "accepted" | "duplicate" }>();
    outcomes.forEach((o, i) => {
      const group = groups[i] ?? [];
      const first = group[0];
      if (!first) return;
      if (o.outcome === "accepted" || o.outcome === "duplicate") {
        const usageEventId = o.usageEventId || `${o.outcome} (the API gave no event ID)`;
        for (const row of group) {
          reported.push({ id: row.id, usageEventId });
          counts.set(row.id, { dimension: row.dimension, outcome: o.outcome });
        }
        if (o.outcome === "duplicate" && !o.sameQuantity)
          this.#log.error(
            "The metering API holds another quantity for an hour the ledger reports",
            undefined,
            {
              rows: group.map((r) => r.id),
              resourceId: first.resourceId,
              dimension: first.dimension,
              hour: first.hourStart.toISOString(),
              quantity: this.#event(group).quantity,
            },
          );
      } else if (o.outcome === "expired") {
        for (const row of group)
          expired.push({ id: row.id, reason: "api: the metering API answered Expired" });
      } else {
        for (const row of group) rejected.push({ id: row.id, reason: `${o.code}: ${o.message}` });
        this.#metrics.unreportable.inc({ state: "rejected", reason: o.code }, group.length);
      }
    });
    // Compare-and-set from unreported: a row another leader marked meanwhile is not marked twice.
    const marked = await this.#o.ledger.markReported(reported, this.#o.now());
    for (const id of marked) {
      const c = counts.get(id);
      if (!c) continue;
      this.#metrics.exported.inc(c);
      pass.reported++;
      if (c.outcome === "duplicate") pass.duplicates++;
    }
    pass.rejected += (await this.#o.ledger.markRejected(rejected)).length;
    const gone = await this.#o.ledger.markExpired(expired);
    pass.expired += gone.length;
    this.#metrics.unreportable.inc({ state: "expired", reason: "api" }, gone.length);
  }

  /** One event for rows of one key: their quantities summed in millionths (the ledger's scale). */
  #event(group: UsageHour[]): UsageEvent {
    const [first] = group;
    if (!first) throw new Error("an event needs at least one ledger row");
    const micros = group.reduce((sum, r) => sum + Math.round(Number(r.quantity) * 1e6), 0);
    return {
      resourceId: first.resourceId,
      planId: this.#o.planId,
      dimension: first.dimension,
      quantity: micros / 1e6,
      hour: first.hourStart,
    };
  }
}

const keyOfRow = (r: UsageHour): string =>
  usageKey({ resourceId: r.resourceId, dimension: r.dimension, hour: r.hourStart });

/**
 * The first `limit` rows of a read of `limit + 1`, less the last key's rows when the extra row
 * shows that key going on: a key's rows travel together. A read that is all one key (more rows
 * of one key than a call takes) is taken as it is.
 */
function wholeKeys(read: UsageHour[], limit: number): UsageHour[] {
  const taken = read.slice(0, limit);
  const last = taken[taken.length - 1];
  const next = read[limit];
  if (!last || !next || keyOfRow(next) !== keyOfRow(last)) return taken;
  const key = keyOfRow(last);
  const cut = taken.findIndex((r) => keyOfRow(r) === key);
  return cut > 0 ? taken.slice(0, cut) : taken;
}

/**
 * Rows grouped by the metering API's key (ARM resource ID, dimension, hour); the ledger keys by the
 * resource's uid, so a cluster deleted and created again under its name within an hour has two
 * rows of one key. The API takes one event per key: it carries their sum. Rows of a key are
 * adjacent in the queue's order.
 */
function byKey(rows: UsageHour[]): UsageHour[][] {
  const groups: UsageHour[][] = [];
  let key: string | undefined;
  for (const r of rows) {
    const k = keyOfRow(r);
    if (k === key) groups[groups.length - 1]?.push(r);
    else groups.push([r]);
    key = k;
  }
  return groups;
}
