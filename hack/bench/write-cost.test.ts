import { describe, expect, it } from "vitest";
import { changedStatus } from "./write-cost.ts";

describe("changedStatus", () => {
  it("changes the first condition's message, each round differently, and nothing else", () => {
    const status = {
      observedGeneration: 2,
      conditions: [
        { type: "Ready", status: "True", message: "ready" },
        { type: "Degraded", status: "False", message: "fine" },
      ],
    };
    const one = changedStatus(status, 1) as typeof status;
    const two = changedStatus(status, 2) as typeof status;
    expect(one.conditions[0]).toEqual({ type: "Ready", status: "True", message: "ready (write 1)" });
    expect(two.conditions[0]?.message).toBe("ready (write 2)");
    expect(one.conditions[1]).toBe(status.conditions[1]);
    expect(one.observedGeneration).toBe(2);
    expect(status.conditions[0]?.message).toBe("ready");
  });

  it("refuses a status it cannot change as a controller would", () => {
    expect(() => changedStatus({}, 1)).toThrow(/without conditions/);
  });
});
