/**
 * The process lifecycle, as controller-runtime's Manager: runnables (controllers, servers,
 * informers) started together; those that need leadership only while this replica leads;
 * `/healthz`, `/readyz` (with named checks, `/readyz/<name>`) and `/metrics` on one HTTP port;
 * SIGTERM/SIGINT stop everything, drain within a grace period, and release the lease.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { LeaderElector, type LeaderElectionOptions } from "./leaderelection.ts";
import { silentLogger, type Logger } from "./logger.ts";
import { collectDefaultMetricsOnce, metricsRegistry } from "./metrics.ts";

export interface Runnable {
  /** Runs until the signal aborts. */
  start(signal: AbortSignal): Promise<void>;
  /** Start only while this replica holds the lease. Default true (like controller-runtime). */
  needLeaderElection?: boolean;
}

export type Check = () => boolean | Promise<boolean>;

export interface ManagerOptions {
  /** "host:port" for probes and metrics; port 0 picks a free one. Default "0.0.0.0:8080". */
  httpAddress?: string;
  /** Omit to run without leader election (every replica runs every runnable). */
  leaderElection?: Omit<LeaderElectionOptions, "log">;
  /** How long runnables get to finish after the stop signal. Default 30 000 ms. */
  gracefulShutdownMs?: number;
  log?: Logger;
}

/** Raised when leadership is lost while running: the process should exit and restart clean. */
export class LeaderElectionLostError extends Error {}

export class Manager {
  readonly #opts: ManagerOptions;
  readonly #log: Logger;
  readonly #runnables: Runnable[] = [];
  readonly #health = new Map<string, Check>();
  readonly #ready = new Map<string, Check>();
  #server: Server | undefined;
  #elector: LeaderElector | undefined;

  constructor(opts: ManagerOptions = {}) {
    this.#opts = opts;
    this.#log = opts.log ?? silentLogger;
    this.#health.set("ping", () => true);
  }

  add(runnable: Runnable): void {
    this.#runnables.push(runnable);
  }

  addHealthCheck(name: string, check: Check): void {
    this.#health.set(name, check);
  }

  addReadyCheck(name: string, check: Check): void {
    this.#ready.set(name, check);
  }

  isLeader(): boolean {
    return this.#elector ? this.#elector.isLeader() : true;
  }

  /** The bound HTTP address once started (useful with port 0). */
  address(): { host: string; port: number } | undefined {
    const a = this.#server?.address();
    return a && typeof a === "object" ? { host: a.address, port: a.port } : undefined;
  }

  /** Runs until the signal aborts; rejects with LeaderElectionLostError if leadership is lost. */
  async start(signal: AbortSignal): Promise<void> {
    collectDefaultMetricsOnce();
    await this.#listen();
    const running: Promise<void>[] = [];
    const stopAll = new AbortController();
    signal.addEventListener("abort", () => stopAll.abort(), { once: true });
    const launch = (r: Runnable, s: AbortSignal): void => {
      running.push(r.start(s).catch((err: unknown) => this.#log.error("Runnable failed", err)));
    };
    for (const r of this.#runnables) if (r.needLeaderElection === false) launch(r, stopAll.signal);
    let lost = false;
    const leaderRunnables = this.#runnables.filter((r) => r.needLeaderElection !== false);
    if (this.#opts.leaderElection) {
      this.#elector = new LeaderElector({ ...this.#opts.leaderElection, log: this.#log });
      await this.#elector.run(stopAll.signal, {
        onStartedLeading: (leading) => leaderRunnables.forEach((r) => launch(r, leading)),
      });
      lost = !signal.aborted;
    } else {
      leaderRunnables.forEach((r) => launch(r, stopAll.signal));
      await new Promise<void>((resolve) =>
        stopAll.signal.addEventListener("abort", () => resolve(), { once: true }),
      );
    }
    stopAll.abort();
    await this.#drain(running);
    await this.#close();
    if (lost) throw new LeaderElectionLostError("leader election lost");
  }

  async #drain(running: Promise<void>[]): Promise<void> {
    const grace = this.#opts.gracefulShutdownMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), grace)));
    const result = await Promise.race([Promise.all(running).then(() => "done" as const), timeout]);
    clearTimeout(timer);
    if (result === "timeout") this.#log.info("Graceful shutdown timed out", { graceMs: grace });
  }

  async #listen(): Promise<void> {
    const [host, portText] = (this.#opts.httpAddress ?? "0.0.0.0:8080").split(/:(?=\d+$)/);
    const server = createServer((req, res) => void this.#serve(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(Number(portText ?? 0), host || "0.0.0.0", () => resolve());
    });
    this.#server = server;
  }

  async #close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    try {
      if (path === "/metrics") {
        res.writeHead(200, { "content-type": metricsRegistry.contentType });
        res.end(await metricsRegistry.metrics());
      } else if (path === "/healthz" || path.startsWith("/healthz/")) {
        await this.#probe(res, this.#health, path.slice("/healthz/".length));
      } else if (path === "/readyz" || path.startsWith("/readyz/")) {
        await this.#probe(res, this.#ready, path.slice("/readyz/".length));
      } else {
        res.writeHead(404).end("not found\n");
      }
    } catch (err) {
      res.writeHead(500).end(`${err instanceof Error ? err.message : String(err)}\n`);
    }
  }

  /** Runs the named check, or all of them, and answers 200 or 500 with a line per check. */
  async #probe(res: ServerResponse, checks: Map<string, Check>, only: string): Promise<void> {
    const selected = only ? [...checks].filter(([name]) => name === only) : [...checks];
    if (only && selected.length === 0) return void res.writeHead(404).end(`no check ${only}\n`);
    const lines: string[] = [];
    let ok = true;
    for (const [name, check] of selected) {
      const passed = await Promise.resolve()
        .then(check)
        .catch(() => false);
      ok &&= passed;
      lines.push(`[${passed ? "+" : "-"}]${name} ${passed ? "ok" : "failed"}`);
    }
    res.writeHead(ok ? 200 : 500, { "content-type": "text/plain" });
    res.end(`${lines.join("\n")}\n${ok ? "ok" : "check failed"}\n`);
  }
}

/** An AbortSignal that aborts on the first SIGTERM or SIGINT; a second one exits at once. */
export function signalHandler(log: Logger = silentLogger): AbortSignal {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(1);
    log.info("Shutting down", { signal: sig });
    controller.abort();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return controller.signal;
}
