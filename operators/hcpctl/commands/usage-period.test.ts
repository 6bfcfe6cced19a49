import { describe, expect, it } from "vitest";
import { CliError } from "../errors.ts";
import { hourText, monthStart, parseBound, periodOf } from "./usage-period.ts";

const iso = (d: Date): string => d.toISOString();

describe("parseBound", () => {
  it("takes a month, a day or a whole hour, in UTC unless an offset is given", () => {
    expect(iso(parseBound("2026-05"))).toBe("2026-05-01T00:00:00.000Z");
    expect(iso(parseBound("2026-05-17"))).toBe("2026-05-17T00:00:00.000Z");
    expect(iso(parseBound("2026-05-17T13"))).toBe("2026-05-17T13:00:00.000Z");
    expect(iso(parseBound("2026-05-17T13:00Z"))).toBe("2026-05-17T13:00:00.000Z");
    expect(iso(parseBound("2026-05-17T13:00:00.000Z"))).toBe("2026-05-17T13:00:00.000Z");
    expect(iso(parseBound("2026-05-17T13:00+02:00"))).toBe("2026-05-17T11:00:00.000Z");
  });

  it("refuses what is no time, no date in the calendar, or not a whole hour", () => {
    expect(() => parseBound("May")).toThrow(/expected a month, a day or a whole hour/);
    expect(() => parseBound("2026-13")).toThrow(/no such time in the calendar/);
    expect(() => parseBound("2026-02-30")).toThrow(/no such time in the calendar/);
    expect(() => parseBound("2026-05-17T13:30Z")).toThrow(
      "usage is counted by the whole hour; give one, such as 2026-05-17T13:00Z",
    );
    expect(() => parseBound("2026-05-17T13:00+05:30")).toThrow(/whole hour/);
    expect(() => parseBound("2026-05-17T13:00:00.5Z")).toThrow(/whole hour/);
  });
});

describe("periodOf", () => {
  const now = Date.parse("2026-11-28T15:28:38Z");

  it("defaults to the current UTC month", () => {
    expect(periodOf({}, now)).toEqual({
      from: new Date("2026-11-01T00:00:00Z"),
      to: new Date("2026-12-01T00:00:00Z"),
    });
    expect(monthStart(Date.parse("2026-12-31T23:59:59Z"), 1)).toEqual(new Date("2027-01-01T00:00:00Z"));
  });

  it("refuses a period that ends where or before it begins, naming both bounds", () => {
    expect(() => periodOf({ to: new Date("2026-10-01T00:00:00Z") }, now)).toThrow(
      new CliError(
        "--to 2026-10-01T00:00Z is not after --from 2026-11-01T00:00Z (the default: this month's start): the period is [--from, --to)",
      ),
    );
    expect(() =>
      periodOf({ from: new Date("2026-05-01T01:00:00Z"), to: new Date("2026-05-01T01:00:00Z") }, now),
    ).toThrow(/--to 2026-05-01T01:00Z is not after --from 2026-05-01T01:00Z: the period/);
    expect(hourText(new Date("2026-05-01T01:00:00Z"))).toBe("2026-05-01T01:00Z");
  });
});
