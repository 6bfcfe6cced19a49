/**
 * CPU seconds and peak RSS of a running process from /proc (Linux), so that a scenario can report
 * them per component. CPU is user + system time; a window's CPU is the difference of two samples.
 */
import { readFile } from "node:fs/promises";

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
