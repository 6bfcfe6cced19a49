/**
 * `npm run bench`: speed figures that tests do not assert.
 *  - local control plane: time to a ready region (etcd + 3 kube-apiservers + CRDs), warm binaries;
 *  - workqueue: add/get/done throughput with dedup, one process;
 *  - Maestro transport: ManifestWork create → status-back latency for 1,000 works over two consumers;
 *  - ARM frontend: PUT and GET latency at 200 requests per second over mutual TLS.
 * Results go to stdout as a table and to .local/bench.json.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { startRegion } from "./harness/region.ts";
import { WorkQueue } from "../operators/runtime/workqueue.ts";
import { benchManifestWorkLatency } from "./bench-maestro.ts";
import { benchFrontend } from "./bench-frontend.ts";

interface Figure {
  name: string;
  value: number;
  unit: string;
  detail?: string;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

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

async function benchMaestro(count: number): Promise<Figure[]> {
  const region = await startRegion({ managementClusters: 2 });
  try {
    const { latenciesMs, totalMs } = await benchManifestWorkLatency(region, count);
    const ms = (p: number): number => Math.round(percentile(latenciesMs, p));
    const detail = `${latenciesMs.length} works, 2 consumers, all back in ${Math.round(totalMs)} ms`;
    return [
      { name: "manifestwork status-back p50", value: ms(50), unit: "ms", detail },
      { name: "manifestwork status-back p99", value: ms(99), unit: "ms" },
      { name: "manifestwork status-back max", value: ms(100), unit: "ms" },
    ];
  } finally {
    await region.stop();
  }
}

/** PUT and GET latency at each offered rate (requests per second), one fresh region for all. */
async function benchFrontendLatency(count: number, rates: number[]): Promise<Figure[]> {
  const region = await startRegion({ managementClusters: 0, broker: false });
  try {
    const figures: Figure[] = [];
    for (const rps of rates) {
      const result = await benchFrontend(region, count, rps);
      for (const verb of ["put", "get"] as const) {
        const r = result[verb];
        const ms = (p: number): number => Math.round(percentile(r.latenciesMs, p) * 10) / 10;
        const detail = `${r.latenciesMs.length} offered at ${rps}/s, done at ${Math.round(r.achievedRps)}/s, ${r.errors} errors`;
        const name = `frontend ${verb.toUpperCase()} @${rps}/s`;
        figures.push({ name: `${name} p50`, value: ms(50), unit: "ms", detail });
        figures.push({ name: `${name} p99`, value: ms(99), unit: "ms" });
      }
    }
    return figures;
  } finally {
    await region.stop();
  }
}

async function main(): Promise<void> {
  const figures = [
    ...(await benchFrontendLatency(Number(process.env.BENCH_FRONTEND_REQUESTS ?? 2000), [200, 60])),
    ...(await benchMaestro(Number(process.env.BENCH_WORKS ?? 1000))),
    ...(await benchWorkQueue(200_000)),
    ...(await benchRegionStartup(Number(process.env.BENCH_REGION_RUNS ?? 3))),
  ];
  for (const f of figures)
    process.stdout.write(
      `${f.name.padEnd(28)} ${String(f.value).padStart(10)} ${f.unit.padEnd(8)} ${f.detail ?? ""}\n`,
    );
  await mkdir(".local", { recursive: true });
  await writeFile(".local/bench.json", JSON.stringify(figures, null, 2));
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
