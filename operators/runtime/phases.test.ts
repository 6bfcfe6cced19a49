import { describe, expect, it } from "vitest";
import { silentLogger } from "./logger.ts";
import { phaseTime } from "./metrics.ts";
import { lowestNonZero, phasesResult, runPhases, timed, type Phase, type PhaseResult } from "./phases.ts";

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

  it("calls the requeue periodic only when every phase asking for one called its own so", async () => {
    const asks = (...results: PhaseResult[]): Phase<null>[] => results.map((r) => () => r);
    const run = async (...results: PhaseResult[]) =>
      phasesResult(await runPhases(ctx(), null, asks(...results)));
    expect(await run({ requeueAfterMs: 600_000, periodic: true }, {}, { requeueAfterMs: 0 })).toEqual({
      requeueAfterMs: 600_000,
      periodic: true,
    });
    expect(await run({ requeueAfterMs: 600_000, periodic: true }, { requeueAfterMs: 2_000 })).toEqual({
      requeueAfterMs: 2_000,
    });
    expect(await run({ requeueAfterMs: 1_000, periodic: true }, { requeueAfterMs: 300_000 })).toEqual({
      requeueAfterMs: 1_000,
    });
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

describe("phase metrics", () => {
  it("records each phase's time by controller and phase name, a failing one too", async () => {
    const series = async (phase: string): Promise<number> => {
      const metric = await phaseTime().get();
      const count = metric.values.find(
        (v) =>
          v.metricName === "controller_runtime_phase_seconds_count" &&
          v.labels["controller"] === "phases-test" &&
          v.labels["phase"] === phase,
      );
      return count?.value ?? 0;
    };
    async function placeIt(): Promise<PhaseResult> {
      return Promise.resolve({});
    }
    async function failIt(): Promise<PhaseResult> {
      return Promise.reject(new Error("no"));
    }
    const c = { ...ctx(), controller: "phases-test" };
    await runPhases(c, [], [placeIt, failIt]);
    await timed(c, "writeStatus", () => Promise.resolve());
    expect([await series("placeIt"), await series("failIt"), await series("writeStatus")]).toEqual([1, 1, 1]);
    // Without a controller name (a reconciler called directly) nothing is recorded.
    await runPhases(ctx(), [], [placeIt]);
    expect(await series("placeIt")).toBe(1);
  });
});
