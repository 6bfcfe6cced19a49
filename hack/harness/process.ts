/**
 * Child processes of the harness. Every child is tracked so that it is killed when the harness
 * stops, when the Node process exits for any reason, and (through the pid files) by the next run if
 * this one was killed outright.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves with the exit code (or null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after timeoutMs. Resolves once the process is gone. */
  stop(timeoutMs?: number): Promise<void>;
  /** SIGKILL at once (a crash, as chaos runs inject it). Resolves once the process is gone. */
  kill(): Promise<void>;
}

/** How a harness component (apiserver, broker) is restarted. */
export interface RestartOptions {
  /** SIGKILL instead of SIGTERM: a crash rather than a shutdown. */
  kill?: boolean;
  /** Runs while the process is down; it starts again once this resolves (an outage). */
  whileDown?: () => Promise<void>;
}

/** Stops `proc` as `opts` says and waits out the outage, if any. */
export async function bringDown(proc: ManagedProcess, opts: RestartOptions = {}): Promise<void> {
  await (opts.kill ? proc.kill() : proc.stop());
  await opts.whileDown?.();
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: string[];
  /** Directory for `<name>.log` and `<name>.pid`. */
  dir: string;
  env?: NodeJS.ProcessEnv;
}

const running = new Set<ChildProcess>();

process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Kills the child when this process exits, for any reason, unless it has exited first. */
export function killOnExit(child: ChildProcess): void {
  running.add(child);
  child.once("exit", () => running.delete(child));
}

export async function startProcess(opts: StartProcessOptions): Promise<ManagedProcess> {
  const logPath = join(opts.dir, `${opts.name}.log`);
  // The child writes its log file itself rather than through a pipe to us: if this process dies,
  // a Go child's next log line into a broken pipe would kill it (SIGPIPE on stderr), so orphans
  // would die at random instead of living until the next run reaps them.
  const log = openSync(logPath, "a");
  let child: ChildProcess;
  try {
    child = spawn(opts.command, opts.args, { env: opts.env ?? process.env, stdio: ["ignore", log, log] });
  } finally {
    closeSync(log); // the child has its own copy
  }
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code));
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  killOnExit(child);
  const pid = child.pid ?? -1;
  await writeFile(join(opts.dir, `${opts.name}.pid`), `${pid}\n`);
  const stop = async (timeoutMs = 10_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    await exited.catch(() => null);
    clearTimeout(timer);
  };
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited.catch(() => null);
  };
  return { name: opts.name, pid, logPath, exited, stop, kill };
}

/** Whether the process runs. A zombie (dead, not yet reaped by a parent that is not us) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}
