/**
 * `npm run bench -- --scenario frontend`: the ARM frontend under a steady open-loop load beside its
 * floor, in one run against one fresh service apiserver (no controllers).
 *
 * The frontend runs as a process of its own (operators/frontend/main.ts, mutual TLS), as in a
 * cluster; the load comes from this process. Four phases, each `--frontend-rate` requests per
 * second for `--frontend-seconds`, not waiting for one request before sending the next:
 *  1. floor create: the HcpCluster the frontend writes for a PUT, created through the Kubernetes
 *     client (the same CR, a new name each time);
 *  2. PUT: ARM cluster creates through the frontend (a 201 each);
 *  3. floor get: those floor CRs read through the Kubernetes client;
 *  4. GET: the PUT's clusters read through the frontend (a 200 each).
 * The floor goes first, so any slowdown from a growing etcd is charged to ours. A request's latency
 * is measured from its scheduled send time, so a stall is not hidden by requests never sent during
 * it. A short warm-up of each kind (not counted) precedes the phases.
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
import { subscriptionNamespace } from "../operators/frontend/names.ts";
import { configMapType } from "../operators/releases/catalog.ts";
import { KubeClient } from "../operators/runtime/kube.ts";
import { ArmClient, clusterBody, clusterPath, frontendCerts } from "../test/support/frontend.ts";
import { difference, requestCounts, type RequestCounts } from "./bench/apiserver-metrics.ts";
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
  return {
    rate,
    requests: n ?? Math.round(rate * num("frontend-seconds")),
    warmup: Math.round(rate * num("frontend-warmup-s")),
    cpuProfileDir: values["cpu-prof"] ? resolve(".local/bench-prof/frontend") : undefined,
  };
}

function progress(message: string): void {
  process.stderr.write(`[bench frontend] ${message}\n`);
}

interface PhaseResult {
  /** Milliseconds per request from its scheduled send time, ascending; a failed request counts too. */
  latenciesMs: number[];
  errors: number;
  firstError?: string;
  /** Requests completed per second over the phase. */
  achievedRps: number;
  /** How late this process sent its latest request: over a few ms, the load generator lagged. */
  maxSendLagMs: number;
  /** Requests the service apiserver served during the phase, by verb and resource. */
  apiserver: RequestCounts;
  /** CPU seconds of the frontend process during the phase. */
  frontendCpuSeconds: number;
}

/** Sends `count` requests at `rps`, not waiting for one before the next; `send` resolves true on success. */
async function openLoop(
  count: number,
  rps: number,
  send: (i: number) => Promise<boolean>,
): Promise<Omit<PhaseResult, "apiserver" | "frontendCpuSeconds">> {
  const intervalMs = 1000 / rps;
  const started = performance.now();
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let maxSendLagMs = 0;
  const inflight: Promise<void>[] = [];
  const failed = (why: string): void => {
    errors++;
    firstError ??= why;
  };
  for (let i = 0; i < count; i++) {
    const due = started + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    maxSendLagMs = Math.max(maxSendLagMs, performance.now() - due);
    inflight.push(
      send(i).then(
        (ok) => {
          latencies.push(performance.now() - due);
          if (!ok) failed("unexpected status");
        },
        (err: unknown) => {
          latencies.push(performance.now() - due);
          failed(err instanceof Error ? err.message : String(err));
        },
      ),
    );
  }
  await Promise.all(inflight);
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    latenciesMs: latencies,
    errors,
    ...(firstError ? { firstError } : {}),
    achievedRps: count / seconds,
    maxSendLagMs,
  };
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

/** One phase with the apiserver's request counts and the frontend's CPU around it. */
async function phase(
  bench: Bench,
  name: string,
  opts: FrontendOptions,
  send: (i: number) => Promise<boolean>,
): Promise<PhaseResult> {
  progress(`${name}: ${opts.requests} at ${opts.rate}/s`);
  const counts0 = await requestCounts(bench.kube);
  const cpu0 = (await sampleProcess(bench.frontendPid)).cpuSeconds;
  const result = await openLoop(opts.requests, opts.rate, send);
  const cpu1 = (await sampleProcess(bench.frontendPid)).cpuSeconds;
  const apiserver = difference(await requestCounts(bench.kube), counts0);
  const ms = (p: number): number => Math.round(percentile(result.latenciesMs, p) * 10) / 10;
  progress(
    `${name}: p50 ${ms(50)} ms, p99 ${ms(99)} ms, ${result.errors} errors${result.firstError ? ` (${result.firstError})` : ""}`,
  );
  return { ...result, apiserver, frontendCpuSeconds: Math.round((cpu1 - cpu0) * 10) / 10 };
}

function total(counts: RequestCounts): number {
  let n = 0;
  for (const v of counts.values()) n += v;
  return n;
}

function countsText(counts: RequestCounts, per: number): string {
  return [...counts]
    .filter(([, v]) => v / per >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${Math.round((v / per) * 100) / 100}`)
    .join(", ");
}

function phaseFigures(name: string, r: PhaseResult, opts: FrontendOptions, viaFrontend: boolean): Figure[] {
  const ms = (p: number): number => Math.round(percentile(r.latenciesMs, p) * 10) / 10;
  const errors = r.errors > 0 ? `, ${r.errors} FAILED (${r.firstError ?? ""})` : "";
  const detail = `${r.latenciesMs.length} at ${opts.rate}/s, done at ${Math.round(r.achievedRps)}/s, send lag ≤ ${Math.round(r.maxSendLagMs)} ms${errors}`;
  const per = r.latenciesMs.length || 1;
  return [
    { name: `${name} p50`, value: ms(50), unit: "ms", detail },
    { name: `${name} p99`, value: ms(99), unit: "ms" },
    { name: `${name} max`, value: ms(100), unit: "ms" },
    {
      name: `${name} apiserver calls`,
      value: Math.round((total(r.apiserver) / per) * 100) / 100,
      unit: "per req",
      detail: countsText(r.apiserver, per),
    },
    ...(viaFrontend
      ? [{ name: `${name} frontend cpu`, value: r.frontendCpuSeconds, unit: "s", detail: "during the phase" }]
      : []),
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
    // Warm-up: each kind at the rate, on names the phases do not use.
    const warm = { ...opts, requests: opts.warmup };
    const w = 1_000_000;
    if (opts.warmup > 0) {
      await phase(bench, "warm-up floor create", warm, floorCreate(w));
      await phase(bench, "warm-up PUT", warm, armPut(w));
      await phase(bench, "warm-up floor get", warm, floorGet(w));
      await phase(bench, "warm-up GET", warm, armGet(w));
    }
    const rawCreate = await phase(bench, "floor create", opts, floorCreate(0));
    const put = await phase(bench, "PUT", opts, armPut(0));
    const rawGet = await phase(bench, "floor get", opts, floorGet(0));
    const get = await phase(bench, "GET", opts, armGet(0));
    const p99 = (r: PhaseResult): number => Math.round(percentile(r.latenciesMs, 99) * 10) / 10;
    const figures = [
      ...phaseFigures("floor create (raw HcpCluster)", rawCreate, opts, false),
      ...phaseFigures("frontend PUT (create)", put, opts, true),
      ...phaseFigures("floor get (raw HcpCluster)", rawGet, opts, false),
      ...phaseFigures("frontend GET", get, opts, true),
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
