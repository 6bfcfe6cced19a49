/**
 * `npm run bench [-- --scenario <name>[,<name>…]] [--n <count>] [scenario flags]`: speed figures
 * that tests do not assert. Scenarios (all of them without --scenario):
 *  - startup: time to a ready region (etcd + 3 kube-apiservers + CRDs), warm binaries;
 *  - workqueue: add/get/done throughput with dedup, one process;
 *  - lifecycle: N clusters with a node pool each created, a restart, deleted; each component a
 *    process of its own; a raw-client floor (hack/bench/lifecycle.ts, its flags there);
 *  - maintenance: every MaintenanceRun decided at 10,000 clusters and the heap the maintenance
 *    controller adds; a rollout over 1,000 clusters (hack/bench/maintenance.ts, its flags there);
 *  - metering: a simulated day of N clusters' usage in the ledger: roll-up and export rows/s beside
 *    raw INSERT and POST floors, the ledger's size per cluster-day, the exporter's memory
 *    (hack/bench/metering.ts, its flags there);
 *  - region-backup: the region backup of 10,000 clusters (time, size, list/seal/upload) beside a
 *    raw list of what it holds, and its restore into an empty apiserver beside raw creates
 *    (hack/bench/region-backup.ts, its flags there);
 *  - transport: the Maestro transport beside the real Maestro (hack/bench-maestro.ts, its flags there);
 *  - portal: the SRE portal's clusters list at 10,000 clusters, searched, filtered and paged,
 *    beside the same server answering a page of the same size (hack/bench/portal.ts);
 *  - gate: a GET through the session gate beside the same GET sent straight to the kube-apiserver
 *    with the same client certificate (hack/bench/gate.ts);
 *  - frontend: ARM frontend PUT and GET, open loop at 200/s for 60 s, beside a raw HcpCluster create
 *    and get at the same rate (hack/bench-frontend.ts, its flags there).
 * Each prints its figures, and where it has one its floor or peer from the same run with the
 * ratio and target. Results go to stdout as tables and to .local/bench.json.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { startRegion } from "./harness/region.ts";
import { WorkQueue } from "../operators/runtime/workqueue.ts";
import { transportScenario } from "./bench-maestro.ts";
import { lifecycleScenario } from "./bench/lifecycle.ts";
import { maintenanceScenario } from "./bench/maintenance.ts";
import { meteringScenario } from "./bench/metering.ts";
import { regionBackupScenario } from "./bench/region-backup.ts";
import { frontendScenario } from "./bench-frontend.ts";
import { portalScenario } from "./bench/portal.ts";
import { gateScenario } from "./bench/gate.ts";
import {
  percentile,
  type Comparison,
  type Figure,
  type Scenario,
  type ScenarioResult,
} from "./bench/types.ts";

async function benchRegionStartup(runs: number): Promise<Figure[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const region = await startRegion({ managementClusters: 2 });
    times.push(region.startupMs);
    await region.stop();
  }
  times.sort((a, b) => a - b);
  return [
    {
      name: "region startup p50",
      value: percentile(times, 50),
      unit: "ms",
      detail: `${runs} runs, 3 apiservers`,
    },
    { name: "region startup max", value: times[times.length - 1] ?? NaN, unit: "ms" },
  ];
}

async function benchWorkQueue(items: number): Promise<Figure[]> {
  const queue = new WorkQueue({ name: "bench" });
  const started = performance.now();
  for (let i = 0; i < items; i++) {
    queue.add(`ns/item-${i % (items / 2)}`); // every key twice: half the adds are deduplicated
  }
  let processed = 0;
  while (queue.len() > 0) {
    const item = await queue.get();
    if (item === undefined) break;
    queue.done(item);
    processed++;
  }
  queue.shutDown();
  const seconds = (performance.now() - started) / 1000;
  return [
    {
      name: "workqueue throughput",
      value: Math.round(processed / seconds),
      unit: "items/s",
      detail: `${items} adds, ${processed} processed`,
    },
  ];
}

const figuresOnly = (run: () => Promise<Figure[]>) => async (): Promise<ScenarioResult> => ({
  figures: await run(),
  comparisons: [],
});

/** Scenario name → what it measures and how; `--scenario` picks among these, in this order. */
const scenarios: Record<string, Scenario> = {
  frontend: frontendScenario,
  lifecycle: lifecycleScenario,
  maintenance: maintenanceScenario,
  metering: meteringScenario,
  gate: gateScenario,
  portal: portalScenario,
  "region-backup": regionBackupScenario,
  transport: transportScenario,
  workqueue: {
    describe: "workqueue add/get/done throughput",
    run: ({ n }) => figuresOnly(() => benchWorkQueue(n ?? 200_000))(),
  },
  startup: {
    describe: "region start-up, warm binaries",
    run: ({ n }) => figuresOnly(() => benchRegionStartup(n ?? Number(process.env.BENCH_REGION_RUNS ?? 3)))(),
  },
};

function chosenScenarios(value: string | undefined): string[] {
  if (!value) return Object.keys(scenarios);
  const names = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names)
    if (!(name in scenarios))
      throw new Error(`--scenario: unknown scenario "${name}" (${Object.keys(scenarios).join(", ")})`);
  return names;
}

function figureTable(figures: Figure[]): string {
  return figures
    .map(
      (f) => `${f.name.padEnd(40)} ${String(f.value).padStart(10)} ${f.unit.padEnd(8)} ${f.detail ?? ""}\n`,
    )
    .join("");
}

function comparisonTable(comparisons: Comparison[]): string {
  if (comparisons.length === 0) return "";
  const head = `${"compared".padEnd(32)} ${"ours".padStart(9)} ${"peer".padStart(9)} ${"ratio".padStart(7)}  target   met  peer\n`;
  return (
    head +
    comparisons
      .map((c) => {
        const met = c.met === undefined ? "" : c.met ? "yes" : "NO";
        return `${c.name.padEnd(32)} ${String(c.ours).padStart(9)} ${String(c.peer).padStart(9)} ${String(c.ratio).padStart(7)}  ${(c.target ?? "").padEnd(8)} ${met.padEnd(4)} ${c.against} (${c.unit})${c.note ? `; ${c.note}` : ""}\n`;
      })
      .join("")
  );
}

async function main(): Promise<void> {
  // Node's default on these signals skips exit handlers, which stop the region's and the
  // components' processes; exiting instead leaves nothing running.
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      process.stderr.write(`[bench] ${signal}: stopping\n`);
      process.exit(130);
    });
  const argv = process.argv.slice(2);
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: { scenario: { type: "string" }, n: { type: "string" } },
  });
  const n = values.n === undefined ? undefined : Number(values.n);
  if (n !== undefined && (!Number.isInteger(n) || n <= 0))
    throw new Error(`--n must be a positive integer, not "${String(values.n)}"`);
  const scenarioFlag = typeof values.scenario === "string" ? values.scenario : undefined;
  const results: Record<string, ScenarioResult & { seconds: number }> = {};
  for (const name of chosenScenarios(scenarioFlag)) {
    const started = performance.now();
    const result = await scenarios[name]!.run({ n, argv });
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    results[name] = { ...result, seconds };
    process.stdout.write(`\n== ${name}: ${scenarios[name]!.describe} (${seconds} s)\n`);
    process.stdout.write(figureTable(result.figures));
    process.stdout.write(comparisonTable(result.comparisons));
  }
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "",
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
  await mkdir(".local", { recursive: true });
  await writeFile(
    ".local/bench.json",
    JSON.stringify({ finishedAt: new Date().toISOString(), argv, machine, scenarios: results }, null, 2),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
