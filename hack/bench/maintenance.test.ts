import { describe, expect, it } from "vitest";
import { maintenanceWindowAt } from "../../operators/hcp/maintenance-window.ts";
import { maintenanceOf, managementClusterOf } from "./maintenance.ts";
import { openClusters, windowFor } from "./maintenance-rollout.ts";

describe("the maintenance bench's fleet", () => {
  it("gives the rollout's open half a window open now and the rest one opening later, in each zone", () => {
    const now = new Date("2026-03-29T01:30:00Z"); // Europe's change to summer time that night
    for (const zone of ["UTC", "America/New_York", "Europe/Berlin", "Asia/Tokyo"]) {
      expect(maintenanceWindowAt(windowFor(zone, true, now), now).open, zone).toBe(true);
      const closed = maintenanceWindowAt(windowFor(zone, false, now), now);
      expect(closed.open, zone).toBe(false);
      expect(closed.open ? undefined : closed.opensAt?.getTime(), zone).toBeGreaterThan(now.getTime());
    }
  });

  it("makes the open clusters exactly the first waves (canary 1, growth 2), about half the fleet", () => {
    expect(openClusters(1000)).toBe(511);
    expect(openClusters(100)).toBe(63);
  });

  it("mixes windows, freezes and zones: some runs may start now, most wait", () => {
    const now = new Date("2026-06-03T10:00:00Z");
    const verdicts = Array.from({ length: 1000 }, (_, i) => maintenanceWindowAt(maintenanceOf(i), now));
    const open = verdicts.filter((v) => v.open).length;
    expect(open).toBeGreaterThanOrEqual(250); // the quarter with no window
    expect(open).toBeLessThan(600);
    expect(verdicts.some((v) => !v.open && v.reason.includes("frozen"))).toBe(true);
    expect(new Set(Array.from({ length: 100 }, (_, i) => managementClusterOf(i))).size).toBe(20);
  });
});
