import { describe, expect, it } from "vitest";
import { ReleaseCatalog, unavailableCatalog } from "./catalog.ts";
import { nextEndOfLife, planVersion, type PlanInput } from "./plan.ts";
import { UpdateGraph } from "./update-graph.ts";

/** The clock every plan here is made at: dates in the catalog are before or after it, never "now". */
const NOW = Date.parse("2026-11-27T12:00:00Z");
const DAY = 24 * 3600 * 1000;
const at = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

/** 4.17 past its end of life; 4.18 ten days from it; edges on the 4.19 and 4.20 releases. */
const GRAPH = `
releases:
  - version: 4.17.40
    image: img:4.17.40
    endOfLifeTimestamp: 2026-01-01T00:00:00Z
  - version: 4.18.22
    channelGroups: [stable, fast]
    image: img:4.18.22
    endOfLifeTimestamp: ${at(NOW + 10 * DAY)}
  - version: 4.18.30
    channelGroups: [stable, fast]
    image: img:4.18.30
    endOfLifeTimestamp: ${at(NOW + 10 * DAY)}
  - version: 4.19.7
    channelGroups: [stable, fast]
    image: img:4.19.7
  - version: 4.19.9
    channelGroups: [stable, fast]
    image: img:4.19.9
    upgradesFrom: [4.19.7, 4.18.22]
  - version: 4.19.10
    channelGroups: [fast]
    image: img:4.19.10
    upgradesFrom: [4.19.9]
  - version: 4.20.2
    channelGroups: [stable, fast]
    image: img:4.20.2
    upgradesFrom: [4.19.9, 4.19.10]
`;
const catalog = ReleaseCatalog.parse(GRAPH);

const plan = (p: Partial<PlanInput> & Pick<PlanInput, "version">) => planVersion({ catalog, now: NOW, ...p });
const hops = (p: ReturnType<typeof planVersion>): string[] => p.hops.map((h) => `${h.from}->${h.to.version}`);

describe("the catalog's edges", () => {
  it("reads upgradesFrom, a list of older releases at most one minor behind", () => {
    expect(catalog.problems).toEqual([]);
    expect(catalog.releases.find((r) => r.version === "4.20.2")?.upgradesFrom).toEqual(["4.19.9", "4.19.10"]);
    expect(catalog.releases.find((r) => r.version === "4.19.7")?.upgradesFrom).toBeUndefined();
  });

  it("skips a release whose edges cannot be read, and names it", () => {
    const bad = ReleaseCatalog.parse(`
releases:
  - {version: 4.19.9, image: a, upgradesFrom: 4.19.7}
  - {version: 4.19.10, image: b, upgradesFrom: ["4.19"]}
  - {version: 4.19.11, image: c, upgradesFrom: [4.19.12]}
  - {version: 4.20.1, image: d, upgradesFrom: [4.18.22]}
  - {version: 4.20.2, image: e, upgradesFrom: []}
`);
    expect(bad.releases.map((r) => [r.version, r.upgradesFrom])).toEqual([["4.20.2", []]]);
    expect(bad.problems).toEqual([
      "releases[0].upgradesFrom of 4.19.9 must be a list of versions such as [4.19.7]",
      'releases[1].upgradesFrom of 4.19.10 lists "4.19", not major.minor.patch',
      "releases[2].upgradesFrom of 4.19.11 lists 4.19.12: an edge leads to a newer release at most one minor ahead",
      "releases[3].upgradesFrom of 4.20.1 lists 4.18.22: an edge leads to a newer release at most one minor ahead",
    ]);
  });
});

describe("the update graph of a channel group", () => {
  const stable = new UpdateGraph(catalog, "stable", NOW);

  it("has an edge where the release lists it, or by the minor rule where it lists none", () => {
    const r = (v: string) => stable.release(v)!;
    expect(stable.edgeRefusal("4.19.7", r("4.19.9"))).toBeUndefined();
    expect(stable.edgeRefusal("4.18.30", r("4.19.7"))).toBeUndefined();
    expect(stable.edgeRefusal("4.18.30", r("4.19.9"))).toMatchObject({
      reason: "NoUpdateEdge",
      message:
        "the update graph of channel group stable has no edge from 4.18.30 to 4.19.9 (it upgrades from 4.19.7, 4.18.22)",
    });
    expect(stable.edgeRefusal("4.18.22", r("4.20.2"))).toMatchObject({ reason: "UpgradeSkipsMinor" });
    expect(stable.edgeRefusal("4.19.9", r("4.19.7"))).toMatchObject({ reason: "DowngradeRefused" });
  });

  it("has no edge into a release past its end of life, from the instant it passes", () => {
    const r = stable.release("4.18.30")!;
    expect(stable.edgeRefusal("4.18.22", r)).toBeUndefined();
    const later = new UpdateGraph(catalog, "stable", NOW + 10 * DAY);
    expect(later.edgeRefusal("4.18.22", r)).toMatchObject({
      reason: "EndOfLife",
      message: "OpenShift 4.18.30 reached its end of life on 2026-12-07: no cluster moves to it",
    });
    expect(nextEndOfLife(catalog, NOW)).toBe(NOW + 10 * DAY);
    expect(nextEndOfLife(catalog, NOW + 10 * DAY)).toBeUndefined();
  });

  it("counts an edge in a group only when the release it leads to is in the group", () => {
    expect(stable.path("4.19.9", "4.19.10")).toBeUndefined();
    expect(new UpdateGraph(catalog, "fast", NOW).path("4.19.9", "4.19.10")).toHaveLength(1);
  });
});

describe("a new cluster's version", () => {
  it("is the minor's newest release, installed without hops", () => {
    const p = plan({ version: { id: "4.19" } });
    expect(p).toMatchObject({ holds: [], target: { version: "4.19.9" }, next: { version: "4.19.9" } });
    expect(p.hops).toEqual([]);
  });

  it("is never a release past its end of life, named with the date and what is offered", () => {
    for (const id of ["4.17", "4.17.40"])
      expect(plan({ version: { id } }).holds).toEqual([
        {
          reason: "EndOfLife",
          message:
            "OpenShift " +
            id +
            " reached its end of life on 2026-01-01: no new cluster runs it and no cluster moves to it; offered in channel group stable: 4.18, 4.19, 4.20",
        },
      ]);
  });

  it("is refused when the channel group does not offer it, listing what it does", () => {
    expect(plan({ version: { id: "4.19.10" } }).holds).toEqual([
      {
        reason: "UnknownVersion",
        message:
          "OpenShift 4.19.10 is not offered in channel group stable; offered: 4.17.40, 4.18.22, 4.18.30, 4.19.7, 4.19.9, 4.20.2",
      },
    ]);
    expect(
      planVersion({ catalog: unavailableCatalog("no ConfigMap"), now: NOW, version: { id: "4.19" } }).holds,
    ).toEqual([{ reason: "CatalogUnavailable", message: "no ConfigMap" }]);
  });
});

describe("an upgrade", () => {
  it("walks the graph hop by hop; the first hop is what the control plane is asked for", () => {
    const p = plan({ version: { id: "4.20" }, running: "4.19.7" });
    expect(p.holds).toEqual([]);
    expect(hops(p)).toEqual(["4.19.7->4.19.9", "4.19.9->4.20.2"]);
    expect(p.next?.version).toBe("4.19.9");
    const fast = plan({ version: { id: "4.19.10", channelGroup: "fast" }, running: "4.19.7" });
    expect(hops(fast)).toEqual(["4.19.7->4.19.9", "4.19.9->4.19.10"]);
  });

  it("goes on through the release an upgrade under way started", () => {
    const direct = ReleaseCatalog.parse(
      `${GRAPH.replace("upgradesFrom: [4.19.9, 4.19.10]", "upgradesFrom: [4.19.7, 4.19.9]")}`,
    );
    const input = { catalog: direct, now: NOW, version: { id: "4.20" }, running: "4.19.7" };
    expect(hops(planVersion(input))).toEqual(["4.19.7->4.20.2"]);
    expect(hops(planVersion({ ...input, previous: "4.19.9" }))).toEqual(["4.19.7->4.19.9", "4.19.9->4.20.2"]);
  });

  it("is refused past a minor, naming the minor to take first", () => {
    expect(plan({ version: { id: "4.20" }, running: "4.18.22" }).holds).toEqual([
      {
        reason: "UpgradeSkipsMinor",
        message:
          "4.20 cannot be reached from 4.18.22: a cluster on 4.18 moves one minor version at a time: to 4.19 first, then on to 4.20",
      },
    ]);
  });

  it("is refused where no edge leads, saying which edges there are", () => {
    const p = plan({ version: { id: "4.20" }, running: "4.19.8" });
    expect(p.holds).toEqual([
      {
        reason: "NoUpdateEdge",
        message:
          "no release of 4.20 in channel group stable can be reached from 4.19.8: the update graph of channel group stable has no edge from 4.19.8 to 4.20.2 (it upgrades from 4.19.9, 4.19.10)",
      },
    ]);
    expect(plan({ version: { id: "4.19.9" }, running: "4.19.8" }).holds).toEqual([
      {
        reason: "NoUpdateEdge",
        message:
          "no path on the update graph of channel group stable leads from 4.19.8 to 4.19.9: the update graph of channel group stable has no edge from 4.19.8 to 4.19.9 (it upgrades from 4.19.7, 4.18.22)",
      },
    ]);
    // No edge from 4.18.30 to 4.19.9, but one through 4.19.7.
    expect(hops(plan({ version: { id: "4.19.9" }, running: "4.18.30" }))).toEqual([
      "4.18.30->4.19.7",
      "4.19.7->4.19.9",
    ]);
  });

  it("is refused into a release past its end of life, though the cluster on it keeps running", () => {
    const later = NOW + 11 * DAY;
    expect(
      planVersion({ catalog, now: later, version: { id: "4.18.30" }, running: "4.18.22" }).holds,
    ).toEqual([
      {
        reason: "EndOfLife",
        message: "OpenShift 4.18.30 reached its end of life on 2026-12-07: no cluster moves to it",
      },
    ]);
    const staying = planVersion({ catalog, now: later, version: { id: "4.18" }, running: "4.18.22" });
    expect(staying).toMatchObject({
      holds: [],
      next: { version: "4.18.22" },
      endOfLife: { version: "4.18.22", since: "2026-12-07" },
    });
    expect(plan({ version: { id: "4.18" }, running: "4.18.22" }).endOfLife).toBeUndefined();
  });

  it("refuses a downgrade", () => {
    expect(plan({ version: { id: "4.19.7" }, running: "4.19.9" }).holds[0]).toMatchObject({
      reason: "DowngradeRefused",
      message: "4.19.7 is older than 4.19.9, which the control plane runs; OpenShift does not downgrade",
    });
    expect(plan({ version: { id: "4.18" }, running: "4.19.9" }).holds[0]?.reason).toBe("DowngradeRefused");
  });
});

describe("upgradePolicy", () => {
  it("Manual keeps a pinned release; a minor asks for its newest patch whatever the policy", () => {
    expect(plan({ version: { id: "4.19.7" }, running: "4.19.7" })).toMatchObject({
      target: { version: "4.19.7" },
      hops: [],
      automaticPatch: false,
    });
    expect(plan({ version: { id: "4.19" }, running: "4.19.7" })).toMatchObject({
      target: { version: "4.19.9" },
      automaticPatch: false,
    });
  });

  it("AutomaticPatch moves a pinned release to the newest z-stream of its minor the graph reaches", () => {
    const p = plan({ version: { id: "4.19.7", upgradePolicy: "AutomaticPatch" }, running: "4.19.7" });
    expect(p).toMatchObject({ holds: [], target: { version: "4.19.9" }, automaticPatch: true });
    expect(hops(p)).toEqual(["4.19.7->4.19.9"]);
    const fast = { id: "4.19.7", channelGroup: "fast" as const, upgradePolicy: "AutomaticPatch" as const };
    expect(hops(plan({ version: fast, running: "4.19.7" }))).toEqual(["4.19.7->4.19.9", "4.19.9->4.19.10"]);
    // Never to another minor; a floor the cluster has passed is no downgrade.
    expect(plan({ version: { ...fast, id: "4.19.7" }, running: "4.19.10" })).toMatchObject({
      holds: [],
      target: { version: "4.19.10" },
      hops: [],
    });
    // A new cluster gets what it names; the policy moves it once it runs.
    expect(plan({ version: { id: "4.19.7", upgradePolicy: "AutomaticPatch" } }).target?.version).toBe(
      "4.19.7",
    );
  });
});

describe("node pools", () => {
  const pools = [
    { name: "follows" },
    { name: "recent", version: "4.19.7" },
    { name: "old", version: "4.17.40" },
  ];

  it("hold an upgrade that would leave one more than two minors behind, naming it", () => {
    const p = plan({ version: { id: "4.20" }, running: "4.19.7", pools });
    expect(p.holds).toEqual([
      {
        reason: "NodePoolsTooFarBehind",
        message:
          "Version 4.20.2 would leave node pools too far behind; upgrade them first (node pool old: nodes on 4.17 may run at most 2 minor versions behind their control plane on 4.20)",
      },
    ]);
    expect(p.pools).toEqual([
      { name: "follows", action: "rolls", why: "follows the control plane: rolls after it, hop by hop" },
      { name: "recent", asks: "4.19.7", action: "stays", why: "keeps its own version 4.19.7" },
      {
        name: "old",
        asks: "4.17.40",
        action: "upgradeFirst",
        why: "nodes on 4.17 may run at most 2 minor versions behind their control plane on 4.20: upgrade it to 4.18 or newer first",
      },
    ]);
  });

  it("hold no patch upgrade for a pool already too far behind (its own hold), nor a cluster that stays", () => {
    const old = [{ name: "old", version: "4.16.3" }];
    expect(plan({ version: { id: "4.19" }, running: "4.19.7", pools: old }).holds).toEqual([]);
    expect(plan({ version: { id: "4.19.9" }, running: "4.19.9", pools: old }).holds).toEqual([]);
  });
});
