/**
 * MaintenanceTask and MaintenanceRun against the service cluster's real kube-apiserver: the CRDs
 * refuse an unknown task, a task naming its clusters both ways or neither, an empty selector,
 * notAfter before notBefore and a changed spec, each naming the field; an UpgradeControlPlane
 * without spec.release (or another task with one), and cancelled going back to false; the task
 * controller makes one run per matching cluster, owned by the task, pausing the task holds its
 * runs and cancelling it ends them, and the garbage collector removes the runs with the task (the
 * actuator lets go of each); the upgrade's spec.version.id write is refused once the cluster changed.
 */
import { load } from "js-yaml";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HcpClusterResource,
  MAINTENANCE_LABELS,
  MAINTENANCE_VERSION_ANNOTATIONS,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
  type MaintenanceTaskSpec,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { MaintenanceController } from "../../operators/maintenance/controller.ts";
import type { TaskRegistry } from "../../operators/maintenance/step.ts";
import { controlPlaneUpgrades } from "../../operators/maintenance/upgrade-task.ts";
import { unavailableCatalog } from "../../operators/releases/catalog.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { KubeApiError } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { FakeLister } from "../support/lister.ts";
import { clusterInfo } from "../support/region.ts";

const client = clientFor("service");
const sampleText = await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8");
const suffix = `${process.pid}-${Date.now().toString(36)}`;
const tasks: string[] = [];
let ns: { name: string; remove(): Promise<void> };
let counter = 0;

beforeAll(async () => {
  ns = await tempNamespace(client, "mt");
});
afterAll(async () => {
  for (const name of tasks) await client.delete(MaintenanceTaskResource, { name });
  const left = await client.list<HcpCluster>(HcpClusterResource, { namespace: ns.name });
  for (const c of left.items)
    await client.delete(HcpClusterResource, { name: c.metadata.name ?? "", namespace: ns.name });
  await ns.remove();
});

function task(spec: Partial<MaintenanceTaskSpec> & Record<string, unknown>): MaintenanceTask {
  const name = `mt-${suffix}-${counter++}`;
  tasks.push(name);
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "MaintenanceTask",
    metadata: { name },
    spec: { task: "RotateServiceAccountSigningKey", clusters: { names: [`${ns.name}/a`] }, ...spec },
  };
}

async function refusal(obj: MaintenanceTask): Promise<string> {
  const err = await client.create(MaintenanceTaskResource, obj).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the apiserver accepted the task").toBeInstanceOf(KubeApiError);
  expect((err as KubeApiError).code).toBe(422);
  return (err as KubeApiError).message;
}

describe("MaintenanceTask validation", () => {
  it("takes a task by names and defaults urgency and concurrency", async () => {
    const created = await client.create(MaintenanceTaskResource, task({}));
    expect(created.spec.urgency).toBe("Normal");
    expect(created.spec.maxConcurrentPerManagementCluster).toBe(1);
  });

  it("refuses a task type this version does not know, naming spec.task", async () => {
    const message = await refusal(task({ task: "ReticulateSplines" as never }));
    expect(message).toContain("spec.task");
    expect(message).toContain("RotateServiceAccountSigningKey");
  });

  it("refuses both selector and names, neither, and an empty selector or list", async () => {
    const both = { selector: { matchLabels: { fleet: "a" } }, names: [`${ns.name}/a`] };
    expect(await refusal(task({ clusters: both }))).toContain(
      "spec.clusters must set exactly one of selector and names",
    );
    expect(await refusal(task({ clusters: {} }))).toContain(
      "spec.clusters must set exactly one of selector and names",
    );
    expect(await refusal(task({ clusters: { selector: {} } }))).toContain(
      "spec.clusters.selector must have matchLabels or matchExpressions",
    );
    expect(await refusal(task({ clusters: { names: [] } }))).toContain("spec.clusters.names");
    expect(await refusal(task({ clusters: { names: ["no-namespace"] } }))).toContain("spec.clusters.names");
  });

  it("refuses notAfter before notBefore, and concurrency out of bounds", async () => {
    const message = await refusal(
      task({ notBefore: "2026-07-01T00:00:00Z", notAfter: "2026-06-01T00:00:00Z" }),
    );
    expect(message).toContain("spec.notAfter must be after spec.notBefore");
    expect(await refusal(task({ maxConcurrentPerManagementCluster: 0 }))).toContain(
      "spec.maxConcurrentPerManagementCluster",
    );
  });

  it("refuses a changed spec", async () => {
    const created = await client.create(MaintenanceTaskResource, task({}));
    const err = await client
      .mergePatch(
        MaintenanceTaskResource,
        { name: created.metadata.name ?? "" },
        { spec: { urgency: "Urgent" } },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).message).toContain("spec.urgency is immutable");
  });
});

describe("UpgradeControlPlane, paused and cancelled", () => {
  const upgrade = (extra: Record<string, unknown> = {}): MaintenanceTask =>
    task({ task: "UpgradeControlPlane", release: { version: "4.19.10" }, ...extra });
  const patchRefusal = async (name: string, spec: Record<string, unknown>): Promise<string> => {
    const err = await client.mergePatch(MaintenanceTaskResource, { name }, { spec }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, "the apiserver accepted the change").toBeInstanceOf(KubeApiError);
    return (err as KubeApiError).message;
  };

  it("takes an upgrade with a release, and refuses one without, naming spec.release", async () => {
    const created = await client.create(MaintenanceTaskResource, upgrade());
    expect(created.spec.release).toEqual({ version: "4.19.10" });
    expect(await refusal(task({ task: "UpgradeControlPlane" }))).toContain(
      "spec.release is required when spec.task is UpgradeControlPlane",
    );
  });

  it("refuses a release on another task, and a release that is not major.minor.patch", async () => {
    expect(await refusal(task({ release: { version: "4.19.10" } }))).toContain(
      "spec.release is only for spec.task UpgradeControlPlane",
    );
    for (const version of ["4.19", "latest", "4.19.10.1"])
      expect(await refusal(upgrade({ release: { version } }))).toContain(
        "spec.release.version must be a major.minor.patch release",
      );
  });

  it("lets paused go both ways and cancelled only to true, keeping every other field", async () => {
    const name = (await client.create(MaintenanceTaskResource, upgrade())).metadata.name ?? "";
    const set = (spec: Record<string, unknown>) =>
      client.mergePatch<MaintenanceTask>(MaintenanceTaskResource, { name }, { spec });
    expect((await set({ paused: true })).spec.paused).toBe(true);
    expect((await set({ paused: false })).spec.paused).toBe(false);
    expect((await set({ cancelled: true })).spec.cancelled).toBe(true);
    expect(await patchRefusal(name, { cancelled: false })).toContain(
      "spec.cancelled cannot go back to false",
    );
    expect(await patchRefusal(name, { cancelled: null })).toContain("spec.cancelled cannot go back to false");
    expect(await patchRefusal(name, { release: { version: "4.19.11" } })).toContain(
      "spec.release is immutable",
    );
    expect(await patchRefusal(name, { notBefore: "2026-07-01T00:00:00Z" })).toContain(
      "spec.notBefore is immutable",
    );
    expect(await patchRefusal(name, { clusters: { names: [`${ns.name}/b`] } })).toContain(
      "spec.clusters is immutable",
    );
  });
});

describe("the task controller", () => {
  it("makes one run per matching cluster, owned by the task, and the runs go with the task", async () => {
    for (const [name, fleet] of [
      ["a", "canary"],
      ["b", "canary"],
      ["c", "other"],
    ] as const) {
      const c = load(sampleText) as HcpCluster;
      c.metadata = { name, namespace: ns.name, labels: { fleet } };
      c.spec.dns.baseDomainPrefix = `mt${name}${counter}`;
      await client.create(HcpClusterResource, c);
    }
    // A task definition that never finishes: the runs stay for the test to look at.
    const registry: TaskRegistry = new Map([
      [
        "RotateServiceAccountSigningKey",
        {
          steps: [
            {
              name: "Hold",
              execute: () =>
                Promise.resolve({ kind: "waiting", message: "held by the test", requeueMs: 60_000 }),
            },
          ],
        },
      ],
    ]);
    const clusters = new ClusterRegistry();
    const service = clusters.add("service", { path: clusterInfo("service").kubeconfigPath });
    const controller = new MaintenanceController({ cluster: service, tasks: registry });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    try {
      const none = await client.create(
        MaintenanceTaskResource,
        task({ clusters: { selector: { matchLabels: { fleet: `none-${suffix}` } } } }),
      );
      const created = await client.create(
        MaintenanceTaskResource,
        task({ clusters: { selector: { matchLabels: { fleet: "canary" } } } }),
      );
      const taskName = created.metadata.name ?? "";
      const runsOf = async (): Promise<MaintenanceRun[]> =>
        (await client.list<MaintenanceRun>(MaintenanceRunResource, { namespace: ns.name })).items.filter(
          (r) => r.spec.task === taskName,
        );
      await eventually("a run on each canary cluster", async () => (await runsOf()).length === 2);
      const runs = await runsOf();
      expect(runs.map((r) => r.spec.clusterRef.name).sort()).toEqual(["a", "b"]);
      for (const r of runs) {
        expect(r.metadata.ownerReferences).toEqual([
          expect.objectContaining({ kind: "MaintenanceTask", name: taskName, uid: created.metadata.uid }),
        ]);
        expect(r.metadata.labels?.[MAINTENANCE_LABELS.task]).toBe(taskName);
        expect(r.metadata.name).toBe(`${taskName}-${r.spec.clusterRef.name}`);
      }
      // The sample clusters are never placed: the runs wait and say so.
      await eventually("the runs to wait for placement", async () =>
        (await runsOf()).every((r) =>
          r.status?.conditions?.some((c) => c.type === "Progressing" && c.reason === "NotPlaced"),
        ),
      );
      await eventually("the task to count its runs", async () => {
        const t = await client.get<MaintenanceTask>(MaintenanceTaskResource, taskName);
        return t.status?.clusters === 2 && t.status.runs?.Waiting === 2;
      });
      await eventually("the task matching nothing to say so", async () => {
        const t = await client.get<MaintenanceTask>(MaintenanceTaskResource, none.metadata.name ?? "");
        const accepted = t.status?.conditions?.find((c) => c.type === "Accepted");
        return accepted?.reason === "NoClustersMatch" && accepted.message.includes("spec.clusters.selector");
      });

      // Paused: the waiting runs say so, and so does the task; cancelled: they end.
      await client.mergePatch(MaintenanceTaskResource, { name: taskName }, { spec: { paused: true } });
      await eventually("the runs to wait for the paused task", async () =>
        (await runsOf()).every((r) =>
          r.status?.conditions?.some((c) => c.type === "Progressing" && c.reason === "TaskPaused"),
        ),
      );
      await eventually("the task to show Paused", async () => {
        const t = await client.get<MaintenanceTask>(MaintenanceTaskResource, taskName);
        return t.status?.conditions?.some((c) => c.type === "Paused" && c.status === "True") ?? false;
      });
      await client.mergePatch(MaintenanceTaskResource, { name: taskName }, { spec: { cancelled: true } });
      await eventually("the cancelled task's runs to be Cancelled", async () =>
        (await runsOf()).every((r) => r.status?.phase === "Cancelled"),
      );

      await client.delete(MaintenanceTaskResource, { name: taskName });
      await eventually(
        "the garbage collector to remove the task's runs",
        async () => (await runsOf()).length === 0,
        60_000,
      );
    } finally {
      stop.abort();
      await running.catch(() => undefined);
      clusters.stopAll();
    }
  }, 120_000);
});

describe("UpgradeControlPlane's write to the cluster", () => {
  it("raises spec.version.id with the annotations, and writes nothing once the cluster changed", async () => {
    const c = load(sampleText) as HcpCluster;
    c.metadata = { name: "upgrade", namespace: ns.name };
    c.spec.version.id = "4.19.7";
    c.spec.dns.baseDomainPrefix = `mtup${counter++}`;
    const created = await client.create(HcpClusterResource, c);
    const ops = controlPlaneUpgrades({
      client,
      catalog: () => unavailableCatalog("not read here"),
      nodePools: new FakeLister<NodePool>(),
    });
    const signal = new AbortController().signal;
    // Someone else writes the cluster first: the read the step made is stale.
    await client.mergePatch(
      HcpClusterResource,
      { name: "upgrade", namespace: ns.name },
      { metadata: { labels: { touched: "yes" } } },
    );
    expect(await ops.askForVersion(created, "4.19.10", `${ns.name}/run`, signal)).toBe("changed");
    const fresh = await client.get<HcpCluster>(HcpClusterResource, "upgrade", ns.name);
    expect(fresh.spec.version.id).toBe("4.19.7");

    expect(await ops.askForVersion(fresh, "4.19.10", `${ns.name}/run`, signal)).toBe("asked");
    const raised = await client.get<HcpCluster>(HcpClusterResource, "upgrade", ns.name);
    expect(raised.spec.version.id).toBe("4.19.10");
    expect(raised.metadata.annotations).toMatchObject({
      [MAINTENANCE_VERSION_ANNOTATIONS.askedBy]: `${ns.name}/run`,
      [MAINTENANCE_VERSION_ANNOTATIONS.replaced]: "4.19.7",
    });
  });
});
