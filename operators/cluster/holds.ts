/**
 * Failures only the user can fix (a quota, a missing permission) are not retried on every status
 * event: the failure stands, without another call, for the same generation until the recheck
 * interval passes, so that watch events cannot turn a quota error into a stream of requests.
 * A retry asked on the cluster (RETRY_ANNOTATION, a new value) lets it go at once: someone fixed
 * it out of band and says so.
 */
import type { FailedStep, StepState } from "../hcp/steps.ts";

/** What a hold is for: the cluster's generation and its retry annotation ("" when none). */
export interface HoldKey {
  generation: number;
  retry: string;
}

interface Held {
  step: FailedStep;
  generation: number;
  at: number;
  /** The cluster's retry annotation when the failure was noted. */
  retry: string;
}

export class UserErrorHold {
  readonly #held = new OwnerSteps<Held>();
  readonly #recheckMs: number;
  readonly #now: () => number;

  constructor(recheckMs: number, now: () => number = Date.now) {
    this.#recheckMs = recheckMs;
    this.#now = now;
  }

  /** The failure that still stands for this owner, step and generation, if any. */
  held(owner: string, step: string, { generation, retry }: HoldKey): FailedStep | undefined {
    const h = this.#held.get(owner, step);
    if (!h || h.generation !== generation || h.retry !== retry || this.#now() - h.at >= this.#recheckMs)
      return undefined;
    return h.step;
  }

  /** Remembers a user failure; any other outcome clears what was held. */
  note(owner: string, step: string, { generation, retry }: HoldKey, outcome: StepState): void {
    if (outcome.state === "failed" && outcome.userActionRequired)
      this.#held.set(owner, step, { step: outcome, generation, at: this.#now(), retry });
    else this.#held.delete(owner, step);
  }

  /** Drops everything held for an owner that is gone. */
  forget(owner: string): void {
    this.#held.forget(owner);
  }

  get size(): number {
    return this.#held.size;
  }
}

/**
 * Entries per owner and step. Keyed by owner first so that forgetting a deleted cluster does not
 * walk the entries of every other cluster (that walk makes deletion quadratic).
 */
class OwnerSteps<V> {
  readonly #byOwner = new Map<string, Map<string, V>>();

  get(owner: string, step: string): V | undefined {
    return this.#byOwner.get(owner)?.get(step);
  }

  has(owner: string, step: string): boolean {
    return this.#byOwner.get(owner)?.has(step) ?? false;
  }

  set(owner: string, step: string, value: V): void {
    let steps = this.#byOwner.get(owner);
    if (!steps) this.#byOwner.set(owner, (steps = new Map<string, V>()));
    steps.set(step, value);
  }

  delete(owner: string, step: string): void {
    const steps = this.#byOwner.get(owner);
    if (!steps?.delete(step) || steps.size > 0) return;
    this.#byOwner.delete(owner);
  }

  forget(owner: string): void {
    this.#byOwner.delete(owner);
  }

  get size(): number {
    let n = 0;
    for (const steps of this.#byOwner.values()) n += steps.size;
    return n;
  }
}

export interface Trusted<R> {
  result: R;
  /** Milliseconds until the step is to be read again. */
  recheckInMs: number;
}

interface Verified {
  /** Undefined once the step was found not ready: known, but not to be trusted. */
  result: unknown;
  generation: number;
  at: number;
  /** Its recheck was put off to a slot of the RecheckBudget: when that comes, it is read. */
  slotted?: boolean;
}

/**
 * Azure steps found ready are trusted, without another call, for the same generation until the
 * recheck interval passes. A cluster is reconciled for every status change of its works and
 * pools; re-reading its resource group, zone, delegation and ingress each time cost six ARM reads
 * per reconcile, which a region of thousands of clusters cannot spend (ARM throttles reads per
 * principal). Drift made behind our back is found at the next recheck, or at once on a spec change.
 *
 * After a restart nothing is known, and reading every cluster's resources again at once would hold
 * the restart's resync (docs/decisions/0008): a step the cluster's own status shows ready for
 * this generation may be seeded from that status, once per step and process, with its first
 * recheck spread at random over the interval.
 */
export class VerifiedSteps {
  readonly #verified = new OwnerSteps<Verified>();
  readonly #recheckMs: number;
  readonly #now: () => number;
  readonly #random: () => number;

  constructor(recheckMs: number, now: () => number = Date.now, random: () => number = Math.random) {
    this.#recheckMs = recheckMs;
    this.#now = now;
    this.#random = random;
  }

  /**
   * What the step found when it was last ready, if that still stands for this generation, and in
   * how many milliseconds it is to be read again.
   */
  verified<R>(owner: string, step: string, generation: number): Trusted<R> | undefined {
    const v = this.#verified.get(owner, step);
    if (!v || v.result === undefined || v.generation !== generation) return undefined;
    const recheckInMs = v.at + this.#recheckMs - this.#now();
    return recheckInMs > 0 ? { result: v.result as R, recheckInMs } : undefined;
  }

  /** Remembers what a step found ready. */
  note(owner: string, step: string, generation: number, result: unknown): void {
    this.#verified.set(owner, step, { result, generation, at: this.#now() });
  }

  /**
   * Trusts what a status recorded, when this process has not looked at the step yet (a later
   * call would trust a status it may itself have found stale). Returns the result if seeded.
   */
  seed<R>(owner: string, step: string, generation: number, result: R): Trusted<R> | undefined {
    if (this.#verified.has(owner, step)) return undefined;
    const recheckInMs = Math.max(1, Math.round(this.#recheckMs * this.#random()));
    this.#verified.set(owner, step, { result, generation, at: this.#now() + recheckInMs - this.#recheckMs });
    return { result, recheckInMs };
  }

  /**
   * The step's recheck is due for this generation and was not put off yet: the read may wait for
   * a slot of the RecheckBudget (postpone). A step unknown, not ready or of another generation is
   * not a recheck, and is read at once.
   */
  recheckDue(owner: string, step: string, generation: number): boolean {
    const v = this.#verified.get(owner, step);
    if (!v || v.result === undefined || v.generation !== generation || v.slotted) return false;
    return this.#now() - v.at >= this.#recheckMs;
  }

  /** Trusts the step `waitMs` longer, until its recheck's slot; then it is read, not put off again. */
  postpone<R>(owner: string, step: string, waitMs: number): Trusted<R> | undefined {
    const v = this.#verified.get(owner, step);
    if (!v || v.result === undefined) return undefined;
    this.#verified.set(owner, step, { ...v, at: this.#now() + waitMs - this.#recheckMs, slotted: true });
    return { result: v.result as R, recheckInMs: waitMs };
  }

  /** A step found not ready: not trusted, and not seeded from a status that may still say ready. */
  drop(owner: string, step: string): void {
    this.#verified.set(owner, step, { result: undefined, generation: -1, at: this.#now() });
  }

  forget(owner: string): void {
    this.#verified.forget(owner);
  }

  get size(): number {
    return this.#verified.size;
  }
}

/**
 * Rechecks of steps found ready, per account that throttles them (an Azure subscription: ARM
 * refills a subscription's reads at 25 a second per principal), at most `perSecond` begun a second
 * after a burst of `burst`, in the order they came due. At 10,000 clusters in one subscription
 * the 10-minute rechecks would be 100 steps a second, four times what ARM gives, and a throttled
 * subscription fails creates and users' reads along with them. A recheck past its time takes the
 * next free slot: in a crowded subscription drift is found later, and never with the reads that
 * creates and users need. (The generic cell rate algorithm, with reservations.)
 */
export class RecheckBudget {
  readonly #spacingMs: number;
  readonly #burstMs: number;
  readonly #now: () => number;
  /** account → when its bucket would be empty, had every slot taken so far been used at once. */
  readonly #emptyAt = new Map<string, number>();
  #prunedAt = 0;

  constructor(opts: { perSecond: number; burst: number }, now: () => number = Date.now) {
    this.#spacingMs = 1000 / opts.perSecond;
    this.#burstMs = (Math.max(1, opts.burst) - 1) * this.#spacingMs;
    this.#now = now;
  }

  /** Takes the account's next free slot: milliseconds until it begins, 0 for now. */
  reserve(account: string): number {
    const now = this.#now();
    if (this.#emptyAt.size > 1000 && now - this.#prunedAt >= 60_000) this.#prune(now);
    const emptyAt = Math.max(now, this.#emptyAt.get(account) ?? now);
    this.#emptyAt.set(account, emptyAt + this.#spacingMs);
    return Math.round(Math.max(0, emptyAt - this.#burstMs - now));
  }

  /** Milliseconds until a recheck asking now would begin: how far behind the busiest account is. */
  backlogMs(): number {
    const now = this.#now();
    let most = 0;
    for (const emptyAt of this.#emptyAt.values()) most = Math.max(most, emptyAt - this.#burstMs - now);
    return Math.round(most);
  }

  /** An account whose slots have all passed is as good as new. At most once a minute: it walks them all. */
  #prune(now: number): void {
    this.#prunedAt = now;
    for (const [account, emptyAt] of this.#emptyAt) if (emptyAt <= now) this.#emptyAt.delete(account);
  }
}
