import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { StringPool } from "./intern.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Live heap bytes after a full collection. */
function liveHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** A condition as an apiserver sends it: each copy parsed on its own, as a watch delivers them. */
const conditionJson = (i: number): string =>
  JSON.stringify({
    metadata: { name: `c${i}`, uid: `uid-${i}` },
    status: { conditions: [{ type: "Ready", reason: "AsExpected", message: "m".repeat(400) }] },
  });

describe("StringPool", () => {
  it("keeps one copy of a string repeated across parsed objects, and every value intact", () => {
    const copies = 5_000;
    const held: unknown[] = [];
    const before = liveHeap();
    for (let i = 0; i < copies; i++) held.push(JSON.parse(conditionJson(i)));
    const unpooled = liveHeap() - before;

    const pool = new StringPool();
    const pooled: unknown[] = [];
    const start = liveHeap();
    for (let i = 0; i < copies; i++) pooled.push(pool.internAll(JSON.parse(conditionJson(i))));
    const withPool = liveHeap() - start;

    // 5,000 copies of a 400-character message are 2 MB or more on their own; pooled, one copy.
    expect(unpooled - withPool).toBeGreaterThan(copies * 400 * 0.8);
    expect(pooled).toEqual(held);
  });

  it("is bounded, and a string that keeps recurring survives the generations", () => {
    const pool = new StringPool(100);
    for (let i = 0; i < 1_000; i++) {
      pool.intern(`one-off-${i}`);
      if (i % 50 === 0) pool.intern("AsExpected");
    }
    expect(pool.size).toBeLessThanOrEqual(200);
    expect(pool.has("AsExpected")).toBe(true);
    expect(pool.has("one-off-0")).toBe(false);
    expect(pool.has("one-off-999")).toBe(true);
  });

  it("passes long strings through without holding them", () => {
    const pool = new StringPool(100, 10);
    expect(pool.intern("x".repeat(11))).toBe("x".repeat(11));
    expect(pool.size).toBe(0);
  });

  it("walks arrays and nested objects, leaving other values alone", () => {
    const pool = new StringPool();
    const value = { a: ["x", 1, null, { b: "y", c: true }], d: 2 };
    expect(pool.internAll(value)).toEqual({ a: ["x", 1, null, { b: "y", c: true }], d: 2 });
    expect(pool.size).toBe(2);
  });
});
