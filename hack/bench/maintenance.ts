/**
 * `npm run bench -- --scenario maintenance [--n <clusters>] [--rollout-clusters <n>]` (issue 33):
 *  1. Decision speed and memory at N clusters (default 10,000), in a process of its own started
 *     with --expose-gc: the real MaintenanceController is constructed on a stand-in apiserver that
 *     serves N HcpClusters and N MaintenanceRuns from memory (list and an idle watch: the figure is
 *     the controllers' own cost, not the apiserver's), then every run goes through the actuator's
 *     real findCluster, heedTask, schedule and admit over the controller's own informers. The heap
 *     figures are heapUsed after a full GC, with and without. Floors from the same run: a pass over
 *     the same cached runs and clusters reading only the fields a decision reads, and the heap of
 *     the runs' parsed JSON.
 *  2. A rollout over 1,000 placed clusters on a real kube-apiserver (maintenance-rollout.ts).
 */
import { spawn } from "node:child_process";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  API_VERSION,
  HcpClusterResource,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceSpec,
  type MaintenanceTask,
  type Weekday,
} from "../../operators/api/v1alpha1/index.ts";
import { Admissions } from "../../operators/maintenance/admission.ts";
import { MaintenanceController } from "../../operators/maintenance/controller.ts";
import { admit, findCluster, heedTask, schedule } from "../../operators/maintenance/run-phases.ts";
import { storedFacts, type RunScope } from "../../operators/maintenance/run-scope.ts";
import { composeRunStatus } from "../../operators/maintenance/run-status.ts";
import { desiredRun } from "../../operators/maintenance/runs.ts";
import type { TaskRegistry } from "../../operators/maintenance/step.ts";
import { taskRegistry } from "../../operators/maintenance/tasks.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import type { Informer } from "../../operators/runtime/informer.ts";
import { silentLogger } from "../../operators/runtime/logger.ts";
import { rolloutFigures } from "./maintenance-rollout.ts";
import { compare, type Figure, type Scenario, type ScenarioResult } from "./types.ts";

const MANAGEMENT_CLUSTERS = 20;
const NOW = new Date("2026-06-03T10:00:00Z"); // a Wednesday
const TIME_ZONES = [
  "UTC",
  "America/New_York",
  "Europe/London",
  "Asia/Tokyo",
  "Australia/Sydney",
  "America/Los_Angeles",
  "Europe/Berlin",
  "Asia/Kolkata",
];
const DAYS: Weekday[] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
/** The fleet's tasks: the same type, each with its own limit per management cluster. */
const TASK_LIMITS = [1, 5, 10, 25];

const hh = (h: number): string => `${String(h % 24).padStart(2, "0")}:00`;

/** Cluster i's windows and freezes: a quarter any time, the rest weekly windows in 8 zones, a tenth frozen now. */
export function maintenanceOf(i: number): MaintenanceSpec | undefined {
  if (i % 4 === 0) return undefined;
  const start = (i * 7) % 24;
  const spec: MaintenanceSpec = {
    timeZone: TIME_ZONES[i % TIME_ZONES.length]!,
    windows: [
      { days: [DAYS[i % 7]!, DAYS[(i + 3) % 7]!], start: hh(start), end: hh(start + 4) },
      ...(i % 3 === 0 ? [{ days: DAYS.slice(0, 5), start: hh(start + 12), end: hh(start + 14) }] : []),
    ],
  };
  if (i % 10 === 1)
    spec.freezes = [{ start: "2026-06-01T00:00:00Z", end: "2026-06-08T00:00:00Z", reason: "release week" }];
  if (i % 10 === 6) spec.freezes = [{ start: "2026-07-01T00:00:00Z", end: "2026-07-03T00:00:00Z" }];
  return spec;
}

const pad = (i: number): string => String(i).padStart(5, "0");
export const managementClusterOf = (i: number): string =>
  `mgmt-${String((i % MANAGEMENT_CLUSTERS) + 1).padStart(2, "0")}`;

function fleetCluster(i: number): HcpCluster {
  const maintenance = maintenanceOf(i);
  return {
    apiVersion: API_VERSION,
    kind: "HcpCluster",
    metadata: {
      name: `c${pad(i)}`,
      namespace: `customer-${pad(Math.floor(i / 4))}`,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      resourceVersion: String(1000 + i),
      generation: 1,
      creationTimestamp: "2026-05-01T00:00:00Z",
      labels: { fleet: "bench" },
    },
    spec: {
      version: { id: "4.19", channelGroup: "stable" },
      dns: { baseDomainPrefix: `c${pad(i)}` },
      ...(maintenance ? { maintenance } : {}),
    },
    status: { managementCluster: managementClusterOf(i), version: "4.19.7" },
  } as unknown as HcpCluster;
}

function fleetTask(k: number): MaintenanceTask {
  return {
    apiVersion: API_VERSION,
    kind: "MaintenanceTask",
    metadata: {
      name: `rotate-keys-${k + 1}`,
      uid: `task-${k}`,
      resourceVersion: String(10 + k),
      generation: 1,
    },
    spec: {
      task: "RotateServiceAccountSigningKey",
      clusters: { selector: { matchLabels: { fleet: "bench", wave: String(k + 1) } } },
      maxConcurrentPerManagementCluster: TASK_LIMITS[k]!,
    },
  };
}

/**
 * Run i as the controllers leave it: a tenth Succeeded, one in fifty Running (one per cluster and
 * under every limit), half the rest Waiting with their Progressing condition, the others Pending.
 */
function fleetRun(
  i: number,
  cluster: HcpCluster,
  task: MaintenanceTask,
  registry: TaskRegistry,
): MaintenanceRun {
  const run = desiredRun(task, cluster);
  run.metadata = {
    ...run.metadata,
    uid: `run-${i}`,
    resourceVersion: String(20_000 + i),
    generation: 1,
    creationTimestamp: "2026-06-01T00:00:00Z",
    finalizers: ["hcp.aro.dev/maintenance-run"],
  };
  const facts = storedFacts(run, registry.get(run.spec.taskType));
  if (i % 10 === 9) {
    facts.phase = "Succeeded";
    facts.reason = "Succeeded";
    facts.startedAt = "2026-06-02T01:00:00Z";
    facts.completedAt = "2026-06-02T01:05:00Z";
    facts.managementCluster = managementClusterOf(i);
    for (const s of facts.steps) Object.assign(s, { state: "Succeeded", message: "done" });
  } else if (i % 50 === 1) {
    facts.phase = "Running";
    facts.startedAt = "2026-06-03T09:55:00Z";
    facts.managementCluster = managementClusterOf(i);
  } else if (i % 2 === 0) {
    facts.phase = "Waiting";
    facts.reason = "OutsideMaintenanceWindow";
    facts.message =
      "Waiting: outside the cluster's maintenance windows; next window opens 2026-06-04T02:00:00Z";
  } else return run;
  run.status = composeRunStatus(facts, undefined, 1, new Date("2026-06-03T09:00:00Z"));
  return run;
}

function outcomeOf(scope: RunScope): string {
  if (scope.stored === "Running") return "already Running";
  if (scope.facts.phase === "Running") return "admitted now";
  return scope.held ? `${scope.facts.phase} ${scope.facts.reason}` : scope.facts.phase;
}

/** What the stand-in apiserver serves: each object's JSON, by plural. */
type Served = Map<string, string[]>;

/** LIST in pages (continue = offset) and a WATCH that stays open and quiet: the informers' whole need. */
async function standInApiserver(served: Served): Promise<{ url: string; close(): void }> {
  const watches = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const plural = url.pathname.split("/").pop() ?? "";
    const items = served.get(plural);
    if (!items) return void res.writeHead(404).end();
    res.setHeader("content-type", "application/json");
    if (url.searchParams.get("watch") === "true") {
      res.writeHead(200);
      res.flushHeaders();
      watches.add(res);
      res.on("close", () => watches.delete(res));
      return;
    }
    const limit = Number(url.searchParams.get("limit") ?? items.length);
    const from = Number(url.searchParams.get("continue") ?? 0);
    const next = from + limit < items.length ? String(from + limit) : undefined;
    res.end(
      `{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"50000"${next ? `,"continue":"${next}"` : ""}},"items":[${items.slice(from, from + limit).join(",")}]}`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const w of watches) w.destroy();
      server.close();
    },
  };
}

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error("the decision bench needs node --expose-gc");
  collect();
  collect();
};
const heapMb = (): number => {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const round = (x: number, digits = 1): number => Math.round(x * 10 ** digits) / 10 ** digits;

async function synced(informers: Array<Pick<Informer, "waitForSync">>): Promise<void> {
  await Promise.all(informers.map((i) => i.waitForSync()));
}

export interface DecisionReport {
  clusters: number;
  runs: number;
  /** The first pass, nothing compiled yet: wall and CPU milliseconds. */
  coldMs: number;
  coldCpuMs: number;
  /** A warm pass (the median of three). */
  decideMs: number;
  decideCpuMs: number;
  floorMs: number;
  floorCpuMs: number;
  /** What the pass decided, by outcome. */
  outcomes: Record<string, number>;
  clusterCacheMb: number;
  maintenanceAddsMb: number;
  admissionsMb: number;
  runsJsonMb: number;
  runsFloorMb: number;
}

/** The fleet as the stand-in apiserver serves it: n clusters, n runs (one each) of the fleet's tasks. */
function servedFleet(n: number, registry: TaskRegistry): Served {
  const tasks = TASK_LIMITS.map((_, k) => fleetTask(k));
  const clusters: string[] = [];
  const runs: string[] = [];
  for (let i = 0; i < n; i++) {
    const cluster = fleetCluster(i);
    (cluster.metadata.labels as Record<string, string>).wave = String((i % TASK_LIMITS.length) + 1);
    clusters.push(JSON.stringify(cluster));
    runs.push(JSON.stringify(fleetRun(i, cluster, tasks[i % tasks.length]!, registry)));
  }
  return new Map([
    ["hcpclusters", clusters],
    ["maintenanceruns", runs],
    ["maintenancetasks", tasks.map((t) => JSON.stringify(t))],
  ]);
}

interface Caches {
  runs: Informer<MaintenanceRun>;
  clusters: Informer<HcpCluster>;
  maintenanceTasks: Informer<MaintenanceTask>;
  registry: TaskRegistry;
}

interface Timed {
  wallMs: number;
  cpuMs: number;
}

function timed(work: () => void): Timed {
  const cpu = process.cpuUsage();
  const started = performance.now();
  work();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/** The median by CPU of `times` timings after one to warm up (compiled, as in a running process). */
function warmMedian(times: number, work: () => Timed): Timed {
  work();
  const all = Array.from({ length: times }, work).sort((a, b) => a.cpuMs - b.cpuMs);
  return all[Math.floor(times / 2)]!;
}

const CTX = { signal: new AbortController().signal, log: silentLogger };

/** One pass: every run through the phases a reconcile runs before its status write. */
function decisionPass(c: Caches, admissions: Admissions, outcomes: Record<string, number> = {}): Timed {
  const { runs, registry } = c;
  const deps = { ...c, tasks: registry, admissions } as unknown as RunScope["deps"];
  return timed(() => {
    for (const run of runs.list()) {
      const definition = registry.get(run.spec.taskType);
      const stored = run.status?.phase ?? "Pending";
      const facts = storedFacts(run, definition);
      const scope: RunScope = { deps, run, now: NOW, log: silentLogger, facts, stored, definition };
      // These four phases are synchronous: a reconcile's work before its one status write.
      for (const phase of [findCluster, heedTask, schedule, admit]) void phase(CTX, scope);
      const outcome = outcomeOf(scope);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  });
}

/**
 * The time floor: the same cached runs and clusters, reading what any decision must (the run's
 * cluster, its window spec, its task's switches, its phase and placement), counting per placement.
 */
function floorPass({ runs, clusters, maintenanceTasks }: Caches): Timed {
  let touched = 0;
  const result = timed(() => {
    const perPlacement = new Map<string, number>();
    for (const run of runs.list()) {
      const cluster = clusters.get(run.metadata.namespace ?? "", run.spec.clusterRef.name);
      touched += fieldsRead(run, cluster, maintenanceTasks.get("", run.spec.task));
      const key = `${run.spec.task}/${cluster?.status?.managementCluster ?? ""}`;
      if (run.status?.phase === "Running") perPlacement.set(key, (perPlacement.get(key) ?? 0) + 1);
    }
    touched += perPlacement.size;
  });
  if (touched < 0) throw new Error("unreachable: keeps the floor's reads live");
  return result;
}

/** Reads what a decision must read of a run, its cluster's maintenance spec and its task; a count. */
function fieldsRead(
  run: MaintenanceRun,
  cluster: HcpCluster | undefined,
  task: MaintenanceTask | undefined,
): number {
  const m = cluster?.spec.maintenance;
  const spec = [m?.windows?.length, m?.freezes?.length, m?.timeZone?.length];
  const times = [run.spec.notBefore, run.spec.notAfter, run.spec.urgency];
  const switches = task?.spec.paused === true || task?.spec.cancelled === true ? 1 : 0;
  return spec.reduce<number>((s, x) => s + (x ?? 0), 0) + times.filter(Boolean).length + switches;
}

const kubeconfigFor = (url: string): string =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: s, cluster: {server: "${url}"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: s, user: u}}]\ncurrent-context: c\n`;

/** The part that needs a heap of its own: run in a child started with --expose-gc. */
async function decide(n: number): Promise<DecisionReport> {
  const stub = (): Promise<never> => Promise.reject(new Error("the decision bench runs no step"));
  const registry = taskRegistry({
    signingKeys: { rotationState: stub, beginRotation: stub, switchSigningKey: stub, retireExpired: stub },
  });
  const served = servedFleet(n, registry);
  const runsJsonMb = served.get("maintenanceruns")!.reduce((s, j) => s + j.length, 0) / 2 ** 20;
  const apiserver = await standInApiserver(served);
  const registryOfClusters = new ClusterRegistry();
  const h0 = heapMb();
  const service = registryOfClusters.add("service", { yaml: kubeconfigFor(apiserver.url) });
  // The HcpCluster cache is shared: the cluster controller holds it in the operators whatever else runs.
  const clusters = service.informer<HcpCluster>(HcpClusterResource);
  await synced([clusters]);
  const h1 = heapMb();
  const controller = new MaintenanceController({ cluster: service, tasks: registry, log: silentLogger });
  const runs = service.informer<MaintenanceRun>(MaintenanceRunResource);
  const maintenanceTasks = service.informer<MaintenanceTask>(MaintenanceTaskResource);
  await synced([runs, maintenanceTasks]);
  const h2 = heapMb();

  const caches: Caches = { runs, clusters, maintenanceTasks, registry };
  // The first pass is cold (nothing compiled yet), as after a restart; then warm passes.
  const cold = decisionPass(caches, new Admissions(runs));
  const warm = warmMedian(3, () => decisionPass(caches, new Admissions(runs)));
  const outcomes: Record<string, number> = {};
  const admissions = new Admissions(runs);
  decisionPass(caches, admissions, outcomes);
  const h3 = heapMb();
  const floor = warmMedian(3, () => floorPass(caches));

  // The memory floor: the runs as plain parsed JSON, nothing else.
  const parsed = served.get("maintenanceruns")!.map((j) => JSON.parse(j) as MaintenanceRun);
  const h4 = heapMb();
  // All held until here: the last heap reading counts them.
  if (parsed.length !== n || !controller || !admissions) throw new Error("the floor parsed another count");
  registryOfClusters.stopAll();
  apiserver.close();
  return {
    clusters: clusters.list().length,
    runs: runs.list().length,
    coldMs: round(cold.wallMs),
    coldCpuMs: round(cold.cpuMs),
    decideMs: round(warm.wallMs),
    decideCpuMs: round(warm.cpuMs),
    floorMs: round(floor.wallMs, 2),
    floorCpuMs: round(floor.cpuMs, 2),
    outcomes,
    clusterCacheMb: round(h1 - h0),
    maintenanceAddsMb: round(h3 - h1),
    admissionsMb: round(h3 - h2),
    runsJsonMb: round(runsJsonMb),
    runsFloorMb: round(h4 - h3),
  };
}

/** Starts this file as the decision child (--expose-gc) and takes its report from stdout's last line. */
function decideInChild(n: number): Promise<DecisionReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", fileURLToPath(import.meta.url), "--decide", String(n)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      const last = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !last) return reject(new Error(`the decision child exited ${code}: ${out}`));
      resolve(JSON.parse(last) as DecisionReport);
    });
  });
}

function decisionResult(r: DecisionReport): ScenarioResult {
  const outcomes = Object.entries(r.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  const figures: Figure[] = [
    {
      name: "decide every run, first pass (CPU)",
      value: r.coldCpuMs,
      unit: "ms",
      detail: `wall ${r.coldMs} ms; nothing compiled yet, as after a restart; ${r.runs} runs on ${r.clusters} clusters, ${MANAGEMENT_CLUSTERS} management clusters: ${outcomes}`,
    },
    {
      name: "decide every run, warm (CPU)",
      value: r.decideCpuMs,
      unit: "ms",
      detail: `wall ${r.decideMs} ms; median of 3`,
    },
    {
      name: "decision floor, warm (CPU)",
      value: r.floorCpuMs,
      unit: "ms",
      detail: `wall ${r.floorMs} ms; one pass reading the fields a decision reads`,
    },
    {
      name: "heap the maintenance controller adds",
      value: r.maintenanceAddsMb,
      unit: "MB",
      detail: `runs + tasks informers, indexes, queues, and ${r.admissionsMb} MB of decision state (admissions, window memo, compiled code)`,
    },
    {
      name: "heap of the shared HcpCluster cache",
      value: r.clusterCacheMb,
      unit: "MB",
      detail: "held for the cluster controller anyway; not counted above",
    },
    { name: "runs' JSON as served", value: r.runsJsonMb, unit: "MB" },
  ];
  const ms = (name: string, ours: number, against: string, peer: number) =>
    ({ name, unit: "ms CPU", ours, against, peer }) as const;
  return {
    figures,
    comparisons: [
      compare(ms("first pass vs target", r.coldCpuMs, "the issue's 1 s", 1000), { atMost: 1 }),
      compare(ms("warm pass vs floor", r.decideCpuMs, "one read pass over the cache", r.floorCpuMs)),
      compare(
        {
          name: "heap added vs target",
          unit: "MB",
          ours: r.maintenanceAddsMb,
          against: "the issue's 50 MB",
          peer: 50,
        },
        { atMost: 1 },
      ),
      compare({
        name: "heap added vs floor",
        unit: "MB",
        ours: r.maintenanceAddsMb,
        against: "the runs' parsed JSON",
        peer: r.runsFloorMb,
      }),
    ],
    report: r,
  };
}

export const maintenanceScenario: Scenario = {
  describe: "maintenance: every run decided at 10,000 clusters, heap added; a rollout over 1,000 clusters",
  async run({ n, argv }) {
    const { values } = parseArgs({
      args: argv,
      strict: false,
      options: { "rollout-clusters": { type: "string" }, "skip-rollout": { type: "boolean" } },
    });
    const decision = decisionResult(await decideInChild(n ?? 10_000));
    if (values["skip-rollout"]) return decision;
    const rollout = await rolloutFigures(Number(values["rollout-clusters"] ?? 1000));
    return {
      figures: [...decision.figures, ...rollout.figures],
      comparisons: [...decision.comparisons, ...rollout.comparisons],
      report: { decision: decision.report, rollout: rollout.report },
    };
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "--decide") {
  const report = await decide(Number(process.argv[3] ?? 10_000));
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}
