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
      [{ type: "Normal", reason: "Recovered" }],
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

describe("conditionTransitions during an install", () => {
  const install: TransitionPolicy = {
    ...policy,
    install: { ready: "Ready", steps: ["DnsZoneReady", "IngressReady"] },
  };
  const reasons = (before: ReturnType<typeof c>[], after: ReturnType<typeof c>[], failed: string[] = []) =>
    conditionTransitions(before, after, install, new Set(failed)).map((e) => `${e.type}/${e.reason}`);

  it("a step becoming ready and Ready held by a new reason are not events", () => {
    const before = [c("DnsZoneReady", "False", "Creating"), c("Ready", "False", "Creating")];
    const after = [
      c("DnsZoneReady", "True", "AsExpected"),
      c("IngressReady", "False", "Creating"),
      c("Ready", "False", "Pending"),
    ];
    expect(reasons(before, after)).toEqual([]);
  });

  it("a step that fails is an event, and so is the end of the install", () => {
    expect(
      reasons(
        [],
        [c("IngressReady", "False", "QuotaExceeded"), c("Ready", "False", "QuotaExceeded")],
        ["IngressReady"],
      ),
    ).toEqual(["Normal/QuotaExceeded"]);
    expect(
      reasons(
        [c("Ready", "False", "Pending")],
        [c("IngressReady", "True"), c("Ready", "True", "AsExpected")],
      ),
    ).toEqual(["Normal/Ready"]);
  });

  it("conditions that are no steps, and Degraded, are events as before", () => {
    expect(reasons([], [c("Paused", "True", "Paused"), c("Degraded", "True", "QuotaExceeded")])).toEqual([
      "Normal/Paused",
      "Warning/QuotaExceeded",
    ]);
  });

  it("once the object has been Ready, every step change is news again, one event per cause", () => {
    const before = [c("Ready", "True", "AsExpected"), c("IngressReady", "True", "AsExpected")];
    const after = [
      c("Ready", "False", "LoadBalancerGone", "IngressReady: gone"),
      c("IngressReady", "False", "LoadBalancerGone", "gone"),
    ];
    expect(conditionTransitions(before, after, install).map((e) => `${e.reason}: ${e.message}`)).toEqual([
      "LoadBalancerGone: IngressReady: gone",
    ]);
    expect(reasons(before, [c("Ready", "True", "AsExpected"), c("IngressReady", "False", "Gone")])).toEqual([
      "Normal/Gone",
    ]);
  });

  it("Degraded with the same cause as Ready and the step is one Warning", () => {
    const cause = "HostedClusterEtcdQuorumLost";
    const before = [
      c("Ready", "True", "AsExpected"),
      c("Degraded", "False", "AsExpected"),
      c("Available", "True"),
    ];
    const after = [c("Ready", "False", cause), c("Degraded", "True", cause), c("Available", "False", cause)];
    expect(reasons(before, after)).toEqual([`Warning/${cause}`]);
  });
});
