/**
 * Scenarios 1 and 4 of `npm run bench`: a region's lifecycle at scale, and a restart with it full.
 *
 * N HcpClusters with one NodePool each over M management clusters, every component a process of
 * its own (operators with maestro-server, one maestro-agent and one HyperShift simulator per
 * management cluster, the ARM emulator), simulator delay 0, no added ARM latency. Measured: time
 * to all Ready and to all deleted; requests per cluster by verb and resource from the apiservers'
 * own counters; peak RSS and CPU seconds per component; etcd's size at Ready before and after
 * compaction. Floor: the physical one (physical-floor.ts), the fewest writes the design needs per
 * cluster, copies of the run's own objects, by a raw client at the same concurrency against the
 * same apiservers; beside it the machine's calibration, as many writes as ours, each a small
 * ConfigMap's (the floor of runs before). Restart: the operators killed with N clusters Ready;
 * time until ready and until every cluster and pool was reconciled again, and the writes that
 * resync made (a no-op reconcile must write nothing); floor: a raw client listing every kind the
 * operators cache, as their informers do on a start. `--restore` (with `--no-delete`): after the
 * restart, the region loses its service cluster and is restored from a backup
 * (region-restore-step.ts), compared with the restart's resync.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { load } from "js-yaml";
import { NamespaceResource } from "../../operators/api/core.ts";
import {
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  ExternalAuthResource,
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  WORK_LABELS,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, summariseWorkSpec, type ManifestWork } from "../../operators/api/work/v1.ts";
import {
  HostedClusterResource,
  NodePoolResource as HyperShiftNodePoolResource,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { summariseManagedFields } from "../../operators/runtime/apply.ts";
import { configMapType } from "../../operators/releases/catalog.ts";
import { Informer } from "../../operators/runtime/informer.ts";
import { isApiError, KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { freePort, waitFor } from "../harness/ports.ts";
import { startRegion, type Region } from "../harness/region.ts";
import {
  compactAndDefrag,
  difference,
  etcdDbSize,
  merge,
  requestCountsIn,
  storedWritesIn,
  totalsBy,
  unstoredWrites,
  writes,
  type RequestCounts,
  type StoredWrites,
} from "./apiserver-metrics.ts";
import {
  ensureParentZone,
  readyAt,
  repoScript,
  seedRegion,
  spawnAgent,
  spawnOperators,
  spawnSimulator,
  type ArmInfo,
} from "./components.ts";
import { restoreStep, type RestoreStepReport } from "./region-restore-step.ts";
import { scaleComparison } from "./lifecycle-scale.ts";
import { historyCounts, watchWriteHistory, type HistoryLine } from "./write-history.ts";
import { cpuByProcess, cpuWindow, currentRssMb } from "./usage.ts";
import { sampleUsage, spawnComponent, type Component, type ComponentUsage } from "./processes.ts";
import { compare, type Comparison, type Figure, type Scenario } from "./types.ts";
import { inParallel, writeCosts, type WriteCost, type WriteSample } from "./write-cost.ts";
import {
  PHYSICAL_WRITES,
  capturePhysicalSet,
  physicalFloorSwept,
  preparePhysicalFloor,
  replayPhysical,
  type PhysicalFloorRun,
} from "./physical-floor.ts";

const NAMESPACE = "hcp-system";

/** Progress on stderr, so a long run shows where it is. */
function progress(message: string): void {
  process.stderr.write(`[bench lifecycle] ${new Date().toISOString()} ${message}\n`);
}
const CLUSTERS_PER_NAMESPACE = 100;
const samples = new URL("../../config/samples/", import.meta.url);

export interface LifecycleOptions {
  /** Hosted clusters, each with one node pool. */
  n: number;
  managementClusters: number;
  /** Creates and deletes in flight at once, for the region and for the floor alike. */
  concurrency: number;
  /**
   * Clusters per Azure subscription, as customers bring their own: ARM's request limits (the
   * emulator keeps them) count per subscription, and a region's clusters are spread over many.
   */
  clustersPerSubscription: number;
  /** Also run the restart scenario while the region is full. */
  restart: boolean;
  /** After the restart, lose the service cluster and restore it from a backup (needs deletion off). */
  restore?: boolean;
  /** Delete the clusters and measure it (off: a run that stops at Ready and the restart). */
  deletion: boolean;
  /**
   * Delete only the first K clusters, the rest staying resident (`--delete-slice K`): the deletion
   * of a large region measured on a slice, its floors on K copies. Default: all of them.
   */
  deleteSlice?: number;
  /**
   * Replay the create's floors (physical and calibration) on K copies only, the region resident,
   * and scale their time and CPU by N/K (`--floor-slice K`): a floor is throughput at a fixed
   * concurrency, so linear in N, and K copies written beside N resident clusters cost what the
   * last K of a full replay would. What lets a run of 10,000 fit in a session. Default: N copies.
   */
  floorSlice?: number;
  /** A deadline for each phase; the bench fails rather than wait forever. */
  phaseTimeoutMs: number;
  /**
   * Profile the operators, agents and simulators for a minute of the create and of the deletion,
   * into `<logDir>/profiles/<component>/` (profile-on-signal.ts).
   */
  cpuProfile?: boolean;
  /**
   * Seconds to leave the region alone after Ready, counting the apiservers' requests: its load
   * at rest (0: skipped). Longer than the agents' 5-minute drift check to see all of its reads.
   */
  restSeconds?: number;
}

export interface LifecycleReport {
  n: number;
  managementClusters: number;
  concurrency: number;
  /** Copies the create's floors replayed (N unless `--floor-slice`); their figures are scaled to N. */
  floorCopies: number;
  createMs: number;
  /** The calibration: as many writes per cluster as ours, each a small ConfigMap's (the old floor). */
  createFloorMs: number;
  /**
   * The physical floor (physical-floor.ts): the fewest writes the design needs per cluster, copies
   * of the run's own objects, with the CPU each window took by process.
   */
  physicalFloor: {
    create: PhysicalFloorRun & { cpu: Record<string, number> };
    delete: PhysicalFloorRun & { cpu: Record<string, number> };
    writes: typeof PHYSICAL_WRITES;
  };
  /** Per cluster (with its pool), by "VERB resource". */
  createRequests: Record<string, number>;
  createWritesPerCluster: { service: number; management: number };
  /**
   * Per cluster, the management apiservers' requests during the create by "VERB resource": where
   * their CPU goes that is not writes (the agents' and simulators' reads).
   */
  createManagementRequests: Record<string, number>;
  /**
   * Per cluster, by resource: writes during the create that the apiservers answered but did not
   * store, because they changed nothing (apiserver-metrics.ts storedWrites). Target: none.
   */
  createUnchangedWrites: Record<string, number>;
  /**
   * Each write to the first cluster's HcpCluster, NodePool and works during the create, and what
   * it changed (write-history.ts); also in the log dir as first-cluster-writes.json.
   */
  firstClusterWrites: HistoryLine[];
  /** Reconciles per cluster (with its pool) during the create, by controller of the operators. */
  createReconcilesPerCluster: Record<string, number>;
  /** ARM requests per cluster during the create, by operation (the operators' own counter). */
  createArmRequestsPerCluster: Record<string, number>;
  /** ARM's answers per cluster during the create, by status code (429: throttled by ARM's limits). */
  createArmCodesPerCluster: Record<string, number>;
  /** Absent when the run stopped at Ready (`--no-delete`). */
  deletion?: {
    ms: number;
    floorMs: number;
    requests: Record<string, number>;
    writesPerCluster: { service: number; management: number };
  };
  usage: ComponentUsage[];
  etcd: { beforeBytes: number; readyBytes: number; compactedBytes: number };
  /** The operators' V8 heap in use with the region empty and with N clusters Ready (lowest of a few samples: near the live size). */
  operatorsHeap: { idleBytes: number; readyBytes: number };
  /** Each agent at Ready: its live heap (after a full collection) and its RSS then. */
  agentsAtReady: Array<{ name: string; liveHeapBytes: number; rssMb: number }>;
  /**
   * JSON bytes per cluster of what the operators' informers cache at Ready, by kind, trimmed as
   * they trim it (managedFields summarised, works without manifests): where the heap goes.
   */
  cachedJsonPerCluster: Record<string, number>;
  restart?: {
    readyMs: number;
    resyncedMs: number;
    /** A raw client listing every kind the operators cache, as their informers do: the least a restart does. */
    listFloorMs: number;
    writes: Record<string, number>;
  };
  /** The `--restore` step's figures. */
  restore?: RestoreStepReport;
  /** Requests per second in the window at rest after Ready, by "VERB resource" (`--rest-s`). */
  atRest?: { seconds: number; service: Record<string, number>; management: Record<string, number> };
  /**
   * CPU seconds by process (apiservers, etcd, broker, each component, the bench) in each window:
   * where the machine's time went, beside what the window had (elapsed × cores).
   */
  cpu: Record<"create" | "createFloor" | "delete" | "deleteFloor", Record<string, number> | undefined>;
  /** Apiserver CPU per status write of copies of the region's objects, beside the floor's write. */
  writeCosts: WriteCost[];
  logDir: string;
}

interface Running {
  region: Region;
  service: KubeClient;
  management: KubeClient[];
  components: Component[];
  operators: {
    component: Component;
    metricsUrl: string;
    /** Starts the operators again, against another service cluster when given its kubeconfig. */
    restart(serviceKubeconfig?: string): Promise<Component>;
  };
  /** Each management cluster's agent, whose live heap the bench reads as the operators'. */
  agents: Array<{ component: Component; metricsUrl: string }>;
  /** Processes the bench replaced (the operators before a restart), as they last were. */
  retired: ComponentUsage[];
  logDir: string;
}

function clientFor(kubeconfigPath: string, name: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return new KubeClient(name, kc);
}

async function sample<T>(file: string): Promise<T> {
  return load(await readFile(new URL(file, samples), "utf8")) as T;
}

// ---- the region --------------------------------------------------------------------------------

async function startArm(workDir: string, logDir: string): Promise<{ component: Component; arm: ArmInfo }> {
  const { component, line } = await spawnComponent({
    name: "arm-emulator",
    script: repoScript("hack/harness/arm-emulator/main.ts"),
    args: ["--work-dir", workDir, "--async-delay-ms", "0"],
    logDir,
    firstLine: true,
  });
  const arm = JSON.parse(line ?? "{}") as ArmInfo;
  await ensureParentZone(arm);
  return { component, arm };
}

/** How long each CPU profile window lasts (profile-on-signal.ts). */
const PROFILE_WINDOW_S = 60;
/** How far into the create and into the deletion a profile window starts: past the first requests. */
const PROFILE_WINDOW_DELAY_MS = 30_000;

/** Node flags that let SIGWINCH record a CPU profile window of the component (profile-on-signal.ts). */
function profileFlags(logDir: string, name: string, on: boolean | undefined): string[] {
  if (!on) return [];
  const preload = pathToFileURL(repoScript("hack/bench/profile-on-signal.ts"));
  preload.search = new URLSearchParams({
    dir: resolve(logDir, "profiles", name),
    seconds: String(PROFILE_WINDOW_S),
  }).toString();
  return ["--import", preload.href];
}

/** Starts a profile window in every profiled component, after the delay; a component without one ignores the signal. */
function profileWindowSoon(running: Running, on: boolean | undefined): void {
  if (!on) return;
  setTimeout(() => {
    for (const c of running.components) if (c.child.exitCode === null) c.child.kill("SIGWINCH");
  }, PROFILE_WINDOW_DELAY_MS).unref();
}

async function startOperators(
  region: Region,
  arm: ArmInfo,
  logDir: string,
  cpuProfile: boolean | undefined,
): Promise<Running["operators"]> {
  const broker = region.broker!;
  const port = await freePort();
  const spawnOnce = async (serviceKubeconfig?: string): Promise<Component> => {
    const { component } = await spawnOperators({
      serviceKubeconfig:
        serviceKubeconfig ?? region.clusters.find((c) => c.role === "service")!.kubeconfigPath,
      namespace: NAMESPACE,
      arm,
      broker: { url: broker.url, credentials: await broker.credentials("maestro") },
      logDir,
      port,
      nodeArgs: [
        "--expose-gc",
        "--import",
        repoScript("hack/bench/gc-on-signal.ts"),
        // As the agents': `kill -USR1 <pid>` writes a heap snapshot into the log dir (without this
        // flag SIGUSR1 would open the inspector instead).
        `--diagnostic-dir=${logDir}`,
        "--heapsnapshot-signal=SIGUSR1",
        ...profileFlags(logDir, "operators", cpuProfile),
      ],
    });
    return component;
  };
  const url = `http://127.0.0.1:${port}`;
  const component = await spawnOnce(undefined);
  await readyAt(url, 120_000, component.exited);
  return { component, metricsUrl: `${url}/metrics`, restart: spawnOnce };
}

async function startManagementSide(
  region: Region,
  logDir: string,
  cpuProfile: boolean | undefined,
): Promise<{ components: Component[]; agents: Running["agents"] }> {
  const broker = region.broker!;
  const out: Component[] = [];
  const agents: Running["agents"] = [];
  for (const cluster of region.clusters.filter((x) => x.role === "management")) {
    const credentials = await broker.credentials(cluster.name);
    const agent = await spawnAgent({
      cluster,
      broker: { url: broker.url, credentials },
      logDir,
      nodeArgs: [
        "--expose-gc",
        "--import",
        repoScript("hack/bench/gc-on-signal.ts"),
        // `kill -USR1 <pid>` writes a heap snapshot into the log dir, for a look at a live run.
        `--diagnostic-dir=${logDir}`,
        "--heapsnapshot-signal=SIGUSR1",
        ...profileFlags(logDir, `maestro-agent-${cluster.name}`, cpuProfile),
      ],
    });
    agents.push({ component: agent.component, metricsUrl: `${agent.url}/metrics` });
    const simulator = await spawnSimulator({
      cluster,
      logDir,
      provisionDelayMs: 0,
      deleteDelayMs: 0,
      nodeArgs: profileFlags(logDir, `hypershift-simulator-${cluster.name}`, cpuProfile),
    });
    out.push(agent.component, simulator.component);
    await Promise.all([
      readyAt(agent.url, 60_000, agent.component.exited),
      readyAt(simulator.url, 60_000, simulator.component.exited),
    ]);
  }
  return { components: out, agents };
}

async function startRunning(opts: LifecycleOptions): Promise<Running & { arm: ArmInfo }> {
  const region = await startRegion({ managementClusters: opts.managementClusters });
  // Outside the region's work dir, which goes with the region: the logs outlive the run.
  const logDir = join(".local", "bench-logs", new Date().toISOString().replace(/[:.]/g, "-"));
  await mkdir(logDir, { recursive: true });
  const service = clientFor(region.clusters.find((c) => c.role === "service")!.kubeconfigPath, "service");
  const management = region.clusters
    .filter((c) => c.role === "management")
    .map((c) => clientFor(c.kubeconfigPath, c.name));
  const mcNames = management.map((m) => m.cluster);
  await seedRegion(service, NAMESPACE, mcNames, Math.ceil(opts.n / mcNames.length) + 10);
  const { component: armComponent, arm } = await startArm(region.workDir, logDir);
  const operators = await startOperators(region, arm, logDir, opts.cpuProfile);
  const managementSide = await startManagementSide(region, logDir, opts.cpuProfile);
  return {
    region,
    service,
    management,
    components: [operators.component, ...managementSide.components, armComponent],
    operators,
    agents: managementSide.agents,
    retired: [],
    logDir,
    arm,
  };
}

// ---- load -------------------------------------------------------------------------------------

const namespaceOf = (i: number): string => `bench-${Math.floor(i / CLUSTERS_PER_NAMESPACE)}`;

/** The i-th cluster's subscription: a made-up customer's, `perSubscription` clusters each. */
export function subscriptionOf(i: number, perSubscription: number): string {
  const k = Math.floor(i / Math.max(1, perSubscription));
  return `00000000-0000-4000-8000-${k.toString(16).padStart(12, "0")}`;
}

async function createClusters(service: KubeClient, opts: LifecycleOptions): Promise<void> {
  const cluster = await sample<HcpCluster>("hcpcluster.yaml");
  const pool = await sample<NodePool>("nodepool-fixed.yaml");
  const sampleSubscription = cluster.spec.platform.azure.subscriptionId;
  // The subnet, security group and identities name the subscription too.
  const azureIn = (subscriptionId: string): HcpCluster["spec"]["platform"]["azure"] =>
    JSON.parse(
      JSON.stringify(cluster.spec.platform.azure).replaceAll(sampleSubscription, subscriptionId),
    ) as HcpCluster["spec"]["platform"]["azure"];
  for (let ns = 0; ns * CLUSTERS_PER_NAMESPACE < opts.n; ns++)
    await service.createIfAbsent(NamespaceResource, { metadata: { name: `bench-${ns}` } });
  await inParallel(opts.n, opts.concurrency, async (i) => {
    const namespace = namespaceOf(i);
    const azure = azureIn(subscriptionOf(i, opts.clustersPerSubscription));
    const c: HcpCluster = {
      ...cluster,
      metadata: { name: `c${i}`, namespace },
      spec: {
        ...cluster.spec,
        dns: { baseDomainPrefix: `c${i}` },
        platform: { azure: { ...azure, managedResourceGroup: `bench-c${i}-managed` } },
      },
    };
    await service.create(HcpClusterResource, c);
    const p: NodePool = {
      ...pool,
      metadata: { name: `c${i}-workers`, namespace },
      spec: { ...pool.spec, clusterRef: { name: `c${i}` } },
    };
    await service.create(NodePoolResource, p);
  });
}

async function deleteClusters(service: KubeClient, n: number, concurrency: number): Promise<void> {
  await inParallel(n, concurrency, async (i) => {
    await service.delete(HcpClusterResource, { name: `c${i}`, namespace: namespaceOf(i) });
  });
}

/** An informer the bench reads in-process: one LIST and a WATCH, not a poll per check. */
function watch<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  signal: AbortSignal,
): Informer<T> {
  const informer = new Informer<T>({ client, type });
  void informer.run(signal);
  return informer;
}

async function until(what: string, check: () => string | undefined, timeoutMs: number): Promise<void> {
  let last = "";
  await waitFor(
    what,
    () => {
      const missing = check();
      if (missing && missing !== last) progress(`waiting: ${(last = missing)}`);
      return Promise.resolve(missing === undefined);
    },
    { timeoutMs, intervalMs: 1_000 },
  );
}

// ---- what a write costs -----------------------------------------------------------------------

/**
 * One object of each kind whose status the region writes most (service: clusters, pools, works;
 * the first management cluster: HyperShift's HostedCluster and NodePool), read whole at Ready.
 * The work is the largest of the first few, the HostedCluster's.
 */
async function writeSamples(running: Running, works: ManifestWork[]): Promise<WriteSample[]> {
  const apiServerPid = (cluster: string): number =>
    running.region.clusters.find((c) => c.name === cluster)?.apiServer?.process.pid ?? NaN;
  const first = async (client: KubeClient, type: ResourceType): Promise<WriteSample> => {
    const [object] = (await client.list<KubeObject>(type, { limit: 1 })).items;
    if (!object) throw new Error(`no ${type.kind} on ${client.cluster} to measure a write with`);
    return { client, pid: apiServerPid(client.cluster), type, object };
  };
  const largestWork = works
    .slice(0, 10)
    .sort((a, b) => JSON.stringify(b).length - JSON.stringify(a).length)[0];
  const mgmt = running.management[0]!;
  const samples = [
    await first(running.service, HcpClusterResource),
    await first(running.service, NodePoolResource),
    await first(mgmt, HostedClusterResource),
    await first(mgmt, HyperShiftNodePoolResource),
  ];
  if (largestWork)
    samples.splice(2, 0, {
      client: running.service,
      pid: apiServerPid(running.service.cluster),
      type: ManifestWorkResource,
      object: await running.service.get(
        ManifestWorkResource,
        largestWork.metadata.name ?? "",
        largestWork.metadata.namespace,
      ),
    });
  return samples;
}

// ---- floor ------------------------------------------------------------------------------------

/**
 * The same number of writes per cluster as the region made, by a raw client at the same
 * concurrency: a ConfigMap created, patched, and (for deletion) deleted, on the service cluster
 * and on a management cluster, one cluster's writes after another as a controller's would be.
 */
async function floor(
  running: Running,
  opts: LifecycleOptions,
  perCluster: { service: number; management: number },
  tag: "create" | "delete",
): Promise<number> {
  const writesOn = async (client: KubeClient, count: number, name: string): Promise<void> => {
    if (count < 1) return;
    const ref = { name, namespace: "default" };
    await client.create(configMapType, { metadata: ref, data: { n: "0" } });
    for (let k = 1; k < count - 1; k++)
      await client.mergePatch(configMapType, ref, { data: { n: String(k) } });
    if (count > 1) await client.delete(configMapType, ref);
  };
  const started = performance.now();
  const count = tag === "delete" ? deletedCount(opts) : floorCopies(opts);
  await inParallel(count, opts.concurrency, async (i) => {
    const mgmt = running.management[i % running.management.length]!;
    await Promise.all([
      writesOn(running.service, Math.round(perCluster.service), `floor-${tag}-${i}`),
      writesOn(mgmt, Math.round(perCluster.management), `floor-${tag}-${i}`),
    ]);
  });
  const ms = performance.now() - started;
  progress(`${tag} floor after ${Math.round(ms)} ms`);
  return ms;
}

/**
 * The physical floor's create, then its deletion (physical-floor.ts), each with the CPU it took;
 * then, untimed, until the namespace controller has swept what the deletion left, so the
 * calibration after it has the apiservers to itself.
 */
async function physicalFloors(
  running: Running,
  opts: LifecycleOptions,
  set: Awaited<ReturnType<typeof capturePhysicalSet>>,
  cpuNow: () => Promise<Record<string, number>>,
): Promise<LifecycleReport["physicalFloor"]> {
  const copies = floorCopies(opts);
  await preparePhysicalFloor(running.service, copies);
  const clients = { service: running.service, management: running.management };
  const c0 = await cpuNow();
  const replayed = await replayPhysical("create", set, clients, { ...opts, n: copies });
  const c1 = await cpuNow();
  const toN = floorScale(opts);
  const create = { ...replayed, ms: replayed.ms * toN };
  progress(
    `physical floor, create: ${Math.round(create.ms)} ms, ${JSON.stringify(create.writesPerCluster)} writes per cluster`,
  );
  const del = await replayPhysical("delete", set, clients, { ...opts, n: deletedCount(opts) });
  const c2 = await cpuNow();
  progress(
    `physical floor, delete: ${Math.round(del.ms)} ms, ${JSON.stringify(del.writesPerCluster)} writes per cluster`,
  );
  await physicalFloorSwept(running.management, deletedCount(opts), opts.phaseTimeoutMs);
  return {
    create: { ...create, cpu: scaledCpu(cpuWindow(c0, c1), toN) },
    delete: { ...del, cpu: cpuWindow(c1, c2) },
    writes: PHYSICAL_WRITES,
  };
}

// ---- restart ----------------------------------------------------------------------------------

async function scrape(url: string): Promise<string> {
  return (await fetch(url)).text();
}

/**
 * A process's live heap: a full collection (hack/bench/gc-on-signal.ts), then
 * `nodejs_heap_size_used_bytes`, read once the process counts that collection.
 */
async function liveHeapBytes(process: { component: Component; metricsUrl: string }): Promise<number> {
  const metric = (text: string, pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? 0);
  const forced = /^bench_forced_gcs_total ([0-9.e+]+)$/m;
  const before = metric(await scrape(process.metricsUrl), forced);
  process.component.child.kill("SIGUSR2");
  let text = "";
  await waitFor(
    `a full garbage collection in ${process.component.name}`,
    async () => {
      text = await scrape(process.metricsUrl);
      return metric(text, forced) > before;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  return metric(text, /^nodejs_heap_size_used_bytes ([0-9.e+]+)$/m);
}

/** Reconciles done so far by controller, whatever their result. */
const reconcileCounts = (text: string): Record<string, number> =>
  totalsBy(text, "controller_runtime_reconcile_total", "controller");

/** ARM requests the operators made so far, by operation. */
const armCounts = (text: string): Record<string, number> =>
  totalsBy(text, "hcp_azure_arm_requests_total", "operation");
const armCodes = (text: string): Record<string, number> =>
  totalsBy(text, "hcp_azure_arm_requests_total", "code");

/** `after - before` per key, divided by n, to two decimals, zeros left out. */
function perN(
  after: Record<string, number>,
  before: Record<string, number>,
  n: number,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, Math.round(((v - (before[k] ?? 0)) / n) * 100) / 100] as const)
      .filter(([, v]) => v > 0),
  );
}

/**
 * Every cluster and pool was reconciled again since the start: each controller finished N
 * reconciles. The start queues every object at normal priority before anything else, and the
 * queue hands them out first in order, so the first N finished are those N. Waiting for an empty
 * queue instead waited out the Azure rechecks a start spreads over 10 minutes, which at 10,000
 * clusters (16.7 a second) come faster than this machine drains them.
 */
function resynced(text: string, n: number): boolean {
  const done = totalsBy(text, "workqueue_work_duration_seconds_count", "name");
  return ["cluster-controller", "nodepool-controller"].every((q) => (done[q] ?? 0) >= n);
}

/**
 * The service cluster's works, clusters and node pools as they are, written to the log dir: a
 * restart's writes show as the diff of the two dumps.
 */
async function dumpObjects(running: Running, file: string): Promise<void> {
  const dump: Record<string, unknown[]> = {};
  for (const type of [ManifestWorkResource, HcpClusterResource, NodePoolResource]) {
    const list = await running.service.list<KubeObject>(type, {});
    dump[type.plural] = list.items.map((o) => ({
      ...o,
      metadata: { ...o.metadata, managedFields: undefined },
    }));
  }
  await writeFile(join(running.logDir, file), JSON.stringify(dump, null, 1));
}

/** The kinds the operators' informers cache on the service cluster, all namespaces. */
const OPERATOR_CACHED_KINDS: ResourceType[] = [
  HcpClusterResource,
  NodePoolResource,
  ManifestWorkResource,
  ManagementClusterResource,
  ExternalAuthResource,
  BreakglassCredentialResource,
  BreakglassRevocationResource,
];

/**
 * The restart's floor: every kind the operators cache, listed at once in pages of 500 and parsed,
 * as their informers list them on a start. No restart can be ready and resynced sooner. A page the
 * apiserver gives up on (504, as one did at 10,000 clusters right after etcd's defragmentation)
 * is listed again from the start, as an informer would, and only the whole list that succeeded is
 * timed: a floor that counted the wait would be no floor, and one lost page lost a run's figures.
 */
async function listFloorMs(client: KubeClient): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    try {
      await Promise.all(OPERATOR_CACHED_KINDS.map((type) => client.listAll(type)));
      return performance.now() - started;
    } catch (err) {
      if (attempt >= 3 || !isApiError(err, 504)) throw err;
      progress(`the restart's list floor: a page timed out, listing again (${String(err)})`);
    }
  }
}

async function restartScenario(
  running: Running,
  opts: LifecycleOptions,
): Promise<NonNullable<LifecycleReport["restart"]>> {
  const listFloor = await listFloorMs(running.service);
  await dumpObjects(running, "objects-before-restart.json");
  const before = await allCounts(running);
  await running.operators.component.kill();
  const started = performance.now();
  const old = await running.operators.component.usage();
  running.retired.push({ ...old, name: "operators (until the restart)" });
  const next = await running.operators.restart();
  running.components[0] = next;
  running.operators.component = next;
  const base = running.operators.metricsUrl.replace(/\/metrics$/, "");
  await readyAt(base, opts.phaseTimeoutMs);
  const readyMs = performance.now() - started;
  await waitFor(
    "resync after restart",
    async () => resynced(await scrape(running.operators.metricsUrl), opts.n),
    {
      timeoutMs: opts.phaseTimeoutMs,
      intervalMs: 250,
    },
  );
  const resyncedMs = performance.now() - started;
  await dumpObjects(running, "objects-after-restart.json");
  const delta = difference(await allCounts(running), before);
  const writeCounts = Object.fromEntries(
    [...delta].filter(([k]) => !k.startsWith("GET") && !k.startsWith("LIST")),
  );
  return { readyMs, resyncedMs, listFloorMs: listFloor, writes: writeCounts };
}

// ---- restore ----------------------------------------------------------------------------------

/**
 * The `--restore` step, when asked for: from then on `running.service` is the restored cluster,
 * whose apiserver goes with the region.
 */
async function restoreScenario(
  running: Running,
  opts: LifecycleOptions,
  works: number,
): Promise<RestoreStepReport | undefined> {
  if (!opts.restore) return undefined;
  if (opts.deletion)
    throw new Error("--restore leaves the region on a new service cluster: run it with --no-delete");
  const base = running.operators.metricsUrl.replace(/\/metrics$/, "");
  const mcNames = running.management.map((m) => m.cluster);
  const { report, service, server } = await restoreStep({
    region: running.region,
    service: running.service,
    management: running.management,
    namespace: NAMESPACE,
    n: opts.n,
    works,
    phaseTimeoutMs: opts.phaseTimeoutMs,
    stopOperators: async () => {
      await running.operators.component.kill();
      const old = await running.operators.component.usage();
      running.retired.push({ ...old, name: "operators (until the restore)" });
    },
    startOperators: async (serviceKubeconfig) => {
      const next = await running.operators.restart(serviceKubeconfig);
      running.components[0] = next;
      running.operators.component = next;
      await readyAt(base, opts.phaseTimeoutMs, next.exited);
    },
    install: (service) => seedRegion(service, NAMESPACE, mcNames, Math.ceil(opts.n / mcNames.length) + 10),
    resynced: async () => resynced(await scrape(running.operators.metricsUrl), opts.n),
    cpu: () => cpuByProcess(running.region.workDir, running.components),
    progress,
  });
  running.service = service;
  const region = running.region;
  running.region = {
    ...region,
    stop: async () => {
      await server.stop();
      await region.stop();
    },
  };
  return report;
}

// ---- the scenario -----------------------------------------------------------------------------

async function allCounts(running: Running): Promise<RequestCounts> {
  const { service, management } = await phaseCounts(running);
  return merge(service, management);
}

/**
 * One scrape of each apiserver: its requests, and its writes as stored (the service apiserver's
 * first), read from the same moment.
 */
async function createReading(
  running: Running,
): Promise<{ counts: { service: RequestCounts; management: RequestCounts }; stored: StoredWrites[] }> {
  const texts = await Promise.all([running.service, ...running.management].map((c) => c.text("/metrics")));
  const [service = "", ...management] = texts;
  return {
    counts: { service: requestCountsIn(service), management: merge(...management.map(requestCountsIn)) },
    stored: texts.map(storedWritesIn),
  };
}

async function phaseCounts(running: Running): Promise<{ service: RequestCounts; management: RequestCounts }> {
  return (await createReading(running)).counts;
}

/**
 * The region left alone for a while after Ready: what its controllers and agents ask of the
 * apiservers with nothing changing. The wait is the measurement window, not a synchronisation.
 */
async function restWindow(
  running: Running,
  seconds: number,
): Promise<NonNullable<LifecycleReport["atRest"]>> {
  progress(`leaving the region at rest for ${seconds} s`);
  const before = await phaseCounts(running);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await phaseCounts(running);
  const rate = (a: RequestCounts, b: RequestCounts): Record<string, number> =>
    Object.fromEntries(
      [...difference(a, b)]
        .sort(([, x], [, y]) => y - x)
        .map(([k, v]) => [k, Math.round((v / seconds) * 100) / 100]),
    );
  return {
    seconds,
    service: rate(after.service, before.service),
    management: rate(after.management, before.management),
  };
}

function perCluster(counts: RequestCounts, n: number): Record<string, number> {
  return Object.fromEntries([...counts].sort().map(([k, v]) => [k, Math.round((v / n) * 100) / 100]));
}

interface Watched {
  clusters: ReturnType<typeof watch<HcpCluster>>;
  pools: ReturnType<typeof watch<NodePool>>;
  works: ReturnType<typeof watch<ManifestWork>>;
}

/** How many clusters the deletion takes: the slice, or all of them. */
const deletedCount = (opts: LifecycleOptions): number => Math.min(opts.n, opts.deleteSlice ?? opts.n);

/** The create's floor copies: the slice asked for, never fewer than the deletion's (its floor deletes them). */
const floorCopies = (opts: LifecycleOptions): number =>
  Math.max(opts.deletion ? deletedCount(opts) : 1, Math.min(opts.n, opts.floorSlice ?? opts.n));

/** What the create's floors, replayed on floorCopies, are multiplied by to stand for N clusters. */
const floorScale = (opts: LifecycleOptions): number => opts.n / floorCopies(opts);

/** CPU seconds by process, times `factor` (a floor replayed on a slice, scaled to N). */
const scaledCpu = (cpu: Record<string, number>, factor: number): Record<string, number> =>
  Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v * factor]));

/** Whether a bench cluster's name (`c<i>`, its pool's `c<i>-workers`) is among the first k. */
function inFirst(k: number, clusterName: string | undefined): boolean {
  const i = /^c(\d+)$/.exec(clusterName ?? "")?.[1];
  return i !== undefined && Number(i) < k;
}

/**
 * Deletes the first `deletedCount` clusters (all, without a slice) and waits for their clusters,
 * pools and works to be gone; figures without the floor, per deleted cluster.
 */
async function deleteAll(
  running: Running,
  opts: LifecycleOptions,
  { clusters, pools, works }: Watched,
): Promise<Omit<NonNullable<LifecycleReport["deletion"]>, "floorMs">> {
  const k = deletedCount(opts);
  const d0 = await phaseCounts(running);
  const started = performance.now();
  profileWindowSoon(running, opts.cpuProfile);
  await deleteClusters(running.service, k, opts.concurrency);
  const allGone = (): string | undefined => {
    const c = clusters.list().filter((x) => inFirst(k, x.metadata.name)).length;
    const p = pools.list().filter((x) => inFirst(k, x.spec.clusterRef.name)).length;
    const w = works.list().filter((x) => inFirst(k, x.metadata.labels?.[WORK_LABELS.clusterName])).length;
    return c + p + w === 0 ? undefined : `${c} clusters, ${p} pools, ${w} works left`;
  };
  await until(`${k} clusters deleted`, allGone, opts.phaseTimeoutMs);
  const ms = performance.now() - started;
  progress(`all deleted after ${Math.round(ms)} ms`);
  const d1 = await phaseCounts(running);
  const service = difference(d1.service, d0.service);
  const management = difference(d1.management, d0.management);
  const writesPerCluster = { service: writes(service) / k, management: writes(management) / k };
  // Logged as soon as known: a long run stopped in its floors still tells what the deletion did.
  progress(`writes per cluster during delete: ${JSON.stringify(writesPerCluster)}`);
  return { ms, requests: perCluster(merge(service, management), k), writesPerCluster };
}

export async function benchLifecycle(opts: LifecycleOptions): Promise<LifecycleReport> {
  progress(`starting a region with ${opts.managementClusters} management clusters`);
  const running = await startRunning(opts);
  const stop = new AbortController();
  const sampler = sampleUsage(() => running.components);
  try {
    const clusters = watch<HcpCluster>(running.service, HcpClusterResource, stop.signal);
    const pools = watch<NodePool>(running.service, NodePoolResource, stop.signal);
    const works = watch<ManifestWork>(running.service, ManifestWorkResource, stop.signal);
    await Promise.all([clusters.waitForSync(), pools.waitForSync(), works.waitForSync()]);
    progress(`region up; logs in ${running.logDir}`);
    const etcdBefore = await etcdDbSize(running.region.etcdUrl);
    const heapIdle = await liveHeapBytes(running.operators);

    const cpuNow = (): Promise<Record<string, number>> =>
      cpuByProcess(running.region.workDir, running.components);
    const { counts: c0, stored: s0 } = await createReading(running);
    const m0 = await scrape(running.operators.metricsUrl);
    const cpu0 = await cpuNow();
    const historyStop = new AbortController();
    const history = watchWriteHistory(
      running.service,
      { namespace: namespaceOf(0), name: "c0" },
      historyStop.signal,
    );
    const started = performance.now();
    profileWindowSoon(running, opts.cpuProfile);
    await createClusters(running.service, opts);
    progress(`${opts.n} clusters and pools created`);
    const allReady = (): string | undefined => {
      const c = clusters.list().filter((x) => x.status?.phase === "Ready").length;
      const p = pools.list().filter((x) => x.status?.phase === "Ready").length;
      return c === opts.n && p === opts.n ? undefined : `${c} clusters and ${p} pools Ready of ${opts.n}`;
    };
    await until(`${opts.n} clusters and pools Ready`, allReady, opts.phaseTimeoutMs);
    const createMs = performance.now() - started;
    progress(`all Ready after ${Math.round(createMs)} ms`);
    historyStop.abort();
    await history.write(join(running.logDir, "first-cluster-writes.json"));
    const createCpu = cpuWindow(cpu0, await cpuNow());
    progress(`CPU seconds during create: ${JSON.stringify(createCpu)}`);
    const { counts: c1, stored: s1 } = await createReading(running);
    const unchanged = unstoredWrites(s1, s0);
    progress(`writes that changed nothing during create: ${JSON.stringify(Object.fromEntries(unchanged))}`);
    const m1 = await scrape(running.operators.metricsUrl);
    const armPerCluster = perN(armCounts(m1), armCounts(m0), opts.n);
    const armCodesPerCluster = perN(armCodes(m1), armCodes(m0), opts.n);
    progress(
      `ARM requests per cluster during create: ${JSON.stringify({ ...armPerCluster, ...armCodesPerCluster })}`,
    );
    const heapReady = await liveHeapBytes(running.operators);
    const agentsAtReady = await Promise.all(
      running.agents.map(async (a) => ({
        name: a.component.name,
        liveHeapBytes: await liveHeapBytes(a),
        rssMb: await currentRssMb(a.component.child.pid ?? 0),
      })),
    );
    progress(`agents at Ready: ${JSON.stringify(agentsAtReady)}`);
    const jsonPerCluster = (objects: KubeObject[]): number =>
      Math.round(Buffer.byteLength(JSON.stringify(objects)) / opts.n);
    const cachedJsonPerCluster = {
      HcpCluster: jsonPerCluster(clusters.list().map(summariseManagedFields)),
      NodePool: jsonPerCluster(pools.list().map(summariseManagedFields)),
      ManifestWork: jsonPerCluster(works.list().map((w) => summariseWorkSpec(summariseManagedFields(w)))),
      "ManifestWork manifests (not cached)": jsonPerCluster(
        works.list().flatMap((w) => (w.spec?.workload?.manifests ?? []) as KubeObject[]),
      ),
    };

    let samples = await writeSamples(running, works.list());
    const physicalSet = await capturePhysicalSet(running.service, running.management, {
      namespace: namespaceOf(0),
      name: "c0",
      signingKeyNamespace: NAMESPACE,
    });

    const atRest = opts.restSeconds ? await restWindow(running, opts.restSeconds) : undefined;
    if (atRest) progress(`at rest: ${JSON.stringify(atRest)}`);

    const readyBytes = await etcdDbSize(running.region.etcdUrl);
    await compactAndDefrag(running.region.etcdUrl);
    const compactedBytes = await etcdDbSize(running.region.etcdUrl);

    const restart = opts.restart ? await restartScenario(running, opts) : undefined;

    if (restart) progress(`restart: ${JSON.stringify(restart)}`);

    const restored = await restoreScenario(running, opts, works.list().length);
    // The service samples are the lost cluster's objects: their write costs are not measured after a restore.
    samples = samples.filter((s) => restored === undefined || s.client.cluster !== "service");

    const createWrites = {
      service: writes(difference(c1.service, c0.service)) / opts.n,
      management: writes(difference(c1.management, c0.management)) / opts.n,
    };
    const cpu1 = await cpuNow();
    const deletion = opts.deletion ? await deleteAll(running, opts, { clusters, pools, works }) : undefined;
    const cpu2 = await cpuNow();
    const usage = [...running.retired, ...(await Promise.all(running.components.map((c) => c.usage())))];
    progress(
      `usage: ${usage.map((u) => `${u.name} ${u.peakRssMb} MB ${Math.round(u.cpuSeconds)} CPU s`).join("; ")}`,
    );
    // The floors have the apiservers to themselves: left running, a full region's spread Azure
    // rechecks and drift checks compete with them, and the physical floor's copies are real
    // clusters and works the operators, agents and simulators would act on.
    progress("stopping the region's processes so the floors have the apiservers to themselves");
    await Promise.all(running.components.map((c) => c.stop()));
    const physicalFloor = await physicalFloors(running, opts, physicalSet, cpuNow);
    // The calibration: the old floor, as many writes per cluster as ours, each a small ConfigMap's.
    const cpu2b = await cpuNow();
    const deleteFloorMs = deletion ? await floor(running, opts, deletion.writesPerCluster, "delete") : NaN;
    const cpu3 = await cpuNow();
    const createFloorMs = (await floor(running, opts, createWrites, "create")) * floorScale(opts);
    const cpu4 = await cpuNow();
    progress("measuring what one status write costs each apiserver, by kind");
    const costs = await writeCosts(samples, { copies: 200, rounds: 5, concurrency: opts.concurrency });
    return {
      n: opts.n,
      managementClusters: opts.managementClusters,
      concurrency: opts.concurrency,
      floorCopies: floorCopies(opts),
      createMs,
      createFloorMs,
      physicalFloor,
      createRequests: perCluster(
        merge(difference(c1.service, c0.service), difference(c1.management, c0.management)),
        opts.n,
      ),
      createWritesPerCluster: createWrites,
      createManagementRequests: perCluster(difference(c1.management, c0.management), opts.n),
      createUnchangedWrites: perCluster(unchanged, opts.n),
      firstClusterWrites: history.lines,
      createReconcilesPerCluster: perN(reconcileCounts(m1), reconcileCounts(m0), opts.n),
      createArmRequestsPerCluster: armPerCluster,
      createArmCodesPerCluster: armCodesPerCluster,
      ...(deletion && { deletion: { ...deletion, floorMs: deleteFloorMs } }),
      usage,
      etcd: { beforeBytes: etcdBefore, readyBytes, compactedBytes },
      operatorsHeap: { idleBytes: heapIdle, readyBytes: heapReady },
      agentsAtReady,
      cachedJsonPerCluster,
      restart,
      restore: restored,
      ...(atRest && { atRest }),
      cpu: {
        create: createCpu,
        createFloor: scaledCpu(cpuWindow(cpu3, cpu4), floorScale(opts)),
        delete: deletion && cpuWindow(cpu1, cpu2),
        deleteFloor: deletion && cpuWindow(cpu2b, cpu3),
      },
      writeCosts: costs,
      logDir: running.logDir,
    };
  } finally {
    sampler.stop();
    stop.abort();
    await Promise.all(running.components.map((c) => c.stop()));
    await running.region.stop();
  }
}

const seconds = (ms: number): number => Math.round(ms / 100) / 10;
const tenth = (x: number): number => Math.round(x * 10) / 10;

/** The first cluster's writes on the service side by kind; the report says what each changed. */
function firstClusterFigure(r: LifecycleReport): Figure {
  const counts = historyCounts(r.firstClusterWrites);
  return {
    name: "the first cluster's service writes, create",
    value: Object.values(counts).reduce((a, b) => a + b, 0),
    unit: "writes",
    detail: `${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")} (creates included; what each changed: firstClusterWrites in .local/bench.json)`,
  };
}

/** The management apiservers' reads per cluster in the create: their CPU that is not writes. */
function managementReadsFigure(r: LifecycleReport): Figure {
  const reads = Object.entries(r.createManagementRequests)
    .filter(([k]) => k.startsWith("GET") || k.startsWith("LIST"))
    .sort(([, a], [, b]) => b - a);
  return {
    name: "reads per cluster on the management clusters, create",
    value: tenth(reads.reduce((sum, [, v]) => sum + v, 0)),
    unit: "requests",
    detail: reads.length
      ? reads
          .slice(0, 6)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")
      : "none",
  };
}

/** Writes that changed nothing: each status write is to be a real change. */
function unchangedWritesFigure(r: LifecycleReport): Figure {
  const byResource = Object.entries(r.createUnchangedWrites).filter(([, v]) => v >= 0.01);
  return {
    name: "writes per cluster that changed nothing, create",
    value: Math.round(byResource.reduce((sum, [, v]) => sum + v, 0) * 100) / 100,
    unit: "writes",
    detail:
      byResource.length === 0
        ? "every write answered was stored (target: none)"
        : `answered but not stored: ${byResource.map(([k, v]) => `${k} ${v}`).join(", ")} (target: none)`,
  };
}

function lifecycleFigures(r: LifecycleReport): Figure[] {
  const where = `N=${r.n}, ${r.managementClusters} management clusters, concurrency ${r.concurrency}`;
  const w = (x: { service: number; management: number }): string =>
    `${tenth(x.service)} on the service cluster + ${tenth(x.management)} on management clusters`;
  const figures: Figure[] = [
    { name: "create → all Ready", value: seconds(r.createMs), unit: "s", detail: where },
    reconcileFigure(r),
    armFigure(r),
    ...(r.deletion
      ? [{ name: "delete → all gone", value: seconds(r.deletion.ms), unit: "s", detail: where }]
      : []),
    {
      name: "writes per cluster, create",
      value: tenth(r.createWritesPerCluster.service + r.createWritesPerCluster.management),
      unit: "writes",
      detail: w(r.createWritesPerCluster),
    },
    unchangedWritesFigure(r),
    managementReadsFigure(r),
    firstClusterFigure(r),
    ...(r.deletion
      ? [
          {
            name: "writes per cluster, delete",
            value: tenth(r.deletion.writesPerCluster.service + r.deletion.writesPerCluster.management),
            unit: "writes",
            detail: w(r.deletion.writesPerCluster),
          },
        ]
      : []),
    {
      name: "etcd at Ready, compacted",
      value: Math.round(r.etcd.compactedBytes / 2 ** 20),
      unit: "MB",
      detail: `${Math.round((r.etcd.readyBytes - r.etcd.beforeBytes) / r.n / 1024)} KB per cluster grown before compaction; ${Math.round(r.etcd.readyBytes / 2 ** 20)} MB before compaction`,
    },
  ];
  const heapPerCluster = (r.operatorsHeap.readyBytes - r.operatorsHeap.idleBytes) / r.n;
  figures.push({
    name: "operators heap per cluster",
    value: Math.round(heapPerCluster / 1024),
    unit: "KB",
    detail: `live heap ${Math.round(r.operatorsHeap.idleBytes / 2 ** 20)} MB idle → ${Math.round(r.operatorsHeap.readyBytes / 2 ** 20)} MB at Ready; at 10,000 clusters ≈ ${Math.round((r.operatorsHeap.idleBytes + heapPerCluster * 10_000) / 2 ** 20)} MB`,
  });
  figures.push(...agentFigures(r));
  for (const [kind, bytes] of Object.entries(r.cachedJsonPerCluster))
    figures.push({
      name: `cached JSON per cluster: ${kind}`,
      value: Math.round(bytes / 102.4) / 10,
      unit: "KB",
      detail: "as the informers trim it; a parsed object costs a few times its JSON",
    });
  for (const u of r.usage)
    figures.push({
      name: `peak RSS ${u.name}`,
      value: u.peakRssMb,
      unit: "MB",
      detail: `${Math.round(u.cpuSeconds)} CPU s${rssBudget(u.name, r)}`,
    });
  const cores = cpus().length;
  const windows: Array<[string, Record<string, number> | undefined, number]> = [
    ["create", r.cpu.create, r.createMs],
    ["calibration, create", r.cpu.createFloor, r.createFloorMs],
    ["delete", r.cpu.delete, r.deletion?.ms ?? NaN],
    ["calibration, delete", r.cpu.deleteFloor, r.deletion?.floorMs ?? NaN],
    ["physical floor, create", r.physicalFloor.create.cpu, r.physicalFloor.create.ms],
    ["physical floor, delete", r.physicalFloor.delete.cpu, r.physicalFloor.delete.ms],
  ];
  for (const [window, cpu, ms] of windows) {
    if (!cpu) continue;
    const total = Object.values(cpu).reduce((a, b) => a + b, 0);
    const top = Object.entries(cpu)
      .slice(0, 6)
      .map(([name, sec]) => `${name} ${Math.round((sec / total) * 100)}%`);
    figures.push({
      name: `CPU during ${window}`,
      value: Math.round(total),
      unit: "CPU s",
      detail: `of ${Math.round((ms / 1000) * cores)} (${cores} cores × elapsed): ${top.join(", ")}`,
    });
  }
  figures.push(...calibrationFigures(r));
  figures.push(...restFigures(r));
  if (r.restart) {
    const total = Object.values(r.restart.writes).reduce((a, b) => a + b, 0);
    figures.push(
      { name: "restart → ready", value: seconds(r.restart.readyMs), unit: "s", detail: `N=${r.n}` },
      {
        name: "restart → resynced",
        value: seconds(r.restart.resyncedMs),
        unit: "s",
        detail: `every cluster and pool reconciled again; target under 60 s at 10,000 clusters (this run ${r.n})`,
      },
      { name: "restart writes", value: total, unit: "writes", detail: JSON.stringify(r.restart.writes) },
    );
  }
  figures.push(...restoreFigures(r.restore));
  figures.push(...r.writeCosts.map(writeCostFigure));
  return figures;
}

/** A window's CPU seconds: every process, and each side's apiservers. */
function cpuSides(cpu: Record<string, number> | undefined): {
  total: number;
  service: number;
  management: number;
} {
  const all = cpu ?? {};
  return {
    total: Math.round(Object.values(all).reduce((x, y) => x + y, 0)),
    service: Math.round(all["kube-apiserver-service"] ?? 0),
    management: Math.round(all["kube-apiserver (management clusters)"] ?? 0),
  };
}

/**
 * Ours beside the physical floor: the time, the CPU of every process, and each side's apiservers'
 * CPU (the service apiserver; the management clusters' together). Targets on the time and the CPU.
 */
function physicalComparisons(
  what: "create → all Ready" | "delete → all gone",
  ms: number,
  cpu: Record<string, number> | undefined,
  floor: PhysicalFloorRun & { cpu: Record<string, number>; slice?: { copies: number; n: number } },
): Comparison[] {
  const { slice } = floor;
  const scaled =
    slice && slice.copies < slice.n
      ? `, replayed on ${slice.copies} copies beside the resident region and scaled ×${tenth(slice.n / slice.copies)}`
      : "";
  const against = `physical floor: ${tenth(floor.writesPerCluster.service)} + ${tenth(floor.writesPerCluster.management)} writes per cluster of the run's own objects${scaled}`;
  const ours = cpuSides(cpu);
  const theirs = cpuSides(floor.cpu);
  const side = (name: string, o: number, p: number): Comparison =>
    compare({ name: `${what}: ${name}`, unit: "CPU s", ours: o, against: "the physical floor's", peer: p });
  return [
    compare({ name: what, unit: "s", ours: seconds(ms), against, peer: seconds(floor.ms) }, { atMost: 1.5 }),
    compare(
      {
        name: `${what}: CPU, every process`,
        unit: "CPU s",
        ours: ours.total,
        against: "the physical floor's (apiservers, etcd, the bench)",
        peer: theirs.total,
      },
      { atMost: 1.5 },
    ),
    side("service apiserver CPU", ours.service, theirs.service),
    side("management apiservers CPU", ours.management, theirs.management),
  ];
}

function lifecycleComparisons(r: LifecycleReport): Comparison[] {
  return [
    ...physicalComparisons("create → all Ready", r.createMs, r.cpu.create, {
      ...r.physicalFloor.create,
      slice: { copies: r.floorCopies, n: r.n },
    }),
    ...(r.deletion
      ? physicalComparisons("delete → all gone", r.deletion.ms, r.cpu.delete, r.physicalFloor.delete)
      : []),
    ...(r.restart
      ? [
          compare(
            {
              name: "restart → resynced",
              unit: "s",
              ours: seconds(r.restart.resyncedMs),
              against: "raw client lists every kind the operators cache (pages of 500)",
              peer: seconds(r.restart.listFloorMs),
            },
            // The issue's target is absolute (under 60 s at 10,000 clusters): see the figure.
          ),
        ]
      : []),
    ...(r.restore && r.restart
      ? [
          compare(
            {
              name: "restore → converged",
              unit: "s",
              ours: seconds(r.restore.restoreMs + r.restore.convergedMs),
              against: "this run's restart → resynced (restoreRegion + operators start → converged)",
              peer: seconds(r.restart.resyncedMs),
            },
            { atMost: 2 },
          ),
        ]
      : []),
  ];
}

/**
 * The machine's calibration (the old floor): as many writes per cluster as ours made, each a small
 * ConfigMap's, by a raw client. Its time says how fast this machine's apiservers are today;
 * ours against it is the ratio earlier runs reported.
 */
function calibrationFigures(r: LifecycleReport): Figure[] {
  const out: Figure[] = [
    {
      name: "calibration: our create's writes as small ConfigMaps",
      value: seconds(r.createFloorMs),
      unit: "s",
      detail: `ours ${tenth(r.createMs / r.createFloorMs)}× it (the floor of runs before the physical one)${r.floorCopies < r.n ? `; replayed on ${r.floorCopies} copies, scaled to ${r.n}` : ""}`,
    },
  ];
  if (r.deletion)
    out.push({
      name: "calibration: our deletion's writes as small ConfigMaps",
      value: seconds(r.deletion.floorMs),
      unit: "s",
      detail: `ours ${tenth(r.deletion.ms / r.deletion.floorMs)}× it`,
    });
  for (const [what, run] of [
    ["create", r.physicalFloor.create],
    ["delete", r.physicalFloor.delete],
  ] as const)
    out.push({
      name: `physical floor writes per cluster, ${what}`,
      value: tenth(run.writesPerCluster.service + run.writesPerCluster.management),
      unit: "writes",
      detail: `${tenth(run.writesPerCluster.service)} service + ${tenth(run.writesPerCluster.management)} management, in ${seconds(run.ms)} s (docs/performance.md lists each)`,
    });
  return out;
}

function restoreFigures(x: RestoreStepReport | undefined): Figure[] {
  if (!x) return [];
  const writes = Object.entries(x.managementWrites);
  return [
    {
      name: "restore: backup taken",
      value: seconds(x.backupMs),
      unit: "s",
      detail: `${x.objects} objects, ${Math.round(x.backupBytes / 1024)} KB`,
    },
    {
      name: "restore: restoreRegion",
      value: seconds(x.restoreMs),
      unit: "s",
      detail: "into the empty apiserver",
    },
    {
      name: "restore: operators start → converged",
      value: seconds(x.convergedMs),
      unit: "s",
      detail: `every work Applied at its generation, cluster Ready, cluster and pool reconciled; ready after ${seconds(x.operatorsReadyMs)} s`,
    },
    {
      name: "restore: loss → converged",
      value: seconds(x.totalMs),
      unit: "s",
      detail: "the new apiserver's start and CRDs included",
    },
    {
      name: "restore: management-cluster writes",
      value: writes.reduce((sum, [, v]) => sum + v, 0),
      unit: "writes",
      detail: `${writes.length ? writes.map(([k, v]) => `${k} ${v}`).join(", ") : "none"}; changed nothing (not stored): ${JSON.stringify(x.managementUnchangedWrites)}`,
    },
    {
      name: "restore: CPU, operators start → converged",
      value: Math.round(Object.values(x.cpu).reduce((a, b) => a + b, 0)),
      unit: "CPU s",
      detail: Object.entries(x.cpu)
        .slice(0, 6)
        .map(([k, v]) => `${k} ${v}`)
        .join(", "),
    },
  ];
}

function writeCostFigure(c: WriteCost): Figure {
  return {
    name: `apiserver CPU per write: ${c.name}`,
    value: c.cpuMsPerWrite,
    unit: "ms",
    detail: `${tenth(c.cpuMsPerWrite / c.floorCpuMsPerWrite)}× the floor's write (a small ConfigMap's merge patch, ${c.floorCpuMsPerWrite} ms); its ${tenth(c.bytes / 1024)} KB as a ConfigMap ${c.sameBytesCpuMsPerWrite} ms`,
  };
}

/** The issue's memory targets, beside the peak RSS of the processes they are set for. */
function rssBudget(component: string, r: LifecycleReport): string {
  if (component.startsWith("operators")) return `; target 512 MB at 10,000 clusters (this run ${r.n})`;
  if (component.startsWith("maestro-agent"))
    return `; target 256 MB at 2,000 clusters per agent (this run ${Math.round(r.n / r.managementClusters)})`;
  return "";
}

/** What the create asked of ARM per cluster, by operation (the busiest first). */
function armFigure(r: LifecycleReport): Figure {
  const byOperation = Object.entries(r.createArmRequestsPerCluster).sort(([, a], [, b]) => b - a);
  return {
    name: "ARM requests per cluster, create",
    value: tenth(byOperation.reduce((sum, [, v]) => sum + v, 0)),
    unit: "requests",
    detail: `${byOperation
      .slice(0, 6)
      .map(([op, v]) => `${op} ${v}`)
      .join(", ")}; throttled by ARM's limits (429) ${r.createArmCodesPerCluster["429"] ?? 0}`,
  };
}

/** How many times the controllers went through each cluster while it was created. */
function reconcileFigure(r: LifecycleReport): Figure {
  return {
    name: "cluster reconciles per cluster, create",
    value: r.createReconcilesPerCluster["cluster-controller"] ?? 0,
    unit: "reconciles",
    detail: Object.entries(r.createReconcilesPerCluster)
      .map(([c, v]) => `${c} ${v}`)
      .join(", "),
  };
}

/** The load at rest (`--rest-s`): what the apiservers serve with nothing changing. */
function restFigures(r: LifecycleReport): Figure[] {
  if (!r.atRest) return [];
  const sum = (x: Record<string, number>): number => tenth(Object.values(x).reduce((a, b) => a + b, 0));
  const top = (x: Record<string, number>): string =>
    Object.entries(x)
      .slice(0, 4)
      .map(([k, v]) => `${k} ${v}/s`)
      .join(", ");
  return [
    {
      name: "requests at rest, management apiservers",
      value: sum(r.atRest.management),
      unit: "/s",
      detail: `${r.atRest.seconds} s after Ready: ${top(r.atRest.management)}`,
    },
    {
      name: "requests at rest, service apiserver",
      value: sum(r.atRest.service),
      unit: "/s",
      detail: top(r.atRest.service),
    },
  ];
}

function agentFigures(r: LifecycleReport): Figure[] {
  const perAgent = Math.round(r.n / r.managementClusters);
  return r.agentsAtReady.map((a) => ({
    name: `${a.name} live heap at Ready`,
    value: Math.round(a.liveHeapBytes / 2 ** 20),
    unit: "MB",
    detail: `${perAgent} clusters; RSS then ${a.rssMb} MB`,
  }));
}

function flag(argv: string[], name: string, fallback: number): number {
  const { values } = parseArgs({ args: argv, strict: false, options: { [name]: { type: "string" } } });
  const raw = values[name];
  return typeof raw === "string" ? Number(raw) : fallback;
}

/**
 * `--scenario lifecycle [--n 1000] [--management-clusters 5] [--concurrency 50] [--clusters-per-subscription 10]
 * [--phase-timeout-s 3600] [--no-restart] [--no-delete] [--delete-slice K] [--restore] [--cpu-profile]
 * [--rest-s 0]`: scenarios 1 and 4 in one run; `--restore` (with `--no-delete`) adds the region's loss and
 * restore after the restart; `--delete-slice K` deletes only the first K clusters, the rest resident.
 */
export const lifecycleScenario: Scenario = {
  describe: "lifecycle at scale and a restart with the region full (processes apart, raw-client floor)",
  async run({ n, argv }) {
    const report = await benchLifecycle({
      n: n ?? 1000,
      managementClusters: flag(argv, "management-clusters", 5),
      concurrency: flag(argv, "concurrency", 50),
      clustersPerSubscription: flag(argv, "clusters-per-subscription", 10),
      restart: !argv.includes("--no-restart"),
      restore: argv.includes("--restore"),
      deletion: !argv.includes("--no-delete"),
      phaseTimeoutMs: flag(argv, "phase-timeout-s", 3600) * 1000,
      cpuProfile: argv.includes("--cpu-profile"),
      restSeconds: flag(argv, "rest-s", 0),
      ...(argv.includes("--delete-slice") && { deleteSlice: flag(argv, "delete-slice", 0) }),
      ...(argv.includes("--floor-slice") && { floorSlice: flag(argv, "floor-slice", 0) }),
    });
    const cpuTotal = (cpu: Record<string, number> | undefined): number =>
      Object.values(cpu ?? {}).reduce((a, b) => a + b, 0);
    const scale = await scaleComparison({
      finishedAt: new Date().toISOString(),
      n: report.n,
      createCpuPerCluster: cpuTotal(report.cpu.create) / report.n,
      floorCpuPerCluster: cpuTotal(report.physicalFloor.create.cpu) / report.n,
    });
    return {
      figures: lifecycleFigures(report),
      comparisons: [...lifecycleComparisons(report), ...scale],
      report,
    };
  },
};
