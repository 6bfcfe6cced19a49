import { describe, expect, test } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../hcp/indexes.ts";
import {
  MANAGEMENT_CLUSTER_FINALIZER,
  type HcpCluster,
  type ManagementCluster,
  type ManagementClusterStatus,
} from "../api/v1alpha1/index.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { KubeObject, ResourceType } from "../runtime/kube.ts";
import { silentLogger } from "../runtime/logger.ts";
import { AgentLiveness } from "../maestro-server/liveness.ts";
import {
  LoadReconciler,
  managementClusterStatus,
  type ManagementClusterWriter,
  type PlacedLookup,
} from "./controller.ts";

function managementCluster(name: string, max: number, schedulable?: boolean): ManagementCluster {
  return {
    // As the cache shows it once this controller has added its finalizer.
    metadata: { name, generation: 4, finalizers: [MANAGEMENT_CLUSTER_FINALIZER] },
    spec: {
      consumerName: name,
      capacity: { maxHostedClusters: max },
      ...(schedulable === undefined ? {} : { schedulable }),
    },
  };
}

function hcpCluster(name: string, placedOn?: string): HcpCluster {
  return {
    metadata: { name, namespace: "customer" },
    spec: {} as HcpCluster["spec"],
    ...(placedOn ? { status: { managementCluster: placedOn } } : {}),
  };
}

describe("managementClusterStatus", () => {
  test.each([
    {
      name: "room left",
      max: 3,
      placed: 2,
      schedulable: undefined,
      phase: "Ready",
      status: "True",
      reason: "HasCapacity",
      message: "2 of 3 hosted clusters placed",
    },
    {
      name: "empty",
      max: 3,
      placed: 0,
      schedulable: true,
      phase: "Ready",
      status: "True",
      reason: "HasCapacity",
      message: "0 of 3 hosted clusters placed",
    },
    {
      name: "at capacity",
      max: 3,
      placed: 3,
      schedulable: undefined,
      phase: "Full",
      status: "False",
      reason: "Full",
      message: "3 of 3 hosted clusters placed: no room",
    },
    {
      name: "over capacity",
      max: 2,
      placed: 3,
      schedulable: true,
      phase: "Full",
      status: "False",
      reason: "Full",
      message: "3 of 2 hosted clusters placed: no room",
    },
    {
      name: "cordoned with room",
      max: 3,
      placed: 1,
      schedulable: false,
      phase: "Unschedulable",
      status: "False",
      reason: "Cordoned",
      message: "spec.schedulable is false",
    },
    {
      name: "cordoned and full",
      max: 1,
      placed: 1,
      schedulable: false,
      phase: "Unschedulable",
      status: "False",
      reason: "Cordoned",
      message: "spec.schedulable is false",
    },
  ])(
    "$name: $phase, Schedulable=$status ($reason)",
    ({ max, placed, schedulable, phase, status, reason, message }) => {
      const result = managementClusterStatus(managementCluster("mc-1", max, schedulable), placed);
      expect(result).toMatchObject({ phase, hostedClusters: placed, observedGeneration: 4 });
      expect(result.conditions).toEqual([
        expect.objectContaining({ type: "Schedulable", status, reason, message, observedGeneration: 4 }),
      ]);
    },
  );

  test.each([
    { name: "kept while Schedulable stays True", placed: 2, kept: true },
    { name: "stamped anew when Schedulable flips to False", placed: 3, kept: false },
  ])("lastTransitionTime is $name", ({ placed, kept }) => {
    const past = "2020-01-01T00:00:00Z";
    const mc = managementCluster("mc-1", 3);
    const before = managementClusterStatus(mc, 1);
    before.conditions = before.conditions?.map((c) => ({ ...c, lastTransitionTime: past }));
    const after = managementClusterStatus({ ...mc, status: before }, placed);
    expect(after.conditions?.[0]?.lastTransitionTime === past).toBe(kept);
  });
});

/** What the apiserver shows placed when asked past the cache: the same as the cache, unless a test says. */
const noneLive: PlacedLookup = () => Promise.resolve(0);

class RecordingStatusWriter implements ManagementClusterWriter {
  readonly writes: Array<{ name: string; status: ManagementClusterStatus }> = [];
  readonly finalizers: string[] = [];

  applyStatus<T extends KubeObject>(_type: ResourceType, current: KubeObject, status: unknown) {
    this.writes.push({ name: current.metadata.name ?? "", status: status as ManagementClusterStatus });
    return Promise.resolve<T | undefined>(undefined);
  }

  addFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (obj.metadata.finalizers?.includes(finalizer)) return Promise.resolve(false);
    this.finalizers.push(`+${finalizer}`);
    return Promise.resolve(true);
  }

  removeFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (!obj.metadata.finalizers?.includes(finalizer)) return Promise.resolve(false);
    this.finalizers.push(`-${finalizer}`);
    return Promise.resolve(true);
  }
}

describe("LoadReconciler", () => {
  const clusters = [
    hcpCluster("a", "mc-1"),
    hcpCluster("b", "mc-1"),
    hcpCluster("c", "mc-2"),
    hcpCluster("unplaced"),
  ];

  test.each([
    { name: "mc-1", max: 2, hostedClusters: 2, phase: "Full" },
    { name: "mc-2", max: 2, hostedClusters: 1, phase: "Ready" },
    { name: "mc-3", max: 2, hostedClusters: 0, phase: "Ready" },
  ])(
    "$name counts the HcpClusters placed on it: $hostedClusters → $phase",
    async ({ name, max, hostedClusters, phase }) => {
      const writer = new RecordingStatusWriter();
      const reconciler = new LoadReconciler({
        managementClusters: new FakeLister([managementCluster(name, max)]),
        clusters: new FakeLister(clusters, { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster }),
        placedNow: noneLive,
        applier: writer,
      });
      const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
      expect(await reconciler.reconcile(ctx, { cluster: "service", namespace: "", name })).toEqual({});
      expect(writer.writes).toEqual([{ name, status: expect.objectContaining({ hostedClusters, phase }) }]);
    },
  );

  test("a ManagementCluster the lister does not hold is left alone", async () => {
    const writer = new RecordingStatusWriter();
    const reconciler = new LoadReconciler({
      managementClusters: new FakeLister<ManagementCluster>(),
      clusters: new FakeLister(clusters, { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster }),
      placedNow: noneLive,
      applier: writer,
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    expect(await reconciler.reconcile(ctx, { cluster: "service", namespace: "", name: "gone" })).toEqual({});
    expect(writer.writes).toEqual([]);
  });
});

/** Writes into the lister like the apiserver and the informer would, skipping equal statuses as Applier does. */
class StoreWriter implements ManagementClusterWriter {
  writes = 0;
  readonly store: FakeLister<ManagementCluster>;
  /** Finalizer writes, as "+name" and "-name". */
  readonly finalizers: string[] = [];
  constructor(store: FakeLister<ManagementCluster>) {
    this.store = store;
  }
  addFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    return this.#setFinalizer(obj, finalizer, true);
  }
  removeFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    return this.#setFinalizer(obj, finalizer, false);
  }
  #setFinalizer(obj: KubeObject, finalizer: string, present: boolean): Promise<boolean> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer) === present) return Promise.resolve(false);
    this.finalizers.push(`${present ? "+" : "-"}${finalizer}`);
    const mc = obj as ManagementCluster;
    const kept = finalizers.filter((f) => f !== finalizer);
    // A deleted object the last finalizer leaves is gone, as the apiserver does.
    if (!present && mc.metadata.deletionTimestamp && kept.length === 0)
      this.store.delete("", mc.metadata.name ?? "");
    else
      this.store.set({
        ...mc,
        metadata: { ...mc.metadata, finalizers: present ? [...kept, finalizer] : kept },
      });
    return Promise.resolve(true);
  }
  applyStatus<T extends KubeObject>(_type: ResourceType, current: KubeObject, status: unknown) {
    if (JSON.stringify(current["status"]) === JSON.stringify(status))
      return Promise.resolve<T | undefined>(undefined);
    this.writes++;
    const mc = { ...(current as ManagementCluster), status: status as ManagementClusterStatus };
    this.store.set(mc);
    return Promise.resolve(mc as unknown as T);
  }
}

describe("LoadReconciler with agent liveness", () => {
  function setup() {
    let t = Date.parse("2026-01-01T00:00:00Z");
    const now = () => t;
    const agents = new AgentLiveness({ now });
    const mcs = new FakeLister([managementCluster("mc-1", 3)]);
    const writer = new StoreWriter(mcs);
    const events: Array<{ type: string; reason: string }> = [];
    const reconciler = new LoadReconciler({
      managementClusters: mcs,
      clusters: new FakeLister<HcpCluster>([], { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster }),
      placedNow: noneLive,
      applier: writer,
      events: { record: (_obj, e) => Promise.resolve(void events.push({ type: e.type, reason: e.reason })) },
      agents,
      now,
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    const reconcile = () => reconciler.reconcile(ctx, { cluster: "service", namespace: "", name: "mc-1" });
    const status = () => mcs.get("", "mc-1")?.status;
    return { agents, writer, events, reconcile, status, advance: (ms: number) => (t += ms) };
  }

  test("one write per change of Connected, none per heartbeat, and an event per transition", async () => {
    const w = setup();
    w.agents.start();
    w.agents.listening(true);
    w.agents.heard("mc-1", 10_000);
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 30_000 });
    expect(w.status()).toMatchObject({ phase: "Ready", agent: { heartbeatSeconds: 10 } });
    expect(w.status()?.conditions?.find((c) => c.type === "Connected")).toMatchObject({
      status: "True",
      reason: "AgentConnected",
    });
    expect(w.writer.writes).toBe(1);

    for (let i = 0; i < 5; i++) {
      w.advance(10_000);
      w.agents.heard("mc-1", 10_000);
      await w.reconcile();
    }
    expect(w.writer.writes).toBe(1);

    w.advance(30_000);
    expect(await w.reconcile()).toEqual({});
    expect(w.status()).toMatchObject({ phase: "Unavailable" });
    expect(w.status()?.conditions?.find((c) => c.type === "Connected")).toMatchObject({
      status: "False",
      reason: "AgentNotHeard",
    });
    await w.reconcile();
    expect(w.writer.writes).toBe(2);

    w.advance(60_000);
    w.agents.heard("mc-1", 10_000);
    await w.reconcile();
    expect(w.status()).toMatchObject({ phase: "Ready" });
    expect(w.writer.writes).toBe(3);
    expect(w.events).toEqual([
      { type: "Normal", reason: "AgentConnected" },
      { type: "Warning", reason: "AgentNotHeard" },
      { type: "Normal", reason: "AgentConnected" },
    ]);
  });

  test("while Connected stands, lastHeardTime is written again once older than the refresh interval", async () => {
    const w = setup();
    w.agents.start();
    w.agents.listening(true);
    w.agents.heard("mc-1", 10_000);
    // As the queue would: a reconcile only when the last one asked for it (0 or none: no requeue);
    // heartbeats come between rechecks and wake nothing, as they are no news.
    const requeue = (r: { requeueAfterMs?: number }) => r.requeueAfterMs || undefined;
    let next = requeue(await w.reconcile());
    const first = w.status()?.agent?.lastHeardTime;
    for (let second = 1; second <= 12 * 60; second++) {
      w.advance(1_000);
      if (second % 10 === 3) w.agents.heard("mc-1", 10_000);
      if (next === undefined || (next -= 1_000) > 0) continue;
      next = requeue(await w.reconcile());
    }
    const written = Date.parse(w.status()?.agent?.lastHeardTime ?? "") - Date.parse(first ?? "");
    // Written at 5 and at 10 minutes, each time the last heartbeat heard (at 293 s, then 593 s).
    expect(w.writer.writes).toBe(3);
    expect(written).toBe(593_000);
    expect(next).toBeDefined();
  });

  test("a first Unknown is no event", async () => {
    const w = setup();
    w.agents.start();
    await w.reconcile();
    expect(w.status()?.conditions?.find((c) => c.type === "Connected")).toMatchObject({ status: "Unknown" });
    expect(w.events).toEqual([]);
  });
});

describe("LoadReconciler: a load that only moved is written at most every interval", () => {
  function setup() {
    let t = Date.parse("2026-01-01T00:00:00Z");
    const mcs = new FakeLister([managementCluster("mc-1", 3)]);
    const clusters = new FakeLister<HcpCluster>([], { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster });
    const writer = new StoreWriter(mcs);
    const reconciler = new LoadReconciler({
      managementClusters: mcs,
      clusters,
      placedNow: noneLive,
      applier: writer,
      loadWriteIntervalMs: 10_000,
      now: () => t,
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    return {
      writer,
      place: (name: string) => clusters.set(hcpCluster(name, "mc-1")),
      reconcile: () => reconciler.reconcile(ctx, { cluster: "service", namespace: "", name: "mc-1" }),
      shown: () => mcs.get("", "mc-1")?.status,
      advance: (ms: number) => (t += ms),
    };
  }

  test("placements in a burst are one write, the count once the interval is over; a phase change at once", async () => {
    const w = setup();
    w.place("a");
    expect(await w.reconcile()).toEqual({});
    expect(w.shown()).toMatchObject({ hostedClusters: 1, phase: "Ready" });
    expect(w.writer.writes).toBe(1);

    w.advance(2_000);
    w.place("b");
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 8_000 });
    expect(w.shown()).toMatchObject({ hostedClusters: 1 });
    expect(w.writer.writes).toBe(1);

    w.advance(8_000);
    expect(await w.reconcile()).toEqual({});
    expect(w.shown()).toMatchObject({ hostedClusters: 2 });
    expect(w.writer.writes).toBe(2);

    // Full is a change of phase and of Schedulable, not only of the count: written at once.
    w.advance(1_000);
    w.place("c");
    await w.reconcile();
    expect(w.shown()).toMatchObject({ hostedClusters: 3, phase: "Full" });
    expect(w.writer.writes).toBe(3);
  });
});

describe("LoadReconciler: a ManagementCluster is held while HcpClusters are placed on it", () => {
  function setup(opts: { placed?: string[]; finalizers?: string[]; live?: () => number } = {}) {
    const mc = managementCluster("mc-1", 3);
    mc.metadata.finalizers = opts.finalizers ?? [MANAGEMENT_CLUSTER_FINALIZER];
    const mcs = new FakeLister([mc]);
    const clusters = new FakeLister<HcpCluster>(
      (opts.placed ?? []).map((name) => hcpCluster(name, "mc-1")),
      { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster },
    );
    const writer = new StoreWriter(mcs);
    const events: Array<{ type: string; reason: string; message: string }> = [];
    const asked: string[] = [];
    const reconciler = new LoadReconciler({
      managementClusters: mcs,
      clusters,
      placedNow: (name) => {
        asked.push(name);
        return Promise.resolve(opts.live?.() ?? clusters.countByIndex(MANAGEMENT_CLUSTER_INDEX, name));
      },
      applier: writer,
      // Every count written at once (the interval has tests of its own above).
      loadWriteIntervalMs: 0,
      events: {
        record: (_obj, e) =>
          Promise.resolve(void events.push({ type: e.type, reason: e.reason, message: e.message })),
      },
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    return {
      writer,
      events,
      asked,
      clusters,
      reconcile: () => reconciler.reconcile(ctx, { cluster: "service", namespace: "", name: "mc-1" }),
      shown: () => mcs.get("", "mc-1"),
      remove: () => {
        const current = mcs.get("", "mc-1")!;
        mcs.set({ ...current, metadata: { ...current.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } });
      },
    };
  }
  const deleting = (mc: ManagementCluster | undefined) =>
    mc?.status?.conditions?.find((c) => c.type === "Deleting");

  test("a ManagementCluster gets the finalizer first, and nothing else in that reconcile", async () => {
    const w = setup({ finalizers: [] });
    expect(await w.reconcile()).toEqual({});
    expect(w.writer.finalizers).toEqual([`+${MANAGEMENT_CLUSTER_FINALIZER}`]);
    expect(w.writer.writes).toBe(0);
    await w.reconcile();
    expect(w.writer.finalizers).toHaveLength(1);
    expect(w.shown()?.status).toMatchObject({ phase: "Ready", hostedClusters: 0 });
  });

  test("deleted with clusters placed: held, shown Deleting with their count, one Warning, no room for placement", async () => {
    const w = setup({ placed: ["a", "b"] });
    await w.reconcile();
    w.remove();
    await w.reconcile();
    expect(w.writer.finalizers).toEqual([]);
    const mc = w.shown();
    expect(mc?.metadata.finalizers).toEqual([MANAGEMENT_CLUSTER_FINALIZER]);
    expect(mc?.status).toMatchObject({ phase: "Deleting", hostedClusters: 2 });
    expect(deleting(mc)).toMatchObject({
      status: "True",
      reason: "HostedClustersPlaced",
      message: "2 hosted clusters are still placed on it; it is deleted once none is",
    });
    expect(mc?.status?.conditions?.find((c) => c.type === "Schedulable")).toMatchObject({
      status: "False",
      reason: "Deleting",
    });
    expect(w.events).toEqual([
      {
        type: "Warning",
        reason: "HostedClustersPlaced",
        message: "Deletion waits: 2 hosted clusters are still placed on it; it is deleted once none is",
      },
    ]);

    // One goes: the count moves, no second event.
    w.clusters.delete("customer", "a");
    await w.reconcile();
    expect(deleting(w.shown())?.message).toBe(
      "1 hosted cluster is still placed on it; it is deleted once none is",
    );
    expect(w.events).toHaveLength(1);
    expect(w.asked).toEqual([]);

    // The last goes: confirmed with the apiserver, the finalizer removed, the ManagementCluster gone.
    w.clusters.delete("customer", "b");
    expect(await w.reconcile()).toEqual({});
    expect(w.asked).toEqual(["mc-1"]);
    expect(w.writer.finalizers).toEqual([`-${MANAGEMENT_CLUSTER_FINALIZER}`]);
    expect(w.shown()).toBeUndefined();
  });

  test("deleted with none placed: let go at once", async () => {
    const w = setup();
    w.remove();
    expect(await w.reconcile()).toEqual({});
    expect(w.writer.finalizers).toEqual([`-${MANAGEMENT_CLUSTER_FINALIZER}`]);
    expect(w.events).toEqual([]);
  });

  test("the cache shows none but the apiserver shows one (a placement the watch has not brought): held", async () => {
    const w = setup({ live: () => 1 });
    w.remove();
    await w.reconcile();
    expect(w.writer.finalizers).toEqual([]);
    expect(w.shown()?.status).toMatchObject({ phase: "Deleting", hostedClusters: 1 });
    expect(deleting(w.shown())?.reason).toBe("HostedClustersPlaced");
  });

  test("deleted without this controller's finalizer: nothing to hold, nothing written", async () => {
    const w = setup({ placed: ["a"], finalizers: ["someone.else/finalizer"] });
    w.remove();
    expect(await w.reconcile()).toEqual({});
    expect(w.writer.finalizers).toEqual([]);
    expect(w.writer.writes).toBe(0);
  });
});
