import { describe, expect, it } from "vitest";
import type { NodePool } from "../api/v1alpha1/index.ts";
import type { ManifestWorkObject } from "../api/work/v1.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { isClusterWork, poolChangeWakesCluster, workChangeWakesCluster } from "./wakes.ts";

const clusterLabels = {
  [WORK_LABELS.clusterUid]: "u1",
  [WORK_LABELS.clusterName]: "c1",
  [WORK_LABELS.clusterNamespace]: "ns",
};

function work(labels: Record<string, string>, over: Partial<ManifestWorkObject> = {}): ManifestWorkObject {
  return {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: { name: "w", namespace: "mgmt-1", generation: 1, labels, resourceVersion: "1" },
    status: {
      conditions: [
        { type: "Applied", status: "True", reason: "Applied", message: "", lastTransitionTime: "t" },
      ],
    },
    ...over,
  };
}

const poolWorkLabels = { ...clusterLabels, [WORK_LABELS.nodePool]: "p1" };
const breakglassLabels = { ...clusterLabels, [WORK_LABELS.breakglass]: "b1" };

describe("isClusterWork", () => {
  it("is the work with the cluster's labels and no node pool or break-glass label", () => {
    expect(isClusterWork(work(clusterLabels))).toBe(true);
    expect(isClusterWork(work(poolWorkLabels))).toBe(false);
    expect(isClusterWork(work(breakglassLabels))).toBe(false);
  });
});

describe("workChangeWakesCluster", () => {
  const moved = (w: ManifestWorkObject, m: Partial<ManifestWorkObject["metadata"]>): ManifestWorkObject => ({
    ...w,
    metadata: { ...w.metadata, ...m, resourceVersion: "2" },
  });
  const reported = (w: ManifestWorkObject): ManifestWorkObject => ({
    ...w,
    metadata: { ...w.metadata, resourceVersion: "2" },
    status: { ...w.status, resourceStatus: { manifests: [] } },
  });

  it.each([
    { name: "the cluster's own work reports", labels: clusterLabels, change: reported, wakes: true },
    { name: "a node pool's work reports", labels: poolWorkLabels, change: reported, wakes: false },
    { name: "a break-glass work reports", labels: breakglassLabels, change: reported, wakes: false },
    {
      name: "maestro-server adds its finalizer",
      labels: clusterLabels,
      change: (w: ManifestWorkObject) => moved(w, { finalizers: ["f"] }),
      wakes: false,
    },
    {
      name: "someone edits a node pool work's spec",
      labels: poolWorkLabels,
      change: (w: ManifestWorkObject) => moved(w, { generation: 2 }),
      wakes: true,
    },
    {
      name: "someone strips a label",
      labels: clusterLabels,
      change: (w: ManifestWorkObject) => moved(w, { labels: { [WORK_LABELS.clusterUid]: "u1" } }),
      wakes: true,
    },
    {
      name: "an annotation changes",
      labels: clusterLabels,
      change: (w: ManifestWorkObject) => moved(w, { annotations: { a: "b" } }),
      wakes: true,
    },
    {
      name: "a node pool's work is being deleted",
      labels: poolWorkLabels,
      change: (w: ManifestWorkObject) => moved(w, { deletionTimestamp: "2030-01-01T00:00:00Z" }),
      wakes: true,
    },
  ])("$name: wakes $wakes", ({ labels, change, wakes }) => {
    const before = work(labels);
    expect(workChangeWakesCluster(before, change(before))).toBe(wakes);
  });
});

describe("poolChangeWakesCluster", () => {
  const pool = (over: Partial<NodePool["metadata"]> = {}, clusterName = "c1"): NodePool => ({
    metadata: { name: "p1", namespace: "ns", generation: 1, ...over },
    spec: { clusterRef: { name: clusterName } } as NodePool["spec"],
  });

  it("wakes the cluster for a pool's deletion or a new clusterRef, not for its status or spec", () => {
    expect(poolChangeWakesCluster(pool(), { ...pool(), status: { phase: "Ready" } })).toBe(false);
    expect(poolChangeWakesCluster(pool(), pool({ generation: 2 }))).toBe(false);
    expect(poolChangeWakesCluster(pool(), pool({ deletionTimestamp: "2030-01-01T00:00:00Z" }))).toBe(true);
    expect(poolChangeWakesCluster(pool(), pool({}, "c2"))).toBe(true);
  });
});
