import { describe, expect, it } from "vitest";
import { matchesSelector } from "./label-selector.ts";

describe("matchesSelector", () => {
  it("evaluates expressions", () => {
    const labels = { zone: "1", tier: "standard" };
    expect(
      matchesSelector(labels, { matchExpressions: [{ key: "zone", operator: "In", values: ["1", "2"] }] }),
    ).toBe(true);
    expect(
      matchesSelector(labels, { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["1"] }] }),
    ).toBe(false);
    expect(matchesSelector(labels, { matchExpressions: [{ key: "gpu", operator: "DoesNotExist" }] })).toBe(
      true,
    );
    expect(matchesSelector(labels, { matchExpressions: [{ key: "gpu", operator: "Exists" }] })).toBe(false);
  });
});
