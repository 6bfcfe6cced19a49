import { describe, expect, it } from "vitest";
import { isProgressReason, poolReport } from "./reconcile.ts";

describe("node pool feedback", () => {
  it("tells HyperShift's progress reasons from failures", () => {
    for (const r of ["WaitingForAvailable", "WaitingForAvailableMachines", "WaitingForNodeRef", "ScalingUp"])
      expect(isProgressReason(r), r).toBe(true);
    for (const r of ["ValidationFailed", "InvalidVMSize", "IgnitionEndpointMissing"])
      expect(isProgressReason(r), r).toBe(false);
  });

  it("reads replicas, version and the Ready condition, ignoring malformed values", () => {
    expect(
      poolReport({
        replicas: 3,
        version: "4.19.7",
        ready: { type: "Ready", status: "True", reason: "AsExpected" },
      }),
    ).toEqual({
      replicas: 3,
      version: "4.19.7",
      conditions: [{ type: "Ready", status: "True", reason: "AsExpected" }],
    });
    expect(poolReport({ replicas: "3", version: "", ready: "yes" })).toEqual({
      replicas: undefined,
      version: undefined,
      conditions: [],
    });
  });
});
