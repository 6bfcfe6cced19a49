/**
 * The node pool reconciler at the phase level, on fakes (listers, a recording writer and event
 * recorder): what it applies, the conditions it writes and when it holds back.
 */
import { describe, expect, it } from "vitest";
import type { Condition } from "../api/meta/v1.ts";
import type { HcpCluster, NodePool, NodePoolStatus } from "../api/v1alpha1/index.ts";
import {
  ManifestWorkResource,
  summariseWorkSpec,
  type ManifestWork,
  type WorkCondition,
} from "../api/work/v1.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { ReleaseCatalog } from "../releases/catalog.ts";
import { RecordingEvents, RecordingWriter, testContext } from "../../test/support/fakes.ts";
import { FakeLister } from "../../test/support/lister.ts";
import {
  sampleCluster,
  sampleFixedPool,
  sampleManagementCluster,
  sampleRegion,
} from "../../test/support/samples.ts";
import { NodePoolReconciler } from "./reconcile.ts";
import { NODE_POOL_UID_INDEX } from "./scope.ts";
import { NODE_POOL_FINALIZER } from "../api/v1alpha1/index.ts";

const catalog = new ReleaseCatalog([
  { version: "4.19.7", image: "release:4.19.7", channelGroups: ["stable"] },
  { version: "4.20.2", image: "release:4.20.2", channelGroups: ["stable"] },
]);
const T = "2026-01-01T00:00:00Z";

function hcpCluster(version = "4.19.7", hostedApplied = true): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "demo", namespace: "default", uid: "uid-demo", generation: 1 };
  c.status = {
    managementCluster: "mgmt-1",
    version,
    conditions: [
      {
        type: "HostedClusterApplied",
        status: hostedApplied ? "True" : "False",
        reason: "Applied",
        message: "",
        lastTransitionTime: T,
      },
    ],
  };
  return c;
}

function nodePool(extra: Partial<NodePool["spec"]> = {}, status?: NodePoolStatus): NodePool {
  const p = sampleFixedPool();
  p.metadata = {
    name: "workers",
    namespace: "default",
    uid: "uid-workers",
    generation: 2,
    finalizers: [NODE_POOL_FINALIZER],
  };
  p.spec = { ...p.spec, clusterRef: { name: "demo" }, ...extra };
  if (status) p.status = status;
  return p;
}

function workWith(conditions: WorkCondition[]): ManifestWork {
  return {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: {
      name: "uid-demo-workers",
      namespace: "mgmt-1",
      generation: 1,
      labels: { [WORK_LABELS.nodePool]: "uid-workers" },
    },
    spec: { workload: { manifests: [] } },
    status: { conditions },
  };
}

function world(
  opts: {
    pool?: NodePool;
    cluster?: HcpCluster | null;
    works?: ManifestWork[];
    catalog?: ReleaseCatalog;
    now?: number;
  } = {},
) {
  const writer = new RecordingWriter();
  const events = new RecordingEvents();
  const pools = new FakeLister([opts.pool ?? nodePool()]);
  const clusters = new FakeLister(opts.cluster === null ? [] : [opts.cluster ?? hcpCluster()]);
  const reconciler = new NodePoolReconciler(
    {
      pools,
      clusters,
      managementClusters: new FakeLister([sampleManagementCluster("mgmt-1")]),
      works: new FakeLister((opts.works ?? []).map(summariseWorkSpec), {
        [NODE_POOL_UID_INDEX]: (w) => [w.metadata.labels?.[WORK_LABELS.nodePool] ?? ""],
      }),
      releases: () => opts.catalog ?? catalog,
      region: sampleRegion(),
      writer,
      events,
    },
    () => opts.now ?? Date.now(),
  );
  const reconcile = () =>
    reconciler.reconcile(testContext(), { cluster: "service", namespace: "default", name: "workers" });
  const condition = (type: string) =>
    writer.lastStatus<NodePoolStatus>()?.conditions?.find((c) => c.type === type);
  return { writer, events, pools, clusters, reconcile, condition };
}

describe("NodePoolReconciler", () => {
  it("applies the pool's work on its cluster's management cluster and waits for the agent", async () => {
    const w = world();
    await w.reconcile();
    expect(w.writer.of("apply", "ManifestWork")).toMatchObject([
      { name: "uid-demo-workers", namespace: "mgmt-1" },
    ]);
    expect(w.condition("NodePoolApplied")).toMatchObject({ status: "False", reason: "WaitingForAgent" });
    expect(w.writer.lastStatus<NodePoolStatus>()?.observedGeneration).toBe(2);
    // The work's creation is in NodePoolApplied, not an event: an install is told by its end.
    expect(w.events.reasons()).toEqual([]);
  });

  it.each<[string, HcpCluster | null, string]>([
    ["the cluster is missing", null, "ClusterNotFound"],
    ["the HostedCluster is not applied yet", hcpCluster("4.19.7", false), "WaitingForCluster"],
  ])("applies nothing while %s", async (_what, cluster, reason) => {
    const w = world({ cluster });
    await w.reconcile();
    expect(w.writer.of("apply")).toEqual([]);
    expect(w.condition("ClusterReady")).toMatchObject({ status: "False", reason });
  });

  it("fails at once, with the cluster's reason, under a cluster that needs the user", async () => {
    const cluster = hcpCluster("4.19.7", false);
    delete cluster.status!.managementCluster;
    const why = "no schedulable ManagementCluster matches the placement selector tier=gold";
    cluster.status!.conditions!.push(
      {
        type: "Ready",
        status: "False",
        reason: "NoMatchingManagementCluster",
        message: why,
        lastTransitionTime: T,
      },
      {
        type: "Degraded",
        status: "True",
        reason: "NoMatchingManagementCluster",
        message: why,
        lastTransitionTime: T,
      },
    );
    const w = world({ cluster });
    await w.reconcile();
    expect(w.writer.of("apply")).toEqual([]);
    expect(w.condition("ClusterReady")).toMatchObject({
      status: "False",
      reason: "NoMatchingManagementCluster",
      message: `HcpCluster demo needs attention before its node pools can be created: ${why}`,
    });
    expect(w.condition("Degraded")).toMatchObject({ status: "True", reason: "NoMatchingManagementCluster" });
    expect(w.condition("Progressing")).toMatchObject({ status: "False", reason: "UserActionRequired" });
    expect(w.writer.lastStatus<NodePoolStatus>()?.phase).toBe("Degraded");
  });

  it("waits for a cluster still on its way with a message its progress does not rewrite", async () => {
    const cluster = hcpCluster("4.19.7", false);
    const ready: Condition = {
      type: "Ready",
      status: "False",
      reason: "DnsZoneProvisioning",
      message: "creating the DNS zone",
      lastTransitionTime: T,
    };
    cluster.status!.conditions!.push(ready);
    const w = world({ cluster });
    await w.reconcile();
    const waiting = w.condition("ClusterReady");
    expect(waiting).toMatchObject({
      status: "False",
      reason: "WaitingForCluster",
      message:
        "Waiting for HcpCluster demo to be placed and its HostedCluster applied; the HcpCluster's Ready condition says what it is doing",
    });
    Object.assign(ready, { reason: "IngressProvisioning", message: "creating the ingress load balancer" });
    await w.reconcile();
    expect(w.condition("ClusterReady")).toEqual(waiting);
    expect(w.condition("Degraded")?.status).toBe("False");
    expect(w.writer.lastStatus<NodePoolStatus>()?.phase).toBe("Provisioning");
  });

  it.each<[string, string, string]>([
    [
      "that does not ask for it names the ways out",
      "4.19",
      "The nodes move to 4.20.2 once the control plane runs it (now 4.19.7); HcpCluster demo asks for 4.19: upgrade it, or set the node pool's version to at most 4.19",
    ],
    [
      "upgrading to it is simply waited for",
      "4.20",
      "The nodes move to 4.20.2 once the control plane runs it (now 4.19.7)",
    ],
  ])("a version ahead of a cluster %s", async (_what, clusterSpec, message) => {
    const cluster = hcpCluster("4.19.7");
    cluster.spec.version = { id: clusterSpec };
    const w = world({ pool: nodePool({ version: { id: "4.20" } }), cluster });
    await w.reconcile();
    expect(w.writer.of("apply")).toEqual([]);
    expect(w.condition("ValidVersion")).toMatchObject({
      status: "False",
      reason: "WaitingForControlPlane",
      message,
    });
  });

  it.each<[string, NodePool, HcpCluster, string]>([
    [
      "ahead of the control plane",
      nodePool({ version: { id: "4.20" } }),
      hcpCluster("4.19.7"),
      "WaitingForControlPlane",
    ],
    ["older than the nodes", nodePool({}, { version: "4.20.2" }), hcpCluster("4.20.2"), "DowngradeRefused"],
    ["unknown", nodePool({ version: { id: "4.99" } }), hcpCluster("4.19.7"), "UnknownVersion"],
    [
      "three minors behind the control plane",
      nodePool({ version: { id: "4.19" } }),
      hcpCluster("4.22.1"),
      "TooFarBehind",
    ],
  ])("holds a version %s", async (_what, pool, cluster, reason) => {
    if (reason === "DowngradeRefused") pool.spec.version = { id: "4.19" };
    const w = world({ pool, cluster });
    await w.reconcile();
    expect(w.writer.of("apply")).toEqual([]);
    expect(w.condition("ValidVersion")).toMatchObject({ status: "False", reason });
  });

  it("without a version of its own, runs the release its control plane is asked to run, not what the spec names", async () => {
    // An automatic patch upgrade: the cluster's spec still names 4.19.7, its control plane runs 4.19.9.
    const cluster = hcpCluster("4.19.9");
    cluster.spec.version = { id: "4.19.7", upgradePolicy: "AutomaticPatch" };
    cluster.status!.desiredVersion = "4.19.9";
    const patched = new ReleaseCatalog([
      ...catalog.releases,
      { version: "4.19.9", image: "release:4.19.9", channelGroups: ["stable"] },
    ]);
    const pool = nodePool({}, { version: "4.19.7" });
    delete pool.spec.version;
    const w = world({ pool, cluster, catalog: patched });
    await w.reconcile();
    expect(w.condition("ValidVersion")).toMatchObject({
      status: "True",
      message: "4.19.9, the release the control plane is asked to run (the pool names no version of its own)",
    });
    const work = w.writer.of("apply", "ManifestWork")[0]?.body as ManifestWork;
    expect(JSON.stringify(work.spec?.workload?.manifests)).toContain("release:4.19.9");
  });

  it.each<[string, WorkCondition[], { status: string; reason: string }, string]>([
    [
      "too large to publish",
      [
        {
          type: "Published",
          status: "False",
          reason: "BundleTooLarge",
          message: "Not published: too large",
          lastTransitionTime: T,
        },
      ],
      { status: "False", reason: "BundleTooLarge" },
      "True",
    ],
    [
      "waiting for the broker",
      [
        {
          type: "Published",
          status: "Unknown",
          reason: "BrokerNotConnected",
          message: "not connected",
          lastTransitionTime: T,
        },
      ],
      { status: "False", reason: "BrokerNotConnected" },
      "False",
    ],
    [
      "applied",
      [
        {
          type: "Applied",
          status: "True",
          reason: "AppliedManifestWorkComplete",
          message: "",
          observedGeneration: 1,
          lastTransitionTime: T,
        },
      ],
      { status: "True", reason: "Applied" },
      "False",
    ],
  ])("shows a work that is %s as the work step", async (_what, conditions, applied, degraded) => {
    const w = world({ works: [workWith(conditions)] });
    await w.reconcile(); // applies once after a start (the writer has no memory of the work yet)
    await w.reconcile();
    expect(w.writer.of("apply")).toHaveLength(1);
    expect(w.condition("NodePoolApplied")).toMatchObject(applied);
    expect(w.condition("Degraded")?.status).toBe(degraded);
  });

  it("deletes its work and keeps the finalizer until the agent confirms", async () => {
    const pool = { ...nodePool(), metadata: { ...nodePool().metadata, deletionTimestamp: T } };
    const w = world({ pool, works: [workWith([])] });
    await w.reconcile();
    expect(w.writer.of("delete", "ManifestWork")).toHaveLength(1);
    expect(w.writer.of("removeFinalizer")).toEqual([]);
    expect(w.condition("Deleting")).toMatchObject({ status: "True", reason: "DeletingNodePool" });
  });

  it("deletes a work the informer has not shown yet by its name, and waits for it", async () => {
    const pool = { ...nodePool(), metadata: { ...nodePool().metadata, deletionTimestamp: T } };
    const w = world({ pool });
    const work = { name: "uid-demo-workers", namespace: "mgmt-1" };
    w.writer.seed(ManifestWorkResource, work);
    await w.reconcile();
    expect(w.writer.of("delete", "ManifestWork")).toMatchObject([work]);
    expect(w.writer.of("removeFinalizer")).toEqual([]);
    expect(w.condition("Deleting")).toMatchObject({ status: "True", reason: "DeletingNodePool" });
    w.writer.vanish(ManifestWorkResource, work);
    await w.reconcile();
    expect(w.writer.of("removeFinalizer")).toHaveLength(1);
  });

  it("releases the finalizer once the work is gone", async () => {
    const pool = { ...nodePool(), metadata: { ...nodePool().metadata, deletionTimestamp: T } };
    const w = world({ pool });
    await w.reconcile();
    expect(w.writer.of("removeFinalizer")).toHaveLength(1);
    expect(w.writer.of("status")).toEqual([]);
  });
});
