/**
 * The usage exporter (issue 35): on the leader, at start and then every interval, it rolls the
 * ledger's complete hours up and reports every unreported hourly row to the metering API, oldest
 * first, in batches of at most 25 (one call each), marking each row by the answer:
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
import type { Accepted, Ledger, Refused, UsageHour } from "../metering/ledger.ts";
import {
  MAX_EVENTS_PER_BATCH,
  MeteringError,
  usageKey,
  type MarketplaceMeteringClient,
  type UsageEvent,
  type UsageOutcome,
} from "../metering/marketplace.ts";
import { sleep } from "../runtime/backoff.ts";
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
    // Marked rows leave the unreported index, so each read starts from the oldest again; rows
    // left unreported by a failure end the pass, so the loop always advances.
    for (;;) {
      signal?.throwIfAborted();
      const batch = await this.#o.ledger.unreportedBatch(MAX_EVENTS_PER_BATCH);
      if (batch.length === 0) break;
      const sendable = await this.#sameKey(await this.#expireLate(batch, now, pass), pass);
      if (sendable.length === 0) continue;
      const failure = await this.#send(sendable, pass, { correlationId, signal });
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

  /**
   * The API keys an event by ARM resource ID, dimension and hour; the ledger by the resource's uid.
   * Two rows of one ARM ID in one hour (a cluster deleted and created again under its name within
   * the hour) cannot both be billed: the second is rejected with that reason, not sent (the API
   * would answer Duplicate, which would read as reported).
   */
  async #sameKey(rows: UsageHour[], pass: ExportPass): Promise<UsageHour[]> {
    const seen = new Set<string>();
    const first: UsageHour[] = [];
    const clashes: Refused[] = [];
    for (const r of rows) {
      const key = usageKey({ resourceId: r.resourceId, dimension: r.dimension, hour: r.hourStart });
      if (!seen.has(key)) {
        seen.add(key);
        first.push(r);
      } else
        clashes.push({
          id: r.id,
          reason: `SameResourceHour: another ledger row has ARM resource ${r.resourceId}, ${r.dimension} and hour ${r.hourStart.toISOString()}; the metering API takes one`,
        });
    }
    if (clashes.length > 0) {
      pass.rejected += (await this.#o.ledger.markRejected(clashes)).length;
      this.#metrics.unreportable.inc({ state: "rejected", reason: "SameResourceHour" }, clashes.length);
    }
    return first;
  }

  /** One call for `rows`; the failure when its outcome is unknown or it was refused whole. */
  async #send(
    rows: UsageHour[],
    pass: ExportPass,
    opts: { correlationId: string; signal: AbortSignal | undefined },
  ): Promise<MeteringError | undefined> {
    const events = rows.map((r) => this.#event(r));
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
        rows: rows.length,
        retryable: err.retryable,
      });
      return err;
    }
    await this.#mark(rows, outcomes, pass);
    return undefined;
  }

  async #mark(rows: UsageHour[], outcomes: UsageOutcome[], pass: ExportPass): Promise<void> {
    const reported: Accepted[] = [];
    const rejected: Refused[] = [];
    const expired: Refused[] = [];
    const counts: Array<{ dimension: string; outcome: "accepted" | "duplicate" }> = [];
    outcomes.forEach((o, i) => {
      const row = rows[i];
      if (!row) return;
      if (o.outcome === "accepted" || o.outcome === "duplicate") {
        const usageEventId = o.usageEventId || `${o.outcome} (the API gave no event ID)`;
        reported.push({ id: row.id, usageEventId });
        counts.push({ dimension: row.dimension, outcome: o.outcome });
        if (o.outcome === "duplicate" && !o.sameQuantity)
          this.#log.error(
            "The metering API holds another quantity for an hour the ledger reports",
            undefined,
            {
              row: row.id,
              resourceId: row.resourceId,
              dimension: row.dimension,
              hour: row.hourStart.toISOString(),
              quantity: row.quantity,
            },
          );
      } else if (o.outcome === "expired") {
        expired.push({ id: row.id, reason: "api: the metering API answered Expired" });
      } else {
        rejected.push({ id: row.id, reason: `${o.code}: ${o.message}` });
        this.#metrics.unreportable.inc({ state: "rejected", reason: o.code });
      }
    });
    // Compare-and-set from unreported: a row another leader marked meanwhile is not marked twice.
    const marked = new Set(await this.#o.ledger.markReported(reported, this.#o.now()));
    for (const [i, c] of counts.entries())
      if (marked.has(reported[i]?.id ?? ""))
        this.#metrics.exported.inc({ dimension: c.dimension, outcome: c.outcome });
    pass.reported += marked.size;
    pass.duplicates += counts.filter(
      (c, i) => c.outcome === "duplicate" && marked.has(reported[i]?.id ?? ""),
    ).length;
    pass.rejected += (await this.#o.ledger.markRejected(rejected)).length;
    const gone = await this.#o.ledger.markExpired(expired);
    pass.expired += gone.length;
    this.#metrics.unreportable.inc({ state: "expired", reason: "api" }, gone.length);
  }

  #event(r: UsageHour): UsageEvent {
    return {
      resourceId: r.resourceId,
      planId: this.#o.planId,
      dimension: r.dimension,
      quantity: Number(r.quantity),
      hour: r.hourStart,
    };
  }
}
