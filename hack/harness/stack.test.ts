import { describe, expect, it } from "vitest";
import { CATALOG_KEY, ReleaseCatalog } from "../../operators/releases/catalog.ts";
import { catalogConfigMap, endOfLifeFromNow } from "./stack.ts";

const DAY = 24 * 3600 * 1000;

describe("the catalog the harness installs", () => {
  it("has every end of life a year or more from now, the minors as far apart as shipped", async () => {
    const now = Date.parse("2026-11-27T12:00:00Z");
    const data = (await catalogConfigMap("ns", now))["data"] as Record<string, string>;
    const catalog = ReleaseCatalog.parse(data[CATALOG_KEY]);
    expect(catalog.problems).toEqual([]);
    const byMinor = new Map(
      catalog.releases.map((r) => [
        r.version.split(".").slice(0, 2).join("."),
        Date.parse(r.endOfLifeTimestamp ?? ""),
      ]),
    );
    const eol = (minor: string): number => byMinor.get(minor) ?? NaN;
    expect(eol("4.18")).toBeGreaterThanOrEqual(now + 365 * DAY);
    // Shipped: 4.18 2026-08-25, 4.19 2026-12-17, 4.20 2027-04-21.
    expect((eol("4.19") - eol("4.18")) / DAY).toBe(114);
    expect((eol("4.20") - eol("4.19")) / DAY).toBe(125);
  });

  it("leaves dates already a year away, and text without dates, as they are", () => {
    const now = Date.parse("2026-11-27T00:00:00Z");
    const far = "releases:\n  - {version: 4.19.7, image: a, endOfLifeTimestamp: 2099-01-01T00:00:00Z}\n";
    expect(endOfLifeFromNow(far, now)).toBe(far);
    const near = far.replace("2099", "2027");
    expect(endOfLifeFromNow(near, now)).toBe(far.replace("2099-01-01", "2027-11-27"));
    expect(endOfLifeFromNow("releases: []\n", 0)).toBe("releases: []\n");
  });
});
