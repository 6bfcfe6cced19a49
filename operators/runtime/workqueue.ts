/**
 * A rate-limited, delaying work queue of string keys with client-go semantics:
 * - a key waits in the queue at most once (the `dirty` set deduplicates adds);
 * - a key being processed is never handed to a second worker: re-adding it only marks it dirty,
 *   and `done` puts it back in the queue;
 * - `addAfter` delays an add with a timer, `addRateLimited` asks the rate limiter for the delay;
 * - an item added at "low" priority (a periodic look for drift, controller-runtime's priority
 *   queue's low priority) waits behind every "normal" one, and a normal add of a queued low item
 *   moves it up: with thousands of objects, the rechecks would otherwise fill the queue ahead of
 *   the changes;
 * - with `maxLowInFlight`, at most that many low items are processed at once, so a change never
 *   waits for a worker while every worker is on a recheck (docs/decisions/0008).
 */
import { defaultControllerRateLimiter, monotonicClock, type Clock, type RateLimiter } from "./ratelimiter.ts";

/** Work in progress, computed when metrics are scraped. */
export interface InProgressWork {
  /** Sum of how long every item currently being processed has been running. */
  unfinishedSeconds: number;
  /** How long the oldest item currently being processed has been running. */
  longestRunningSeconds: number;
}

/** The metrics sink of one queue; metrics.ts provides the Prometheus one. */
export interface WorkQueueMetrics {
  /** An item entered the queue (adds and depth). */
  added(): void;
  /** An item left the queue for a worker after waiting `queuedSeconds` (depth and queue latency). */
  started(queuedSeconds: number): void;
  /** A worker finished an item after `workSeconds`. */
  finished(workSeconds: number): void;
  /** An item was re-added through the rate limiter. */
  retried(): void;
  /** The queue shut down; stop scraping its in-progress work. */
  release(): void;
}

export interface WorkQueueMetricsProvider {
  forQueue(name: string, inProgress: () => InProgressWork): WorkQueueMetrics;
}

export interface WorkQueueOptions<T extends string> {
  /** Names the queue in metrics and logs. Required. */
  name: string;
  /** Delays for `addRateLimited`. Defaults to `defaultControllerRateLimiter()`. */
  rateLimiter?: RateLimiter<T>;
  /** Where to report metrics. Defaults to none. */
  metrics?: WorkQueueMetricsProvider;
  /** Monotonic milliseconds for metric timings. Defaults to `performance.now()`. */
  clock?: Clock;
  /** Low-priority items processed at once at most (≥ 1); the other getters wait for normal ones. Default: no bound. */
  maxLowInFlight?: number;
}

/** setTimeout fires at once for delays beyond a signed 32-bit millisecond count (~24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

const noMetrics: WorkQueueMetrics = {
  added: () => undefined,
  started: () => undefined,
  finished: () => undefined,
  retried: () => undefined,
  release: () => undefined,
};

/** "low": a periodic recheck, handed out only when no normal item waits. */
export type Priority = "normal" | "low";

interface Waiting {
  readyAt: number;
  priority: Priority;
  timer: ReturnType<typeof setTimeout>;
}

/** A FIFO with O(1) take: Array#shift is O(n), which made a 100 000-item queue quadratic. */
class Fifo<T> {
  #items: T[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head++];
    // Drop the consumed prefix once it is most of the array, so memory stays bounded.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Keeps only the items `keep` accepts, each once, in order. */
  retain(keep: (item: T) => boolean): void {
    const kept = new Set<T>();
    for (let i = this.#head; i < this.#items.length; i++) {
      const item = this.#items[i] as T;
      if (keep(item)) kept.add(item);
    }
    this.#items = [...kept];
    this.#head = 0;
  }
}

/**
 * Two FIFOs, normal before low. Moving a low item up leaves its old entry behind, skipped when
 * reached (it is no longer in `#lowItems`), so a promotion costs O(1).
 */
class PriorityFifo<T> {
  #normal = new Fifo<T>();
  #low = new Fifo<T>();
  #lowItems = new Set<T>();

  get length(): number {
    return this.#normal.length + this.#lowItems.size;
  }

  push(item: T, priority: Priority): void {
    if (priority === "normal") {
      this.#normal.push(item);
      return;
    }
    this.#low.push(item);
    this.#lowItems.add(item);
  }

  /** Moves a queued low item up to normal; false when it is not waiting at low. */
  promote(item: T): boolean {
    if (!this.#lowItems.delete(item)) return false;
    this.#normal.push(item);
    // Entries left behind by promotions are bounded: drop them once they outnumber the live ones.
    if (this.#low.length > 1024 && this.#low.length > 2 * this.#lowItems.size)
      this.#low.retain((i) => this.#lowItems.has(i));
    return true;
  }

  get normalLength(): number {
    return this.#normal.length;
  }

  /** The next item, normal first; a low one only when `low` allows. */
  shift(low: boolean): { item: T; priority: Priority } | undefined {
    const item = this.#normal.shift();
    if (item !== undefined) return { item, priority: "normal" };
    if (!low) return undefined;
    for (let next = this.#low.shift(); next !== undefined; next = this.#low.shift())
      if (this.#lowItems.delete(next)) return { item: next, priority: "low" };
    return undefined;
  }
}

export class WorkQueue<T extends string = string> {
  readonly name: string;
  #queue = new PriorityFifo<T>();
  #dirty = new Set<T>();
  /** Items added at low priority while being processed: they go back at low on `done`. */
  #lowOnDone = new Set<T>();
  /** Items handed to a worker and not yet `done`, with the time they were handed out. */
  #processing = new Map<T, number>();
  /** Those of them handed out at low priority. */
  #lowProcessing = new Set<T>();
  #maxLowInFlight: number;
  /** When each queued item was first added, for the queue latency metric. */
  #addedAt = new Map<T, number>();
  #waiting = new Map<T, Waiting>();
  #getters: Array<(item: T | undefined) => void> = [];
  #drainers: Array<() => void> = [];
  #shuttingDown = false;
  #rateLimiter: RateLimiter<T>;
  #metrics: WorkQueueMetrics;
  #clock: Clock;

  constructor(options: WorkQueueOptions<T>) {
    if (!options.name) throw new Error("WorkQueue needs a name");
    this.name = options.name;
    this.#rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>();
    this.#clock = options.clock ?? monotonicClock;
    this.#metrics = options.metrics?.forQueue(this.name, () => this.#inProgress()) ?? noMetrics;
    const maxLow = options.maxLowInFlight ?? Infinity;
    if (!(maxLow >= 1)) throw new Error(`WorkQueue ${this.name}: maxLowInFlight must be at least 1`);
    this.#maxLowInFlight = maxLow;
  }

  /**
   * Queues `item` unless it is already queued (a normal add moves a queued low item up); an item
   * being processed is queued again on `done`.
   */
  add(item: T, priority: Priority = "normal"): void {
    if (this.#shuttingDown) return;
    if (this.#dirty.has(item)) {
      if (priority === "low") return;
      this.#lowOnDone.delete(item);
      if (this.#queue.promote(item)) this.#handOut();
      return;
    }
    this.#dirty.add(item);
    this.#addedAt.set(item, this.#clock());
    this.#metrics.added();
    if (this.#processing.has(item)) {
      if (priority === "low") this.#lowOnDone.add(item);
      return;
    }
    this.#queue.push(item, priority);
    this.#handOut();
  }

  /**
   * Waits for the next item and marks it as processing; the caller must call `done` with it.
   * Resolves `undefined` once the queue is shut down and empty.
   */
  get(): Promise<T | undefined> {
    if (this.#canTake()) return Promise.resolve(this.#take());
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /** Marks `item` as processed; if it was re-added meanwhile, it goes back into the queue. */
  done(item: T): void {
    const startedAt = this.#processing.get(item);
    if (startedAt === undefined) return;
    this.#processing.delete(item);
    const wasLow = this.#lowProcessing.delete(item);
    this.#metrics.finished((this.#clock() - startedAt) / 1000);
    if (this.#dirty.has(item)) this.#queue.push(item, this.#lowOnDone.delete(item) ? "low" : "normal");
    // The item queued again, or a low item waiting for this one's place.
    if (wasLow || this.#dirty.has(item)) this.#handOut();
    if (this.#processing.size === 0) this.#notifyDrained();
  }

  /**
   * Adds `item` after `delayMs`. While an item waits, another `addAfter` can only bring its time
   * forward, never push it back; a plain `add` meanwhile queues it at once and does not cancel
   * the timer (the later add is then deduplicated or triggers one more pass, as in client-go).
   */
  addAfter(item: T, delayMs: number, priority: Priority = "normal"): void {
    if (this.#shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(item, priority);
      return;
    }
    const delay = Math.min(delayMs, MAX_TIMER_MS);
    const readyAt = this.#clock() + delay;
    const existing = this.#waiting.get(item);
    // Two delayed adds of one item make one: the sooner time, the higher priority.
    const merged: Priority = existing?.priority === "normal" ? "normal" : priority;
    if (existing) {
      existing.priority = merged;
      if (existing.readyAt <= readyAt) return;
      clearTimeout(existing.timer);
    }
    const entry: Waiting = {
      readyAt,
      priority: merged,
      timer: setTimeout(() => {
        this.#waiting.delete(item);
        this.add(item, entry.priority);
      }, delay),
    };
    this.#waiting.set(item, entry);
  }

  /** Adds `item` after the delay its rate limiter gives for one more failure. */
  addRateLimited(item: T): void {
    if (this.#shuttingDown) return;
    this.#metrics.retried();
    this.addAfter(item, this.#rateLimiter.when(item));
  }

  /** Resets the failure history of `item` (call after it succeeded). */
  forget(item: T): void {
    this.#rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.#rateLimiter.numRequeues(item);
  }

  /** Items waiting for a worker (not those being processed or waiting on a timer). */
  len(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Stops accepting adds and cancels pending delayed adds. Items already queued are still handed
   * out; `get` resolves `undefined` once the queue is empty.
   */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { timer } of this.#waiting.values()) clearTimeout(timer);
    this.#waiting.clear();
    // Shutting down lifts the bound on low items: what is queued is handed out, then the
    // getters left wait on an empty queue and get `undefined`.
    this.#handOut();
    for (const resolve of this.#getters.splice(0)) resolve(undefined);
    this.#metrics.release();
  }

  /**
   * Shuts down, then waits until every item being processed is `done` or `timeoutMs` passes.
   * Resolves `true` if everything was done in time.
   */
  async shutDownWithDrain(timeoutMs: number): Promise<boolean> {
    this.shutDown();
    if (this.#processing.size === 0) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = new Promise<boolean>((resolve) => this.#drainers.push(() => resolve(true)));
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([drained, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Hands queued items to waiting getters directly, so no other `get` can overtake them. */
  #handOut(): void {
    while (this.#getters.length > 0 && this.#canTake()) {
      const resolve = this.#getters.shift();
      resolve?.(this.#take());
    }
  }

  #lowAllowed(): boolean {
    return this.#shuttingDown || this.#lowProcessing.size < this.#maxLowInFlight;
  }

  #canTake(): boolean {
    return this.#queue.normalLength > 0 || (this.#queue.length > 0 && this.#lowAllowed());
  }

  #take(): T | undefined {
    const next = this.#queue.shift(this.#lowAllowed());
    if (next === undefined) return undefined;
    const { item } = next;
    if (next.priority === "low") this.#lowProcessing.add(item);
    const now = this.#clock();
    this.#dirty.delete(item);
    this.#processing.set(item, now);
    this.#metrics.started((now - (this.#addedAt.get(item) ?? now)) / 1000);
    this.#addedAt.delete(item);
    return item;
  }

  #notifyDrained(): void {
    for (const resolve of this.#drainers.splice(0)) resolve();
  }

  #inProgress(): InProgressWork {
    const now = this.#clock();
    let unfinishedSeconds = 0;
    let longestRunningSeconds = 0;
    for (const startedAt of this.#processing.values()) {
      const seconds = (now - startedAt) / 1000;
      unfinishedSeconds += seconds;
      longestRunningSeconds = Math.max(longestRunningSeconds, seconds);
    }
    return { unfinishedSeconds, longestRunningSeconds };
  }
}
