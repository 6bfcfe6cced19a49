import { afterEach, describe, it, expect, vi } from "vitest";
import { bucketRateLimiter, itemExponentialRateLimiter } from "./ratelimiter.ts";
import { WorkQueue, type InProgressWork, type WorkQueueMetricsProvider } from "./workqueue.ts";

afterEach(() => {
  vi.useRealTimers();
});

/** Resolves whether `promise` settled by now, without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol("pending");
  return (await Promise.race([promise, Promise.resolve(pending)])) !== pending;
}

describe("WorkQueue add and get", () => {
  it("deduplicates an item that is already queued", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("a");
    q.add("b");
    q.add("a");
    expect(q.len()).toBe(2);
    expect([await q.get(), await q.get()]).toEqual(["a", "b"]);
    expect(q.len()).toBe(0);
  });

  it("makes get() wait until an item is added", async () => {
    const q = new WorkQueue({ name: "t" });
    const next = q.get();
    expect(await settled(next)).toBe(false);
    q.add("x");
    expect(await next).toBe("x");
  });

  it("hands one item to each waiting getter, in order", async () => {
    const q = new WorkQueue({ name: "t" });
    const first = q.get();
    const second = q.get();
    q.add("a");
    q.add("b");
    expect([await first, await second]).toEqual(["a", "b"]);
  });

  it("delivers an item re-added while processing once, after done", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("a");
    expect(await q.get()).toBe("a");
    q.add("a");
    q.add("a");
    expect(q.len()).toBe(0);
    const second = q.get();
    expect(await settled(second)).toBe(false);
    q.done("a");
    expect(await second).toBe("a");
    q.done("a");
    expect(q.len()).toBe(0);
  });

  it("forgets an item processed without re-add", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("a");
    q.done((await q.get())!);
    expect(q.len()).toBe(0);
    q.add("a");
    expect(q.len()).toBe(1);
  });
});

describe("WorkQueue addAfter", () => {
  it("adds items when their delay passes, soonest first", async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t" });
    q.addAfter("slow", 100);
    q.addAfter("fast", 50);
    await vi.advanceTimersByTimeAsync(49);
    expect(q.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(q.len()).toBe(1);
    await vi.advanceTimersByTimeAsync(50);
    expect([await q.get(), await q.get()]).toEqual(["fast", "slow"]);
  });

  it("keeps the earlier time when the same item is added after again", async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t" });
    q.addAfter("a", 50);
    q.addAfter("a", 500);
    await vi.advanceTimersByTimeAsync(50);
    expect(q.len()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("moves an item forward when a later addAfter is sooner", async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t" });
    q.addAfter("a", 500);
    q.addAfter("a", 50);
    await vi.advanceTimersByTimeAsync(50);
    expect(q.len()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("lets a plain add win over a waiting addAfter", async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t" });
    q.addAfter("a", 100);
    q.add("a");
    expect(await q.get()).toBe("a");
  });

  it("adds at once for a zero or negative delay", () => {
    const q = new WorkQueue({ name: "t" });
    q.addAfter("a", 0);
    q.addAfter("b", -5);
    expect(q.len()).toBe(2);
  });
});

describe("WorkQueue priority", () => {
  async function drain(q: WorkQueue): Promise<string[]> {
    const out: string[] = [];
    while (q.len() > 0) {
      const item = (await q.get())!;
      out.push(item);
      q.done(item);
    }
    return out;
  }

  it("hands out every normal item before any low one, each level in order", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("recheck-1", "low");
    q.add("change-1");
    q.add("recheck-2", "low");
    q.add("change-2");
    expect(q.len()).toBe(4);
    expect(await drain(q)).toEqual(["change-1", "change-2", "recheck-1", "recheck-2"]);
  });

  it("moves a queued low item up on a normal add, once, and ignores a low add of a normal one", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("a", "low");
    q.add("b");
    q.add("a");
    q.add("a");
    q.add("c");
    q.add("b", "low");
    expect(q.len()).toBe(3);
    expect(await drain(q)).toEqual(["b", "a", "c"]);
  });

  it("puts an item re-added while processing back at the priority it was added with", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("a");
    expect(await q.get()).toBe("a");
    q.add("a", "low");
    q.add("b");
    q.done("a");
    expect(await drain(q)).toEqual(["b", "a"]);

    q.add("a");
    expect(await q.get()).toBe("a");
    q.add("a", "low");
    q.add("a");
    q.add("b", "low");
    q.done("a");
    expect(await drain(q)).toEqual(["a", "b"]);
  });

  it("keeps the higher priority when two delayed adds of an item merge", async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t" });
    q.addAfter("a", 50, "low");
    q.addAfter("a", 500);
    q.addAfter("b", 50, "low");
    await vi.advanceTimersByTimeAsync(50);
    q.add("c");
    expect(vi.getTimerCount()).toBe(0);
    expect(await drain(q)).toEqual(["a", "c", "b"]);
  });

  it("keeps workers for changes: past maxLowInFlight low items being processed, a getter waits for a normal one", async () => {
    const q = new WorkQueue({ name: "t", maxLowInFlight: 2 });
    for (const k of ["r1", "r2", "r3"]) q.add(k, "low");
    expect([await q.get(), await q.get()]).toEqual(["r1", "r2"]);
    const third = q.get();
    expect(await settled(third)).toBe(false);
    q.add("change");
    expect(await third).toBe("change");
    // A normal item being processed takes no low place: r3 still waits for one.
    const fourth = q.get();
    expect(await settled(fourth)).toBe(false);
    q.done("change");
    expect(await settled(fourth)).toBe(false);
    q.done("r1");
    expect(await fourth).toBe("r3");
    expect(q.len()).toBe(0);
  });

  it("counts a low item promoted while queued as normal, and one re-added low while processing as low", async () => {
    const q = new WorkQueue({ name: "t", maxLowInFlight: 1 });
    q.add("r1", "low");
    q.add("r2", "low");
    expect(await q.get()).toBe("r1");
    q.add("r2");
    expect(await q.get()).toBe("r2");
    q.done("r2");
    q.add("r2", "low");
    const next = q.get();
    expect(await settled(next)).toBe(false);
    q.add("r1", "low");
    q.done("r1");
    expect(await next).toBe("r2");
    expect(await settled(q.get())).toBe(false);
  });

  it("hands out the low items held back once it shuts down", async () => {
    const q = new WorkQueue({ name: "t", maxLowInFlight: 1 });
    q.add("r1", "low");
    q.add("r2", "low");
    expect(await q.get()).toBe("r1");
    const held = q.get();
    const after = q.get();
    q.shutDown();
    expect([await held, await after]).toEqual(["r2", undefined]);
  });

  it("refuses a bound below one", () => {
    expect(() => new WorkQueue({ name: "t", maxLowInFlight: 0 })).toThrow(/maxLowInFlight/);
  });

  it("stays correct through many promotions (entries left behind are dropped)", async () => {
    const q = new WorkQueue({ name: "t" });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3000; i++) q.add(`i${i}`, "low");
      for (let i = 0; i < 3000; i++) if (i % 3) q.add(`i${i}`);
      const got = await drain(q);
      expect(got).toHaveLength(3000);
      expect(new Set(got).size).toBe(3000);
      expect(got.slice(0, 2000).every((k) => Number(k.slice(1)) % 3 !== 0)).toBe(true);
      expect(got.slice(2000)).toEqual(Array.from({ length: 1000 }, (_, j) => `i${j * 3}`));
    }
  });
});

describe("WorkQueue rate limiting", () => {
  it("backs off exponentially per item and starts over after forget", async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t", rateLimiter: itemExponentialRateLimiter(10, 10_000) });
    const waitsFor = async (ms: number): Promise<boolean> => {
      q.addRateLimited("a");
      await vi.advanceTimersByTimeAsync(ms - 1);
      const early = q.len();
      await vi.advanceTimersByTimeAsync(1);
      q.done((await q.get())!);
      return early === 0;
    };
    expect(await waitsFor(10)).toBe(true);
    expect(await waitsFor(20)).toBe(true);
    expect(await waitsFor(40)).toBe(true);
    expect(q.numRequeues("a")).toBe(3);
    q.forget("a");
    expect(q.numRequeues("a")).toBe(0);
    expect(await waitsFor(10)).toBe(true);
  });

  it("spaces retries of many items with a token bucket", async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t", rateLimiter: bucketRateLimiter(10, 2, () => Date.now()) });
    for (const item of ["a", "b", "c", "d"]) q.addRateLimited(item);
    expect(q.len()).toBe(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(q.len()).toBe(3);
    await vi.advanceTimersByTimeAsync(100);
    expect(q.len()).toBe(4);
  });
});

describe("WorkQueue shutdown", () => {
  it("resolves waiting getters with undefined and ignores later adds", async () => {
    const q = new WorkQueue({ name: "t" });
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add("a");
    q.addAfter("b", 10);
    q.addRateLimited("c");
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
    expect(q.shuttingDown).toBe(true);
  });

  it("still hands out items queued before shutdown", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("a");
    q.shutDown();
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBeUndefined();
  });

  it("cancels delayed adds so no timer keeps the process alive", () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t" });
    q.addAfter("a", 1_000);
    q.addRateLimited("b");
    expect(vi.getTimerCount()).toBe(2);
    q.shutDown();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("drains: waits for items being processed to be done", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("a");
    q.add("b");
    const [a, b] = [(await q.get())!, (await q.get())!];
    const drained = q.shutDownWithDrain(30_000);
    q.done(a);
    expect(await settled(drained)).toBe(false);
    q.done(b);
    expect(await drained).toBe(true);
  });

  it("drains at once when nothing is being processed", async () => {
    const q = new WorkQueue({ name: "t" });
    expect(await q.shutDownWithDrain(30_000)).toBe(true);
  });

  it("counts a re-added item that is put back on done as drained", async () => {
    const q = new WorkQueue({ name: "t" });
    q.add("a");
    const a = (await q.get())!;
    q.add("a");
    const drained = q.shutDownWithDrain(30_000);
    q.done(a);
    expect(await drained).toBe(true);
    expect(q.len()).toBe(1);
  });

  it("gives up draining after the timeout and clears its timer", async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ name: "t" });
    q.add("stuck");
    await q.get();
    const drained = q.shutDownWithDrain(1_000);
    await vi.advanceTimersByTimeAsync(999);
    expect(await settled(drained)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await drained).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("WorkQueue metrics", () => {
  function recordingProvider(): WorkQueueMetricsProvider & {
    events: string[];
    probe?: () => InProgressWork;
  } {
    const provider: WorkQueueMetricsProvider & { events: string[]; probe?: () => InProgressWork } = {
      events: [],
      forQueue(name, inProgress) {
        provider.probe = inProgress;
        provider.events.push(`forQueue ${name}`);
        return {
          added: () => provider.events.push("added"),
          started: (s) => provider.events.push(`started ${s}`),
          finished: (s) => provider.events.push(`finished ${s}`),
          retried: () => provider.events.push("retried"),
          release: () => provider.events.push("release"),
        };
      },
    };
    return provider;
  }

  it("reports adds, queue latency, work duration, retries and release", async () => {
    let now = 0;
    const metrics = recordingProvider();
    const q = new WorkQueue({
      name: "m",
      metrics,
      clock: () => now,
      rateLimiter: itemExponentialRateLimiter(1, 1),
    });
    q.add("a");
    q.add("a");
    now = 2_000;
    const a = (await q.get())!;
    now = 2_500;
    q.done(a);
    q.addRateLimited("b");
    q.shutDown();
    expect(metrics.events).toEqual([
      "forQueue m",
      "added",
      "started 2",
      "finished 0.5",
      "retried",
      "release",
    ]);
  });

  it("computes unfinished work and the longest running item when asked", async () => {
    let now = 0;
    const metrics = recordingProvider();
    const q = new WorkQueue({ name: "m", metrics, clock: () => now });
    q.add("a");
    q.add("b");
    await q.get();
    now = 1_000;
    await q.get();
    now = 4_000;
    expect(metrics.probe?.()).toEqual({ unfinishedSeconds: 7, longestRunningSeconds: 4 });
    q.done("a");
    q.done("b");
    expect(metrics.probe?.()).toEqual({ unfinishedSeconds: 0, longestRunningSeconds: 0 });
  });
});
