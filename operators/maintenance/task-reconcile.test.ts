import { describe, expect, it } from "vitest";
import type {
  HcpCluster,
  MaintenanceRun,
  MaintenanceTask,
  MaintenanceTaskStatus,
} from "../api/v1alpha1/index.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { RecordingWriter, testContext } from "../../test/support/fakes.ts";
import { FakeLister } from "../../test/support/lister.ts";
import { RUN_INDEXERS, runName } from "./runs.ts";
import { MaintenanceTaskReconciler } from "./task-reconcile.ts";

function world(task: MaintenanceTask, clusters: HcpCluster[]) {
  const runs = new FakeLister<MaintenanceRun>([], RUN_INDEXERS);
  const created: MaintenanceRun[] = [];
  const writer = new RecordingWriter();
  const reconciler = new MaintenanceTaskReconciler({
    tasks: new FakeLister([task]),
    clusters: new FakeLister(clusters),
    runs,
    registry: new Map([["RotateServiceAccountSigningKey", { steps: [] }]]),
    client: {
      createIfAbsent: (_t, obj: KubeObject) => {
        created.push(obj as MaintenanceRun);
        runs.set(obj as MaintenanceRun);
        return Promise.resolve(true);
      },
    },
    writer,
  });
  const reconcile = () =>
    reconciler.reconcile(testContext(), { cluster: "service", namespace: "", name: "t" });
  return { runs, created, writer, reconcile };
}

const cluster = (namespace: string, name: string, labels: Record<string, string>): HcpCluster =>
  ({ metadata: { namespace, name, uid: `${namespace}-${name}`, labels }, spec: {} }) as unknown as HcpCluster;

const task = (clusters: MaintenanceTask["spec"]["clusters"]): MaintenanceTask => ({
  metadata: { name: "t", uid: "task-uid", generation: 1 },
  spec: { task: "RotateServiceAccountSigningKey", clusters, urgency: "Urgent" },
});

describe("the task controller", () => {
  it("makes one run per cluster the selector matches, in every namespace, once", async () => {
    const w = world(task({ selector: { matchLabels: { fleet: "canary" } } }), [
      cluster("a", "one", { fleet: "canary" }),
      cluster("b", "two", { fleet: "canary" }),
      cluster("b", "three", { fleet: "other" }),
    ]);
    await w.reconcile();
    await w.reconcile();
    expect(w.created.map((r) => `${r.metadata.namespace}/${r.metadata.name}`)).toEqual([
      "a/t-one",
      "b/t-two",
    ]);
    expect(w.created[0]?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "MaintenanceTask", name: "t", uid: "task-uid" }),
    ]);
    expect(w.created[0]?.spec).toMatchObject({ task: "t", clusterRef: { name: "one" }, urgency: "Urgent" });
    const status = w.writer.lastStatus<MaintenanceTaskStatus>();
    expect(status?.clusters).toBe(2);
    expect(status?.runs).toEqual({ Pending: 2 });
    expect(status?.conditions?.find((c) => c.type === "Accepted")).toMatchObject({ status: "True" });
  });

  it("says when the names match no cluster, naming spec.clusters", async () => {
    const w = world(task({ names: ["a/gone"] }), [cluster("a", "one", {})]);
    await w.reconcile();
    expect(w.created).toEqual([]);
    const accepted = w.writer
      .lastStatus<MaintenanceTaskStatus>()
      ?.conditions?.find((c) => c.type === "Accepted");
    expect(accepted).toMatchObject({ status: "False", reason: "NoClustersMatch" });
    expect(accepted?.message).toContain("spec.clusters.names");
  });

  it("is Complete once every run finished", async () => {
    const w = world(task({ names: ["a/one"] }), [cluster("a", "one", {})]);
    await w.reconcile();
    const run = w.runs.list()[0]!;
    w.runs.set({ ...run, status: { phase: "Succeeded" } });
    await w.reconcile();
    const complete = w.writer
      .lastStatus<MaintenanceTaskStatus>()
      ?.conditions?.find((c) => c.type === "Complete");
    expect(complete).toMatchObject({ status: "True", message: "1 Succeeded" });
  });
});

describe("a paused or cancelled task", () => {
  const condition = (w: ReturnType<typeof world>, type: string) =>
    w.writer.lastStatus<MaintenanceTaskStatus>()?.conditions?.find((c) => c.type === type);

  it("shows Paused while spec.paused, counting the Running runs that finish their step", async () => {
    const paused = {
      ...task({ names: ["a/one"] }),
      spec: { ...task({ names: ["a/one"] }).spec, paused: true },
    };
    const w = world(paused, [cluster("a", "one", {})]);
    await w.reconcile();
    expect(condition(w, "Paused")).toMatchObject({ status: "True", reason: "Paused" });
    const run = w.runs.list()[0]!;
    w.runs.set({ ...run, status: { phase: "Running" } });
    await w.reconcile();
    expect(condition(w, "Paused")?.message).toContain("1 Running run(s) finish the step they are on");
  });

  it("is not Paused without spec.paused", async () => {
    const w = world(task({ names: ["a/one"] }), [cluster("a", "one", {})]);
    await w.reconcile();
    expect(condition(w, "Paused")).toMatchObject({ status: "False", reason: "NotPaused" });
  });

  it("makes no run for a cluster once cancelled", async () => {
    const base = task({ names: ["a/one"] });
    const w = world({ ...base, spec: { ...base.spec, cancelled: true } }, [cluster("a", "one", {})]);
    await w.reconcile();
    expect(w.created).toEqual([]);
  });
});

describe("run names", () => {
  it("are task-cluster, or a cut with a hash of both when too long, the same every time", () => {
    expect(runName("rotate", "one")).toBe("rotate-one");
    const long = runName("t".repeat(200), "c".repeat(63));
    expect(long).toHaveLength(253);
    expect(long).toBe(runName("t".repeat(200), "c".repeat(63)));
    expect(long).not.toBe(runName("t".repeat(200), "d".repeat(63)));
    expect(long).toMatch(/-[0-9a-f]{16}$/);
  });
});
