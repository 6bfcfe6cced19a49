/**
 * Rate limiters decide how long a work-queue item waits before it is retried. They follow the
 * client-go workqueue limiters: per-item exponential backoff, an overall token bucket, and a
 * "max of" combinator; the default for controllers is the max of both.
 */

/** A monotonic time source in milliseconds; injected in tests. */
export type Clock = () => number;

export interface RateLimiter<T = string> {
  /** Records a failure of `item` and returns how many milliseconds to wait before retrying it. */
  when(item: T): number;
  /** Clears the failure history of `item`, usually after it was processed successfully. */
  forget(item: T): void;
  /** How many times `item` has been through `when` since it was last forgotten. */
  numRequeues(item: T): number;
}

export const monotonicClock: Clock = () => performance.now();

/** Per-item backoff: `baseMs * 2^failures`, capped at `maxMs`. */
export function itemExponentialRateLimiter<T = string>(baseMs = 5, maxMs = 1_000_000): RateLimiter<T> {
  if (!(baseMs > 0) || !(maxMs >= baseMs)) {
    throw new RangeError(`invalid exponential backoff: base ${baseMs}ms, max ${maxMs}ms`);
  }
  const failures = new Map<T, number>();
  return {
    when(item) {
      const count = failures.get(item) ?? 0;
      failures.set(item, count + 1);
      // 2^count overflows to Infinity long before count overflows, and Infinity > maxMs.
      return Math.min(baseMs * 2 ** count, maxMs);
    },
    forget: (item) => void failures.delete(item),
    numRequeues: (item) => failures.get(item) ?? 0,
  };
}

/**
 * An overall token bucket refilled at `qps` tokens per second, holding at most `burst`. Each
 * `when` reserves one token, going into debt when the bucket is empty, and returns the wait until
 * that reservation is covered: the same reservation model as golang.org/x/time/rate `Reserve`.
 * It limits the total retry rate, so it has no per-item state.
 */
export function bucketRateLimiter<T = string>(
  qps = 10,
  burst = 100,
  now: Clock = monotonicClock,
): RateLimiter<T> {
  if (!(qps > 0 && Number.isFinite(qps)) || !(burst >= 1)) {
    throw new RangeError(`invalid token bucket: ${qps} qps, burst ${burst}`);
  }
  let tokens = burst;
  let last = now();
  return {
    when() {
      const t = Math.max(now(), last);
      tokens = Math.min(burst, tokens + ((t - last) / 1000) * qps) - 1;
      last = t;
      return tokens >= 0 ? 0 : (-tokens / qps) * 1000;
    },
    forget: () => undefined,
    numRequeues: () => 0,
  };
}

/** Combines limiters: waits as long as the slowest one says, and keeps all of them informed. */
export function maxOfRateLimiter<T = string>(...limiters: RateLimiter<T>[]): RateLimiter<T> {
  if (limiters.length === 0) throw new RangeError("maxOfRateLimiter needs at least one limiter");
  return {
    // Every limiter must see every failure, so no short-circuiting here.
    when: (item) => Math.max(...limiters.map((l) => l.when(item))),
    forget: (item) => limiters.forEach((l) => l.forget(item)),
    numRequeues: (item) => Math.max(...limiters.map((l) => l.numRequeues(item))),
  };
}

/** The controller default: 5 ms doubling to 1000 s per item, and at most 10 retries/s (burst 100) overall. */
export function defaultControllerRateLimiter<T = string>(now: Clock = monotonicClock): RateLimiter<T> {
  return maxOfRateLimiter<T>(itemExponentialRateLimiter<T>(5, 1_000_000), bucketRateLimiter<T>(10, 100, now));
}
