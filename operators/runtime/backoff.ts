/** Jittered exponential backoff, the shape client-go's reflector uses (800 ms → 30 s, ×2, jitter 1.0). */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** The delay is stretched by up to this fraction at random: d + rand·jitter·d. */
  jitter?: number;
  /** A run that stayed healthy this long starts again from initialMs. */
  resetAfterMs?: number;
  now?: () => number;
  random?: () => number;
}

export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #resetAfter: number;
  readonly #now: () => number;
  readonly #random: () => number;
  #current: number;
  #lastFailure = 0;

  constructor(opts: BackoffOptions = {}) {
    this.#initial = opts.initialMs ?? 800;
    this.#max = opts.maxMs ?? 30_000;
    this.#factor = opts.factor ?? 2;
    this.#jitter = opts.jitter ?? 1.0;
    this.#resetAfter = opts.resetAfterMs ?? 120_000;
    this.#now = opts.now ?? Date.now;
    this.#random = opts.random ?? Math.random;
    this.#current = this.#initial;
  }

  /** The delay before the next attempt; each call grows the base delay. */
  next(): number {
    const now = this.#now();
    if (this.#lastFailure > 0 && now - this.#lastFailure > this.#resetAfter) this.#current = this.#initial;
    this.#lastFailure = now;
    const base = this.#current;
    this.#current = Math.min(this.#max, this.#current * this.#factor);
    return Math.min(this.#max * (1 + this.#jitter), base + this.#random() * this.#jitter * base);
  }

  reset(): void {
    this.#current = this.#initial;
    this.#lastFailure = 0;
  }
}

/** Sleeps, waking early (without throwing) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
