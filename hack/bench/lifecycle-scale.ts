/**
 * Cost per cluster across lifecycle runs of different sizes: each run keeps its per-cluster CPU in
 * `.local/bench-lifecycle/n<N>.json`, and a run at N is compared with the kept run at the nearest
 * smaller size (the target: at 10,000 clusters within 1.2× of 1,000). Runs of one size are usually
 * sessions apart, so the physical floor's CPU per cluster is kept beside ours: a slower machine
 * shows in both.
 */
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { compare, type Comparison } from "./types.ts";

const DIR = join(".local", "bench-lifecycle");

export interface ScaleRecord {
  finishedAt: string;
  n: number;
  /** CPU seconds of every process during the create, per cluster with its pool. */
  createCpuPerCluster: number;
  /** The same for the physical floor's create, in the same run. */
  floorCpuPerCluster: number;
}

async function kept(): Promise<ScaleRecord[]> {
  const files = await readdir(DIR).catch(() => [] as string[]);
  const out: ScaleRecord[] = [];
  for (const f of files.filter((x) => /^n\d+\.json$/.test(x)))
    out.push(JSON.parse(await readFile(join(DIR, f), "utf8")) as ScaleRecord);
  return out;
}

/** Keeps this run's record and compares it with the kept run of the nearest smaller size, if any. */
export async function scaleComparison(record: ScaleRecord): Promise<Comparison[]> {
  const smaller = (await kept()).filter((r) => r.n < record.n).sort((a, b) => b.n - a.n)[0];
  await mkdir(DIR, { recursive: true });
  await writeFile(join(DIR, `n${record.n}.json`), JSON.stringify(record, null, 2));
  if (!smaller) return [];
  const per = (x: number): number => Math.round(x * 1000) / 1000;
  return [
    compare(
      {
        name: `create CPU per cluster at ${record.n} against ${smaller.n}`,
        unit: "CPU s",
        ours: per(record.createCpuPerCluster),
        against: `the kept run at N=${smaller.n} (${smaller.finishedAt.slice(0, 10)})`,
        peer: per(smaller.createCpuPerCluster),
        note: `the physical floor per cluster: ${per(record.floorCpuPerCluster)} here, ${per(smaller.floorCpuPerCluster)} then`,
      },
      { atMost: 1.2 },
    ),
  ];
}
