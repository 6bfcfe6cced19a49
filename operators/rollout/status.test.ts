/**
 * The events a status write makes true: each transition told once (a repeated status tells
 * nothing), a change of why the rollout is paused told again, a resume, and the waves' own.
 */
import { describe, expect, it } from "vitest";
import type { Condition, RolloutStatus, RolloutWaveStatus } from "../api/v1alpha1/index.ts";
import { rolloutEvents } from "./status.ts";

const wave = (index: number, state: RolloutWaveStatus["state"]): RolloutWaveStatus => ({
  index,
  task: `ro-wave-${index}`,
  clusters: index,
  state,
});

const condition = (type: string, status: Condition["status"], reason: string): Condition => ({
  type,
  status,
  reason,
  message: `${type} ${reason}`,
  lastTransitionTime: "2026-06-01T00:00:00Z",
});

function status(
  phase: RolloutStatus["phase"],
  waves: RolloutWaveStatus[],
  pausedReason?: string,
): RolloutStatus {
  return {
    phase,
    waves,
    conditions: [
      condition("Progressing", phase === "Progressing" ? "True" : "False", phase ?? ""),
      condition("Paused", pausedReason ? "True" : "False", pausedReason ?? "NotPaused"),
    ],
  };
}

const progressing = status("Progressing", [wave(1, "Succeeded"), wave(2, "Progressing")]);
const budget = status(
  "Paused",
  [wave(1, "Succeeded"), wave(2, "FailureBudgetExceeded")],
  "FailureBudgetExceeded",
);

describe("rolloutEvents", () => {
  it.each<[string, RolloutStatus, RolloutStatus, string[]]>([
    ["the first wave", {}, status("Progressing", [wave(1, "Progressing")]), ["WaveStarted"]],
    [
      "a wave that succeeded and the next",
      status("Progressing", [wave(1, "Progressing")]),
      progressing,
      ["WaveSucceeded", "WaveStarted"],
    ],
    ["the budget passed", progressing, budget, ["Paused"]],
    ["the same pause again", budget, budget, []],
    [
      "the SRE's pause over the budget's",
      budget,
      status("Paused", budget.waves ?? [], "PausedBySpec"),
      ["Paused"],
    ],
    [
      "failures accepted, the next wave",
      budget,
      status("Progressing", [wave(1, "Succeeded"), wave(2, "FailuresAccepted"), wave(3, "Progressing")]),
      ["WaveFinished", "WaveStarted", "Resumed"],
    ],
    ["an abort", progressing, status("Aborted", [wave(1, "Succeeded"), wave(2, "Aborted")]), ["Aborted"]],
    [
      "the last wave",
      status("Progressing", [wave(1, "Progressing")]),
      status("Succeeded", [wave(1, "Succeeded")]),
      ["WaveSucceeded", "Succeeded"],
    ],
  ])("%s", (_name, before, after, reasons) => {
    expect(rolloutEvents(before, after).map((e) => e.reason)).toEqual(reasons);
  });

  it("warns of a pause, telling why in the Progressing condition's words", () => {
    const [paused] = rolloutEvents(progressing, budget);
    expect(paused).toMatchObject({ type: "Warning", message: "Progressing Paused" });
  });
});
