import { beforeEach, describe, expect, it } from "vitest";
import {
  MAINTENANCE_VERSION_ANNOTATIONS,
  type Condition,
  type HcpCluster,
  type MaintenanceRun,
} from "../api/v1alpha1/index.ts";
import { MaintenanceWorld } from "../../test/support/maintenance-world.ts";
import { ReleaseCatalog, unavailableCatalog } from "../releases/catalog.ts";
import type { PoolInput } from "../releases/plan.ts";
import type { StepOutcome } from "./step.ts";
import { asksForLess, upgradeControlPlane, type ControlPlaneUpgrades } from "./upgrade-task.ts";

const NOW = new Date("2026-11-27T12:00:00Z");

/** 4.19.7 → 4.19.9 → 4.19.10 → 4.20.2; 4.19.11 has no edge in; 4.18.30 is past its end of life. */
const CATALOG = ReleaseCatalog.parse(`
releases:
  - {version: 4.17.40, image: img:4.17.40}
  - {version: 4.18.22, image: img:4.18.22}
  - {version: 4.18.30, image: img:4.18.30, upgradesFrom: [4.18.22], endOfLifeTimestamp: 2026-01-01T00:00:00Z}
  - {version: 4.19.7, image: img:4.19.7}
  - {version: 4.19.9, image: img:4.19.9, upgradesFrom: [4.19.7]}
  - {version: 4.19.10, image: img:4.19.10, upgradesFrom: [4.19.9]}
  - {version: 4.19.11, image: img:4.19.11, upgradesFrom: []}
  - {version: 4.20.2, image: img:4.20.2, upgradesFrom: [4.19.10]}
  - {version: 4.21.1, image: img:4.21.1, upgradesFrom: [4.20.2]}
`);

/** The operations over an in-memory cluster: what was asked is recorded, and a race can be staged. */
class FakeUpgrades implements ControlPlaneUpgrades {
  catalogNow = CATALOG;
  pools: PoolInput[] = [];
  asked: Array<{ id: string; run: string; resourceVersion?: string }> = [];
  nextAnswer: "asked" | "changed" = "asked";
  catalog = (): ReleaseCatalog => this.catalogNow;
  nodePools = (): PoolInput[] => this.pools;
  askForVersion(cluster: HcpCluster, id: string, run: string): Promise<"asked" | "changed"> {
    if (this.nextAnswer === "changed") return Promise.resolve("changed");
    const rv = cluster.metadata.resourceVersion;
    this.asked.push({ id, run, ...(rv === undefined ? {} : { resourceVersion: rv }) });
    return Promise.resolve("asked");
  }
}

const run = (version = "4.19.10"): MaintenanceRun => ({
  metadata: { name: "cve-a", namespace: "ns" },
  spec: { task: "cve", taskType: "UpgradeControlPlane", clusterRef: { name: "a" }, release: { version } },
});

function cluster(opts: {
  asks: string;
  runs?: string;
  generation?: number;
  conditions?: Condition[];
  annotations?: Record<string, string>;
}): HcpCluster {
  return {
    metadata: {
      name: "a",
      namespace: "ns",
      resourceVersion: "41",
      generation: opts.generation ?? 3,
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: { version: { id: opts.asks, channelGroup: "stable" } },
    status: { ...(opts.runs ? { version: opts.runs } : {}), conditions: opts.conditions ?? [] },
  } as unknown as HcpCluster;
}

let ops: FakeUpgrades;
beforeEach(() => {
  ops = new FakeUpgrades();
});

async function execute(step: number, c: HcpCluster, r = run()): Promise<StepOutcome> {
  const definition = upgradeControlPlane(ops);
  return definition.steps[step]!.execute({
    run: r,
    cluster: c,
    now: NOW,
    signal: new AbortController().signal,
  });
}
const [CHECK, ASK, AWAIT] = [0, 1, 2];

describe("UpgradeControlPlane", () => {
  it("has the three steps in order", () => {
    expect(upgradeControlPlane(ops).steps.map((s) => s.name)).toEqual([
      "CheckUpgradePath",
      "AskForRelease",
      "AwaitControlPlane",
    ]);
  });

  it("succeeds at every step without a change when the control plane already runs the target or newer", async () => {
    for (const runs of ["4.19.10", "4.20.2"]) {
      const c = cluster({ asks: "4.19.7", runs });
      for (const step of [CHECK, ASK, AWAIT]) {
        const outcome = await execute(step, c);
        expect(outcome.kind).toBe("done");
        expect(outcome.message).toContain(`already runs ${runs}, at or past 4.19.10`);
      }
    }
    expect(ops.asked).toEqual([]);
  });
});

describe("CheckUpgradePath", () => {
  it.each([
    { runs: "4.19.7", target: "4.19.10", kind: "done", says: ["4.19.9 → 4.19.10"] },
    { runs: "4.19.10", target: "4.20.2", kind: "done", says: ["4.20.2"] },
    { runs: "4.19.7", target: "4.19.11", kind: "terminal", says: ["NoUpdateEdge", "runs 4.19.7"] },
    { runs: "4.19.10", target: "4.21.1", kind: "terminal", says: ["UpgradeSkipsMinor", "runs 4.19.10"] },
    { runs: "4.18.22", target: "4.18.30", kind: "terminal", says: ["EndOfLife", "runs 4.18.22"] },
    { runs: "4.19.7", target: "4.19.99", kind: "terminal", says: ["UnknownVersion", "runs 4.19.7"] },
  ])("$runs to $target: $kind", async ({ runs, target, kind, says }) => {
    const outcome = await execute(CHECK, cluster({ asks: runs, runs }), run(target));
    expect(outcome.kind).toBe(kind);
    for (const words of says) expect(outcome.message).toContain(words);
  });

  it("fails when node pools would be left too far behind, naming them", async () => {
    ops.pools = [{ name: "old-workers", version: "4.17.40" }];
    const outcome = await execute(CHECK, cluster({ asks: "4.19.10", runs: "4.19.10" }), run("4.20.2"));
    expect(outcome.kind).toBe("terminal");
    expect(outcome.message).toContain("NodePoolsTooFarBehind");
    expect(outcome.message).toContain("old-workers");
  });

  it("waits for a control plane that reports no version yet, and retries a missing catalog", async () => {
    expect((await execute(CHECK, cluster({ asks: "4.19.7" }))).kind).toBe("waiting");
    ops.catalogNow = unavailableCatalog("the release catalog ConfigMap does not exist");
    expect(await execute(CHECK, cluster({ asks: "4.19.7", runs: "4.19.7" }))).toMatchObject({
      kind: "transient",
      message: expect.stringContaining("ConfigMap does not exist") as string,
    });
  });
});

describe("AskForRelease", () => {
  it("raises spec.version.id guarded by the resourceVersion it read, then is done once the cache shows it", async () => {
    const first = await execute(ASK, cluster({ asks: "4.19.7", runs: "4.19.7" }));
    expect(first.kind).toBe("waiting");
    expect(ops.asked).toEqual([{ id: "4.19.10", run: "ns/cve-a", resourceVersion: "41" }]);
    const annotations = {
      [MAINTENANCE_VERSION_ANNOTATIONS.askedBy]: "ns/cve-a",
      [MAINTENANCE_VERSION_ANNOTATIONS.replaced]: "4.19.7",
    };
    const seen = await execute(ASK, cluster({ asks: "4.19.10", runs: "4.19.7", annotations }));
    expect(seen).toEqual({ kind: "done", message: "Raised spec.version.id from 4.19.7 to 4.19.10" });
    expect(ops.asked).toHaveLength(1);
  });

  it.each(["4.19.10", "4.19.12", "4.19", "4.20"])(
    "never lowers a cluster that asks for %s already",
    async (asks) => {
      const outcome = await execute(ASK, cluster({ asks, runs: "4.19.7" }));
      expect(outcome.kind).toBe("done");
      expect(outcome.message).toContain(`already asks for ${asks}`);
      expect(ops.asked).toEqual([]);
    },
  );

  it("looks again when the cluster changed under it, writing nothing", async () => {
    ops.nextAnswer = "changed";
    const outcome = await execute(ASK, cluster({ asks: "4.19.7", runs: "4.19.7" }));
    expect(outcome).toMatchObject({ kind: "waiting", requeueMs: 1_000 });
    expect(ops.asked).toEqual([]);
  });

  it("fails, not overriding, when the id this run raised was lowered again", async () => {
    const annotations = { [MAINTENANCE_VERSION_ANNOTATIONS.askedBy]: "ns/cve-a" };
    const outcome = await execute(ASK, cluster({ asks: "4.19.7", runs: "4.19.7", annotations }));
    expect(outcome.kind).toBe("terminal");
    expect(outcome.message).toContain("a later choice is not overridden");
    expect(ops.asked).toEqual([]);
  });
});

describe("AwaitControlPlane", () => {
  const validVersion = (reason: string, observedGeneration: number): Condition => ({
    type: "ValidVersion",
    status: "False",
    reason,
    message: `held: ${reason}`,
    lastTransitionTime: "2026-11-27T11:00:00Z",
    observedGeneration,
  });

  it("waits while the control plane moves, and is done when it runs the target", async () => {
    const moving = await execute(AWAIT, cluster({ asks: "4.19.10", runs: "4.19.9" }));
    expect(moving.kind).toBe("waiting");
    expect(moving.message).toContain("runs 4.19.9");
    expect((await execute(AWAIT, cluster({ asks: "4.19.10", runs: "4.19.10" }))).kind).toBe("done");
  });

  it("fails on a hold of the version asked now, naming the reason and what runs", async () => {
    const c = cluster({ asks: "4.19.10", runs: "4.19.7", conditions: [validVersion("NoUpdateEdge", 3)] });
    const outcome = await execute(AWAIT, c);
    expect(outcome.kind).toBe("terminal");
    expect(outcome.message).toContain("NoUpdateEdge");
    expect(outcome.message).toContain("runs 4.19.7");
  });

  it("waits past a hold of an older generation and past a missing catalog", async () => {
    const stale = cluster({ asks: "4.19.10", runs: "4.19.7", conditions: [validVersion("NoUpdateEdge", 2)] });
    expect((await execute(AWAIT, stale)).kind).toBe("waiting");
    const noCatalog = cluster({
      asks: "4.19.10",
      runs: "4.19.7",
      conditions: [validVersion("CatalogUnavailable", 3)],
    });
    expect((await execute(AWAIT, noCatalog)).kind).toBe("waiting");
  });

  it("fails when spec.version.id asks for less than the target again", async () => {
    const outcome = await execute(AWAIT, cluster({ asks: "4.19.7", runs: "4.19.7" }));
    expect(outcome.kind).toBe("terminal");
    expect(outcome.message).toContain("spec.version.id was set to 4.19.7");
  });
});

describe("asksForLess", () => {
  it.each([
    ["4.19.7", "4.19.10", true],
    ["4.18", "4.19.10", true],
    ["4.19.10", "4.19.10", false],
    ["4.19", "4.19.10", false],
    ["4.20", "4.19.10", false],
  ] as const)("%s for %s: %s", (id, target, less) => {
    expect(asksForLess(id, target)).toBe(less);
  });
});

describe("an UpgradeControlPlane run through the actuator", () => {
  it("checks, raises spec.version.id once, waits for the control plane and succeeds, one event per step", async () => {
    let cluster = {
      metadata: { name: "a", namespace: "ns", uid: "cluster-a", resourceVersion: "41", generation: 3 },
      spec: { version: { id: "4.19.7", channelGroup: "stable" } },
      status: { managementCluster: "mc-1", version: "4.19.7" },
    } as unknown as HcpCluster;
    const writes: string[] = [];
    const upgrades: ControlPlaneUpgrades = {
      catalog: () => CATALOG,
      nodePools: () => [],
      askForVersion: (c, id, by) => {
        writes.push(`${c.metadata.resourceVersion ?? ""}:${id}`);
        const annotations = {
          [MAINTENANCE_VERSION_ANNOTATIONS.askedBy]: by,
          [MAINTENANCE_VERSION_ANNOTATIONS.replaced]: c.spec.version.id,
        };
        cluster = {
          ...c,
          metadata: { ...c.metadata, resourceVersion: "42", generation: 4, annotations },
          spec: { ...c.spec, version: { ...c.spec.version, id } },
        };
        return Promise.resolve("asked");
      },
    };
    const w = new MaintenanceWorld(new Map([["UpgradeControlPlane", upgradeControlPlane(upgrades)]]));
    w.clusters.set(cluster);
    const r = w.run("cve", cluster, { task: "UpgradeControlPlane", release: { version: "4.19.10" } });
    expect(r.spec.release).toEqual({ version: "4.19.10" });
    // Each reconcile reads the cluster as its watch has it by then.
    const watch = async (): Promise<void> => {
      w.clusters.set(cluster);
      await w.step(r);
    };
    await watch(); // admitted
    await watch(); // CheckUpgradePath
    await watch(); // AskForRelease writes
    await watch(); // AskForRelease sees it
    await watch(); // AwaitControlPlane waits
    expect(writes).toEqual(["41:4.19.10"]);
    expect(w.current(r).status?.steps?.map((s) => s.state)).toEqual(["Succeeded", "Succeeded", "Running"]);
    expect(w.condition(r, "AskForRelease")?.message).toBe("Raised spec.version.id from 4.19.7 to 4.19.10");

    cluster = { ...cluster, status: { ...cluster.status, version: "4.19.10" } };
    await watch();
    expect(w.phase(r)).toBe("Succeeded");
    expect(w.events.reasons()).toEqual([
      "Started",
      "StepSucceeded",
      "StepSucceeded",
      "StepSucceeded",
      "Succeeded",
    ]);
    // A re-run after a restart changes nothing twice.
    w.restart();
    await watch();
    expect(writes).toHaveLength(1);
  });
});
