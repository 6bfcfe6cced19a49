/**
 * `npm run bench -- --scenario frontend`: the ARM frontend under a steady open-loop load beside its
 * floor, in one run against one fresh service apiserver (no controllers).
 *
 * The frontend runs as a process of its own (operators/frontend/main.ts, mutual TLS), as in a
 * cluster; the load comes from this process, `--frontend-rate` requests per second for
 * `--frontend-seconds` of each kind, not waiting for one request before sending the next:
 *  - PUT (ARM cluster creates through the frontend, a 201 each) beside the floor create: the
 *    HcpCluster such a PUT writes, created through the Kubernetes client (a new name each time);
 *  - then GET of those clusters through the frontend beside the floor get of the floor's CRs.
 * Ours and its floor take turns in slices of `--frontend-slice-s` at the full rate, so a stall of
 * the shared machine lands on both alike rather than on whichever phase it happens in. A request's
 * latency is measured from its scheduled send time, so a stall is not hidden by requests never
 * sent during it. Each kind is first run alone for a short warm-up (not counted), which is also
 * where its apiserver calls per request are counted.
 *
 * Targets (issue 11): PUT p99 ≤ 50 ms and ≤ 1.5 × the floor create's p99; GET p99 ≤ 10 ms.
 */
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { HcpClusterResource, type HcpCluster } from "../operators/api/v1alpha1/index.ts";
import { NamespaceResource } from "../operators/api/core.ts";
import { subscriptionNamespace } from "../operators/frontend/mapping/names.ts";
import { configMapType } from "../operators/releases/catalog.ts";
import { KubeClient } from "../operators/runtime/kube.ts";
import { ArmClient, clusterBody, clusterPath, frontendCerts } from "../test/support/frontend.ts";
import {
  difference,
  meanMs,
  requestCounts,
  requestSeconds,
  type RequestCounts,
} from "./bench/apiserver-metrics.ts";
import { startOurProcess } from "./bench/transport-sides.ts";
import { compare, percentile, type Comparison, type Figure, type Scenario } from "./bench/types.ts";
import { sampleProcess } from "./bench/usage.ts";
import { freePort } from "./harness/ports.ts";
import { startRegion, type Region } from "./harness/region.ts";
import { catalogConfigMap } from "./harness/stack.ts";

export interface FrontendOptions {
  /** Requests per second in every phase. */
  rate: number;
  /** Requests per phase. */
  requests: number;
  /** Requests of each kind sent first and not counted. */
  warmup: number;
  /** Requests in each turn of ours or its floor. */
  slice: number;
  cpuProfileDir?: string;
}

/** PUT p99 at most this, and at most FLOOR_RATIO × the floor create's p99; GET p99 at most GET_P99_MS. */
const PUT_P99_MS = 50;
const FLOOR_RATIO = 1.5;
const GET_P99_MS = 10;

/**
 *   --frontend-rate <n>       requests per second in each phase (default 200)
 *   --frontend-seconds <s>    length of each phase (default 60); --n gives the requests per phase instead
 *   --frontend-warmup-s <s>   warm-up of each kind, not counted (default 3)
 *   --frontend-slice-s <s>    length of each turn of ours or its floor (default 5)
 *   --cpu-prof                run the frontend with node --cpu-prof into .local/bench-prof/frontend/
 */
export function parseFrontendOptions(argv: string[], n: number | undefined): FrontendOptions {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      "frontend-rate": { type: "string", default: "200" },
      "frontend-seconds": { type: "string", default: "60" },
      "frontend-warmup-s": { type: "string", default: "3" },
      "frontend-slice-s": { type: "string", default: "5" },
      "cpu-prof": { type: "boolean", default: false },
    },
  });
  const num = (key: keyof typeof values): number => {
    const v = Number(values[key]);
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${key} must be a non-negative number`);
    return v;
  };
  const rate = num("frontend-rate");
  if (rate <= 0) throw new Error("--frontend-rate must be positive");
  const slice = Math.max(1, Math.round(rate * num("frontend-slice-s")));
  const requests = n ?? Math.round(rate * num("frontend-seconds"));
  return {
    rate,
    // Whole turns, so ours and its floor send the same number.
    requests: Math.ceil(requests / slice) * slice,
    slice,
    warmup: Math.round(rate * num("frontend-warmup-s")),
    cpuProfileDir: values["cpu-prof"] ? resolve(".local/bench-prof/frontend") : undefined,
  };
}

function progress(message: string): void {
  process.stderr.write(`[bench frontend] ${message}\n`);
}

/** One kind of request: its latencies and failures. */
interface Latencies {
  /** Milliseconds per request from its scheduled send time, ascending; a failed request counts too. */
  latenciesMs: number[];
  errors: number;
  firstError?: string;
}

/** A run of the open loop: each kind's latencies, and what held for all of them. */
interface LoopResult {
  kinds: Latencies[];
  /** Requests completed per second over the run, all kinds together. */
  achievedRps: number;
  /** How late this process sent its latest request: over a few ms, the load generator lagged. */
  maxSendLagMs: number;
  /** Requests the service apiserver served during the run, by verb and resource. */
  apiserver: RequestCounts;
  /** The apiserver's own mean milliseconds per request during the run, by verb and resource. */
  apiserverMs: Map<string, number>;
  /** CPU seconds of the frontend process during the run. */
  frontendCpuSeconds: number;
}

type Send = (i: number) => Promise<boolean>;

/**
 * Sends `perKind` requests of each kind at `rps`, not waiting for one before the next; the kinds
 * take turns of `slice` requests (one kind: one turn). `send` resolves true on success.
 */
async function openLoop(
  perKind: number,
  rps: number,
  slice: number,
  sends: Send[],
): Promise<Pick<LoopResult, "kinds" | "achievedRps" | "maxSendLagMs">> {
  const intervalMs = 1000 / rps;
  const started = performance.now();
  const kinds: Latencies[] = sends.map(() => ({ latenciesMs: [], errors: 0 }));
  let maxSendLagMs = 0;
  const inflight: Promise<void>[] = [];
  const total = perKind * sends.length;
  for (let k = 0; k < total; k++) {
    const turn = Math.floor(k / slice);
    const kind = kinds[turn % sends.length]!;
    const i = Math.floor(turn / sends.length) * slice + (k % slice);
    const due = started + k * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    maxSendLagMs = Math.max(maxSendLagMs, performance.now() - due);
    const failed = (why: string): void => {
      kind.errors++;
      kind.firstError ??= why;
    };
    inflight.push(
      sends[turn % sends.length]!(i).then(
        (ok) => {
          kind.latenciesMs.push(performance.now() - due);
          if (!ok) failed("unexpected status");
        },
        (err: unknown) => {
          kind.latenciesMs.push(performance.now() - due);
          failed(err instanceof Error ? err.message : String(err));
        },
      ),
    );
  }
  await Promise.all(inflight);
  const seconds = (performance.now() - started) / 1000;
  for (const kind of kinds) kind.latenciesMs.sort((a, b) => a - b);
  return { kinds, achievedRps: total / seconds, maxSendLagMs };
}

/** The cluster a PUT made, renamed: what the floor creates, so both write the same bytes. */
function floorCopy(template: HcpCluster, name: string): HcpCluster {
  const { namespace, labels, annotations } = template.metadata;
  return {
    apiVersion: template.apiVersion,
    kind: template.kind,
    metadata: { name, namespace, labels, annotations },
    spec: template.spec,
  };
}

interface Bench {
  region: Region;
  kube: KubeClient;
  arm: ArmClient;
  frontendPid: number;
  subscription: string;
  template: HcpCluster;
  stop(): Promise<void>;
}

async function startBench(opts: FrontendOptions): Promise<Bench> {
  progress("starting a region");
  const region = await startRegion({ managementClusters: 0, broker: false });
  const stops: Array<() => Promise<void>> = [() => region.stop()];
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const kubeconfigPath = region.clusters.find((c) => c.role === "service")!.kubeconfigPath;
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const kube = new KubeClient("service", kc);
    const catalogNamespace = "hcp-bench-catalog";
    await kube.create(NamespaceResource, { metadata: { name: catalogNamespace } });
    await kube.apply(configMapType, await catalogConfigMap(catalogNamespace), { fieldManager: "bench" });
    const dir = join(region.workDir, "bench-frontend");
    await mkdir(dir, { recursive: true });
    const certs = await frontendCerts(dir);
    const listenPort = await freePort();
    const proc = await startOurProcess(
      "hcp-frontend",
      "operators/frontend/main.ts",
      [
        `--kubeconfig=${kubeconfigPath}`,
        `--listen=127.0.0.1:${listenPort}`,
        `--tls-cert=${certs.serving.certPath}`,
        `--tls-key=${certs.serving.keyPath}`,
        `--client-ca=${certs.clientCA}`,
        `--catalog-namespace=${catalogNamespace}`,
      ],
      { region, cpuProfileDir: opts.cpuProfileDir, logDir: resolve(".local/bench-logs/frontend") },
    );
    stops.push(() => proc.stop());
    const arm = await ArmClient.create(`https://127.0.0.1:${listenPort}`, certs);
    stops.push(() => arm.close());
    const subscription = randomUUID();
    const registered = await arm.send("PUT", `/subscriptions/${subscription}`, {
      apiVersion: "2.0",
      body: { state: "Registered", registrationDate: new Date().toISOString() },
    });
    if (registered.status >= 300) throw new Error(`subscription PUT: HTTP ${registered.status}`);
    const probe = await arm.send("PUT", clusterPath(subscription, "bench-template", "template"), {
      body: clusterBody(subscription),
    });
    if (probe.status !== 201)
      throw new Error(`template PUT: HTTP ${probe.status} ${JSON.stringify(probe.body)}`);
    const ns = subscriptionNamespace(subscription);
    const written = await kube.listAll<HcpCluster>(HcpClusterResource, { namespace: ns });
    const template = written.items[0];
    if (!template) throw new Error(`the template PUT wrote no HcpCluster in ${ns}`);
    return { region, kube, arm, frontendPid: proc.pid, subscription, template, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One run of the open loop with the apiserver's requests and the frontend's CPU around it. */
async function run(
  bench: Bench,
  opts: FrontendOptions,
  what: { names: string[]; perKind: number; sends: Send[] },
): Promise<LoopResult> {
  const { names, perKind, sends } = what;
  progress(`${names.join(" and ")}: ${perKind} each at ${opts.rate}/s`);
  const counts0 = await requestCounts(bench.kube);
  const seconds0 = await requestSeconds(bench.kube);
  const cpu0 = (await sampleProcess(bench.frontendPid)).cpuSeconds;
  const result = await openLoop(perKind, opts.rate, sends.length > 1 ? opts.slice : perKind, sends);
  const cpu1 = (await sampleProcess(bench.frontendPid)).cpuSeconds;
  const apiserver = difference(await requestCounts(bench.kube), counts0);
  const apiserverMs = meanMs(await requestSeconds(bench.kube), seconds0);
  result.kinds.forEach((k, i) => {
    const ms = (p: number): number => Math.round(percentile(k.latenciesMs, p) * 10) / 10;
    const why = k.firstError ? ` (${k.firstError})` : "";
    progress(`${names[i] ?? ""}: p50 ${ms(50)} ms, p99 ${ms(99)} ms, ${k.errors} errors${why}`);
  });
  return { ...result, apiserver, apiserverMs, frontendCpuSeconds: Math.round((cpu1 - cpu0) * 10) / 10 };
}

function total(counts: RequestCounts): number {
  let n = 0;
  for (const v of counts.values()) n += v;
  return n;
}

/** The apiserver's mean time for the kinds of request a run sent (at least one per 100 requests). */
function meansText(r: LoopResult, requests: number): string {
  return [...r.apiserverMs]
    .filter(([k]) => (r.apiserver.get(k) ?? 0) / requests >= 0.01)
    .map(([k, ms]) => `${k} ${ms} ms`)
    .join(", ");
}

function countsText(counts: RequestCounts, per: number): string {
  return [...counts]
    .filter(([, v]) => v / per >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${Math.round((v / per) * 100) / 100}`)
    .join(", ");
}

/** Latency figures of one kind in an interleaved run. */
function latencyFigures(name: string, k: Latencies, opts: FrontendOptions, run: LoopResult): Figure[] {
  const ms = (p: number): number => Math.round(percentile(k.latenciesMs, p) * 10) / 10;
  const errors = k.errors > 0 ? `, ${k.errors} FAILED (${k.firstError ?? ""})` : "";
  const detail = `${k.latenciesMs.length} at ${opts.rate}/s in turns of ${opts.slice}; all done at ${Math.round(run.achievedRps)}/s, send lag ≤ ${Math.round(run.maxSendLagMs)} ms${errors}`;
  return [
    { name: `${name} p50`, value: ms(50), unit: "ms", detail },
    { name: `${name} p99`, value: ms(99), unit: "ms" },
    { name: `${name} max`, value: ms(100), unit: "ms" },
  ];
}

/** What one request of a kind cost, from its warm-up run (that kind alone). */
function callFigures(name: string, warm: LoopResult | undefined, opts: FrontendOptions): Figure[] {
  if (!warm) return [];
  const per = opts.warmup || 1;
  return [
    {
      name: `${name} apiserver calls`,
      value: Math.round((total(warm.apiserver) / per) * 100) / 100,
      unit: "per req",
      detail: `${countsText(warm.apiserver, per)} (warm-up, alone)`,
    },
  ];
}

/** The frontend's CPU and the apiserver's mean times over an interleaved run. */
function runFigures(name: string, run: LoopResult, opts: FrontendOptions): Figure[] {
  return [
    {
      name: `${name} frontend cpu per request`,
      value: Math.round((run.frontendCpuSeconds / opts.requests) * 1000 * 100) / 100,
      unit: "ms",
      detail: `${run.frontendCpuSeconds} s over the run; the apiserver's mean: ${meansText(run, 2 * opts.requests)}`,
    },
  ];
}

export async function runFrontend(
  opts: FrontendOptions,
): Promise<{ figures: Figure[]; comparisons: Comparison[] }> {
  if (opts.cpuProfileDir) await mkdir(opts.cpuProfileDir, { recursive: true });
  const bench = await startBench(opts);
  try {
    const { arm, kube, subscription, template } = bench;
    const ns = template.metadata.namespace ?? "";
    const body = clusterBody(subscription);
    const path = (i: number): string => clusterPath(subscription, `bench-${i % 10}`, `cluster-${i}`);
    const floorName = (i: number): string => `floor-${i}`;
    const armPut = (offset: number) => async (i: number) =>
      (await arm.send("PUT", path(offset + i), { body })).status === 201;
    const armGet = (offset: number) => async (i: number) =>
      (await arm.send("GET", path(offset + i))).status === 200;
    const floorCreate = (offset: number) => async (i: number) => {
      await kube.create(HcpClusterResource, floorCopy(template, floorName(offset + i)));
      return true;
    };
    const floorGet = (offset: number) => async (i: number) => {
      await kube.get(HcpClusterResource, floorName(offset + i), ns);
      return true;
    };
    // Warm-up: each kind alone at the rate, on names the measured runs do not use.
    const w = 1_000_000;
    const warm = async (name: string, send: Send): Promise<LoopResult | undefined> =>
      opts.warmup > 0
        ? run(bench, opts, { names: [`warm-up ${name}`], perKind: opts.warmup, sends: [send] })
        : undefined;
    const warmFloorCreate = await warm("floor create", floorCreate(w));
    const warmPut = await warm("PUT", armPut(w));
    const warmFloorGet = await warm("floor get", floorGet(w));
    const warmGet = await warm("GET", armGet(w));
    const perKind = opts.requests;
    const creates = await run(bench, opts, {
      names: ["floor create", "PUT"],
      perKind,
      sends: [floorCreate(0), armPut(0)],
    });
    const reads = await run(bench, opts, {
      names: ["floor get", "GET"],
      perKind,
      sends: [floorGet(0), armGet(0)],
    });
    const [rawCreate, put] = creates.kinds as [Latencies, Latencies];
    const [rawGet, get] = reads.kinds as [Latencies, Latencies];
    const p99 = (r: Latencies): number => Math.round(percentile(r.latenciesMs, 99) * 10) / 10;
    const figures = [
      ...latencyFigures("floor create (raw HcpCluster)", rawCreate, opts, creates),
      ...callFigures("floor create (raw HcpCluster)", warmFloorCreate, opts),
      ...latencyFigures("frontend PUT (create)", put, opts, creates),
      ...callFigures("frontend PUT (create)", warmPut, opts),
      ...runFigures("frontend PUT (create)", creates, opts),
      ...latencyFigures("floor get (raw HcpCluster)", rawGet, opts, reads),
      ...callFigures("floor get (raw HcpCluster)", warmFloorGet, opts),
      ...latencyFigures("frontend GET", get, opts, reads),
      ...callFigures("frontend GET", warmGet, opts),
      ...runFigures("frontend GET", reads, opts),
    ];
    const failed = put.errors + get.errors + rawCreate.errors + rawGet.errors;
    const note = failed > 0 ? `${failed} requests failed (counted at their latency)` : undefined;
    const rate = `@${opts.rate}/s`;
    const comparisons = [
      compare(
        {
          name: `PUT p99 ${rate}`,
          unit: "ms",
          ours: p99(put),
          against: "raw create floor",
          peer: p99(rawCreate),
        },
        { atMost: FLOOR_RATIO },
      ),
      compare(
        { name: `PUT p99 ${rate}`, unit: "ms", ours: p99(put), against: "absolute target", peer: PUT_P99_MS },
        { atMost: 1 },
      ),
      compare(
        { name: `GET p99 ${rate}`, unit: "ms", ours: p99(get), against: "absolute target", peer: GET_P99_MS },
        { atMost: 1 },
      ),
      compare({
        name: `GET p99 ${rate}`,
        unit: "ms",
        ours: p99(get),
        against: "raw get floor",
        peer: p99(rawGet),
      }),
    ].map((c) => (note ? { ...c, note } : c));
    return { figures, comparisons };
  } finally {
    await bench.stop();
  }
}

export const frontendScenario: Scenario = {
  describe: "ARM frontend PUT and GET, open loop at a fixed rate, beside a raw HcpCluster create and get",
  run: ({ n, argv }) => runFrontend(parseFrontendOptions(argv, n)),
};
