/**
 * How many times a pool created with its cluster writes its status at create (issue 37: at most
 * twice, never "waiting for the cluster" while the cluster is on its way), on fakes: the recording
 * writer counts the status writes, the injected clock and the deps' windows drive time.
 */
import { describe, expect, it } from "vitest";
import type { Condition } from "../api/meta/v1.ts";
import {
  NODE_POOL_FINALIZER,
  type HcpCluster,
  type NodePool,
  type NodePoolStatus,
} from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { summariseWorkSpec, type ManifestWork } from "../api/work/v1.ts";
import { ReleaseCatalog } from "../releases/catalog.ts";
import { RecordingEvents, RecordingWriter, testContext } from "../../test/support/fakes.ts";
import { FakeLister } from "../../test/support/lister.ts";
import {
  conditionSince,
  workAppliedCondition,
  sampleCluster,
  sampleFixedPool,
  sampleManagementCluster,
  sampleRegion,
} from "../../test/support/samples.ts";
import { poolNames } from "./nodepool.ts";
import { NodePoolReconciler } from "./reconcile.ts";
import { NODE_POOL_UID_INDEX } from "./scope.ts";

const T = "2026-01-01T00:00:00Z";
const created = Date.parse(T);
const at = (ms: number) => new Date(created + ms).toISOString();
const MINUTE = 60_000;
/** Small windows, passed as the deps' options: what matters is time against them, not their size. */
const STALL_MS = 2 * MINUTE;
const WINDOW_MS = 20_000;

const condition = (type: string, status: string, reason: string, sinceMs: number): Condition =>
  conditionSince(type, status, reason, at(sinceMs));

/** The cluster created with the pool, with these conditions (none: not looked at yet). */
function hcpCluster(conditions?: Condition[]): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "demo", namespace: "default", uid: "uid-demo", generation: 1, creationTimestamp: T };
  if (conditions) c.status = { managementCluster: "mgmt-1", version: "4.19.7", conditions };
  return c;
}
const onItsWay = (sinceMs = 0) => hcpCluster([condition("Ready", "False", "InProgress", sinceMs)]);
const placedAt = (ms: number) =>
  hcpCluster([
    condition("Ready", "False", "WaitingForHyperShift", 0),
    condition("HostedClusterApplied", "True", "Applied", ms),
  ]);

function nodePool(): NodePool {
  const p = sampleFixedPool();
  p.metadata = {
    name: "workers",
    namespace: "default",
    uid: "uid-workers",
    generation: 1,
    creationTimestamp: T,
    finalizers: [NODE_POOL_FINALIZER],
  };
  p.spec = { ...p.spec, clusterRef: { name: "demo" } };
  return p;
}

/** The pool's work as its informer shows it: applied with its two nodes ready, or not reported yet. */
function poolWorkSeen(reported: boolean): ReturnType<typeof summariseWorkSpec> {
  const cluster = placedAt(5 * MINUTE);
  const pool = nodePool();
  const names = poolNames(pool, clusterNames(cluster, sampleRegion()));
  const ready = { type: "Ready", status: "True", reason: "AsExpected", message: "", lastTransitionTime: T };
  const work: ManifestWork = {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: {
      name: names.workName,
      namespace: "mgmt-1",
      generation: 1,
      labels: { [WORK_LABELS.nodePool]: "uid-workers" },
    },
    spec: { workload: { manifests: [] } },
  };
  if (!reported) return summariseWorkSpec(work);
  return summariseWorkSpec({
    ...work,
    status: {
      conditions: [workAppliedCondition(1, T)],
      resourceStatus: {
        manifests: [
          {
            resourceMeta: { ordinal: 0, kind: "NodePool", name: names.hyperShiftName },
            conditions: [],
            statusFeedback: {
              values: [
                { name: "replicas", fieldValue: { type: "Integer", integer: 2 } },
                { name: "ready", fieldValue: { type: "JsonRaw", jsonRaw: JSON.stringify(ready) } },
              ],
            },
          },
        ],
      },
    },
  });
}

/** The reconciler with the clock at `clock.now` (ms after the pool's creation). */
function world(cluster: HcpCluster) {
  const clock = { now: 0 };
  const writer = new RecordingWriter();
  const pools = new FakeLister([nodePool()]);
  const clusters = new FakeLister([cluster]);
  const works = new FakeLister<ReturnType<typeof summariseWorkSpec>>([], {
    [NODE_POOL_UID_INDEX]: (w) => [w.metadata.labels?.[WORK_LABELS.nodePool] ?? ""],
  });
  const catalog = new ReleaseCatalog([
    { version: "4.19.7", image: "release:4.19.7", channelGroups: ["stable"] },
  ]);
  const reconciler = new NodePoolReconciler(
    {
      pools,
      clusters,
      managementClusters: new FakeLister([sampleManagementCluster("mgmt-1")]),
      works,
      releases: () => catalog,
      region: sampleRegion(),
      writer,
      events: new RecordingEvents(),
      clusterStallMs: STALL_MS,
      firstStatusWindowMs: WINDOW_MS,
    },
    () => created + clock.now,
  );
  /** One reconcile at `nowMs`; a status written is what the pool's informer shows next. */
  const reconcileAt = async (nowMs: number) => {
    clock.now = nowMs;
    const before = writer.of("status").length;
    const result = await reconciler.reconcile(testContext(), {
      cluster: "service",
      namespace: "default",
      name: "workers",
    });
    const status = writer.lastStatus<NodePoolStatus>();
    if (writer.of("status").length > before && status) pools.set({ ...nodePool(), status });
    return result;
  };
  const statuses = () => writer.of("status").map((w) => w.body as NodePoolStatus);
  const reasons = (type: string) => statuses().map((s) => s.conditions?.find((c) => c.type === type)?.reason);
  return { writer, pools, clusters, works, reconcileAt, statuses, reasons };
}

describe("a pool created with its cluster", () => {
  /** The cluster moves every 100 s and is placed 5 minutes in: ten times the old 30 s window. */
  async function placedFiveMinutesIn(w: ReturnType<typeof world>) {
    expect(await w.reconcileAt(60_000)).toEqual({ requeueAfterMs: STALL_MS - 60_000 });
    for (const moved of [100_000, 200_000]) {
      w.clusters.set(
        hcpCluster([
          condition("Ready", "False", "InProgress", 0),
          condition("ResourceGroupReady", "True", "AsExpected", moved),
        ]),
      );
      expect(await w.reconcileAt(moved + 50_000)).toEqual({ requeueAfterMs: STALL_MS - 50_000 });
    }
    w.clusters.set(placedAt(5 * MINUTE));
    expect(await w.reconcileAt(5 * MINUTE + 5_000)).toMatchObject({ requeueAfterMs: WINDOW_MS - 5_000 });
    expect(w.writer.of("apply", "ManifestWork")).toHaveLength(1);
    expect(w.statuses()).toEqual([]);
  }

  it("whose cluster takes minutes to be placed writes Ready once when its nodes come within the window", async () => {
    const w = world(onItsWay());
    await placedFiveMinutesIn(w);
    w.works.set(poolWorkSeen(true));
    await w.reconcileAt(5 * MINUTE + 15_000);
    expect(w.reasons("Ready")).toEqual(["AsExpected"]);
    expect(w.statuses()[0]).toMatchObject({ phase: "Ready" });
  });

  it("whose nodes are slower than the window writes 'on its way' then Ready, never WaitingForCluster", async () => {
    const w = world(onItsWay());
    await placedFiveMinutesIn(w);
    w.works.set(poolWorkSeen(false));
    await w.reconcileAt(5 * MINUTE + WINDOW_MS);
    w.works.set(poolWorkSeen(true));
    await w.reconcileAt(6 * MINUTE);
    expect(w.reasons("Ready")).toEqual(["WaitingForAgent", "AsExpected"]);
    expect(w.reasons("ClusterReady")).toEqual(["ClusterReady", "ClusterReady"]);
  });

  it.each<[string, Condition[], string]>([
    [
      "goes Degraded",
      [
        condition("Ready", "False", "NoMatchingManagementCluster", 70_000),
        condition("Degraded", "True", "NoMatchingManagementCluster", 70_000),
      ],
      "NoMatchingManagementCluster",
    ],
    ["fails for want of room", [condition("Ready", "False", "NoCapacity", 70_000)], "WaitingForCluster"],
  ])("is told at once when its cluster %s", async (_what, conditions, reason) => {
    const w = world(onItsWay());
    expect(await w.reconcileAt(60_000)).toEqual({ requeueAfterMs: STALL_MS - 60_000 });
    w.clusters.set(hcpCluster(conditions));
    await w.reconcileAt(70_000);
    expect(w.reasons("ClusterReady")).toEqual([reason]);
  });

  it("is told at the bound that its cluster has not moved since", async () => {
    const w = world(onItsWay(30_000));
    expect(await w.reconcileAt(STALL_MS)).toEqual({ requeueAfterMs: 30_000 });
    expect(w.statuses()).toEqual([]);
    await w.reconcileAt(STALL_MS + 30_000);
    expect(w.reasons("ClusterReady")).toEqual(["WaitingForCluster"]);
    expect(w.statuses()[0]).toMatchObject({ phase: "Provisioning" });
  });

  it.each<[string, () => HcpCluster | null, string]>([
    ["missing", () => null, "ClusterNotFound"],
    [
      "being deleted",
      () => ({ ...onItsWay(), metadata: { ...onItsWay().metadata, deletionTimestamp: T } }),
      "ClusterDeleting",
    ],
  ])("says at once that its cluster is %s", async (_what, cluster, reason) => {
    const c = cluster();
    const w = world(c ?? onItsWay());
    if (!c) w.clusters.delete("default", "demo");
    await w.reconcileAt(1_000);
    expect(w.reasons("ClusterReady")).toEqual([reason]);
  });

  it("is not held back once it has a status", async () => {
    const w = world(onItsWay());
    const told = condition("Ready", "False", "WaitingForCluster", 0);
    w.pools.set({ ...nodePool(), status: { conditions: [told] } });
    expect(await w.reconcileAt(1_000)).toEqual({});
    expect(w.reasons("ClusterReady")).toEqual(["WaitingForCluster"]);
  });
});
