import { describe, expect, it } from "vitest";
import { ARM_REQUEST_LIMITS, requestKind, RequestLimiter, throttledReply, type Admission } from "./limits.ts";

const sub = "6B0F3A4E-8D1C-4C2A-9E57-0C3D2B1A9F10";
const other = "2f1a4c7e-0b9d-4e3f-8a6c-5d2e1f0a9b8c";

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

function takeMany(limiter: RequestLimiter, count: number, kind = requestKind("PUT")): Admission[] {
  return Array.from({ length: count }, () => limiter.take(sub, "principal", kind));
}

describe("RequestLimiter (ARM's token buckets)", () => {
  it("admits a subscription's burst of 200 writes, counting down what is left, then refuses with Retry-After", () => {
    const c = clock();
    const limiter = new RequestLimiter(ARM_REQUEST_LIMITS, c.now);
    const burst = takeMany(limiter, 200);
    expect(burst[0]).toEqual({ admitted: true, remaining: 199 });
    expect(burst[199]).toEqual({ admitted: true, remaining: 0 });
    expect(limiter.take(sub, "principal", "writes")).toEqual({ admitted: false, retryAfterSeconds: 1 });
  });

  it("refills 10 writes a second and 25 reads a second, never above the bucket", () => {
    const c = clock();
    const limiter = new RequestLimiter(ARM_REQUEST_LIMITS, c.now);
    takeMany(limiter, 200);
    c.advance(1_000);
    expect(takeMany(limiter, 11).map((a) => a.admitted)).toEqual([...Array<boolean>(10).fill(true), false]);
    takeMany(limiter, 250, "reads");
    c.advance(2_000);
    expect(takeMany(limiter, 51, "reads").filter((a) => a.admitted)).toHaveLength(50);
    c.advance(3_600_000);
    expect(limiter.take(sub, "principal", "writes")).toEqual({ admitted: true, remaining: 199 });
  });

  it("keeps reads, writes and deletes apart, and each subscription and principal apart", () => {
    const c = clock();
    const limiter = new RequestLimiter(ARM_REQUEST_LIMITS, c.now);
    takeMany(limiter, 200);
    expect(limiter.take(sub, "principal", "writes").admitted).toBe(false);
    expect(limiter.take(sub, "principal", "deletes")).toEqual({ admitted: true, remaining: 199 });
    expect(limiter.take(sub, "principal", "reads")).toEqual({ admitted: true, remaining: 249 });
    expect(limiter.take(other, "principal", "writes")).toEqual({ admitted: true, remaining: 199 });
    expect(limiter.take(sub, "another principal", "writes")).toEqual({ admitted: true, remaining: 199 });
    // ARM's subscription IDs are case-insensitive: one bucket whatever the casing.
    expect(limiter.take(sub.toLowerCase(), "principal", "writes").admitted).toBe(false);
  });

  it("says how many whole seconds until a token is back", () => {
    const c = clock();
    const slow = { capacity: 1, refillPerSecond: 0.25 };
    const limiter = new RequestLimiter({ reads: slow, writes: slow, deletes: slow }, c.now);
    expect(limiter.take(sub, "p", "reads").admitted).toBe(true);
    expect(limiter.take(sub, "p", "reads")).toEqual({ admitted: false, retryAfterSeconds: 4 });
    c.advance(1_500);
    expect(limiter.take(sub, "p", "reads")).toEqual({ admitted: false, retryAfterSeconds: 3 });
    c.advance(2_500);
    expect(limiter.take(sub, "p", "reads").admitted).toBe(true);
  });

  it("keeps a bucket that is not full again when it drops the idle ones", () => {
    const c = clock();
    const slow = { capacity: 10, refillPerSecond: 0.1 };
    const limiter = new RequestLimiter({ reads: slow, writes: slow, deletes: slow }, c.now);
    takeMany(limiter, 10, "writes");
    limiter.take(sub, "principal", "reads");
    c.advance(61_000);
    // This take drops the full ones; 6.1 writes are back, not 10.
    expect(limiter.take(other, "principal", "reads").admitted).toBe(true);
    expect(limiter.take(sub, "principal", "writes")).toEqual({ admitted: true, remaining: 5 });
    expect(limiter.take(sub, "principal", "reads")).toEqual({ admitted: true, remaining: 9 });
  });

  it("refuses limits a bucket could never meet", () => {
    const none = { capacity: 0, refillPerSecond: 1 };
    expect(() => new RequestLimiter({ ...ARM_REQUEST_LIMITS, deletes: none })).toThrow(/deletes limit/);
  });

  it.each([
    ["GET", "reads"],
    ["head", "reads"],
    ["PUT", "writes"],
    ["PATCH", "writes"],
    ["POST", "writes"],
    ["DELETE", "deletes"],
  ])("counts %s among the %s", (method, kind) => {
    expect(requestKind(method)).toBe(kind);
  });

  it("answers an empty bucket as ARM does", () => {
    expect(throttledReply(sub, "p-1", "writes", 2)).toEqual({
      status: 429,
      headers: { "retry-after": "2", "x-ms-ratelimit-remaining-subscription-writes": "0" },
      body: {
        error: {
          code: "SubscriptionRequestsThrottled",
          message: expect.stringContaining(`'write' requests for subscription '${sub}' actor 'p-1' exceeded`),
        },
      },
    });
  });
});
