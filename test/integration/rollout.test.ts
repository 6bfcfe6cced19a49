/**
 * A fleet rollout end to end on the service cluster's real kube-apiserver, with the real
 * maintenance controller running the waves' runs and the rollout controller: 20 placed clusters,
 * a failure on one cluster of the second wave pauses the rollout (FailureBudgetExceeded, naming
 * the cluster) with no task and no run made for any later cluster; proceedPastWave accepts the
 * failure and the rollout finishes; abort cancels a wave's runs that were waiting; a selector that
 * matches nothing is reported on Accepted, naming spec.clusters.selector.
 *
 * The one stand-in is the UpgradeControlPlane definition given to the maintenance controller: the
 * real steps drive a HostedCluster through the cluster controller, Maestro and HyperShift, none of
 * which this test is about, and a real upgrade cannot be made to fail on exactly one chosen
 * cluster. The test definition has one step that fails terminally on that cluster and succeeds
 * on every other; everything the rollout is judged on (tasks, runs, admission, statuses) is real.
 */
import { load } from "js-yaml";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HcpClusterResource,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  ROLLOUT_LABELS,
  RolloutResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
  type Rollout,
  type RolloutSpec,
} from "../../operators/api/v1alpha1/index.ts";
import { MaintenanceController } from "../../operators/maintenance/controller.ts";
import type { TaskRegistry } from "../../operators/maintenance/step.ts";
import { RolloutController } from "../../operators/rollout/controller.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { eventType } from "../../operators/runtime/events.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { clusterInfo } from "../support/region.ts";

const client = clientFor("service");
const sampleText = await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8");
const suffix = `${process.pid}-${Date.now().toString(36)}`;
const FAILING = "c02";
/** The clusters the test step ran on, in order. */
const executed: string[] = [];

const registry: TaskRegistry = new Map([
  [
    "UpgradeControlPlane",
    {
      steps: [
        {
          name: "Upgrade",
          execute: ({ run }) => {
            const cluster = run.spec.clusterRef.name;
            executed.push(cluster);
            return Promise.resolve(
              cluster === FAILING
                ? { kind: "terminal", message: "the test's upgrade fails on this cluster" }
                : { kind: "done", message: `upgraded to ${run.spec.release?.version ?? "?"}` },
            );
          },
        },
      ],
    },
  ],
]);

let ns: { name: string; remove(): Promise<void> };
const clusters = new ClusterRegistry();
const stop = new AbortController();
const rollouts: string[] = [];
let running: Promise<unknown> | undefined;

async function makeCluster(name: string, fleet: string, managementCluster?: string): Promise<void> {
  const c = load(sampleText) as HcpCluster;
  c.metadata = { name, namespace: ns.name, labels: { fleet } };
  c.spec.dns.baseDomainPrefix = `ro${name}${process.pid % 10000}`;
  await client.create(HcpClusterResource, c);
  if (managementCluster)
    await client.mergePatch(
      HcpClusterResource,
      { name, namespace: ns.name },
      { status: { managementCluster } },
      "status",
    );
}

async function makeRollout(
  name: string,
  spec: Partial<RolloutSpec> & Pick<RolloutSpec, "clusters">,
): Promise<void> {
  rollouts.push(name);
  await client.create(RolloutResource, {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "Rollout",
    metadata: { name },
    spec: { release: { version: "4.19.10" }, ...spec },
  } satisfies Rollout);
}

const getRollout = (name: string): Promise<Rollout> => client.get<Rollout>(RolloutResource, name);
const runsIn = async (): Promise<MaintenanceRun[]> =>
  (await client.list<MaintenanceRun>(MaintenanceRunResource, { namespace: ns.name })).items;
const tasksOf = async (rollout: string): Promise<MaintenanceTask[]> =>
  (
    await client.list<MaintenanceTask>(MaintenanceTaskResource, {
      labelSelector: `${ROLLOUT_LABELS.rollout}=${rollout}`,
    })
  ).items;

async function eventReasons(rollout: string): Promise<string[]> {
  const events = await client.list<KubeObject & { reason?: string }>(eventType, {
    namespace: "default",
    fieldSelector: `involvedObject.name=${rollout}`,
  });
  return events.items.map((e) => e.reason ?? "");
}

beforeAll(async () => {
  ns = await tempNamespace(client, "ro");
  for (let i = 0; i < 20; i++)
    await makeCluster(`c${String(i).padStart(2, "0")}`, `fleet-${suffix}`, i % 2 === 0 ? "mgmt-1" : "mgmt-2");
  const service = clusters.add("service", { path: clusterInfo("service").kubeconfigPath });
  running = Promise.all([
    new MaintenanceController({ cluster: service, tasks: registry }).start(stop.signal),
    new RolloutController({ cluster: service }).start(stop.signal),
  ]);
});

afterAll(async () => {
  // Deleted while the controllers run: the rollout's finalizer is let go, the runs' too.
  for (const name of rollouts) await client.delete(RolloutResource, { name });
  await eventually("the rollouts to be gone", async () =>
    (await Promise.all(rollouts.map((n) => client.find(RolloutResource, n)))).every((r) => !r),
  );
  await eventually(
    "the garbage collector to remove the waves' runs",
    async () => (await runsIn()).length === 0,
    60_000,
  );
  stop.abort();
  await running?.catch(() => undefined);
  clusters.stopAll();
  const left = await client.list<HcpCluster>(HcpClusterResource, { namespace: ns.name });
  for (const c of left.items)
    await client.delete(HcpClusterResource, { name: c.metadata.name ?? "", namespace: ns.name });
  await ns.remove();
});

describe("a rollout over 20 clusters", () => {
  const name = `ro-${suffix}`;

  it("pauses when a cluster of the second wave fails, the rest untouched", async () => {
    // One at a time per management cluster (the default): waves 3 to 5 queue on each. A run refused
    // admission looks again only after 30 s; the run that finishes wakes the next in line, which
    // is what lets these waves finish within the waits below.
    await makeRollout(name, {
      clusters: { selector: { matchLabels: { fleet: `fleet-${suffix}` } } },
    });
    await eventually(
      "the rollout to pause itself",
      async () => (await getRollout(name)).status?.phase === "Paused",
      60_000,
    );
    const status = (await getRollout(name)).status;
    const paused = status?.conditions?.find((c) => c.type === "Paused");
    expect(paused).toMatchObject({ status: "True", reason: "FailureBudgetExceeded" });
    expect(paused?.message).toContain("Wave 2");
    expect(paused?.message).toContain(`${ns.name}/${FAILING}`);
    expect(status?.waves).toEqual([
      expect.objectContaining({ index: 1, clusters: 1, state: "Succeeded", runs: { Succeeded: 1 } }),
      expect.objectContaining({
        index: 2,
        clusters: 2,
        state: "FailureBudgetExceeded",
        failedClusters: [`${ns.name}/${FAILING}`],
      }),
    ]);
    // Wave 2 settles: its other run finished, or held because the rollout paused the wave's task.
    await eventually("wave 2's runs to settle", async () =>
      (await runsIn())
        .filter((r) => r.spec.task === `${name}-wave-2`)
        .every(
          (r) =>
            ["Succeeded", "Failed"].includes(r.status?.phase ?? "") ||
            r.status?.conditions?.some((c) => c.type === "Progressing" && c.reason === "TaskPaused"),
        ),
    );
    expect((await getRollout(name)).status?.phase).toBe("Paused");
    // The rest untouched: no third wave's task, no run on any later cluster, no step run there.
    expect((await tasksOf(name)).map((t) => t.metadata.name).sort()).toEqual([
      `${name}-wave-1`,
      `${name}-wave-2`,
    ]);
    expect((await runsIn()).map((r) => r.spec.clusterRef.name).sort()).toEqual(["c00", "c01", "c02"]);
    expect([...new Set(executed)].sort()).toEqual(["c00", "c01", "c02"]);
    await eventually("the Paused event", async () => (await eventReasons(name)).includes("Paused"));
    expect((await eventReasons(name)).filter((r) => r === "WaveStarted")).toHaveLength(2);
  });

  it("goes on once proceedPastWave accepts the second wave's failure, and finishes", async () => {
    await client.mergePatch(RolloutResource, { name }, { spec: { proceedPastWave: 2 } });
    await eventually(
      "the rollout to succeed",
      async () => (await getRollout(name)).status?.phase === "Succeeded",
      // Under the 30 s admission retry: the queued runs must be woken by the runs that finish.
      25_000,
    );
    const status = (await getRollout(name)).status;
    expect(status?.waves?.map((w) => [w.index, w.clusters, w.state])).toEqual([
      [1, 1, "Succeeded"],
      [2, 2, "FailuresAccepted"],
      [3, 4, "Succeeded"],
      [4, 8, "Succeeded"],
      [5, 5, "Succeeded"],
    ]);
    const runs = await runsIn();
    expect(new Set(runs.map((r) => r.spec.clusterRef.name)).size).toBe(20);
    expect(runs.filter((r) => r.status?.phase === "Failed").map((r) => r.spec.clusterRef.name)).toEqual([
      FAILING,
    ]);
    await eventually("the Resumed and Succeeded events", async () => {
      const reasons = await eventReasons(name);
      return reasons.includes("Resumed") && reasons.includes("Succeeded");
    });
  }, 180_000);
});

describe("abort", () => {
  it("cancels the wave's runs that were waiting and starts no other wave", async () => {
    const fleet = `abort-${suffix}`;
    // Not placed: their runs wait (NotPlaced) until the abort.
    for (const n of ["u0", "u1", "u2", "u3"]) await makeCluster(n, fleet);
    const name = `ab-${suffix}`;
    await makeRollout(name, { clusters: { selector: { matchLabels: { fleet } } }, waves: { canary: 3 } });
    const waveRuns = async (): Promise<MaintenanceRun[]> =>
      (await runsIn()).filter((r) => r.spec.task === `${name}-wave-1`);
    await eventually("the canary's three runs to wait", async () => {
      const runs = await waveRuns();
      return runs.length === 3 && runs.every((r) => r.status?.phase === "Waiting");
    });
    await client.mergePatch(RolloutResource, { name }, { spec: { abort: true } });
    await eventually("the waiting runs to be cancelled", async () =>
      (await waveRuns()).every((r) => r.status?.phase === "Cancelled"),
    );
    await eventually("the rollout to say Aborted", async () => {
      const status = (await getRollout(name)).status;
      return status?.phase === "Aborted" && status.waves?.[0]?.state === "Aborted";
    });
    expect((await tasksOf(name)).map((t) => t.metadata.name)).toEqual([`${name}-wave-1`]);
    expect((await runsIn()).some((r) => r.spec.clusterRef.name === "u3")).toBe(false);
  });
});

describe("a selector that matches nothing", () => {
  it("is reported on Accepted, naming spec.clusters.selector, and begins no wave", async () => {
    const name = `none-${suffix}`;
    await makeRollout(name, { clusters: { selector: { matchLabels: { fleet: `nowhere-${suffix}` } } } });
    await eventually("the rollout to say no cluster matches", async () => {
      const status = (await getRollout(name)).status;
      const accepted = status?.conditions?.find((c) => c.type === "Accepted");
      return (
        status?.phase === "Pending" &&
        accepted?.status === "False" &&
        accepted.reason === "NoClustersMatch" &&
        accepted.message.includes("spec.clusters.selector")
      );
    });
    expect(await tasksOf(name)).toEqual([]);
  });
});
