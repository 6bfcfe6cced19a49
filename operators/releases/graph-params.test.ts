import { describe, expect, it } from "vitest";
import { ReleaseCatalog, unavailableCatalog } from "./catalog.ts";
import { graphParams, paramKey } from "./graph-params.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const catalog = ReleaseCatalog.parse(`
releases:
  - {version: 4.17.40, image: a, endOfLifeTimestamp: "2026-01-01T00:00:00Z"}
  - {version: 4.18.22, image: b}
  - {version: 4.19.7, image: c}
  - {version: 4.19.9, image: d, upgradesFrom: [4.19.7]}
  - {version: 4.20.2, image: e, channelGroups: [stable, fast], upgradesFrom: [4.19.9]}
`);

describe("the update graph's admission parameters", () => {
  const params = graphParams(catalog, NOW);

  it("hold the plan's refusal for each version a cluster may ask for from each release it may run", () => {
    expect(params[paramKey("stable", undefined, "4.17")]).toBe(
      "OpenShift 4.17 reached its end of life on 2026-01-01: no new cluster runs it and no cluster moves to it; offered in channel group stable: 4.18, 4.19, 4.20",
    );
    expect(params["stable.new.to.4.17.40"]).toContain("reached its end of life on 2026-01-01");
    expect(params["stable.4.18.22.to.4.19.9"]).toBeUndefined(); // by way of 4.19.7
    expect(params["stable.4.18.22.to.4.20"]).toContain("to 4.19 first");
    expect(params["stable.4.19.8.to.4.20"]).toBeUndefined(); // 4.19.8 runs nowhere the catalog knows
    expect(params["fast.4.19.7.to.4.20.2"]).toBe(
      "no path on the update graph of channel group fast leads from 4.19.7 to 4.20.2: the update graph of channel group fast has no edge from 4.19.7 to 4.20.2 (it upgrades from 4.19.9)",
    );
    expect(params["stable.4.19.7.to.4.20.2"]).toBeUndefined();
  });

  it("leave out what passes, what the catalog does not offer, and the versions the CRD refuses itself", () => {
    expect(
      Object.keys(params).every((k) => /^(stable|fast)\.(new|\d+\.\d+\.\d+)\.to\.\d+\.\d+(\.\d+)?$/.test(k)),
    ).toBe(true);
    expect(params["stable.new.to.4.21"]).toBeUndefined();
    expect(params["stable.4.20.2.to.4.18"]).toBeUndefined();
    expect(graphParams(unavailableCatalog("gone"), NOW)).toEqual({});
  });
});
