/**
 * Components as separate processes, so that memory, CPU and API requests are each component's
 * own: spawn with logs to a file, sample /proc for peak RSS and CPU seconds, stop or kill.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { killOnExit } from "../harness/process.ts";
import { sampleProcess } from "./usage.ts";

export interface ComponentUsage {
  name: string;
  /** Peak resident set (VmHWM), MB. */
  peakRssMb: number;
  /** User + system CPU time, seconds. */
  cpuSeconds: number;
}

export interface Component {
  name: string;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  usage(): Promise<ComponentUsage>;
  /** SIGTERM, then SIGKILL after a grace period. */
  stop(graceMs?: number): Promise<void>;
  kill(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  script: string;
  args: string[];
  env?: Record<string, string>;
  /** Flags for node itself, before the script (e.g. `--import` of a preload module). */
  nodeArgs?: string[];
  logDir: string;
  /** Resolves with the first stdout line, for components that print what a client needs. */
  firstLine?: boolean;
}

/** Peak RSS and CPU of a live process; the last reading stands once it has exited. */
async function procUsage(pid: number, name: string, last: ComponentUsage): Promise<ComponentUsage> {
  return sampleProcess(pid).then(
    (sample) => ({ name, ...sample }),
    () => last,
  );
}

export async function spawnComponent(opts: SpawnOptions): Promise<{ component: Component; line?: string }> {
  // Appended to: a component started again (a chaos run's restart) keeps one log.
  const log = createWriteStream(join(opts.logDir, `${opts.name}.log`), { flags: "a" });
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.script, ...opts.args], {
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr?.pipe(log);
  // A bench stopped early (Ctrl-C: hack/bench.ts exits on the signal) takes its components along.
  killOnExit(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let last: ComponentUsage = { name: opts.name, peakRssMb: 0, cpuSeconds: 0 };
  const component: Component = {
    name: opts.name,
    child,
    exited,
    async usage() {
      if (child.exitCode === null && child.pid) last = await procUsage(child.pid, opts.name, last);
      return last;
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null) return;
      await component.usage();
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null) return;
      await component.usage();
      child.kill("SIGKILL");
      await exited;
    },
  };
  if (!opts.firstLine) {
    child.stdout?.pipe(log);
    return { component };
  }
  const line = await firstLine(child, exited, opts.name);
  child.stdout?.pipe(log);
  return { component, line };
}

function firstLine(child: ChildProcess, exited: Promise<void>, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString();
      const end = buffered.indexOf("\n");
      if (end < 0) return;
      child.stdout?.off("data", onData);
      resolve(buffered.slice(0, end));
    };
    child.stdout?.on("data", onData);
    void exited.then(() => reject(new Error(`${name} exited before it printed its address`)));
  });
}

/** Samples every component's /proc now and then, so a peak is seen before the process exits. */
export function sampleUsage(components: () => Component[], everyMs = 1_000): { stop(): void } {
  const timer = setInterval(() => {
    for (const c of components()) void c.usage();
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
