import { describe, it, expect } from "vitest";
import {
  bucketRateLimiter,
  defaultControllerRateLimiter,
  itemExponentialRateLimiter,
  maxOfRateLimiter,
  type RateLimiter,
} from "./ratelimiter.ts";

function fakeClock(start = 0): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe("itemExponentialRateLimiter", () => {
  it("doubles the delay per failure of the same item", () => {
    const limiter = itemExponentialRateLimiter(5, 1_000_000);
    expect([1, 2, 3, 4, 5].map(() => limiter.when("a"))).toEqual([5, 10, 20, 40, 80]);
    expect(limiter.numRequeues("a")).toBe(5);
  });

  it("tracks items separately", () => {
    const limiter = itemExponentialRateLimiter(5, 1_000_000);
    limiter.when("a");
    limiter.when("a");
    expect(limiter.when("b")).toBe(5);
    expect(limiter.numRequeues("a")).toBe(2);
  });

  it("caps the delay, even after enough failures to overflow 2^n", () => {
    const limiter = itemExponentialRateLimiter(5, 1_000);
    for (let i = 0; i < 2000; i++) limiter.when("a");
    expect(limiter.when("a")).toBe(1_000);
  });

  it("starts over after forget", () => {
    const limiter = itemExponentialRateLimiter(5, 1_000_000);
    limiter.when("a");
    limiter.when("a");
    limiter.forget("a");
    expect(limiter.numRequeues("a")).toBe(0);
    expect(limiter.when("a")).toBe(5);
  });

  it.each([
    [0, 10],
    [10, 5],
    [Number.NaN, 10],
  ])("rejects base %s ms with max %s ms", (base, max) => {
    expect(() => itemExponentialRateLimiter(base, max)).toThrow(RangeError);
  });
});

describe("bucketRateLimiter", () => {
  it("lets a burst through, then spaces items at 1/qps", () => {
    const clock = fakeClock();
    const limiter = bucketRateLimiter(10, 3, clock.now);
    const delays = [1, 2, 3, 4, 5].map(() => limiter.when("x"));
    expect(delays).toEqual([0, 0, 0, 100, 200]);
  });

  it("refills with time, up to the burst", () => {
    const clock = fakeClock();
    const limiter = bucketRateLimiter(10, 2, clock.now);
    limiter.when("x");
    limiter.when("x");
    clock.advance(100);
    expect(limiter.when("x")).toBe(0);
    clock.advance(10_000);
    expect([1, 2, 3].map(() => limiter.when("x"))).toEqual([0, 0, 100]);
  });

  it("counts reservations in debt, like rate.Limiter.Reserve", () => {
    const clock = fakeClock();
    const limiter = bucketRateLimiter(10, 1, clock.now);
    expect(limiter.when("x")).toBe(0);
    expect(limiter.when("x")).toBe(100);
    clock.advance(50);
    // Two reservations outstanding: the next token after both is 150 ms away.
    expect(limiter.when("x")).toBe(150);
  });

  it("is overall, not per item, and keeps no per-item state", () => {
    const clock = fakeClock();
    const limiter = bucketRateLimiter(10, 1, clock.now);
    limiter.when("a");
    expect(limiter.when("b")).toBe(100);
    expect(limiter.numRequeues("a")).toBe(0);
  });

  it.each([
    [0, 1],
    [Infinity, 1],
    [10, 0],
  ])("rejects %s qps with burst %s", (qps, burst) => {
    expect(() => bucketRateLimiter(qps, burst)).toThrow(RangeError);
  });
});

describe("maxOfRateLimiter", () => {
  function fixed(delay: number): RateLimiter & { forgotten: string[]; seen: string[] } {
    const forgotten: string[] = [];
    const seen: string[] = [];
    return {
      forgotten,
      seen,
      when: (item) => (seen.push(item), delay),
      forget: (item) => void forgotten.push(item),
      numRequeues: () => delay,
    };
  }

  it("returns the longest delay and informs every limiter", () => {
    const [a, b] = [fixed(3), fixed(7)];
    const limiter = maxOfRateLimiter(a, b);
    expect(limiter.when("k")).toBe(7);
    expect(a.seen).toEqual(["k"]);
    expect(b.seen).toEqual(["k"]);
    limiter.forget("k");
    expect([a.forgotten, b.forgotten]).toEqual([["k"], ["k"]]);
    expect(limiter.numRequeues("k")).toBe(7);
  });

  it("needs at least one limiter", () => {
    expect(() => maxOfRateLimiter()).toThrow(RangeError);
  });
});

describe("defaultControllerRateLimiter", () => {
  it("backs off per item from 5 ms", () => {
    const limiter = defaultControllerRateLimiter(fakeClock().now);
    expect([1, 2, 3].map(() => limiter.when("a"))).toEqual([5, 10, 20]);
    expect(limiter.when("b")).toBe(5);
  });

  it("limits overall retries to 10/s after a burst of 100", () => {
    const limiter = defaultControllerRateLimiter(fakeClock().now);
    for (let i = 0; i < 100; i++) limiter.when(`item-${i}`);
    expect(limiter.when("item-100")).toBe(100);
  });

  it("caps per-item backoff at 1000 s", () => {
    const clock = fakeClock();
    const limiter = defaultControllerRateLimiter(clock.now);
    let delay = 0;
    for (let i = 0; i < 40; i++) delay = limiter.when("a");
    expect(delay).toBe(1_000_000);
  });
});
