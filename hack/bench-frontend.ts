/**
 * `npm run bench -- --scenario frontend`: the ARM frontend under a steady open-loop load beside its
 * floor, in one run against one fresh service apiserver (no controllers).
 *
 * The frontend runs as a process of its own (operators/frontend/main.ts, mutual TLS), as in a
 * cluster; the load comes from this process, `rate` requests per second for `--seconds` of each
 * kind, not waiting for one request before sending the next:
 *  - PUT (ARM cluster creates through the frontend, a 201 each) beside the floor create: the
 *    HcpCluster such a PUT writes, created through the Kubernetes client (a new name each time);
 *  - then GET of those clusters through the frontend beside the floor get of the floor's CRs.
 * Ours and its floor take turns in slices of `--frontend-slice-s` at the full rate, so a stall of
 * the shared machine lands on both alike rather than on whichever phase it happens in. A request's
 * latency is measured from its scheduled send time, so a stall is not hidden by requests never
 * sent during it. Each kind is first run alone for a short warm-up (not counted), which is also
 * where its apiserver calls and the service apiserver's CPU per request are counted.
 *
 * The rate (issue 37): the targets hold at a rate that leaves the service apiserver half the
 * machine, since at a rate that saturates it every p99, the floor's too, is its queue. Unless
 * `--rate` forces one, the warm-ups run at `--frontend-calibration-rate` as the calibration: the
 * apiserver's CPU time per request of each kind, less what it burns idle (measured just before),
 * gives the rate at which the costlier phase's mix would use half the cores (bench/half-machine-rate.ts).
 *
 * Targets (issue 11, at that rate): PUT p99 ≤ 50 ms and ≤ 1.5 × the floor create's p99; GET p99 ≤ 10 ms.
 */
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { HcpClusterResource, type HcpCluster } from "../operators/api/v1alpha1/index.ts";
import { NamespaceResource } from "../operators/api/core.ts";
import { subscriptionNamespace } from "../operators/frontend/mapping/names.ts";
import { configMapType } from "../operators/releases/catalog.ts";
import { KubeClient } from "../operators/runtime/kube.ts";
import {
  ArmClient,
  clusterBody,
  clusterPath,
  frontendAzure,
  frontendCerts,
} from "../test/support/frontend.ts";
import {
  difference,
  meanMs,
  requestCounts,
  requestSeconds,
  type RequestCounts,
} from "./bench/apiserver-metrics.ts";
import { halfMachineRate, type PhaseCost, type RateChoice } from "./bench/half-machine-rate.ts";
import { startOurProcess } from "./bench/transport-sides.ts";
import { compare, percentile, type Comparison, type Figure, type Scenario } from "./bench/types.ts";
import { sampleProcess } from "./bench/usage.ts";
import { startArmEmulator, type ArmEmulator } from "./harness/arm-emulator/index.ts";
import { setUpCustomerAzure } from "./harness/customer-azure.ts";
import { freePort } from "./harness/ports.ts";
import { startRegion, type Region } from "./harness/region.ts";
import { catalogConfigMap } from "./harness/stack.ts";

export interface FrontendOptions {
  /** Requests per second in every phase, forced by `--rate`; otherwise chosen by the calibration. */
  rate?: number;
  /** Seconds of each measured phase at the rate. */
  seconds: number;
  /** Requests per phase (`--n`), instead of `seconds` at the rate. */
  n?: number;
  /** Seconds of each kind's warm-up, not counted. */
  warmupSeconds: number;
  /** Seconds of each turn of ours or its floor. */
  sliceSeconds: number;
  /** Rate of the warm-ups when they are the calibration (no rate forced). */
  calibrationRate: number;
  cpuProfileDir?: string;
}

/** What a run sends: the rate, and requests per phase and per turn, from the options and a rate. */
interface Plan {
  rate: number;
  /** Requests per phase, whole turns so that ours and its floor send the same number. */
  requests: number;
  /** Requests in each turn of ours or its floor. */
  slice: number;
}

function plan(opts: FrontendOptions, rate: number): Plan {
  const slice = Math.max(1, Math.round(rate * opts.sliceSeconds));
  const requests = opts.n ?? Math.round(rate * opts.seconds);
  return { rate, slice, requests: Math.max(1, Math.ceil(requests / slice)) * slice };
}

/** PUT p99 at most this, and at most FLOOR_RATIO × the floor create's p99; GET p99 at most GET_P99_MS. */
const PUT_P99_MS = 50;
const FLOOR_RATIO = 1.5;
const GET_P99_MS = 10;

/** Seconds of the idle window before the calibration: the apiserver's CPU with no load. */
const IDLE_SECONDS = 3;

/**
 *   --rate <n>                requests per second in each phase (also --frontend-rate); default:
 *                             the rate leaving the service apiserver half the cores, calibrated
 *   --seconds <s>             length of each phase (also --frontend-seconds; default 60); --n gives
 *                             the requests per phase instead
 *   --frontend-warmup-s <s>   warm-up of each kind, not counted (default 3)
 *   --frontend-calibration-rate <n>  rate of the warm-ups when they calibrate (default 50)
 *   --frontend-slice-s <s>    length of each turn of ours or its floor (default 5)
 *   --cpu-prof                run the frontend with node --cpu-prof into .local/bench-prof/frontend/
 */
export function parseFrontendOptions(argv: string[], n: number | undefined): FrontendOptions {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      rate: { type: "string" },
      "frontend-rate": { type: "string" },
      seconds: { type: "string" },
      "frontend-seconds": { type: "string" },
      "frontend-warmup-s": { type: "string", default: "3" },
      "frontend-calibration-rate": { type: "string", default: "50" },
      "frontend-slice-s": { type: "string", default: "5" },
      "cpu-prof": { type: "boolean", default: false },
    },
  });
  const num = (key: keyof typeof values, fallback?: string): number => {
    const v = Number(values[key] ?? fallback);
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${key} must be a non-negative number`);
    return v;
  };
  const positive = (key: keyof typeof values, fallback?: string): number => {
    const v = num(key, fallback);
    if (v <= 0) throw new Error(`--${key} must be positive`);
    return v;
  };
  const forced = values.rate ?? values["frontend-rate"];
  return {
    rate: forced === undefined ? undefined : positive(values.rate ? "rate" : "frontend-rate"),
    seconds: positive(values.seconds ? "seconds" : "frontend-seconds", "60"),
    n,
    warmupSeconds: num("frontend-warmup-s"),
    sliceSeconds: num("frontend-slice-s"),
    calibrationRate: positive("frontend-calibration-rate"),
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
  /** CPU seconds of the service apiserver during the run (unrounded), when its process is ours. */
  apiserverCpuSeconds?: number;
  /** Wall seconds of the run. */
  seconds: number;
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
): Promise<Pick<LoopResult, "kinds" | "achievedRps" | "maxSendLagMs" | "seconds">> {
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
  return { kinds, achievedRps: total / seconds, maxSendLagMs, seconds };
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
  /** The service kube-apiserver's process, absent when the clusters are someone else's. */
  apiserverPid?: number;
  subscription: string;
  template: HcpCluster;
  stop(): Promise<void>;
}

/**
 * Starts the frontend with the emulator's service principal in its environment (the SDK's
 * EnvironmentCredential), restored after the spawn so other scenarios' processes do not inherit it.
 */
async function startFrontendProcess<T>(
  emulator: Pick<ArmEmulator, "tenantId" | "clientId" | "clientSecret">,
  start: () => Promise<T>,
): Promise<T> {
  const vars = {
    AZURE_TENANT_ID: emulator.tenantId,
    AZURE_CLIENT_ID: emulator.clientId,
    AZURE_CLIENT_SECRET: emulator.clientSecret,
  };
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await start();
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
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
    // A create's customer resources are checked in Azure: here the ARM emulator, as in the stack,
    // without ARM's per-subscription request limits: the load is one subscription's, at rates
    // (50 creates a second and up, each reading the customer's identities) that ARM lets a region's
    // many subscriptions reach together, never one; with the limits every PUT past the first
    // seconds was a 503 (Azure could not be checked), the frontend's answer to a throttled ARM.
    const emulator = await startArmEmulator({ workDir: dir, requestLimits: "off" });
    stops.push(() => emulator.stop());
    const listenPort = await freePort();
    const proc = await startFrontendProcess(emulator, () =>
      startOurProcess(
        "hcp-frontend",
        "operators/frontend/main.ts",
        [
          `--kubeconfig=${kubeconfigPath}`,
          `--listen=127.0.0.1:${listenPort}`,
          `--tls-cert=${certs.serving.certPath}`,
          `--tls-key=${certs.serving.keyPath}`,
          `--client-ca=${certs.clientCA}`,
          `--catalog-namespace=${catalogNamespace}`,
          `--azure-endpoint=${emulator.endpoint}`,
          `--azure-authority-host=${emulator.endpoint}`,
          `--azure-ca=${emulator.caPath}`,
        ],
        { region, cpuProfileDir: opts.cpuProfileDir, logDir: resolve(".local/bench-logs/frontend") },
      ),
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
    // Every PUT sends the same body, so one setup backs them all.
    await setUpCustomerAzure(await frontendAzure(emulator), subscription, clusterBody(subscription));
    const probe = await arm.send("PUT", clusterPath(subscription, "bench-template", "template"), {
      body: clusterBody(subscription),
    });
    if (probe.status !== 201)
      throw new Error(`template PUT: HTTP ${probe.status} ${JSON.stringify(probe.body)}`);
    const ns = subscriptionNamespace(subscription);
    const written = await kube.listAll<HcpCluster>(HcpClusterResource, { namespace: ns });
    const template = written.items[0];
    if (!template) throw new Error(`the template PUT wrote no HcpCluster in ${ns}`);
    const apiserverPid = region.clusters.find((c) => c.role === "service")?.apiServer?.process.pid;
    return { region, kube, arm, frontendPid: proc.pid, apiserverPid, subscription, template, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One run of the open loop with the apiserver's requests and the frontend's CPU around it. */
async function run(
  bench: Bench,
  at: Pick<Plan, "rate" | "slice">,
  what: { names: string[]; perKind: number; sends: Send[] },
): Promise<LoopResult> {
  const { names, perKind, sends } = what;
  progress(`${names.join(" and ")}: ${perKind} each at ${at.rate}/s`);
  const counts0 = await requestCounts(bench.kube);
  const seconds0 = await requestSeconds(bench.kube);
  const cpu0 = (await sampleProcess(bench.frontendPid)).cpuSeconds;
  const api0 = await apiserverCpu(bench);
  const result = await openLoop(perKind, at.rate, sends.length > 1 ? at.slice : perKind, sends);
  const api1 = await apiserverCpu(bench);
  const cpu1 = (await sampleProcess(bench.frontendPid)).cpuSeconds;
  const apiserverCpuSeconds = api0 === undefined || api1 === undefined ? undefined : api1 - api0;
  const apiserver = difference(await requestCounts(bench.kube), counts0);
  const apiserverMs = meanMs(await requestSeconds(bench.kube), seconds0);
  result.kinds.forEach((k, i) => {
    const ms = (p: number): number => Math.round(percentile(k.latenciesMs, p) * 10) / 10;
    const why = k.firstError ? ` (${k.firstError})` : "";
    progress(`${names[i] ?? ""}: p50 ${ms(50)} ms, p99 ${ms(99)} ms, ${k.errors} errors${why}`);
  });
  const frontendCpuSeconds = Math.round((cpu1 - cpu0) * 10) / 10;
  return { ...result, apiserver, apiserverMs, frontendCpuSeconds, apiserverCpuSeconds };
}

async function apiserverCpu(bench: Bench): Promise<number | undefined> {
  return bench.apiserverPid === undefined ? undefined : (await sampleProcess(bench.apiserverPid)).cpuSeconds;
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
function latencyFigures(name: string, k: Latencies, opts: Plan, run: LoopResult): Figure[] {
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
function callFigures(name: string, warm: LoopResult | undefined): Figure[] {
  if (!warm) return [];
  const per = warm.kinds[0]?.latenciesMs.length || 1;
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
function runFigures(name: string, run: LoopResult, opts: Plan, cores: number): Figure[] {
  const api = run.apiserverCpuSeconds;
  return [
    ...(api === undefined
      ? []
      : [
          {
            name: `${name} phase: service apiserver cores`,
            value: Math.round((api / run.seconds) * 100) / 100,
            unit: "cores",
            detail: `${Math.round(api * 10) / 10} s CPU over ${Math.round(run.seconds)} s, ours and its floor at ${opts.rate}/s; half the machine is ${cores / 2}`,
          },
        ]),
    {
      name: `${name} frontend cpu per request`,
      value: Math.round((run.frontendCpuSeconds / opts.requests) * 1000 * 100) / 100,
      unit: "ms",
      detail: `${run.frontendCpuSeconds} s over the run; the apiserver's mean: ${meansText(run, 2 * opts.requests)}`,
    },
  ];
}

/** The service apiserver's CPU with no load, in cores, over IDLE_SECONDS. */
async function idleCores(bench: Bench): Promise<number | undefined> {
  const before = await apiserverCpu(bench);
  const started = performance.now();
  // A measurement window, not a wait for anything: the apiserver's background (watches, leases).
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const after = await apiserverCpu(bench);
  if (before === undefined || after === undefined) return undefined;
  return (after - before) / ((performance.now() - started) / 1000);
}

/**
 * The apiserver's CPU ms per request of a warm-up (one kind alone), less its idle CPU meanwhile.
 * A failed request did not cost what a served one does, so a warm-up with failures calibrates nothing.
 */
function apiserverMsPerRequest(warm: LoopResult | undefined, idle: number): number | undefined {
  const kind = warm?.kinds[0];
  const n = kind?.latenciesMs.length ?? 0;
  if (warm?.apiserverCpuSeconds === undefined || n === 0) return undefined;
  if (kind?.errors)
    throw new Error(`calibration: ${kind.errors} of ${n} failed (${kind.firstError ?? ""}); give --rate`);
  return Math.max(0, ((warm.apiserverCpuSeconds - idle * warm.seconds) / n) * 1000);
}

/** The warm-ups, what they and the idle window measured, and the rate chosen from it (or forced). */
interface Calibration {
  warm: Record<Kind, LoopResult | undefined>;
  cores: number;
  /** The service apiserver's idle CPU in cores, when its process is ours. */
  idle?: number;
  warmRate: number;
  warmN: number;
  /** The apiserver's CPU ms per request of each kind, busy less idle. */
  perKind: Partial<Record<Kind, number>>;
  /** Absent when --rate forced the rate. */
  choice?: RateChoice;
  rate: number;
}

type Kind = "floor create" | "PUT" | "floor get" | "GET";

/** Rate and requests of each kind's warm-up, which calibrates unless --rate is given. */
function warmUps(bench: Bench, opts: FrontendOptions): { warmRate: number; warmN: number } {
  const warmRate = opts.rate ?? opts.calibrationRate;
  const warmN = Math.round(warmRate * opts.warmupSeconds);
  if (opts.rate !== undefined) return { warmRate, warmN };
  if (bench.apiserverPid === undefined)
    throw new Error("the service apiserver is not a process of ours to calibrate on: give --rate");
  if (warmN === 0) throw new Error("the calibration is the warm-up: give --frontend-warmup-s > 0, or --rate");
  return { warmRate, warmN };
}

/**
 * The apiserver's idle CPU, then each kind alone (on names the measured runs do not use) at the
 * forced rate or, calibrating, at the calibration rate; then the rate.
 */
async function calibrate(
  bench: Bench,
  opts: FrontendOptions,
  sends: Record<Kind, Send>,
): Promise<Calibration> {
  const { warmRate, warmN } = warmUps(bench, opts);
  const cores = availableParallelism();
  const idle = await idleCores(bench);
  const warm = {} as Record<Kind, LoopResult | undefined>;
  const perKind: Partial<Record<Kind, number>> = {};
  for (const kind of ["floor create", "PUT", "floor get", "GET"] as const) {
    const at = { rate: warmRate, slice: warmN };
    const what = { names: [`warm-up ${kind}`], perKind: warmN, sends: [sends[kind]] };
    warm[kind] = warmN > 0 ? await run(bench, at, what) : undefined;
    // With --rate forced, a warm-up's failures are only reported, not a reason to stop.
    const measured = opts.rate === undefined || !warm[kind]?.kinds[0]?.errors;
    const ms = idle === undefined || !measured ? undefined : apiserverMsPerRequest(warm[kind], idle);
    if (ms !== undefined) perKind[kind] = ms;
  }
  const phase = (name: string, kinds: Kind[]): PhaseCost => ({
    name,
    cpuMsPerRequest: Object.fromEntries(kinds.map((k) => [k, perKind[k] ?? 0])),
  });
  const choice =
    opts.rate === undefined
      ? halfMachineRate(cores, idle ?? 0, [
          phase("create", ["floor create", "PUT"]),
          phase("get", ["floor get", "GET"]),
        ])
      : undefined;
  const rate = opts.rate ?? choice!.rate;
  return { warm, cores, idle, warmRate, warmN, perKind, choice, rate };
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** Why the rate is what it is: the calibration, or --rate. */
function rateWhy(c: Calibration): string {
  if (!c.choice) return "forced by --rate";
  const { budgetCores, limitingMs, limiting } = c.choice;
  return `half of ${c.cores} cores less ${round2(c.idle ?? 0)} idle = ${round2(budgetCores)} cores for the apiserver, over ${round2(limitingMs)} ms of its CPU per request of the ${limiting} phase (ours and its floor in equal turns)`;
}

/** The calibration and the rate it chose (or the forced one), as figures. */
function rateFigures(c: Calibration): Figure[] {
  const kinds = Object.entries(c.perKind).map(([name, ms]) => ({
    name: `calibration: service apiserver cpu per ${name}`,
    value: round2(ms),
    unit: "ms",
    detail: `${c.warmN} alone at ${c.warmRate}/s (the warm-up), less its idle CPU`,
  }));
  const idle =
    c.idle === undefined
      ? []
      : [
          {
            name: "calibration: service apiserver idle",
            value: round2(c.idle),
            unit: "cores",
            detail: `over ${IDLE_SECONDS} s`,
          },
        ];
  return [...idle, ...kinds, { name: "rate", value: c.rate, unit: "/s", detail: rateWhy(c) }];
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
    const w = 1_000_000;
    const cal = await calibrate(bench, opts, {
      "floor create": floorCreate(w),
      PUT: armPut(w),
      "floor get": floorGet(w),
      GET: armGet(w),
    });
    const p = plan(opts, cal.rate);
    progress(`rate ${p.rate}/s: ${rateWhy(cal)}`);
    const creates = await run(bench, p, {
      names: ["floor create", "PUT"],
      perKind: p.requests,
      sends: [floorCreate(0), armPut(0)],
    });
    const reads = await run(bench, p, {
      names: ["floor get", "GET"],
      perKind: p.requests,
      sends: [floorGet(0), armGet(0)],
    });
    const [rawCreate, put] = creates.kinds as [Latencies, Latencies];
    const [rawGet, get] = reads.kinds as [Latencies, Latencies];
    const p99 = (r: Latencies): number => Math.round(percentile(r.latenciesMs, 99) * 10) / 10;
    const figures = [
      ...rateFigures(cal),
      ...latencyFigures("floor create (raw HcpCluster)", rawCreate, p, creates),
      ...callFigures("floor create (raw HcpCluster)", cal.warm["floor create"]),
      ...latencyFigures("frontend PUT (create)", put, p, creates),
      ...callFigures("frontend PUT (create)", cal.warm.PUT),
      ...runFigures("frontend PUT (create)", creates, p, cal.cores),
      ...latencyFigures("floor get (raw HcpCluster)", rawGet, p, reads),
      ...callFigures("floor get (raw HcpCluster)", cal.warm["floor get"]),
      ...latencyFigures("frontend GET", get, p, reads),
      ...callFigures("frontend GET", cal.warm.GET),
      ...runFigures("frontend GET", reads, p, cal.cores),
    ];
    const failed = put.errors + get.errors + rawCreate.errors + rawGet.errors;
    const note = failed > 0 ? `${failed} requests failed (counted at their latency)` : undefined;
    const rate = `@${p.rate}/s${cal.choice ? " (apiserver at half the machine)" : ""}`;
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
