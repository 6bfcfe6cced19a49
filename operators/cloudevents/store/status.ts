/**
 * The server's record of the newest status each agent reported, by resource ID: what the
 * ManifestWork reconcile writes to /status until it is written, the sequence ID that orders status
 * events, and the hash that status resync requests send back. Once written, the work itself holds
 * the status, so only the sequence, version and hash are kept (a status with feedback is most of
 * what a work costs in memory). In memory: after a restart it is seeded from what the works show
 * (seed()), so the status resync asks agents only for statuses that changed meanwhile, and the
 * first status per work is accepted.
 */
import type { StatusUpdate } from "../codec/manifestbundle.ts";
import { isNewerSequence, parseSnowflake } from "../codec/snowflake.ts";

/**
 * `accepted-unordered`: the content is kept, but its sequence ID is ahead of the server's clock by
 * more than the bound, so it is not kept to order what follows (an agent whose clock runs ahead
 * still converges; a forged ID from the year 2100 cannot outrank every later status).
 */
export type StatusVerdict = "accepted" | "accepted-unordered" | "stale-sequence";

/**
 * How far a sequence ID's clock may run ahead of the server's, and how late a status may
 * plausibly arrive behind a newer one of the same work (broker redelivery, reordering).
 */
export const MAX_SEQUENCE_SKEW_MS = 5 * 60_000;

/** The reported status was not written as it came; the work shows why instead. */
export interface StatusRefusal {
  reason: string;
  message: string;
}

export interface StoredStatus extends Omit<StatusUpdate, "status"> {
  /** The reported status, until it is written to the work (see written()). */
  status?: StatusUpdate["status"];
  /** Set when the report cannot be written to the work (too large, or refused by the apiserver). */
  refusal?: StatusRefusal;
}

export interface StatusStoreOptions {
  /** The server's clock, in milliseconds since the epoch. Default Date.now. */
  now?: () => number;
  /** Default MAX_SEQUENCE_SKEW_MS. */
  maxSkewMs?: number;
}

export class StatusStore {
  readonly #byId = new Map<string, StoredStatus>();
  readonly #now: () => number;
  readonly #maxSkewMs: number;

  constructor(opts: StatusStoreOptions = {}) {
    this.#now = opts.now ?? Date.now;
    this.#maxSkewMs = opts.maxSkewMs ?? MAX_SEQUENCE_SKEW_MS;
  }

  get(resourceId: string): StoredStatus | undefined {
    return this.#byId.get(resourceId);
  }

  /**
   * A report known only from the work that shows it (after a restart): its version and hash, no
   * body and no sequence, so the next report is accepted whatever its ID. A report already held is
   * newer than what the work shows, and is kept.
   */
  seed(report: Omit<StoredStatus, "status" | "refusal" | "sequenceId" | "deleted">): void {
    if (!this.#byId.has(report.resourceId)) this.#byId.set(report.resourceId, { ...report, deleted: false });
  }

  /**
   * Keeps the update unless it is ordered before the one already accepted. The order comes from
   * the agent's clock, so it is bounded: an ID more than maxSkewMs ahead of the server's clock is
   * kept without its ID (one such ID would otherwise outrank every real status until the work is
   * gone; refusing it instead would leave an agent whose clock runs ahead unheard), and an accepted
   * ID stops ordering what follows when
   * - the update is of another generation: the caller passes only statuses of the work's current
   *   generation, so the stored one is older whatever its sequence says; or
   * - the update is more than maxSkewMs behind it: nothing stays in flight that long, so the
   *   agent's clock was set back (or the stored ID came from a clock that was ahead); or
   * - the update's ID is of another snowflake node: the two cannot be ordered, so the update is
   *   kept without its ID.
   * A status of the same generation that is behind by less than that is a late delivery, and dropped.
   */
  offer(update: StatusUpdate, refusal?: StatusRefusal): StatusVerdict {
    const current = this.#byId.get(update.resourceId);
    // Deleted is final whatever its order: the agent has nothing left to report, so a status
    // after it, whatever its sequence, was sent before it and delivered late.
    if (current?.deleted && !update.deleted) return "stale-sequence";
    let verdict: StatusVerdict = "accepted";
    if (!update.deleted && update.sequenceId) {
      verdict = this.#order(update.sequenceId, update.resourceVersion, current);
      if (verdict === "stale-sequence") return verdict;
    }
    const kept = verdict === "accepted-unordered" ? { ...update, sequenceId: undefined } : update;
    this.#byId.set(update.resourceId, refusal ? { ...kept, refusal } : kept);
    return verdict;
  }

  #order(sequenceId: string, resourceVersion: number, current: StoredStatus | undefined): StatusVerdict {
    const candidateMs = parseSnowflake(sequenceId).timeMs;
    if (candidateMs > this.#now() + this.#maxSkewMs) return "accepted-unordered";
    if (!current?.sequenceId || current.resourceVersion !== resourceVersion) return "accepted";
    // IDs of two snowflake nodes cannot be ordered (Maestro refuses the later one); keeping the
    // content without the ID lets the next status of either node land, so one odd ID blocks nothing.
    if (parseSnowflake(current.sequenceId).node !== parseSnowflake(sequenceId).node)
      return "accepted-unordered";
    if (isNewerSequence(sequenceId, current.sequenceId)) return "accepted";
    const behindMs = parseSnowflake(current.sequenceId).timeMs - candidateMs;
    return behindMs > this.#maxSkewMs ? "accepted" : "stale-sequence";
  }

  /** Marks the stored report as not writable; its sequence and hash stay, so it is not asked for again. */
  refuse(resourceId: string, refusal: StatusRefusal): void {
    const current = this.#byId.get(resourceId);
    if (current) this.#byId.set(resourceId, { ...current, refusal });
  }

  /**
   * The stored report was written to the work: its body is dropped, its order and hash stay. A
   * newer report that came in while it was being written is not this one, and is kept whole.
   */
  written(resourceId: string, stored: StoredStatus): void {
    if (this.#byId.get(resourceId) !== stored || stored.status === undefined) return;
    this.#byId.set(resourceId, { ...stored, status: undefined });
  }

  statusHash(resourceId: string): string | undefined {
    return this.#byId.get(resourceId)?.statusHash;
  }

  delete(resourceId: string): void {
    this.#byId.delete(resourceId);
  }

  get size(): number {
    return this.#byId.size;
  }
}
