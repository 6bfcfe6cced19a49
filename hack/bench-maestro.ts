/**
 * `npm run bench -- --scenario transport`: the Maestro transport beside the real Maestro.
 *
 * Five setups, each in a fresh region (apiservers, one mosquitto with TLS and ACLs) with two
 * consumers, every component a separate process: the real `maestro server` (PostgreSQL) with real
 * `maestro agent`s, ours (operators/main.ts running maestro-server, operators/maestro-agent/main.ts),
 * both mixes, and the floor: the same bundles' spec events published raw by the bench process and
 * answered raw with an Applied status by one responder process per consumer (no apiserver, no
 * apply; hack/bench/transport-floor.ts). For each:
 *  - throughput: N bundles (one ConfigMap each) spread over the consumers, `--concurrency` creates
 *    in flight; works/s over the whole run and create → status-back latency, a bundle being back
 *    when its status shows Applied at the generation created (ours: the ManifestWork's Applied
 *    condition with its observedGeneration; the real server: the status its gRPC Subscribe stream
 *    pushes, Applied at resource version 1; the floor: the status event itself);
 *  - Maestro's own apply-latency shape (ours and the real pair by default): bursts of 20, 50 and
 *    100 bundles every 30 s, `--shape-rounds` bursts of each size, in a fresh region.
 * CPU seconds (during the measured window) and peak RSS are per process: server, each agent. The
 * databases behind the servers (PostgreSQL, etcd through the apiserver) are not counted.
 * Ours is compared with the real pair (at least 2× its works/s, at most half its p99, each agent's
 * peak RSS at most 1.5× the real agent's for the same consumer at the same load) and with the
 * floor (at least half its works/s, at most twice its p99).
 */
import { mkdir, readFile, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startRegion, type Region } from "./harness/region.ts";
import { ClusterRegistry } from "../operators/runtime/clusters.ts";
import type { KubeClient } from "../operators/runtime/kube.ts";
import { difference, requestCounts, writes, type RequestCounts } from "./bench/apiserver-metrics.ts";
import {
  ensureNamespace,
  startAgents,
  startServer,
  type AgentSide,
  type Component,
  type Implementation,
  type ServerSide,
} from "./bench/transport-sides.ts";
import { startRawAgents, startRawServer } from "./bench/transport-floor.ts";
import { compare, percentile, type Comparison, type Figure, type Scenario } from "./bench/types.ts";
import { sampleProcess, type ProcessSample } from "./bench/usage.ts";

/** The floor's ends: a raw publisher in the bench process and raw responders (hack/bench/transport-floor.ts). */
type Side = Implementation | "raw";

const SETUPS = {
  floor: { label: "raw MQTT publisher + raw responders (floor)", server: "raw", agent: "raw" },
  real: { label: "real server + real agent", server: "real", agent: "real" },
  ours: { label: "our server + our agent", server: "ours", agent: "ours" },
  "ours-server": { label: "our server + real agent", server: "ours", agent: "real" },
  "real-server": { label: "real server + our agent", server: "real", agent: "ours" },
} as const satisfies Record<string, { label: string; server: Side; agent: Side }>;
type SetupId = keyof typeof SETUPS;

const CONSUMERS = ["mgmt-1", "mgmt-2"];
/** Where the ConfigMaps go on each management cluster. */
const TARGET_NAMESPACE = "bench";

export interface TransportOptions {
  works: number;
  concurrency: number;
  setups: SetupId[];
  shapeSetups: SetupId[];
  shapeSizes: number[];
  shapeRounds: number;
  shapeIntervalMs: number;
  /** Per batch: how long to wait for the last status before reporting the missing ones. */
  timeoutMs: number;
  /** Per batch: give up on the rest when no status came back for this long. */
  stallMs: number;
  cpuProfileDir?: string;
}

function setupList(value: string, flag: string): SetupId[] {
  const ids = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const id of ids)
    if (!(id in SETUPS))
      throw new Error(`${flag}: unknown setup "${id}" (${Object.keys(SETUPS).join(", ")})`);
  return ids as SetupId[];
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} must be a positive integer, not "${value}"`);
  return n;
}

/**
 *   --setups <ids>          floor,real,ours,ours-server,real-server (default: all five)
 *   --concurrency <n>       creates in flight during the throughput run (default 20)
 *   --shape-setups <ids>    setups that also run the apply-latency shape (default ours,real; "" for none)
 *   --shape-sizes <list>    burst sizes (default 20,50,100)
 *   --shape-rounds <n>      bursts of each size (default 2)
 *   --shape-interval-s <s>  seconds between bursts (default 30)
 *   --timeout-s <s>         wait for a batch's statuses at most this long (default 60 + N/4)
 *   --stall-s <s>           stop waiting when no status came back for this long (default 60): lost
 *   --cpu-prof              run our processes with node --cpu-prof into .local/bench-prof/<setup>-<phase>/
 * Our processes' logs are kept in .local/bench-logs/<setup>-<phase>/ (HCP_LOG_LEVEL, default error).
 */
export function parseTransportOptions(argv: string[], n: number | undefined): TransportOptions {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      setups: { type: "string", default: Object.keys(SETUPS).join(",") },
      concurrency: { type: "string", default: "20" },
      "shape-setups": { type: "string", default: "ours,real" },
      "shape-sizes": { type: "string", default: "20,50,100" },
      "shape-rounds": { type: "string", default: "2" },
      "shape-interval-s": { type: "string", default: "30" },
      "timeout-s": { type: "string" },
      "stall-s": { type: "string", default: "60" },
      "cpu-prof": { type: "boolean", default: false },
    },
  });
  const str = (key: keyof typeof values): string => String(values[key] ?? "");
  const works = n ?? 1000;
  return {
    works,
    concurrency: positiveInt(str("concurrency"), "--concurrency"),
    setups: setupList(str("setups"), "--setups"),
    shapeSetups: setupList(str("shape-setups"), "--shape-setups"),
    shapeSizes: str("shape-sizes")
      .split(",")
      .filter(Boolean)
      .map((s) => positiveInt(s, "--shape-sizes")),
    shapeRounds: positiveInt(str("shape-rounds"), "--shape-rounds"),
    shapeIntervalMs: positiveInt(str("shape-interval-s"), "--shape-interval-s") * 1000,
    timeoutMs: values["timeout-s"]
      ? positiveInt(str("timeout-s"), "--timeout-s") * 1000
      : 60_000 + works * 250,
    stallMs: positiveInt(str("stall-s"), "--stall-s") * 1000,
    cpuProfileDir: values["cpu-prof"] ? resolve(".local/bench-prof") : undefined,
  };
}

function progress(message: string): void {
  process.stderr.write(`[bench transport] ${message}\n`);
}

/** Send times of one batch and the latencies of the bundles come back so far. */
class StatusTracker {
  readonly #sentAt = new Map<string, number>();
  readonly latenciesMs: number[] = [];
  readonly #expected: number;
  #resolve: () => void = () => undefined;
  readonly allBack: Promise<void>;
  /** performance.now() of the latest status counted, or of the tracker's creation. */
  lastBackAt = performance.now();

  constructor(expected: number) {
    this.#expected = expected;
    this.allBack = new Promise((r) => (this.#resolve = r));
    if (expected === 0) this.#resolve();
  }

  sent(key: string): void {
    this.#sentAt.set(key, performance.now());
  }

  applied(key: string): void {
    const t0 = this.#sentAt.get(key);
    if (t0 === undefined) return; // another batch's, or a later status of one already counted
    this.#sentAt.delete(key);
    this.lastBackAt = performance.now();
    this.latenciesMs.push(this.lastBackAt - t0);
    if (this.latenciesMs.length === this.#expected) this.#resolve();
  }

  get missing(): number {
    return this.#expected - this.latenciesMs.length;
  }

  /** Latencies ascending, a status that never came back counting as Infinity. */
  sorted(): number[] {
    return [...this.latenciesMs.toSorted((a, b) => a - b), ...Array<number>(this.missing).fill(Infinity)];
  }
}

/**
 * Waits for every status of the batch: true once all are back, false when none came for `stallMs`
 * (a lost status never comes: Maestro resends statuses only on a resync) or after `timeoutMs`.
 */
async function waitForStatuses(tracker: StatusTracker, timeoutMs: number, stallMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await within(tracker.allBack, 1_000)) return true;
    const now = performance.now();
    if (now > deadline || now - tracker.lastBackAt > stallMs) return false;
  }
}

/** Resolves true when `promise` settles first, false after `ms`. */
async function within(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((r) => (timer = setTimeout(() => r(false), Math.max(0, ms))));
  const done = await Promise.race([promise.then(() => true as const), expired]);
  clearTimeout(timer);
  return done;
}

interface SetupEnv {
  /** The service cluster's client: its apiserver's request counts show what our server wrote. */
  service: KubeClient;
  /** The region's own processes (apiservers, etcd, mosquitto, controller managers). */
  infrastructure: Component[];
  server: ServerSide;
  agents: AgentSide;
  /** Status reports go to every tracker registered here. */
  trackers: Set<StatusTracker>;
  nextIndex: number;
}

/** Creates bundles `indices`, round-robin over the consumers, `concurrency` calls in flight. */
async function submitAll(env: SetupEnv, tracker: StatusTracker, indices: number[], concurrency: number) {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < indices.length) {
      const i = indices[next++]!;
      const consumer = CONSUMERS[i % CONSUMERS.length]!;
      const key = env.server.keyFor(consumer, i);
      tracker.sent(key);
      await env.server.submit(key, consumer, i, TARGET_NAMESPACE);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, indices.length) }, () => worker()));
}

function take(env: SetupEnv, count: number): number[] {
  const first = env.nextIndex;
  env.nextIndex += count;
  return Array.from({ length: count }, (_, k) => first + k);
}

/** The processes the region runs, by the pid files it keeps in its work dir; ours and Maestro's are not among them. */
async function regionProcesses(region: Region): Promise<Component[]> {
  const names = (await readdir(region.workDir)).filter((f) => f.endsWith(".pid"));
  const out: Component[] = [];
  for (const file of names) {
    const name = file.slice(0, -".pid".length);
    if (!/^(etcd|mosquitto|kube-apiserver-.+|kube-controller-manager-.+)$/.test(name)) continue;
    out.push({ name, pid: Number((await readFile(join(region.workDir, file), "utf8")).trim()) });
  }
  return out;
}

async function sampleAll(components: Component[]): Promise<Map<string, ProcessSample>> {
  const samples = new Map<string, ProcessSample>();
  for (const c of components) samples.set(c.name, await sampleProcess(c.pid));
  return samples;
}

/** Starts a fresh region, the setup's server and agents, runs `body`, and stops everything. */
async function withSetup<T>(
  id: SetupId,
  phase: "throughput" | "shape",
  opts: TransportOptions,
  body: (env: SetupEnv) => Promise<T>,
) {
  const setup = SETUPS[id];
  progress(`${id}: starting a region`);
  const region: Region = await startRegion({ managementClusters: CONSUMERS.length });
  const registry = new ClusterRegistry();
  try {
    const service = registry.add("service", {
      path: region.clusters.find((c) => c.name === "service")!.kubeconfigPath,
    }).client;
    for (const consumer of CONSUMERS) {
      const mgmt = registry.add(consumer, {
        path: region.clusters.find((c) => c.name === consumer)!.kubeconfigPath,
      });
      await ensureNamespace(mgmt.client, TARGET_NAMESPACE);
    }
    const sideOpts = {
      region,
      consumers: CONSUMERS,
      cpuProfileDir: opts.cpuProfileDir && join(opts.cpuProfileDir, `${id}-${phase}`),
      logDir: resolve(`.local/bench-logs/${id}-${phase}`),
    };
    progress(`${id}: starting ${setup.label}`);
    const server = await (setup.server === "raw"
      ? startRawServer(sideOpts)
      : startServer(setup.server, sideOpts));
    let agents: AgentSide | undefined;
    try {
      agents = await (setup.agent === "raw" ? startRawAgents(sideOpts) : startAgents(setup.agent, sideOpts));
      const infrastructure = await regionProcesses(region);
      const env: SetupEnv = { service, infrastructure, server, agents, trackers: new Set(), nextIndex: 0 };
      server.onApplied((key) => {
        for (const t of env.trackers) t.applied(key);
      });
      return await body(env);
    } finally {
      await agents?.stop();
      await server.stop();
    }
  } finally {
    registry.stopAll();
    await region.stop();
  }
}

function ms(sorted: number[], p: number): number {
  return Math.round(percentile(sorted, p));
}

/** The service apiserver's writes per work during the run (ours: the bench's create and the server's writes). */
function serviceWrites(id: SetupId, requests: RequestCounts, works: number): Figure {
  const perWork = (n: number): number => Math.round((n / works) * 100) / 100;
  const detail = [...requests]
    .filter(([verb]) => !verb.startsWith("GET") && !verb.startsWith("LIST"))
    .sort((a, b) => b[1] - a[1])
    .map(([verb, n]) => `${verb} ${perWork(n)}`)
    .join(", ");
  return { name: `${id} service writes/work`, value: perWork(writes(requests)), unit: "writes", detail };
}

const cpuOf = (c: Component, before: Map<string, ProcessSample>, after: Map<string, ProcessSample>): number =>
  (after.get(c.name)?.cpuSeconds ?? 0) - (before.get(c.name)?.cpuSeconds ?? 0);

/** CPU of the region's processes during the run, grouped (apiservers of the management clusters together). */
function infrastructureFigures(
  id: SetupId,
  infrastructure: Component[],
  before: Map<string, ProcessSample>,
  after: Map<string, ProcessSample>,
): Figure[] {
  const groups = new Map<string, number>();
  for (const c of infrastructure) {
    const group = c.name.replace(/-mgmt-\d+$/, " (management clusters)").replace(/-service$/, " (service)");
    groups.set(group, (groups.get(group) ?? 0) + cpuOf(c, before, after));
  }
  return [...groups].map(([group, cpu]) => ({
    name: `${id} ${group} cpu`,
    value: Math.round(cpu * 10) / 10,
    unit: "s",
  }));
}

/** CPU milliseconds per work come back, over every process the bench can see (not PostgreSQL). */
function cpuPerWork(
  id: SetupId,
  all: Component[],
  samples: { before: Map<string, ProcessSample>; after: Map<string, ProcessSample> },
  works: number,
): Figure {
  const seconds = all.reduce((sum, c) => sum + cpuOf(c, samples.before, samples.after), 0);
  return {
    name: `${id} cpu per work`,
    value: Math.round((seconds / Math.max(1, works)) * 1000 * 10) / 10,
    unit: "ms",
    detail: "server, agents, apiservers, etcd, mosquitto, controller managers (not PostgreSQL)",
  };
}

function usageFigures(
  id: SetupId,
  components: Component[],
  before: Map<string, ProcessSample>,
  after: Map<string, ProcessSample>,
): Figure[] {
  return components.flatMap((c) => {
    const a = after.get(c.name)!;
    const cpu = Math.round((a.cpuSeconds - before.get(c.name)!.cpuSeconds) * 10) / 10;
    return [
      { name: `${id} ${c.name} cpu`, value: cpu, unit: "s", detail: "during the run" },
      { name: `${id} ${c.name} peak rss`, value: a.peakRssMb, unit: "MB" },
    ];
  });
}

interface ThroughputResult {
  worksPerSecond: number;
  /** Peak RSS of each agent process, by consumer. */
  agentRssMb: Map<string, number>;
  /** Statuses that never came back. */
  lost: number;
  p50: number;
  p99: number;
  figures: Figure[];
}

async function throughput(id: SetupId, opts: TransportOptions): Promise<ThroughputResult> {
  return withSetup(id, "throughput", opts, async (env) => {
    const components = [...env.server.components, ...env.agents.components];
    const everything = [...components, ...env.infrastructure];
    const tracker = new StatusTracker(opts.works);
    env.trackers.add(tracker);
    progress(`${id}: ${opts.works} bundles, ${opts.concurrency} in flight`);
    const before = await sampleAll(everything);
    const counts0 = await requestCounts(env.service);
    const started = performance.now();
    await submitAll(env, tracker, take(env, opts.works), opts.concurrency);
    const createdMs = performance.now() - started;
    const complete = await waitForStatuses(tracker, opts.timeoutMs - createdMs, opts.stallMs);
    const waitedMs = performance.now() - started;
    const after = await sampleAll(everything);
    const requests = difference(await requestCounts(env.service), counts0);
    const sorted = tracker.sorted();
    const back = tracker.latenciesMs.length;
    // Over the time to the last status back, so a wait for lost ones does not count.
    const totalMs = tracker.lastBackAt - started;
    const worksPerSecond = Math.round((back / totalMs) * 1000 * 10) / 10;
    const detail = complete
      ? `${back} over ${CONSUMERS.length} consumers in ${Math.round(totalMs)} ms (all created after ${Math.round(createdMs)} ms)`
      : `${tracker.missing} of ${opts.works} LOST (none back for ${opts.stallMs / 1000} s or timed out after ${Math.round(waitedMs)} ms); ${back} back in ${Math.round(totalMs)} ms`;
    const p50 = ms(sorted, 50);
    const p99 = ms(sorted, 99);
    progress(
      `${id}: ${worksPerSecond} works/s, p50 ${p50} ms, p99 ${p99} ms${complete ? "" : `, ${tracker.missing} lost`}`,
    );
    const agentRssMb = new Map(
      env.agents.components.map((c) => [c.name.replace(/^agent /, ""), after.get(c.name)!.peakRssMb]),
    );
    return {
      worksPerSecond,
      agentRssMb,
      p50,
      p99,
      lost: tracker.missing,
      figures: [
        {
          name: `${id} works/s`,
          value: worksPerSecond,
          unit: "works/s",
          detail: `${SETUPS[id].label}; ${detail}`,
        },
        { name: `${id} status-back p50`, value: p50, unit: "ms" },
        { name: `${id} status-back p99`, value: p99, unit: "ms" },
        { name: `${id} status-back max`, value: ms(sorted, 100), unit: "ms" },
        // With statuses lost p99 is Infinity; this says how long the ones that came back took.
        ...(complete
          ? []
          : [
              {
                name: `${id} status-back p99 of those back`,
                value: ms(
                  tracker.latenciesMs.toSorted((a, b) => a - b),
                  99,
                ),
                unit: "ms",
                detail: `${back} of ${opts.works}`,
              },
            ]),
        ...(SETUPS[id].server === "ours" ? [serviceWrites(id, requests, opts.works)] : []),
        ...usageFigures(id, components, before, after),
        ...infrastructureFigures(id, env.infrastructure, before, after),
        cpuPerWork(id, everything, { before, after }, back),
      ],
    };
  });
}

/** p99 per burst size, over all its rounds. */
type ShapeResult = { p99BySize: Map<number, number>; figures: Figure[] };

async function shape(id: SetupId, opts: TransportOptions): Promise<ShapeResult> {
  return withSetup(id, "shape", opts, async (env) => {
    const bySize = new Map<number, StatusTracker[]>();
    for (const size of opts.shapeSizes) {
      for (let round = 0; round < opts.shapeRounds; round++) {
        const tick = performance.now();
        const tracker = new StatusTracker(size);
        env.trackers.add(tracker);
        bySize.set(size, [...(bySize.get(size) ?? []), tracker]);
        await submitAll(env, tracker, take(env, size), size);
        // Open loop: the next burst goes at its time whether or not this one is all back.
        await within(tracker.allBack, opts.shapeIntervalMs - (performance.now() - tick));
        progress(`${id}: burst of ${size} #${round + 1}: ${size - tracker.missing} back`);
        await new Promise((r) =>
          setTimeout(r, Math.max(0, opts.shapeIntervalMs - (performance.now() - tick))),
        );
      }
    }
    const trackers = [...bySize.values()].flat();
    await within(
      Promise.all(trackers.map((t) => t.allBack)).then(() => undefined),
      opts.timeoutMs,
    );
    const p99BySize = new Map<number, number>();
    const figures = [...bySize].flatMap(([size, list]) => {
      const sorted = list.flatMap((t) => t.sorted()).sort((a, b) => a - b);
      const missing = list.reduce((sum, t) => sum + t.missing, 0);
      const missed = missing > 0 ? `; ${missing} NOT BACK` : "";
      p99BySize.set(size, ms(sorted, 99));
      const name = `${id} shape ${size}/${opts.shapeIntervalMs / 1000}s`;
      return [
        {
          name: `${name} p50`,
          value: ms(sorted, 50),
          unit: "ms",
          detail: `${opts.shapeRounds} bursts of ${size}${missed}`,
        },
        { name: `${name} p99`, value: ms(sorted, 99), unit: "ms" },
        { name: `${name} max`, value: ms(sorted, 100), unit: "ms" },
      ];
    });
    return { p99BySize, figures };
  });
}

/** Runs a setup's part, reporting a failure as a figure instead of ending the scenario. */
async function attempt<T>(what: string, run: () => Promise<T>, failed: Figure[]): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    progress(`${what} failed: ${message}`);
    failed.push({ name: `${what} FAILED`, value: NaN, unit: "", detail: message.split("\n")[0] });
    return undefined;
  }
}

/** Each of our agents' peak RSS beside the real agent's for the same consumer, both at the same load. */
function agentRss(ours: ThroughputResult, real: ThroughputResult): Comparison[] {
  return [...ours.agentRssMb].flatMap(([consumer, mb]) => {
    const peer = real.agentRssMb.get(consumer);
    if (peer === undefined) return [];
    const c = {
      name: `agent ${consumer} peak RSS`,
      unit: "MB",
      ours: mb,
      against: "real Maestro agent",
      peer,
    };
    return [compare(c, { atMost: 1.5 })];
  });
}

/**
 * Ours beside a peer in works/s and status-back p50/p99: the real pair (targets ≥ 2× its works/s,
 * ≤ half its p99) or the raw floor (≥ half its works/s, ≤ twice its p99).
 */
function beside(
  ours: ThroughputResult,
  peer: ThroughputResult,
  against: { name: string; label: string },
  targets: { worksPerSecond: number; p99: number },
): Comparison[] {
  const pair = (name: string, unit: string, value: (r: ThroughputResult) => number) => ({
    name,
    unit,
    ours: value(ours),
    against: against.label,
    peer: value(peer),
  });
  const out = [
    compare(
      pair("transport works/s", "works/s", (r) => r.worksPerSecond),
      { atLeast: targets.worksPerSecond },
    ),
    compare(
      pair("transport status-back p99", "ms", (r) => r.p99),
      { atMost: targets.p99 },
    ),
    compare(pair("transport status-back p50", "ms", (r) => r.p50)),
  ];
  if (ours.lost || peer.lost)
    for (const c of out)
      c.note = `statuses lost: ours ${ours.lost}, ${against.name} ${peer.lost} (lost = Infinity)`;
  return out;
}

function comparisons(runs: Map<SetupId, ThroughputResult>, shapes: Map<SetupId, ShapeResult>): Comparison[] {
  const ours = runs.get("ours");
  const real = runs.get("real");
  const floor = runs.get("floor");
  const out: Comparison[] = [];
  const against = "real Maestro";
  if (ours && real)
    out.push(
      ...beside(ours, real, { name: "real", label: against }, { worksPerSecond: 2, p99: 0.5 }),
      ...agentRss(ours, real),
    );
  if (ours && floor)
    out.push(
      ...beside(ours, floor, { name: "floor", label: "raw MQTT floor" }, { worksPerSecond: 0.5, p99: 2 }),
    );
  const ourShape = shapes.get("ours");
  const realShape = shapes.get("real");
  if (ourShape && realShape) {
    for (const [size, p99] of ourShape.p99BySize) {
      const peer = realShape.p99BySize.get(size);
      if (peer !== undefined)
        out.push(compare({ name: `shape burst ${size} p99`, unit: "ms", ours: p99, against, peer }));
    }
  }
  return out;
}

export async function runTransport(
  opts: TransportOptions,
): Promise<{ figures: Figure[]; comparisons: Comparison[] }> {
  if (opts.cpuProfileDir) await mkdir(opts.cpuProfileDir, { recursive: true });
  const figures: Figure[] = [];
  const runs = new Map<SetupId, ThroughputResult>();
  const shapes = new Map<SetupId, ShapeResult>();
  for (const id of opts.setups) {
    const result = await attempt(id, () => throughput(id, opts), figures);
    if (result) {
      runs.set(id, result);
      figures.push(...result.figures);
    }
  }
  for (const id of opts.shapeSetups) {
    const result = await attempt(`${id} shape`, () => shape(id, opts), figures);
    if (result) {
      shapes.set(id, result);
      figures.push(...result.figures);
    }
  }
  return { figures, comparisons: comparisons(runs, shapes) };
}

export const transportScenario: Scenario = {
  describe:
    "Maestro transport: ours, the real Maestro, both mixes and a raw MQTT floor (works/s, status-back p50/p99, agent RSS, shape)",
  run: ({ n, argv }) => runTransport(parseTransportOptions(argv, n)),
};
