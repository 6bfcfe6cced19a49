import { describe, expect, it } from "vitest";
import { readyCluster } from "../../../test/support/hcpctl-objects.ts";
import { conditionMet, parseFor } from "./wait.ts";

describe("--for", () => {
  it.each([
    ["condition=Ready", { kind: "condition", type: "Ready", status: "True" }],
    ["condition=Ready=False", { kind: "condition", type: "Ready", status: "False" }],
    ["condition=Degraded=true", { kind: "condition", type: "Degraded", status: "true" }],
    ["delete", { kind: "delete" }],
  ])("%s", (text, want) => expect(parseFor(text)).toEqual(want));

  it.each(["Ready", "condition=", "jsonpath={.status.phase}=Ready", ""])("refuses %j", (text) => {
    expect(() => parseFor(text)).toThrow(`invalid --for "${text}"`);
  });
});

describe("conditionMet", () => {
  it("matches type and status without regard to case", () => {
    expect(conditionMet(readyCluster(), parseFor("condition=ready=TRUE"))).toBe(true);
    expect(conditionMet(readyCluster(), parseFor("condition=Ready=False"))).toBe(false);
    expect(conditionMet(readyCluster(), parseFor("condition=Missing"))).toBe(false);
  });

  it("does not count a condition computed for an older generation", () => {
    const c = readyCluster();
    c.metadata.generation = 2;
    expect(conditionMet(c, parseFor("condition=Ready"))).toBe(false);
    c.status!.conditions!.find((x) => x.type === "Ready")!.observedGeneration = 2;
    expect(conditionMet(c, parseFor("condition=Ready"))).toBe(true);
  });

  it("is met for delete only when the object is gone", () => {
    expect(conditionMet(undefined, parseFor("delete"))).toBe(true);
    expect(conditionMet(readyCluster(), parseFor("delete"))).toBe(false);
  });
});
