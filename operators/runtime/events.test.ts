import { describe, expect, it } from "vitest";
import { conditionTransitions, type TransitionPolicy } from "./events.ts";

const policy: TransitionPolicy = { negative: ["Degraded"], quiet: ["Progressing"] };
const c = (type: string, status: string, reason = "R", message = "m") => ({ type, status, reason, message });

describe("conditionTransitions", () => {
  it.each([
    ["a first good condition", [], [c("Ready", "True", "AsExpected")], [{ type: "Normal", reason: "Ready" }]],
    ["a first pending condition", [], [c("Ready", "False", "WaitingForAgent")], []],
    ["a first Degraded=False", [], [c("Degraded", "False", "AsExpected")], []],
    [
      "a first Degraded=True",
      [],
      [c("Degraded", "True", "QuotaExceeded")],
      [{ type: "Warning", reason: "QuotaExceeded" }],
    ],
    [
      "Degraded recovering",
      [c("Degraded", "True", "QuotaExceeded")],
      [c("Degraded", "False", "AsExpected")],
      [{ type: "Normal", reason: "Degraded" }],
    ],
    [
      "a condition turning bad",
      [c("Ready", "True", "AsExpected")],
      [c("Ready", "False", "HostedClusterEtcdQuorumLost")],
      [{ type: "Normal", reason: "HostedClusterEtcdQuorumLost" }],
    ],
    [
      "a new reason for the same status",
      [c("Ready", "False", "A")],
      [c("Ready", "False", "B")],
      [{ type: "Normal", reason: "B" }],
    ],
    [
      "no change",
      [c("Ready", "True", "AsExpected")],
      [c("Ready", "True", "AsExpected", "other message")],
      [],
    ],
    ["a quiet condition", [], [c("Progressing", "True", "Upgrading")], []],
  ])("%s", (_what, before, after, want) => {
    expect(conditionTransitions(before, after, policy).map(({ type, reason }) => ({ type, reason }))).toEqual(
      want,
    );
  });
});
