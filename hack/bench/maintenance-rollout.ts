/**
 * The maintenance scenario's second part: a Rollout over N placed HcpClusters (default 1,000) on a
 * real kube-apiserver and etcd, with the real maintenance and rollout controllers in this process
 * (the lifecycle's full region would spend the budget making 1,000 clusters through ARM, Maestro
 * and the stand-in HyperShift, none of which a rollout touches). The task is a test definition of
 * RotateServiceAccountSigningKey with one step that is done at once: the real rotation needs the
 * cluster controller and a HostedCluster per cluster, so the figures are the controllers' own
 * cost (tasks, runs, admission, statuses, events), not a rotation's.
 *
 * Windows admit about half the clusters now: the first 2^k − 1 in the rollout's order (exactly
 * waves 1..k with the default canary 1 and growth 2) have a window open now in their own time
 * zone, the rest one that opens hours later. Measured from the Rollout's create until waves 1..k
 * have Succeeded and every run of wave k+1 waits for its window.
 */
import { load } from "js-yaml";
import { readFile } from "node:fs/promises";
import { NamespaceResource } from "../../operators/api/core.ts";
import {
  HcpClusterResource,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  RolloutResource,
  type HcpCluster,
  type MaintenanceSpec,
  type Rollout,
} from "../../operators/api/v1alpha1/index.ts";
import { MaintenanceController } from "../../operators/maintenance/controller.ts";
import type { TaskRegistry } from "../../operators/maintenance/step.ts";
import { RolloutController } from "../../operators/rollout/controller.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { eventType } from "../../operators/runtime/events.ts";
import { KubeClient, type ResourceType } from "../../operators/runtime/kube.ts";
import { loadClusterAccess } from "../../operators/runtime/kubeconfig.ts";
import { startRegion } from "../harness/region.ts";
import { difference, requestCounts, writes } from "./apiserver-metrics.ts";
import { compare, type Figure, type ScenarioResult } from "./types.ts";
import { cpuByProcess, cpuWindow } from "./usage.ts";
import { inParallel } from "./write-cost.ts";

const NAMESPACE = "bench-rollout";
const ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Tokyo"];
const MANAGEMENT_CLUSTERS = 20;
const ROLLOUT = "bench-rotate";

const hh = (h: number): string => `${String(((h % 24) + 24) % 24).padStart(2, "0")}:00`;

/** The hour now in a time zone. */
function localHour(zone: string, now: Date): number {
  return Number(
    new Intl.DateTimeFormat("en-US", { timeZone: zone, hour: "numeric", hourCycle: "h23" }).format(now),
  );
}

/** Every day, open now (from the last hour for four) or opening five hours from now. */
export function windowFor(zone: string, openNow: boolean, now: Date): MaintenanceSpec {
  const h = localHour(zone, now);
  const start = openNow ? h - 1 : h + 5;
  const days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const;
  return { timeZone: zone, windows: [{ days: [...days], start: hh(start), end: hh(start + 4) }] };
}

/** How many clusters the open waves hold: 2^k − 1, about half of n. */
export function openClusters(n: number): number {
  return 2 ** Math.round(Math.log2(n / 2 + 1)) - 1;
}

const registry: TaskRegistry = new Map([
  [
    "RotateServiceAccountSigningKey",
    {
      steps: [
        { name: "Rotate", execute: () => Promise.resolve({ kind: "done", message: "rotated (bench step)" }) },
      ],
    },
  ],
]);

/** Resolves once `done` holds for the rollout as this process's cache shows it (checked on every change). */
function rolloutWhere(
  informer: ReturnType<ClusterRegistry["get"]>,
  done: (r: Rollout) => boolean,
): Promise<Rollout> {
  const rollouts = informer.informer<Rollout>(RolloutResource);
  return new Promise((resolve) => {
    const check = (r: Rollout): void => {
      if (r.metadata.name === ROLLOUT && done(r)) resolve(r);
    };
    rollouts.addEventHandler({ onAdd: check, onUpdate: (_old, r) => check(r) });
  });
}

async function storedBytes(client: KubeClient, type: ResourceType, namespace?: string): Promise<number> {
  const list = await client.listAll(type, namespace === undefined ? {} : { namespace });
  return list.items.reduce((sum, o) => sum + JSON.stringify(o).length, 0);
}

export async function rolloutFigures(n: number): Promise<ScenarioResult> {
  const region = await startRegion({ managementClusters: 0, broker: false });
  const registryOfClusters = new ClusterRegistry();
  const stop = new AbortController();
  try {
    const kubeconfig = region.clusters.find((c) => c.role === "service")!.kubeconfigPath;
    const client = new KubeClient("service", loadClusterAccess({ path: kubeconfig }));
    const sample = load(
      await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8"),
    ) as HcpCluster;
    await client.create(NamespaceResource, { metadata: { name: NAMESPACE } });
    const open = openClusters(n);
    const now = new Date();
    const made = performance.now();
    await inParallel(n, 8, async (i) => {
      const name = `c${String(i).padStart(4, "0")}`;
      const zone = ZONES[i % ZONES.length]!;
      await client.create<HcpCluster>(HcpClusterResource, {
        ...sample,
        metadata: { name, namespace: NAMESPACE, labels: { fleet: "bench" } },
        spec: {
          ...sample.spec,
          dns: { baseDomainPrefix: name },
          maintenance: windowFor(zone, i < open, now),
        },
      });
      await client.mergePatch(
        HcpClusterResource,
        { name, namespace: NAMESPACE },
        { status: { managementCluster: `mgmt-${(i % MANAGEMENT_CLUSTERS) + 1}` } },
        "status",
      );
    });
    const setupSeconds = (performance.now() - made) / 1000;

    const service = registryOfClusters.add("service", { path: kubeconfig });
    const running = Promise.all([
      new MaintenanceController({ cluster: service, tasks: registry }).start(stop.signal),
      new RolloutController({ cluster: service }).start(stop.signal),
    ]);
    await Promise.all(
      [HcpClusterResource, MaintenanceRunResource, MaintenanceTaskResource, RolloutResource].map((t) =>
        service.informer(t).waitForSync(stop.signal),
      ),
    );
    const openWaves = Math.log2(open + 1);
    const settled = rolloutWhere(service, (r) => {
      const waves = r.status?.waves ?? [];
      const last = waves[openWaves];
      return (
        waves.slice(0, openWaves).filter((w) => w.state === "Succeeded").length === openWaves &&
        last !== undefined &&
        (last.runs?.Waiting ?? 0) === last.clusters
      );
    });
    const requestsBefore = await requestCounts(client);
    const cpuBefore = await cpuByProcess(region.workDir, []);
    const started = performance.now();
    await client.create<Rollout>(RolloutResource, {
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "Rollout",
      metadata: { name: ROLLOUT },
      spec: {
        task: "RotateServiceAccountSigningKey",
        clusters: { selector: { matchLabels: { fleet: "bench" } } },
      },
    });
    const final = await settled;
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuWindow(cpuBefore, await cpuByProcess(region.workDir, []));
    const requests = difference(await requestCounts(client), requestsBefore);
    const written = writes(requests);
    const bytes = {
      runs: await storedBytes(client, MaintenanceRunResource, NAMESPACE),
      tasks: await storedBytes(client, MaintenanceTaskResource),
      rollout: await storedBytes(client, RolloutResource),
      events:
        (await storedBytes(client, eventType, NAMESPACE)) + (await storedBytes(client, eventType, "default")),
    };
    stop.abort();
    await running.catch(() => undefined);

    const inProcess = cpu["bench (watches, floor client)"] ?? 0;
    const apiserver = Object.entries(cpu)
      .filter(([k]) => k.startsWith("kube-apiserver"))
      .reduce((s, [, v]) => s + v, 0);
    const etcd = cpu["etcd"] ?? 0;
    const waiting = n - open;
    // The least any design writes: each run made, and each visible phase change written once
    // (Running and Succeeded for a run that ran, Waiting for one that waits).
    const floorWrites = open * 3 + waiting * 2;
    const perCluster = (x: number): number => Math.round((x / n) * 100) / 100;
    const figures: Figure[] = [
      {
        name: `rollout: ${openWaves} waves, ${open} clusters done`,
        value: Math.round(seconds * 10) / 10,
        unit: "s",
        detail: `${n} clusters on ${MANAGEMENT_CLUSTERS} management clusters, 1 run at a time on each; ${waiting} wait in wave ${openWaves + 1} (${final.status?.waves?.length ?? 0} waves made); setup ${Math.round(setupSeconds)} s`,
      },
      {
        name: "rollout: apiserver writes per cluster",
        value: perCluster(written),
        unit: "writes",
        detail: [...requests]
          .filter(([k]) => !k.startsWith("GET") && !k.startsWith("LIST"))
          .map(([k, v]) => `${k} ${v}`)
          .join(", "),
      },
      {
        name: "rollout: controllers' CPU per cluster",
        value: Math.round((inProcess / n) * 1000 * 10) / 10,
        unit: "ms",
        detail: `${inProcess} s in the maintenance + rollout controllers' process`,
      },
      {
        name: "rollout: apiserver + etcd CPU per cluster",
        value: Math.round(((apiserver + etcd) / n) * 1000 * 10) / 10,
        unit: "ms",
        detail: `apiserver ${Math.round(apiserver * 10) / 10} s, etcd ${etcd} s`,
      },
      {
        name: "rollout: state per cluster",
        value: Math.round((bytes.runs + bytes.tasks + bytes.rollout) / n),
        unit: "bytes",
        detail: `runs ${bytes.runs}, wave tasks ${bytes.tasks}, rollout ${bytes.rollout} (JSON as stored); events ${Math.round(bytes.events / n)} bytes per cluster more, until their TTL`,
      },
    ];
    return {
      figures,
      comparisons: [
        compare({
          name: "rollout writes vs floor",
          unit: "writes",
          ours: written,
          against: "a create and one write per visible phase",
          peer: floorWrites,
        }),
      ],
      report: {
        n,
        open,
        seconds,
        setupSeconds,
        requests: Object.fromEntries(requests),
        cpu,
        bytes,
        waves: final.status?.waves,
      },
    };
  } finally {
    stop.abort();
    registryOfClusters.stopAll();
    await region.stop();
  }
}
