/**
 * CPU seconds and peak RSS of a running process from /proc (Linux), so that a scenario can report
 * them per component. CPU is user + system time; a window's CPU is the difference of two samples.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat, 100 on every Linux the bench runs on. */
const TICKS_PER_SECOND = 100;

export interface ProcessSample {
  cpuSeconds: number;
  /** VmHWM: the highest resident set size so far. */
  peakRssMb: number;
}

export async function sampleProcess(pid: number): Promise<ProcessSample> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 (1-based).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const hwmKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return { cpuSeconds: ticks / TICKS_PER_SECOND, peakRssMb: Math.round(hwmKb / 1024) };
}

/** VmRSS: the resident set now, MB. */
export async function currentRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024);
}

/**
 * CPU seconds so far of every process a region runs (its `<name>.pid` files: etcd, each
 * kube-apiserver and controller-manager, mosquitto) and of the components given, by name. A
 * window's difference says where the machine's CPU went, apiservers included.
 */
export async function cpuByProcess(
  workDir: string,
  components: ReadonlyArray<{ name: string; usage(): Promise<{ cpuSeconds: number }> }>,
): Promise<Record<string, number>> {
  const cpu: Record<string, number> = {};
  const pidFiles = workDir
    ? (await readdir(workDir)).filter((f) => f.endsWith(".pid") && f !== "owner.pid")
    : [];
  for (const file of pidFiles) {
    const pid = Number((await readFile(join(workDir, file), "utf8")).trim());
    const sample = await sampleProcess(pid).catch(() => undefined);
    if (sample) cpu[file.slice(0, -".pid".length)] = sample.cpuSeconds;
  }
  for (const c of components) cpu[c.name] = (await c.usage()).cpuSeconds;
  const self = process.cpuUsage();
  cpu["bench (watches, floor client)"] = (self.user + self.system) / 1e6;
  return cpu;
}

/**
 * A window's CPU seconds, grouped by role (the management clusters' five apiservers are one line)
 * and sorted, from two cpuByProcess readings.
 */
export function cpuWindow(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const role = (name: string): string => name.replace(/-mgmt-\d+$/, " (management clusters)");
  const grouped = new Map<string, number>();
  for (const [name, end] of Object.entries(after)) {
    const key = role(name);
    grouped.set(key, (grouped.get(key) ?? 0) + end - (before[name] ?? 0));
  }
  return Object.fromEntries(
    [...grouped].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round(v * 10) / 10]),
  );
}
