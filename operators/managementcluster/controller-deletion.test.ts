/** A ManagementCluster is held by its finalizer while HcpClusters are placed on it. */
import { describe, expect, test } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../hcp/indexes.ts";
import {
  MANAGEMENT_CLUSTER_FINALIZER,
  type HcpCluster,
  type ManagementCluster,
} from "../api/v1alpha1/index.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { silentLogger } from "../runtime/logger.ts";
import { LoadReconciler } from "./controller.ts";
import { managementCluster, hcpCluster, StoreWriter } from "../../test/support/managementcluster.ts";

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
