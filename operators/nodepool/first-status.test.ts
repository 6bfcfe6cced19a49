import { describe, expect, it } from "vitest";
import type { Condition } from "../api/meta/v1.ts";
import type { HcpCluster, NodePool } from "../api/v1alpha1/index.ts";
import { FakeLister } from "../../test/support/lister.ts";
import { conditionSince, sampleCluster, sampleManagementCluster } from "../../test/support/samples.ts";
import { firstStatusHoldMs, untoldClusterWaitMs } from "./phases.ts";
import type { NodePoolReconcilerDeps } from "./scope.ts";

const created = Date.parse("2026-11-29T00:00:00Z");
const at = (ms: number) => new Date(created + ms).toISOString();
const MINUTE = 60_000;
const pool = (status?: NodePool["status"], createdAt = 0): NodePool =>
  ({
    metadata: { name: "p", namespace: "ns", creationTimestamp: at(createdAt) },
    spec: { clusterRef: { name: "c" } },
    ...(status && { status }),
  }) as NodePool;
const next = (ready: { status: string; reason: string }, degraded = "False") => ({
  conditions: [
    { type: "Ready", ...ready },
    { type: "Degraded", status: degraded, reason: "x" },
  ],
});
const underWay = next({ status: "False", reason: "WaitingForNodes" });
const condition = (type: string, status: string, reason: string, sinceMs: number): Condition =>
  conditionSince(type, status, reason, at(sinceMs));

/** A cluster created with the pool, with these conditions (none: not looked at yet). */
function cluster(conditions?: Condition[], edit: (c: HcpCluster) => void = () => undefined): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "c", namespace: "ns", creationTimestamp: at(0) };
  if (conditions) c.status = { managementCluster: "mgmt-1", conditions };
  edit(c);
  return c;
}
/** Placed: its HostedCluster applied at `placedMs`. */
const placed = (placedMs: number) =>
  cluster([condition("HostedClusterApplied", "True", "Applied", placedMs)]);

describe("firstStatusHoldMs", () => {
  const hold = (c: HcpCluster | undefined, nowMs: number, n = underWay, p = pool()) =>
    firstStatusHoldMs(p, c, n, { now: created + nowMs, windowMs: 30_000 });

  it("holds a new pool's first status while it only says the pool is on its way, within the window from the pool's creation", () => {
    expect(hold(placed(0), 10_000)).toBe(20_000);
    expect(hold(placed(0), 30_000)).toBeUndefined();
  });

  it("gives a pool created with a slow cluster its window from the cluster's placement", () => {
    expect(hold(placed(5 * MINUTE), 5 * MINUTE + 10_000)).toBe(20_000);
    expect(hold(placed(5 * MINUTE), 5 * MINUTE + 30_000)).toBeUndefined();
  });

  it("gives a pool made for a cluster placed long ago its window from its own creation", () => {
    expect(hold(placed(0), 60 * MINUTE + 1_000, underWay, pool(undefined, 60 * MINUTE))).toBe(29_000);
  });

  it("holds nothing under a cluster not placed: the wait for it was untoldClusterWaitMs's", () => {
    const waiting = next({ status: "False", reason: "WaitingForCluster" });
    expect(hold(cluster([condition("Ready", "False", "InProgress", 0)]), 1_000, waiting)).toBeUndefined();
    expect(hold(undefined, 1_000, waiting)).toBeUndefined();
  });

  it("writes at once what a user must know: Ready, a failure, Degraded", () => {
    expect(hold(placed(0), 0, next({ status: "True", reason: "AsExpected" }))).toBeUndefined();
    expect(hold(placed(0), 0, next({ status: "False", reason: "InvalidSubnet" }))).toBeUndefined();
    expect(hold(placed(0), 0, next({ status: "False", reason: "WaitingForNodes" }, "True"))).toBeUndefined();
  });

  it("holds nothing once the pool has a status", () => {
    const told = pool({
      conditions: [{ type: "Ready", status: "False", reason: "WaitingForAgent", message: "" }],
    } as NodePool["status"]);
    expect(hold(placed(0), 1_000, underWay, told)).toBeUndefined();
  });
});

describe("untoldClusterWaitMs", () => {
  const stall = 10 * MINUTE;
  const wait = (c: HcpCluster | undefined, nowMs: number, p = pool()) => {
    const deps = {
      clusters: new FakeLister(c ? [c] : []),
      managementClusters: new FakeLister([sampleManagementCluster("mgmt-1")]),
    } as unknown as NodePoolReconcilerDeps;
    return untoldClusterWaitMs(p, deps, created + nowMs, stall);
  };

  it("keeps a new pool quiet while its cluster moves, however long its placement takes", () => {
    const moving = cluster([
      condition("Ready", "False", "InProgress", 10_000),
      condition("ResourceGroupReady", "True", "AsExpected", 8 * MINUTE),
    ]);
    expect(wait(moving, 9 * MINUTE)).toBe(9 * MINUTE);
    expect(wait(cluster(), 4 * MINUTE)).toBe(6 * MINUTE);
    const applying = cluster([condition("Ready", "False", "WaitingForAgent", 3 * MINUTE)]);
    expect(wait(applying, 4 * MINUTE)).toBe(9 * MINUTE);
  });

  it("tells the pool once its cluster has not moved for the bound", () => {
    const stuck = cluster([condition("Ready", "False", "InProgress", MINUTE)]);
    expect(wait(stuck, MINUTE + stall - 1)).toBe(1);
    expect(wait(stuck, MINUTE + stall)).toBeUndefined();
  });

  it.each<[string, HcpCluster | undefined]>([
    ["missing", undefined],
    ["deleting", cluster(undefined, (c) => (c.metadata.deletionTimestamp = at(0)))],
    ["paused", cluster(undefined, (c) => (c.spec.paused = true))],
    [
      "Degraded",
      cluster([
        condition("Ready", "False", "NoMatchingManagementCluster", 0),
        condition("Degraded", "True", "NoMatchingManagementCluster", 0),
      ]),
    ],
    ["failing (no room)", cluster([condition("Ready", "False", "NoCapacity", 0)])],
    ["stale (Ready Unknown)", cluster([condition("Ready", "Unknown", "StatusStale", 0)])],
    ["placed", placed(0)],
  ])("says now what a cluster %s means for the pool", (_what, c) => {
    expect(wait(c, 1_000)).toBeUndefined();
  });

  it("keeps nothing quiet once the pool has a status", () => {
    const told = pool({
      conditions: [{ type: "Ready", status: "False", reason: "WaitingForCluster", message: "" }],
    } as NodePool["status"]);
    expect(wait(cluster(), 1_000, told)).toBeUndefined();
  });
});
