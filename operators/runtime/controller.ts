/**
 * The controller loop: N workers take request keys from a rate-limited work queue and call the
 * reconciler, with controller-runtime's handling of the outcome:
 * - a thrown error requeues with per-item backoff, except a TerminalError, which is not retried;
 * - `requeueAfterMs > 0` forgets the backoff and requeues after that delay (at low priority when
 *   `periodic`, and then never on every worker at once: `maxConcurrentPeriodic`);
 * - success forgets the backoff.
 * The queue guarantees that one key is never reconciled by two workers at once.
 */
import { randomUUID } from "node:crypto";
import { TerminalError, errorMessage } from "./errors.ts";
import { createLogger, type Logger } from "./logger.ts";
import { controllerMetrics, reconcileResultLabels, workQueueMetricsProvider } from "./metrics.ts";
import type { ReconcileResultLabel } from "./metrics.ts";
import type { RateLimiter } from "./ratelimiter.ts";
import { WorkQueue } from "./workqueue.ts";

/** What to reconcile: only a key, never an event or an object. `namespace` is "" for cluster-scoped objects. */
export interface Request {
  cluster: string;
  namespace: string;
  name: string;
}

export interface Result {
  /** Reconcile again after this many milliseconds, for waiting on something no watch reports. */
  requeueAfterMs?: number;
  /**
   * The requeue is a periodic look for drift, not progress being waited on: it is queued at low
   * priority, behind every change (workqueue.ts).
   */
  periodic?: boolean;
}

export interface ReconcileContext {
  /** Aborts when the controller shuts down, or when the reconcile timeout passes. */
  signal: AbortSignal;
  /**
   * Carries controller, cluster, namespace, name and reconcileID. A reconciler may replace it with
   * a child carrying what it reads on the object (hcp/requests.ts: the ARM request IDs); the
   * runtime's own lines about this reconcile (an error, a requeue) then carry those values too.
   */
  log: Logger;
  /** The controller's name, for metrics of the reconcile's parts (runPhases). */
  controller?: string;
}

export interface Reconciler {
  reconcile(ctx: ReconcileContext, req: Request): Promise<Result>;
}

/** Adapts a plain function to the Reconciler interface. */
export function reconcilerFunc(fn: (ctx: ReconcileContext, req: Request) => Promise<Result>): Reconciler {
  return { reconcile: fn };
}

const clusterNamePattern = /^[a-z0-9-]+$/;

function checkRequest(req: Request, key?: string): void {
  const valid =
    clusterNamePattern.test(req.cluster) &&
    !req.namespace.includes("/") &&
    req.name !== "" &&
    !req.name.includes("/");
  if (!valid) throw new Error(`invalid reconcile request ${key ?? JSON.stringify(req)}`);
}

/** The queue key of a request: `cluster/namespace/name`, unambiguous because no part contains "/". */
export function requestKey(req: Request): string {
  checkRequest(req);
  return `${req.cluster}/${req.namespace}/${req.name}`;
}

export function parseRequestKey(key: string): Request {
  const [cluster, namespace, name, ...rest] = key.split("/");
  if (cluster === undefined || namespace === undefined || name === undefined || rest.length > 0) {
    throw new Error(`invalid reconcile request key ${key}`);
  }
  const req = { cluster, namespace, name };
  checkRequest(req, key);
  return req;
}

export interface ControllerOptions {
  /** Names the controller in logs, metrics and its work queue. Required. */
  name: string;
  /** Required. */
  reconciler: Reconciler;
  /** How many keys are reconciled at once. Defaults to 1. */
  maxConcurrentReconciles?: number;
  /**
   * How many of those may be periodic requeues (looks for drift) at once; the other workers wait
   * for changes. Defaults to three quarters of maxConcurrentReconciles, at least 1.
   */
  maxConcurrentPeriodic?: number;
  /** Backoff for failed reconciles. Defaults to `defaultControllerRateLimiter()` (5 ms..1000 s, 10 qps). */
  rateLimiter?: RateLimiter;
  /** Defaults to a JSON logger on stderr. The controller adds `controller: name`. */
  log?: Logger;
  /** Aborts each reconcile's signal after this many milliseconds. Defaults to no timeout. */
  reconcileTimeoutMs?: number;
  /** How long shutdown waits for in-flight reconciles. Defaults to 30 s. */
  shutdownTimeoutMs?: number;
}

interface ResolvedControllerOptions {
  name: string;
  reconciler: Reconciler;
  maxConcurrentReconciles: number;
  maxConcurrentPeriodic: number;
  rateLimiter: RateLimiter | undefined;
  log: Logger;
  reconcileTimeoutMs: number | undefined;
  shutdownTimeoutMs: number;
}

const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

function isPositive(n: number | undefined): boolean {
  return n === undefined || (Number.isFinite(n) && n > 0);
}

function withDefaults(options: ControllerOptions): ResolvedControllerOptions {
  const { name, reconciler, maxConcurrentReconciles = 1, reconcileTimeoutMs, shutdownTimeoutMs } = options;
  if (!name) throw new Error("controller needs a name");
  if (typeof reconciler?.reconcile !== "function") throw new Error(`controller ${name} needs a reconciler`);
  if (!Number.isInteger(maxConcurrentReconciles) || maxConcurrentReconciles < 1) {
    throw new Error(`controller ${name}: maxConcurrentReconciles must be a positive integer`);
  }
  if (!isPositive(reconcileTimeoutMs) || !isPositive(shutdownTimeoutMs)) {
    throw new Error(`controller ${name}: timeouts must be positive numbers of milliseconds`);
  }
  const maxConcurrentPeriodic = periodicWorkers(name, maxConcurrentReconciles, options.maxConcurrentPeriodic);
  return {
    name,
    reconciler,
    maxConcurrentReconciles,
    maxConcurrentPeriodic,
    rateLimiter: options.rateLimiter,
    log: (options.log ?? createLogger()).child({ controller: name }),
    reconcileTimeoutMs,
    shutdownTimeoutMs: shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
  };
}

/** Three quarters of the workers by default, at least one: the rest are kept for changes. */
function periodicWorkers(name: string, workers: number, asked: number | undefined): number {
  const periodic = asked ?? Math.max(1, workers - Math.ceil(workers / 4));
  if (!Number.isInteger(periodic) || periodic < 1)
    throw new Error(`controller ${name}: maxConcurrentPeriodic must be a positive integer`);
  return periodic;
}

type Outcome =
  { ok: true; result: Result } | { ok: false; error: unknown; panicked: boolean; timedOut: boolean };

/** The reconcile signal and how to tell, afterwards, whether its timeout fired. */
interface ReconcileDeadline {
  signal: AbortSignal;
  timedOut(): boolean;
  clear(): void;
}

/** A TerminalError anywhere in the cause chain makes the error terminal, like errors.Is in Go. */
function isTerminal(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) {
    if (e instanceof TerminalError) return true;
  }
  return false;
}

function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** The controller's metric series, bound to its name once. */
function boundMetrics(controller: string) {
  const m = controllerMetrics();
  const labels = { controller };
  const total = (result: ReconcileResultLabel) => m.reconcileTotal.labels({ controller, result });
  return {
    total,
    errors: m.reconcileErrors.labels(labels),
    terminalErrors: m.terminalReconcileErrors.labels(labels),
    panics: m.reconcilePanics.labels(labels),
    timeouts: m.reconcileTimeouts.labels(labels),
    time: m.reconcileTime.labels(labels),
    maxConcurrent: m.maxConcurrentReconciles.labels(labels),
    activeWorkers: m.activeWorkers.labels(labels),
  };
}

type BoundMetrics = ReturnType<typeof boundMetrics>;

/**
 * One controller. It can be started once; the queue exists from construction, so requests
 * enqueued before `start` are kept. After shutdown, build a new Controller to run again.
 */
export class Controller {
  readonly name: string;
  #opts: ResolvedControllerOptions;
  #queue: WorkQueue;
  #log: Logger;
  #metrics: BoundMetrics;
  /** Aborts when shutdown begins; the parent of every reconcile signal. */
  #stopping = new AbortController();
  #started = false;

  constructor(options: ControllerOptions) {
    this.#opts = withDefaults(options);
    this.name = this.#opts.name;
    this.#log = this.#opts.log;
    this.#queue = new WorkQueue({
      name: this.name,
      rateLimiter: this.#opts.rateLimiter,
      metrics: workQueueMetricsProvider(),
      maxLowInFlight: this.#opts.maxConcurrentPeriodic,
    });
    this.#metrics = boundMetrics(this.name);
    this.#initMetrics();
  }

  get queue(): WorkQueue {
    return this.#queue;
  }

  enqueue(req: Request): void {
    this.#queue.add(requestKey(req));
  }

  enqueueAfter(req: Request, delayMs: number): void {
    this.#queue.addAfter(requestKey(req), delayMs);
  }

  /** Runs the workers until `signal` aborts, then waits (up to the shutdown timeout) for in-flight reconciles. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error(`controller ${this.name} was already started`);
    this.#started = true;
    const stop = (): void => this.#stopping.abort(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });

    const workerCount = this.#opts.maxConcurrentReconciles;
    this.#log.info("Starting workers", { workerCount });
    const workers = Array.from({ length: workerCount }, () => this.#runWorker());
    await whenAborted(this.#stopping.signal);
    await this.#shutDown(workers);
  }

  async #shutDown(workers: Promise<void>[]): Promise<void> {
    const timeoutMs = this.#opts.shutdownTimeoutMs;
    this.#log.info("Shutting down, waiting for in-flight reconciles", { timeoutMs });
    if (!(await this.#queue.shutDownWithDrain(timeoutMs))) {
      // Workers stuck in a reconcile that ignores its signal are left behind rather than awaited forever.
      this.#log.error("Giving up on in-flight reconciles", new Error(`not finished after ${timeoutMs}ms`));
      return;
    }
    await Promise.all(workers);
    this.#log.info("All workers finished");
  }

  async #runWorker(): Promise<void> {
    for (;;) {
      const key = await this.#queue.get();
      if (key === undefined) return;
      // Items still queued at shutdown are dropped: their reconcile would start already aborted.
      if (this.#stopping.signal.aborted) {
        this.#queue.done(key);
        return;
      }
      await this.#processItem(key);
    }
  }

  async #processItem(key: string): Promise<void> {
    this.#metrics.activeWorkers.inc();
    try {
      await this.#reconcileHandler(key);
    } catch (err) {
      // Only a bug in the handling itself lands here; it must not end the worker.
      this.#log.error("Failed to handle work item", err, { key });
    } finally {
      this.#metrics.activeWorkers.dec();
      this.#queue.done(key);
    }
  }

  async #reconcileHandler(key: string): Promise<void> {
    const req = this.#parseKey(key);
    if (!req) return;
    const log = this.#log.child({ ...req, reconcileID: randomUUID() });
    log.debug("Reconciling");
    const started = performance.now();
    const deadline = this.#deadline();
    const ctx: ReconcileContext = { signal: deadline.signal, log, controller: this.name };
    const outcome = await this.#invoke(ctx, req, deadline);
    this.#metrics.time.observe((performance.now() - started) / 1000);
    if (outcome.ok) this.#handleResult(key, outcome.result, ctx.log);
    else this.#handleError(key, outcome, ctx.log);
  }

  #parseKey(key: string): Request | undefined {
    try {
      return parseRequestKey(key);
    } catch (err) {
      // Retrying cannot make a malformed key valid.
      this.#log.error("Dropping invalid work item", err, { key });
      this.#queue.forget(key);
      return undefined;
    }
  }

  /** Calls the reconciler; a synchronous throw counts as a panic, as the contract is to return a promise. */
  async #invoke(ctx: ReconcileContext, req: Request, deadline: ReconcileDeadline): Promise<Outcome> {
    let pending: Promise<Result>;
    try {
      pending = this.#opts.reconciler.reconcile(ctx, req);
    } catch (error) {
      deadline.clear();
      return { ok: false, error, panicked: true, timedOut: false };
    }
    try {
      // A reconciler written in plain JS may resolve nothing; treat that as an empty result.
      const result: Result | undefined = await pending;
      return { ok: true, result: result ?? {} };
    } catch (error) {
      return { ok: false, error, panicked: false, timedOut: deadline.timedOut() };
    } finally {
      deadline.clear();
    }
  }

  #deadline(): ReconcileDeadline {
    const timeoutMs = this.#opts.reconcileTimeoutMs;
    const stopping = this.#stopping.signal;
    if (timeoutMs === undefined) return { signal: stopping, timedOut: () => false, clear: () => undefined };
    const timeout = new AbortController();
    const timer = setTimeout(() => {
      timeout.abort(new DOMException(`reconcile timed out after ${timeoutMs}ms`, "TimeoutError"));
    }, timeoutMs);
    return {
      signal: AbortSignal.any([stopping, timeout.signal]),
      timedOut: () => timeout.signal.aborted,
      clear: () => clearTimeout(timer),
    };
  }

  #handleResult(key: string, result: Result, log: Logger): void {
    const requeueAfterMs = result.requeueAfterMs ?? 0;
    this.#queue.forget(key);
    if (requeueAfterMs > 0) {
      log.debug("Reconcile done, requeueing", { requeueAfterMs });
      this.#queue.addAfter(key, requeueAfterMs, result.periodic ? "low" : "normal");
      this.#metrics.total("requeue_after").inc();
      return;
    }
    log.debug("Reconcile successful");
    this.#metrics.total("success").inc();
  }

  #handleError(key: string, outcome: Extract<Outcome, { ok: false }>, log: Logger): void {
    const { error, panicked, timedOut } = outcome;
    const terminal = isTerminal(error);
    if (panicked) this.#metrics.panics.inc();
    if (timedOut) this.#metrics.timeouts.inc();
    if (terminal) this.#metrics.terminalErrors.inc();
    this.#metrics.errors.inc();
    this.#metrics.total("error").inc();
    // Unlike controller-runtime, a terminal error also resets the backoff: the next attempt comes
    // from a new event (say, a fixed spec) and deserves a fresh start.
    if (terminal) this.#queue.forget(key);
    else this.#queue.addRateLimited(key);
    if (this.#stopping.signal.aborted) log.debug("Reconcile ended by shutdown", { err: errorMessage(error) });
    else log.error("Reconciler error", error, { terminal, panicked, timedOut });
  }

  /** Creates every series at zero so dashboards and rate() see the controller before its first event. */
  #initMetrics(): void {
    for (const result of reconcileResultLabels) this.#metrics.total(result).inc(0);
    for (const c of [this.#metrics.errors, this.#metrics.terminalErrors, this.#metrics.panics]) c.inc(0);
    this.#metrics.timeouts.inc(0);
    // inc(0), not set(0): another live controller with the same name may share these series.
    this.#metrics.activeWorkers.inc(0);
    this.#metrics.maxConcurrent.set(this.#opts.maxConcurrentReconciles);
  }
}
