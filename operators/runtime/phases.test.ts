import { describe, expect, it } from "vitest";
import { silentLogger } from "./logger.ts";
import { lowestNonZero, phasesResult, runPhases, type Phase } from "./phases.ts";

const ctx = (signal = new AbortController().signal) => ({ signal, log: silentLogger });

describe("runPhases", () => {
  it.each<[number | undefined, number | undefined, number | undefined]>([
    [undefined, undefined, undefined],
    [0, 5, 5],
    [5, 0, 5],
    [5, 3, 3],
    [3, 5, 3],
  ])("lowestNonZero(%s, %s) = %s", (a, b, want) => {
    expect(lowestNonZero(a, b)).toBe(want);
  });

  it("runs every phase in order and keeps the smallest non-zero requeue", async () => {
    const ran: string[] = [];
    const phase =
      (name: string, requeueAfterMs?: number): Phase<string[]> =>
      (_ctx, scope) => {
        scope.push(name);
        return { requeueAfterMs };
      };
    const outcome = await runPhases(ctx(), ran, [
      phase("a", 5000),
      phase("b"),
      phase("c", 300),
      phase("d", 0),
    ]);
    expect(ran).toEqual(["a", "b", "c", "d"]);
    expect(phasesResult(outcome)).toEqual({ requeueAfterMs: 300 });
  });

  it("collects errors and still runs the phases after a failing one", async () => {
    const ran: string[] = [];
    const outcome = await runPhases(ctx(), ran, [
      () => Promise.reject(new Error("first")),
      (_c, s) => (s.push("observed"), {}),
      () => {
        throw new Error("second");
      },
    ]);
    expect(ran).toEqual(["observed"]);
    expect(outcome.errors).toHaveLength(2);
    expect(() => phasesResult(outcome)).toThrow(AggregateError);
    expect(() => phasesResult(outcome)).toThrow("first; second");
  });

  it("rethrows a single error as it is", () => {
    const err = new RangeError("only");
    expect(() => phasesResult({ result: {}, errors: [err] })).toThrow(err);
  });

  it("stops before the next phase once the signal aborts", async () => {
    const abort = new AbortController();
    const ran: string[] = [];
    const outcome = await runPhases(ctx(abort.signal), ran, [
      (_c, s) => (s.push("a"), abort.abort(new Error("shutting down")), {}),
      (_c, s) => (s.push("b"), {}),
    ]);
    expect(ran).toEqual(["a"]);
    expect(() => phasesResult(outcome)).toThrow("shutting down");
  });
});
