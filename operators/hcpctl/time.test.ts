import { describe, expect, it } from "vitest";
import { CliError } from "./errors.ts";
import { ageOf, humanDuration, parseDuration } from "./time.ts";

describe("humanDuration", () => {
  it.each([
    [0, "0s"],
    [59_000, "59s"],
    [119_000, "119s"],
    [120_000, "2m"],
    [200_000, "3m20s"],
    [9 * 60_000, "9m"],
    [45 * 60_000, "45m"],
    [3 * 3_600_000, "3h"],
    [3 * 3_600_000 + 5 * 60_000, "3h5m"],
    [20 * 3_600_000, "20h"],
    [3 * 86_400_000, "3d"],
    [3 * 86_400_000 + 4 * 3_600_000, "3d4h"],
    [30 * 86_400_000, "30d"],
    [800 * 86_400_000, "2y"],
  ])("%i ms is %s", (ms, text) => expect(humanDuration(ms)).toBe(text));

  it("says so for a time it cannot read", () => {
    expect(ageOf("yesterday", Date.now())).toBe("<invalid>");
    expect(ageOf(undefined, Date.now())).toBe("");
    expect(ageOf("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:00:30Z"))).toBe("30s");
  });
});

describe("parseDuration", () => {
  it.each([
    ["30s", 30_000],
    ["20m", 1_200_000],
    ["1h30m", 5_400_000],
    ["500ms", 500],
    ["1.5s", 1_500],
    ["0", 0],
  ])("%s", (text, ms) => expect(parseDuration(text, "--timeout")).toBe(ms));

  it.each(["", "20", "20 m", "m", "1d", "-5s", "5s extra"])("refuses %j, naming the flag", (text) => {
    expect(() => parseDuration(text, "--timeout")).toThrow(CliError);
    expect(() => parseDuration(text, "--timeout")).toThrow(/invalid --timeout/);
  });
});
