/** Route matching. */
import { describe, expect, it } from "vitest";
import { match, PATTERNS, route } from "./routes.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";

describe("routes", () => {
  it("matches a path whose parameter has malformed percent-encoding, and reports the segment", () => {
    const routes = [route({ pattern: PATTERNS.cluster, methods: {} })];
    const path = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters`;
    expect(match(routes, `${path}/probe%ZZ`)).toMatchObject({ malformed: "probe%ZZ" });
    expect(match(routes, `${path}/a%20b`)).toMatchObject({ params: { cluster: "a b" } });
    expect(match(routes, `${path.replace("hcpOpenShiftClusters", "hcp%ZZ")}/x`)).toBeUndefined();
  });
});
