import { describe, expect, it } from "vitest";
import type { MaintenanceSpec } from "../api/v1alpha1/maintenance.ts";
import { isTimeZone, maintenanceWindowAt } from "./maintenance-window.ts";

const at = (iso: string): Date => new Date(iso);

describe("maintenanceWindowAt", () => {
  it("is open at any time when the cluster sets no windows", () => {
    expect(maintenanceWindowAt(undefined, at("2026-11-28T12:00:00Z"))).toMatchObject({ open: true });
    expect(maintenanceWindowAt({ timeZone: "Europe/Berlin" }, at("2026-11-28T12:00:00Z")).open).toBe(true);
  });

  const weekend: MaintenanceSpec = {
    timeZone: "Europe/Berlin",
    windows: [{ days: ["Saturday", "Sunday"], start: "02:00", end: "06:00" }],
  };

  it("opens in the customer's wall-clock time, not UTC", () => {
    // 2026-11-28 is a Saturday; Berlin is UTC+1 in November, so 02:00 local is 01:00Z.
    expect(maintenanceWindowAt(weekend, at("2026-11-28T00:59:00Z")).open).toBe(false);
    const inside = maintenanceWindowAt(weekend, at("2026-11-28T01:00:00Z"));
    expect(inside).toMatchObject({ open: true, closesAt: at("2026-11-28T05:00:00Z") });
    expect(maintenanceWindowAt(weekend, at("2026-11-28T05:00:00Z")).open).toBe(false);
  });

  it("names the next opening when closed", () => {
    const friday = maintenanceWindowAt(weekend, at("2026-11-27T12:00:00Z"));
    expect(friday).toMatchObject({ open: false, opensAt: at("2026-11-28T01:00:00Z") });
    expect(friday.reason).toContain("next window opens 2026-11-28T01:00:00Z");
  });

  it("keeps local time across a daylight-saving change", () => {
    // Berlin moves to UTC+2 on 2027-03-28 (a Sunday): 02:00 local does not exist and is 03:00 CEST.
    const summer: MaintenanceSpec = {
      ...weekend,
      windows: [{ days: ["Saturday"], start: "03:00", end: "05:00" }],
    };
    expect(maintenanceWindowAt(summer, at("2027-04-03T01:00:00Z")).open).toBe(true);
    expect(maintenanceWindowAt(summer, at("2027-04-03T00:59:00Z")).open).toBe(false);
    expect(maintenanceWindowAt(summer, at("2027-03-29T00:00:00Z"))).toMatchObject({
      opensAt: at("2027-04-03T01:00:00Z"),
    });
  });

  it("runs a window past midnight into the next day", () => {
    const night: MaintenanceSpec = { windows: [{ days: ["Friday"], start: "22:00", end: "02:00" }] };
    expect(maintenanceWindowAt(night, at("2026-11-27T23:30:00Z")).open).toBe(true);
    expect(maintenanceWindowAt(night, at("2026-11-28T01:59:00Z")).open).toBe(true);
    expect(maintenanceWindowAt(night, at("2026-11-28T02:00:00Z")).open).toBe(false);
  });

  it("keeps a freeze shut inside a window and names its reason and the opening after it", () => {
    const frozen: MaintenanceSpec = {
      ...weekend,
      freezes: [{ start: "2026-11-27T00:00:00Z", end: "2026-11-29T03:00:00Z", reason: "Black Friday" }],
    };
    const v = maintenanceWindowAt(frozen, at("2026-11-28T01:30:00Z"));
    expect(v.open).toBe(false);
    expect(v.reason).toBe("maintenance frozen until 2026-11-29T03:00:00Z (Black Friday)");
    // The freeze ends inside Sunday's window (02:00–06:00 Berlin = 01:00–05:00Z).
    expect(v).toMatchObject({ opensAt: at("2026-11-29T03:00:00Z") });
  });

  it("lets urgent work begin outside a window and says so", () => {
    const v = maintenanceWindowAt(weekend, at("2026-11-27T12:00:00Z"), true);
    expect(v).toMatchObject({ open: true });
    expect(v.reason).toMatch(/^urgent/);
  });
});

describe("isTimeZone", () => {
  it("knows IANA names and refuses others", () => {
    expect(isTimeZone("Europe/Berlin")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
  });
});
