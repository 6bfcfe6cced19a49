/**
 * A private PostgreSQL for the local region and the tests (the usage ledger, issue 35), run from
 * the machine's Debian package as mosquitto and etcd are: initdb into the region's work dir, the
 * server on a free port on 127.0.0.1 and a socket in that dir, never the machine's own service on
 * 5432 (whose state CI cannot vouch for). Test data only: fsync and full-page writes are off, so a
 * killed server loses nothing (the kernel still holds its writes) but a crashed machine could.
 * Authentication is trust for the superuser `postgres`, reachable from this machine only.
 */
import pg from "pg";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { chmod, chown, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort, waitFor } from "./ports.ts";
import { isAlive, startProcess, type ManagedProcess, type RestartOptions } from "./process.ts";

const exec = promisify(execFile);

const PG_ROOT = "/usr/lib/postgresql";
/** PostgreSQL refuses to run as root; as root the harness runs it as the package's own user. */
const SYSTEM_USER = "postgres";
export const SUPERUSER = "postgres";
export const DEFAULT_DATABASE = "hcp";

export interface PostgresInfo {
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url: string;
  host: string;
  port: number;
  user: string;
  database: string;
  /** The directory of the server's Unix socket (`.s.PGSQL.<port>`). */
  socketDir: string;
}

export interface Postgres extends PostgresInfo {
  dataDir: string;
  logPath: string;
  /** A new empty database on this server; its connection URL. */
  createDatabase(name: string): Promise<string>;
  /**
   * Stops the server (a fast shutdown, or with `kill` SIGKILL to it and its backends: a crash,
   * recovered from the WAL at the next start) and starts it again on the same port with the same
   * data (chaos runs).
   */
  restart(opts?: RestartOptions): Promise<void>;
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Region work dir: the pid file and log go here (so a stale run is reaped), the data in `<workDir>/postgres/`. */
  workDir: string;
  /** The database created at start; default "hcp". */
  database?: string;
  startTimeoutMs?: number;
}

/** The newest installed major's bin directory, e.g. /usr/lib/postgresql/15/bin. */
export function postgresBinDir(root = PG_ROOT): string {
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((d) => /^\d+$/.test(d) && existsSync(join(root, d, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const newest = majors[0];
  if (!newest)
    throw new Error(
      `no PostgreSQL server under ${root}/<major>/bin (initdb, postgres): run bash hack/install-deps.sh`,
    );
  return join(root, newest, "bin");
}

/** Identifiers we create are our own names; refuse anything that would need quoting rules. */
export function assertDatabaseName(name: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new Error(`database name "${name}" must match ^[a-z_][a-z0-9_]{0,62}$`);
}

export function postgresUrl(info: Pick<PostgresInfo, "host" | "port" | "user">, database: string): string {
  return `postgres://${info.user}@${info.host}:${info.port}/${database}`;
}

interface RunAs {
  /** Prefix that runs a command as the server's user (empty when we are not root). */
  prefix: string[];
  uid?: number;
  gid?: number;
}

async function runAs(): Promise<RunAs> {
  if (process.getuid?.() !== 0) return { prefix: [] };
  const ids = await exec("id", ["-u", SYSTEM_USER]).catch(() => {
    throw new Error(`running as root, PostgreSQL needs the "${SYSTEM_USER}" user its Debian package creates`);
  });
  const gid = await exec("id", ["-g", SYSTEM_USER]);
  // setpriv execs the command (no fork), so the pid we track is the postmaster's own.
  return {
    prefix: ["setpriv", `--reuid=${SYSTEM_USER}`, `--regid=${SYSTEM_USER}`, "--init-groups", "--"],
    uid: Number(ids.stdout.trim()),
    gid: Number(gid.stdout.trim()),
  };
}

/** initdb into `<workDir>/postgres/data`; the work dir must let the server's user through. */
async function initDataDir(
  bin: string,
  workDir: string,
  as: RunAs,
): Promise<{ dataDir: string; socketDir: string }> {
  const root = join(workDir, "postgres");
  const dataDir = join(root, "data");
  const socketDir = join(root, "socket");
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  if (as.uid !== undefined && as.gid !== undefined) {
    // Traverse only (no listing) for the server's user; the rest of the work dir stays ours.
    await chmod(workDir, 0o711);
    await chmod(root, 0o711);
    for (const dir of [dataDir, socketDir]) await chown(dir, as.uid, as.gid);
  }
  const [command, ...args] = [
    ...as.prefix,
    join(bin, "initdb"),
    `--pgdata=${dataDir}`,
    `--username=${SUPERUSER}`,
    "--auth=trust",
    "--encoding=UTF8",
    "--locale=C",
    // Test data only: initdb's own fsync of the new cluster is not worth its time.
    "--no-sync",
  ];
  await exec(command ?? "initdb", args).catch((err: unknown) => {
    throw new Error(`initdb into ${dataDir} failed: ${err instanceof Error ? err.message : String(err)}`);
  });
  return { dataDir, socketDir };
}

/** Whether the server answers a query (not just accepts: during recovery it refuses sessions). */
async function answers(host: string, port: number): Promise<boolean> {
  const client = new pg.Client({
    host,
    port,
    user: SUPERUSER,
    database: "postgres",
    connectionTimeoutMillis: 2_000,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fast shutdown (SIGINT): open sessions are ended, unlike SIGTERM's smart shutdown that waits for them. */
async function shutdown(proc: ManagedProcess, timeoutMs = 10_000): Promise<void> {
  let done = false;
  void proc.exited.finally(() => (done = true));
  try {
    process.kill(proc.pid, "SIGINT");
  } catch {
    return; // already gone
  }
  const timer = setTimeout(() => void proc.kill(), timeoutMs);
  await proc.exited.catch(() => null);
  clearTimeout(timer);
  if (!done) await proc.kill();
}

/** The processes whose parent is `pid` (a postmaster's backends and workers), read from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command's closing parenthesis: state, then the parent's pid.
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return children;
}

/**
 * A crash of the whole server, as when its container or machine dies: SIGKILL to the postmaster
 * and to every backend. Killing the postmaster alone would leave its backends serving their open
 * connections (committing, even) until each noticed, so "down" would not be down.
 */
async function crash(proc: ManagedProcess): Promise<void> {
  const children = childrenOf(proc.pid);
  await proc.kill();
  for (const child of children) {
    try {
      process.kill(child, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await waitFor("the killed postgres's backends", () => Promise.resolve(!children.some(isAlive)), {
    timeoutMs: 10_000,
    intervalMs: 20,
  });
}

export async function startPostgres(opts: StartPostgresOptions): Promise<Postgres> {
  const bin = postgresBinDir();
  const database = opts.database ?? DEFAULT_DATABASE;
  assertDatabaseName(database);
  const as = await runAs();
  const [port, dirs] = await Promise.all([freePort(), initDataDir(bin, opts.workDir, as)]);
  const host = "127.0.0.1";
  const [command, ...prefixArgs] = [...as.prefix, join(bin, "postgres")];

  const attempt = async (): Promise<ManagedProcess> => {
    const proc = await startProcess({
      name: "postgres",
      command: command ?? "postgres",
      args: [
        ...prefixArgs,
        "-D",
        dirs.dataDir,
        "-p",
        String(port),
        "-k",
        dirs.socketDir,
        "-c",
        `listen_addresses=${host}`,
        "-c",
        "fsync=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "log_min_messages=warning",
      ],
      dir: opts.workDir,
    });
    await waitFor("postgres", () => answers(host, port), {
      timeoutMs: opts.startTimeoutMs ?? 30_000,
      intervalMs: 50,
      exited: proc.exited,
    });
    return proc;
  };
  /**
   * After a SIGKILL the old server's sessions take a moment to notice and exit; until they have,
   * a new server refuses the data dir ("pre-existing shared memory block is still in use").
   */
  const launch = async (): Promise<ManagedProcess> => {
    const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
    for (;;) {
      try {
        return await attempt();
      } catch (err) {
        if (Date.now() > deadline || !(err instanceof Error) || !err.message.includes("exited")) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };

  let current = await launch();
  const info = { host, port, user: SUPERUSER };
  const createDatabase = async (name: string): Promise<string> => {
    assertDatabaseName(name);
    const client = new pg.Client({ ...info, database: "postgres" });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return postgresUrl(info, name);
  };
  try {
    await createDatabase(database);
  } catch (err) {
    await shutdown(current);
    throw err;
  }
  return {
    ...info,
    url: postgresUrl(info, database),
    database,
    socketDir: dirs.socketDir,
    dataDir: dirs.dataDir,
    logPath: current.logPath,
    createDatabase,
    restart: async (restartOpts = {}) => {
      await (restartOpts.kill ? crash(current) : shutdown(current));
      await restartOpts.whileDown?.();
      current = await launch();
    },
    stop: () => shutdown(current),
  };
}
