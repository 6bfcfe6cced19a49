/**
 * The rollout reconciler against in-memory caches: a fake apiserver holds the wave tasks it
 * creates and patches, the test plays the maintenance controller (runs and Complete) and the
 * watch (`sync`). It proves the wave order, the self-pause over the budget with no later wave
 * made, proceedPastWave, abort, crash safety (a task the cache has not shown yet is not made
 * twice) and one event per transition.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  MAINTENANCE_LABELS,
  ROLLOUT_FINALIZER,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceRunPhase,
  type MaintenanceTask,
  type Rollout,
  type RolloutSpec,
  type RolloutStatus,
} from "../api/v1alpha1/index.ts";
import type { KubeObject, ResourceType } from "../runtime/kube.ts";
import { RecordingEvents, RecordingWriter, testContext } from "../../test/support/fakes.ts";
import { FakeLister } from "../../test/support/lister.ts";
import { RolloutReconciler } from "./reconcile.ts";
import { RUN_INDEXERS, TASK_INDEXERS } from "./waves.ts";

class World {
  readonly clusters = new FakeLister<HcpCluster>();
  readonly rollouts = new FakeLister<Rollout>();
  readonly tasks = new FakeLister<MaintenanceTask>([], TASK_INDEXERS);
  readonly runs = new FakeLister<MaintenanceRun>([], RUN_INDEXERS);
  /** The apiserver's tasks; the cache (tasks) sees them on sync. */
  readonly server = new Map<string, MaintenanceTask>();
  readonly patches: Array<{ name: string; patch: unknown }> = [];
  readonly writer = new RecordingWriter();
  readonly events = new RecordingEvents();
  readonly reconciler = new RolloutReconciler({
    rollouts: this.rollouts,
    tasks: this.tasks,
    runs: this.runs,
    clusters: this.clusters,
    writer: this.writer,
    events: this.events,
    client: {
      createIfAbsent: (_t: ResourceType, obj: KubeObject) => {
        const name = obj.metadata.name ?? "";
        if (this.server.has(name)) return Promise.resolve(false);
        this.server.set(name, structuredClone(obj) as MaintenanceTask);
        return Promise.resolve(true);
      },
      mergePatch: <T extends KubeObject>(_t: ResourceType, ref: { name: string }, patch: unknown) => {
        this.patches.push({ name: ref.name, patch });
        const task = this.server.get(ref.name)!;
        Object.assign(task.spec, (patch as { spec: object }).spec);
        return Promise.resolve(task as unknown as T);
      },
    },
  });

  constructor(count: number) {
    for (let i = 0; i < count; i++) {
      const name = `c${String(i).padStart(2, "0")}`;
      this.clusters.set({
        metadata: { namespace: "ns", name, labels: { fleet: "prod" } },
        spec: {},
      } as unknown as HcpCluster);
    }
  }

  rollout(spec: Partial<RolloutSpec> = {}): Rollout {
    const r: Rollout = {
      metadata: { name: "ro", uid: "ro-uid", generation: 1, finalizers: [ROLLOUT_FINALIZER] },
      spec: {
        release: { version: "4.19.10" },
        clusters: { selector: { matchLabels: { fleet: "prod" } } },
        ...spec,
      },
    };
    this.rollouts.set(r);
    return r;
  }

  /** The SRE edits the spec. */
  edit(spec: Partial<RolloutSpec>): void {
    const r = this.rollouts.get("", "ro")!;
    this.rollouts.set({
      ...r,
      metadata: { ...r.metadata, generation: (r.metadata.generation ?? 1) + 1 },
      spec: { ...r.spec, ...spec },
    });
  }

  async reconcile(): Promise<void> {
    await this.reconciler.reconcile(testContext(), { cluster: "service", namespace: "", name: "ro" });
  }

  /** The watches catch up: the server's tasks and the last status show in the caches. */
  sync(): void {
    for (const t of this.server.values())
      this.tasks.set({
        ...structuredClone(t),
        status: this.tasks.get("", t.metadata.name ?? "")?.status ?? {},
      });
    const r = this.rollouts.get("", "ro")!;
    const status = this.writer.lastStatus<RolloutStatus>();
    if (status) this.rollouts.set({ ...r, status });
  }

  async step(): Promise<void> {
    await this.reconcile();
    this.sync();
  }

  status(): RolloutStatus {
    return this.rollouts.get("", "ro")!.status ?? {};
  }

  /** The maintenance controller's part: the runs of wave `index` in these phases, the task Complete once all are finished. */
  runWave(index: number, phases: Record<string, MaintenanceRunPhase>): void {
    const task = this.tasks.get("", `ro-wave-${index}`)!;
    for (const ref of task.spec.clusters.names ?? []) {
      const name = ref.split("/")[1]!;
      this.runs.set({
        metadata: {
          namespace: "ns",
          name: `${task.metadata.name}-${name}`,
          labels: { [MAINTENANCE_LABELS.task]: task.metadata.name! },
        },
        spec: { task: task.metadata.name!, taskType: task.spec.task, clusterRef: { name } },
        status: { phase: phases[name] ?? "Succeeded" },
      });
    }
    const done = Object.values(phases).every((p) => !["Pending", "Waiting", "Running"].includes(p));
    const condition = {
      type: "Complete",
      status: done ? "True" : "False",
      reason: "x",
      message: "",
      lastTransitionTime: "2026-06-01T00:00:00Z",
    } as const;
    this.tasks.set({ ...task, status: { conditions: [condition] } });
  }

  members(index: number): string[] {
    return this.server.get(`ro-wave-${index}`)?.spec.clusters.names ?? [];
  }
}

let world: World;
beforeEach(() => {
  world = new World(20);
});

describe("the rollout reconciler", () => {
  it("begins with the canary and grows the waves, never taking a cluster twice", async () => {
    world.rollout();
    await world.step();
    expect(world.members(1)).toEqual(["ns/c00"]);
    expect(world.server.get("ro-wave-1")).toMatchObject({
      metadata: { ownerReferences: [{ kind: "Rollout", name: "ro", uid: "ro-uid", controller: true }] },
      spec: { task: "UpgradeControlPlane", release: { version: "4.19.10" } },
    });
    expect(world.status()).toMatchObject({ phase: "Progressing", currentWave: 1, clusters: 20 });
    // Not finished: no second wave, however often it looks.
    await world.step();
    expect(world.server.has("ro-wave-2")).toBe(false);
    world.runWave(1, {});
    await world.step();
    expect(world.members(2)).toEqual(["ns/c01", "ns/c02"]);
    for (const [index, size] of [
      [3, 4],
      [4, 8],
      [5, 5],
    ] as const) {
      world.runWave(index - 1, {});
      await world.step();
      expect(world.members(index)).toHaveLength(size);
    }
    world.runWave(5, {});
    await world.step();
    const all = [1, 2, 3, 4, 5].flatMap((i) => world.members(i));
    expect(new Set(all).size).toBe(20);
    expect(world.status().phase).toBe("Succeeded");
    expect(world.events.reasons().filter((r) => r === "WaveStarted")).toHaveLength(5);
    expect(world.events.reasons().filter((r) => r === "Succeeded")).toHaveLength(1);
  });

  it("pauses itself when wave 2 fails past the budget, makes no later wave, and goes on once the failure is accepted", async () => {
    world.rollout();
    await world.step();
    world.runWave(1, {});
    await world.step();
    world.runWave(2, { c01: "Failed", c02: "Running" });
    await world.step();
    const status = world.status();
    expect(status.phase).toBe("Paused");
    const paused = status.conditions?.find((c) => c.type === "Paused");
    expect(paused).toMatchObject({ status: "True", reason: "FailureBudgetExceeded" });
    expect(paused?.message).toContain("Wave 2");
    expect(paused?.message).toContain("ns/c01");
    expect(status.waves?.[1]).toMatchObject({ state: "FailureBudgetExceeded", failedClusters: ["ns/c01"] });
    // The wave's own task stops admitting runs.
    expect(world.server.get("ro-wave-2")?.spec.paused).toBe(true);
    world.runWave(2, { c01: "Failed", c02: "Succeeded" });
    await world.step();
    await world.step();
    expect([...world.server.keys()]).toEqual(["ro-wave-1", "ro-wave-2"]);
    expect(world.events.reasons().filter((r) => r === "Paused")).toHaveLength(1);

    world.edit({ proceedPastWave: 2 });
    await world.step();
    expect(world.members(3)).toEqual(["ns/c03", "ns/c04", "ns/c05", "ns/c06"]);
    expect(world.status().waves?.[1]?.state).toBe("FailuresAccepted");
    expect(world.status().phase).toBe("Progressing");
    expect(world.events.reasons()).toContain("Resumed");
    expect(world.events.reasons()).toContain("WaveFinished");
  });

  it("steers the current wave's task: paused with spec.paused, cancelled by abort, and nothing after", async () => {
    world.rollout();
    await world.step();
    world.edit({ paused: true });
    await world.step();
    expect(world.server.get("ro-wave-1")?.spec.paused).toBe(true);
    expect(world.status()).toMatchObject({ phase: "Paused" });
    world.edit({ paused: false });
    await world.step();
    expect(world.server.get("ro-wave-1")?.spec.paused).toBe(false);
    world.edit({ abort: true });
    await world.step();
    expect(world.server.get("ro-wave-1")?.spec.cancelled).toBe(true);
    expect(world.status().phase).toBe("Aborted");
    world.runWave(1, { c00: "Cancelled" });
    await world.step();
    expect(world.server.has("ro-wave-2")).toBe(false);
    expect(world.status().waves?.[0]?.state).toBe("Aborted");
    expect(world.events.reasons().filter((r) => r === "Aborted")).toHaveLength(1);
  });

  it("makes no second task for a wave the cache has not shown yet (a restart, a lagging watch)", async () => {
    world.rollout();
    await world.reconcile();
    // A reconcile before the task's add event: the create finds it there and changes nothing.
    await world.reconcile();
    expect([...world.server.keys()]).toEqual(["ro-wave-1"]);
    world.sync();
    world.runWave(1, {});
    await world.reconcile();
    await world.reconcile();
    expect([...world.server.keys()]).toEqual(["ro-wave-1", "ro-wave-2"]);
  });

  it("goes past a wave whose clusters were all deleted before it made a run", async () => {
    world.rollout();
    await world.step();
    const task = world.tasks.get("", "ro-wave-1")!;
    const accepted = {
      type: "Accepted",
      status: "False",
      reason: "NoClustersMatch",
      message: "",
      lastTransitionTime: "2026-06-01T00:00:00Z",
    } as const;
    world.tasks.set({
      ...task,
      metadata: { ...task.metadata, generation: 1 },
      status: { observedGeneration: 1, conditions: [accepted] },
    });
    await world.step();
    expect(world.members(2)).toEqual(["ns/c01", "ns/c02"]);
    expect(world.status().waves?.[0]).toMatchObject({ state: "Succeeded", runs: {} });
  });

  it("says a selector matching nothing is NoClustersMatch, naming spec.clusters.selector", async () => {
    world.rollout({ clusters: { selector: { matchLabels: { fleet: "nowhere" } } } });
    await world.step();
    expect(world.status().phase).toBe("Pending");
    const accepted = world.status().conditions?.find((c) => c.type === "Accepted");
    expect(accepted).toMatchObject({ status: "False", reason: "NoClustersMatch" });
    expect(accepted?.message).toContain("spec.clusters.selector");
    expect(world.server.size).toBe(0);
  });
});
