/**
 * ARM's request limits, as Azure enforces them since 2024: a token bucket in each region for every
 * subscription, principal and kind of request. Reads hold 250 tokens and regain 25 a second;
 * writes (PUT, PATCH, POST) and deletes hold 200 and regain 10 a second. A request that finds its
 * bucket empty is answered 429 SubscriptionRequestsThrottled with Retry-After in whole seconds and
 * never reaches the resource provider; every other answer says what is left in
 * `x-ms-ratelimit-remaining-subscription-{reads,writes,deletes}`.
 *
 * ARM also limits a subscription for all its principals together, at 15 times these. The emulator
 * serves one region and issues tokens to one principal, so that limit can never bind here and is
 * not kept.
 */
import { cloudError, type ArmReply } from "./http.ts";

export type RequestKind = "reads" | "writes" | "deletes";

export interface BucketLimit {
  /** Tokens a full bucket holds: the burst a quiet client may send at once. */
  capacity: number;
  refillPerSecond: number;
}

export type RequestLimits = Record<RequestKind, BucketLimit>;

export const ARM_REQUEST_LIMITS: RequestLimits = {
  reads: { capacity: 250, refillPerSecond: 25 },
  writes: { capacity: 200, refillPerSecond: 10 },
  deletes: { capacity: 200, refillPerSecond: 10 },
};

export function requestKind(method: string): RequestKind {
  const m = method.toUpperCase();
  if (m === "GET" || m === "HEAD") return "reads";
  return m === "DELETE" ? "deletes" : "writes";
}

/** What one request got: a token, with the whole tokens left; or none, and when one will be there. */
export type Admission =
  { admitted: true; remaining: number } | { admitted: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  atMs: number;
}

/** A full bucket is the same as none: buckets idle this long are dropped, so memory follows activity. */
const PRUNE_EVERY_MS = 60_000;

export class RequestLimiter {
  readonly #limits: RequestLimits;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  #prunedAtMs: number;

  constructor(limits: RequestLimits = ARM_REQUEST_LIMITS, now: () => number = () => performance.now()) {
    for (const [kind, limit] of Object.entries(limits))
      if (!(limit.capacity >= 1 && limit.refillPerSecond > 0))
        throw new Error(`ARM emulator: the ${kind} limit needs a capacity ≥ 1 and a refill > 0`);
    this.#limits = limits;
    this.#now = now;
    this.#prunedAtMs = now();
  }

  take(subscriptionId: string, principal: string, kind: RequestKind): Admission {
    const limit = this.#limits[kind];
    const now = this.#now();
    this.#prune(now);
    const key = `${subscriptionId.toLowerCase()}\n${principal}\n${kind}`;
    const bucket = this.#buckets.get(key) ?? { tokens: limit.capacity, atMs: now };
    bucket.tokens = Math.min(
      limit.capacity,
      bucket.tokens + ((now - bucket.atMs) / 1000) * limit.refillPerSecond,
    );
    bucket.atMs = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { admitted: true, remaining: Math.floor(bucket.tokens) };
    }
    const seconds = Math.ceil((1 - bucket.tokens) / limit.refillPerSecond);
    return { admitted: false, retryAfterSeconds: Math.max(1, seconds) };
  }

  #prune(now: number): void {
    if (now - this.#prunedAtMs < PRUNE_EVERY_MS) return;
    this.#prunedAtMs = now;
    for (const [key, bucket] of this.#buckets) {
      const limit = this.#limits[key.slice(key.lastIndexOf("\n") + 1) as RequestKind];
      if (bucket.tokens + ((now - bucket.atMs) / 1000) * limit.refillPerSecond >= limit.capacity)
        this.#buckets.delete(key);
    }
  }
}

const SINGULAR: Record<RequestKind, string> = { reads: "read", writes: "write", deletes: "delete" };

/** The 429 ARM gives for an empty bucket. */
export function throttledReply(
  subscriptionId: string,
  principal: string,
  kind: RequestKind,
  retryAfterSeconds: number,
): ArmReply {
  const reply = cloudError(
    429,
    "SubscriptionRequestsThrottled",
    `Number of '${SINGULAR[kind]}' requests for subscription '${subscriptionId}' actor '${principal}' exceeded. ` +
      `Try again after '${retryAfterSeconds}' seconds, when tokens are available again. See https://aka.ms/arm-throttling.`,
  );
  return { ...reply, headers: { "retry-after": String(retryAfterSeconds), ...remainingHeader(kind, 0) } };
}

export function remainingHeader(kind: RequestKind, remaining: number): Record<string, string> {
  return { [`x-ms-ratelimit-remaining-subscription-${kind}`]: String(remaining) };
}
