import { describe, expect, it } from "vitest";
import { sideBySide } from "./side-by-side.ts";

/** A task per item that settles only when the test says, recording what runs at once. */
function gated() {
  const gates = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  const running = new Set<number>();
  let most = 0;
  const started: number[] = [];
  const task = (i: number) =>
    new Promise<void>((resolve, reject) => {
      started.push(i);
      running.add(i);
      most = Math.max(most, running.size);
      const done = () => running.delete(i);
      gates.set(i, {
        resolve: () => (done(), resolve()),
        reject: (e) => (done(), reject(e)),
      });
    });
  /** Lets the started tasks' microtasks run, so the workers pick up what follows. */
  const settle = async () => {
    for (let k = 0; k < 10; k++) await Promise.resolve();
  };
  return { gates, running, started, task, settle, most: () => most };
}

describe("sideBySide", () => {
  it("runs at most `limit` at once, in the items' order, and every item once", async () => {
    const g = gated();
    const items = Array.from({ length: 10 }, (_, i) => i);
    const run = sideBySide(items, 3, g.task);
    for (let next = 0; next < items.length; next++) {
      await g.settle();
      g.gates.get(next)!.resolve();
    }
    expect(await run).toEqual({ failures: [], started: 10 });
    expect(g.started).toEqual(items);
    expect(g.most()).toBe(3);
  });

  it("after a failure starts nothing more, lets the started finish, and names the failures", async () => {
    const g = gated();
    const items = Array.from({ length: 10 }, (_, i) => i);
    let resolved = false;
    const run = sideBySide(items, 4, g.task).then((r) => ((resolved = true), r));
    await g.settle();
    g.gates.get(1)!.reject(new Error("boom 1"));
    await g.settle();
    // 0, 2 and 3 still run: the result waits for them; a second one failing is named too.
    expect(resolved).toBe(false);
    expect([...g.running].sort()).toEqual([0, 2, 3]);
    g.gates.get(0)!.resolve();
    g.gates.get(2)!.reject(new Error("boom 2"));
    await g.settle();
    expect(resolved).toBe(false);
    g.gates.get(3)!.resolve();
    const result = await run;
    expect(result.started).toBe(4);
    expect(result.failures.map((f) => [f.item, (f.error as Error).message])).toEqual([
      [1, "boom 1"],
      [2, "boom 2"],
    ]);
    expect(g.started).toEqual([0, 1, 2, 3]);
  });

  it("stops starting once the signal aborts", async () => {
    const g = gated();
    const stop = new AbortController();
    const run = sideBySide([0, 1, 2, 3, 4], 2, g.task, stop.signal);
    await g.settle();
    stop.abort();
    g.gates.get(0)!.resolve();
    g.gates.get(1)!.resolve();
    expect(await run).toEqual({ failures: [], started: 2 });
  });

  it("refuses a limit that runs nothing", async () => {
    await expect(sideBySide([1], 0, async () => {})).rejects.toThrow(
      "limit must be a positive integer, not 0",
    );
  });
});
