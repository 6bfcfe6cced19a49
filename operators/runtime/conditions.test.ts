import { describe, it, expect } from "vitest";
import {
  MAX_CONDITION_MESSAGE_LENGTH,
  conditionTime,
  conditionsEqual,
  getCondition,
  isFalse,
  isTrue,
  removeCondition,
  setCondition,
  truncateText,
  type Condition,
  type ConditionInput,
} from "./conditions.ts";

const earlier = "2024-05-01T10:00:00Z";
const now = new Date("2024-05-01T12:34:56.789Z");
const nowText = "2024-05-01T12:34:56Z";

function cond(type: string, status: Condition["status"] = "True", extra: Partial<Condition> = {}): Condition {
  return { type, status, lastTransitionTime: earlier, reason: "Because", message: "", ...extra };
}

function input(type: string, status: Condition["status"], reason = "Because", message = ""): ConditionInput {
  return { type, status, reason, message };
}

describe("setCondition", () => {
  it.each<[string, Condition[] | undefined, ConditionInput, Condition]>([
    [
      "adds a new condition stamped now",
      undefined,
      input("Ready", "False", "Provisioning", "waiting for DNS"),
      {
        type: "Ready",
        status: "False",
        lastTransitionTime: nowText,
        reason: "Provisioning",
        message: "waiting for DNS",
      },
    ],
    [
      "keeps lastTransitionTime when only reason and message change",
      [cond("Ready", "False")],
      input("Ready", "False", "StillProvisioning", "almost"),
      {
        type: "Ready",
        status: "False",
        lastTransitionTime: earlier,
        reason: "StillProvisioning",
        message: "almost",
      },
    ],
    [
      "moves lastTransitionTime when the status flips",
      [cond("Ready", "False")],
      input("Ready", "True", "Provisioned"),
      { type: "Ready", status: "True", lastTransitionTime: nowText, reason: "Provisioned", message: "" },
    ],
    [
      "moves lastTransitionTime from Unknown to a known status",
      [cond("Ready", "Unknown")],
      input("Ready", "False"),
      { type: "Ready", status: "False", lastTransitionTime: nowText, reason: "Because", message: "" },
    ],
  ])("%s", (_, before, next, expected) => {
    expect(getCondition(setCondition(before, next, { now }), next.type)).toEqual(expected);
  });

  it.each<[string, number | undefined, Condition]>([
    ["stamps observedGeneration", 7, cond("Ready", "True", { observedGeneration: 7 })],
    ["replaces an older observedGeneration", 8, cond("Ready", "True", { observedGeneration: 8 })],
    ["omits observedGeneration when not given", undefined, cond("Ready", "True")],
  ])("%s", (_, observedGeneration, expected) => {
    const before = [cond("Ready", "True", { observedGeneration: 3 })];
    const after = setCondition(before, input("Ready", "True"), { observedGeneration, now });
    expect(after).toEqual([expected]);
    expect("observedGeneration" in after[0]!).toBe(observedGeneration !== undefined);
  });

  it.each<[string, string[], string, string[]]>([
    ["puts Ready first", ["Degraded"], "Ready", ["Ready", "Degraded"]],
    ["puts Available right after Ready", ["Ready", "Zeta"], "Available", ["Ready", "Available", "Zeta"]],
    [
      "sorts other types alphabetically",
      ["Ready", "Progressing"],
      "Degraded",
      ["Ready", "Degraded", "Progressing"],
    ],
    ["puts Deleting near the end", ["Ready", "Paused"], "Deleting", ["Ready", "Deleting", "Paused"]],
    ["puts Paused last", ["Deleting", "Zeta"], "Paused", ["Zeta", "Deleting", "Paused"]],
    [
      "orders an unsorted input",
      ["Paused", "Zeta", "Available", "Alpha"],
      "Ready",
      ["Ready", "Available", "Alpha", "Zeta", "Paused"],
    ],
  ])("%s", (_, existing, added, expectedOrder) => {
    const after = setCondition(
      existing.map((t) => cond(t)),
      input(added, "True"),
      { now },
    );
    expect(after.map((c) => c.type)).toEqual(expectedOrder);
  });

  it("does not modify its input", () => {
    const before = [cond("Ready", "False")];
    const frozen = structuredClone(before);
    setCondition(before, input("Ready", "True"), { now });
    setCondition(before, input("Degraded", "True"), { now });
    expect(before).toEqual(frozen);
  });

  it.each([input("", "True"), input("Ready", "True", "")])("rejects %j without a type or reason", (next) => {
    expect(() => setCondition([], next, { now })).toThrow(/needs a type and a reason/);
  });

  it("uses the current time by default", () => {
    const [ready] = setCondition(undefined, input("Ready", "True"));
    expect(ready!.lastTransitionTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it("cuts a message over the schema's 32768 characters, visibly, so the status can still be written", () => {
    const key = "k".repeat(200 * 1024);
    const [placed] = setCondition(
      [],
      input("Placed", "False", "NoMatchingManagementCluster", `selector ${key}`),
      {
        now,
      },
    );
    expect(placed!.message).toHaveLength(MAX_CONDITION_MESSAGE_LENGTH);
    expect(placed!.message.startsWith("selector kkk")).toBe(true);
    expect(placed!.message.endsWith(`… [truncated: ${9 + key.length} characters in all]`)).toBe(true);
    // Cutting is deterministic, so re-setting the same long message is not a change.
    const again = setCondition(
      [placed!],
      input("Placed", "False", "NoMatchingManagementCluster", `selector ${key}`),
    );
    expect(conditionsEqual(again, [placed!])).toBe(true);
  });

  it("keeps a message of exactly the limit whole", () => {
    const message = "m".repeat(MAX_CONDITION_MESSAGE_LENGTH);
    expect(setCondition([], input("Ready", "False", "Why", message), { now })[0]!.message).toBe(message);
  });
});

describe("truncateText", () => {
  it.each<[string, string, number, string]>([
    ["keeps text within the limit", "short", 40, "short"],
    [
      "cuts with a marker naming the full length",
      "x".repeat(50),
      40,
      "xxxxx… [truncated: 50 characters in all]",
    ],
    ["never splits a surrogate pair", "a😀".repeat(20), 37, "a… [truncated: 60 characters in all]"],
    ["fits the marker's start into a tiny limit", "y".repeat(50), 5, "… [tr"],
  ])("%s", (_name, text, max, expected) => {
    const cut = truncateText(text, max);
    expect(cut).toBe(expected);
    expect(cut.length).toBeLessThanOrEqual(max);
  });
});

describe("conditionTime", () => {
  it.each([
    [new Date("2024-05-01T12:34:56.999Z"), "2024-05-01T12:34:56Z"],
    [new Date("2024-05-01T00:00:00.000Z"), "2024-05-01T00:00:00Z"],
  ])("formats %s as %s", (date, text) => {
    expect(conditionTime(date)).toBe(text);
  });
});

describe("queries", () => {
  const list = [cond("Ready", "True"), cond("Degraded", "False"), cond("Progressing", "Unknown")];

  it.each<[string, boolean, boolean]>([
    ["Ready", true, false],
    ["Degraded", false, true],
    ["Progressing", false, false],
    ["Missing", false, false],
  ])("%s: isTrue %s, isFalse %s", (type, t, f) => {
    expect(isTrue(list, type)).toBe(t);
    expect(isFalse(list, type)).toBe(f);
  });

  it("handles a missing list", () => {
    expect(getCondition(undefined, "Ready")).toBeUndefined();
    expect(isTrue(undefined, "Ready")).toBe(false);
    expect(removeCondition(undefined, "Ready")).toEqual([]);
  });

  it("removes only the given type, without modifying the input", () => {
    expect(removeCondition(list, "Degraded").map((c) => c.type)).toEqual(["Ready", "Progressing"]);
    expect(list).toHaveLength(3);
  });
});

describe("conditionsEqual", () => {
  const base = [cond("Ready", "True", { observedGeneration: 2 }), cond("Degraded", "False")];

  it.each<[string, Condition[] | undefined, Condition[] | undefined, boolean]>([
    ["identical lists", base, structuredClone(base), true],
    ["missing and empty", undefined, [], true],
    ["different lengths", base, base.slice(0, 1), false],
    ["different order", base, [...base].reverse(), false],
    ["different status", base, [cond("Ready", "False", { observedGeneration: 2 }), base[1]!], false],
    ["different reason", base, [{ ...base[0]!, reason: "Other" }, base[1]!], false],
    ["different message", base, [{ ...base[0]!, message: "hi" }, base[1]!], false],
    ["different lastTransitionTime", base, [{ ...base[0]!, lastTransitionTime: nowText }, base[1]!], false],
    ["different observedGeneration", base, [{ ...base[0]!, observedGeneration: 3 }, base[1]!], false],
    ["observedGeneration missing on one side", base, [cond("Ready", "True"), base[1]!], false],
  ])("%s: %s", (_, a, b, expected) => {
    expect(conditionsEqual(a, b)).toBe(expected);
    expect(conditionsEqual(b, a)).toBe(expected);
  });

  it("is true after re-setting an unchanged condition, so the status write can be skipped", () => {
    const once = setCondition(undefined, input("Ready", "True", "Done"), { observedGeneration: 1, now });
    const later = new Date(now.getTime() + 60_000);
    const twice = setCondition(once, input("Ready", "True", "Done"), { observedGeneration: 1, now: later });
    expect(conditionsEqual(once, twice)).toBe(true);
  });
});
