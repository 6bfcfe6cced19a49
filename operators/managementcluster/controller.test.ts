import { describe, expect, test } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../hcp/indexes.ts";
import type { HcpCluster, ManagementCluster } from "../api/v1alpha1/index.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { silentLogger } from "../runtime/logger.ts";
import { LoadReconciler, managementClusterStatus } from "./controller.ts";
import {
  managementCluster,
  hcpCluster,
  noneLive,
  RecordingStatusWriter,
  StoreWriter,
} from "../../test/support/managementcluster.ts";

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
