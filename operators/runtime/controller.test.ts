import { afterEach, describe, it, expect, vi } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import {
  Controller,
  parseRequestKey,
  reconcilerFunc,
  requestKey,
  type ControllerOptions,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from "./controller.ts";
import { TerminalError } from "./errors.ts";
import { createLogger, silentLogger } from "./logger.ts";
import { metricsRegistry } from "./metrics.ts";
import { itemExponentialRateLimiter } from "./ratelimiter.ts";

afterEach(() => {
  vi.useRealTimers();
});

let controllerCount = 0;
/** Metrics live in the process registry, so every test gets its own controller name. */
function uniqueName(): string {
  return `test-controller-${++controllerCount}`;
}

const req: Request = { cluster: "svc", namespace: "ns", name: "obj" };

interface Running {
  controller: Controller;
  stop: () => Promise<void>;
}

function run(reconciler: Reconciler, options: Partial<ControllerOptions> = {}): Running {
  const controller = new Controller({ name: uniqueName(), reconciler, log: silentLogger, ...options });
  const abort = new AbortController();
  const started = controller.start(abort.signal);
  return {
    controller,
    stop: async () => {
      abort.abort();
      await started;
    },
  };
}

/** Lets timers due now and all pending promise callbacks run. */
async function flush(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const data = await metricsRegistry.getSingleMetric(name)?.get();
  return data?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves on the signal's abort event; rejects when it has not come within `timeoutMs`. */
function aborted(signal: AbortSignal, timeoutMs = 5_000): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${timeoutMs} ms`)), timeoutMs);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

describe("requestKey and parseRequestKey", () => {
  it.each<[Request, string]>([
    [{ cluster: "svc", namespace: "ns", name: "obj" }, "svc/ns/obj"],
    [{ cluster: "mgmt-1", namespace: "", name: "cluster-scoped" }, "mgmt-1//cluster-scoped"],
  ])("round-trips %j as %s", (request, key) => {
    expect(requestKey(request)).toBe(key);
    expect(parseRequestKey(key)).toEqual(request);
  });

  it.each(["svc/ns", "svc/ns/obj/extra", "/ns/obj", "Svc/ns/obj", "svc/ns/", "svc_1/ns/obj"])(
    "rejects the key %s",
    (key) => {
      expect(() => parseRequestKey(key)).toThrow(/invalid reconcile request/);
    },
  );

  it.each<Request>([
    { cluster: "svc", namespace: "a/b", name: "obj" },
    { cluster: "svc", namespace: "ns", name: "a/b" },
    { cluster: "", namespace: "ns", name: "obj" },
  ])("rejects the request %j", (request) => {
    expect(() => requestKey(request)).toThrow(/invalid reconcile request/);
  });
});

describe("Controller options", () => {
  const reconciler = reconcilerFunc(() => Promise.resolve({}));

  it.each<[string, Partial<ControllerOptions>]>([
    ["no name", { name: "" }],
    ["zero workers", { maxConcurrentReconciles: 0 }],
    ["fractional workers", { maxConcurrentReconciles: 1.5 }],
    ["a negative timeout", { reconcileTimeoutMs: -1 }],
    ["a zero shutdown timeout", { shutdownTimeoutMs: 0 }],
  ])("rejects %s", (_, options) => {
    expect(() => new Controller({ name: uniqueName(), reconciler, ...options })).toThrow();
  });

  it("cannot be started twice", async () => {
    const { controller, stop } = run(reconciler);
    await expect(controller.start(new AbortController().signal)).rejects.toThrow(/already started/);
    await stop();
  });
});

describe("Controller reconcile handling", () => {
  it("reconciles an enqueued request and counts the success", async () => {
    const seen: Request[] = [];
    const { controller, stop } = run(reconcilerFunc((_, r) => (seen.push(r), Promise.resolve({}))));
    controller.enqueue(req);
    await vi.waitFor(() => expect(seen).toEqual([req]));
    await stop();
    expect(
      await metricValue("controller_runtime_reconcile_total", {
        controller: controller.name,
        result: "success",
      }),
    ).toBe(1);
  });

  it("retries failures with exponential backoff and forgets it after success", async () => {
    vi.useFakeTimers();
    const times: number[] = [];
    const start = Date.now();
    const reconciler = reconcilerFunc(() => {
      times.push(Date.now() - start);
      return times.length <= 3 ? Promise.reject(new Error("transient")) : Promise.resolve({});
    });
    const { controller, stop } = run(reconciler, { rateLimiter: itemExponentialRateLimiter(10, 10_000) });
    controller.enqueue(req);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(times).toEqual([0, 10, 30, 70]);
    expect(controller.queue.numRequeues(requestKey(req))).toBe(0);
    await stop();
    const labels = { controller: controller.name };
    expect(await metricValue("controller_runtime_reconcile_errors_total", labels)).toBe(3);
    expect(await metricValue("controller_runtime_reconcile_total", { ...labels, result: "error" })).toBe(3);
    expect(await metricValue("workqueue_retries_total", { name: controller.name })).toBe(3);
  });

  it("honours requeueAfterMs", async () => {
    vi.useFakeTimers();
    const times: number[] = [];
    const start = Date.now();
    const reconciler = reconcilerFunc(() => {
      times.push(Date.now() - start);
      return Promise.resolve<Result>(times.length === 1 ? { requeueAfterMs: 500 } : {});
    });
    const { controller, stop } = run(reconciler);
    controller.enqueue(req);
    await vi.advanceTimersByTimeAsync(499);
    expect(times).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(times).toEqual([0, 500]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(times).toHaveLength(2);
    await stop();
    const total = (result: string) =>
      metricValue("controller_runtime_reconcile_total", { controller: controller.name, result });
    expect([await total("requeue_after"), await total("success"), await total("error")]).toEqual([1, 1, 0]);
  });

  it("queues a periodic requeue behind the changes that arrived meanwhile", async () => {
    vi.useFakeTimers();
    const order: string[] = [];
    const blocker = deferred();
    const reconciler = reconcilerFunc((_ctx, r) => {
      order.push(r.name);
      if (r.name === "blocker") return blocker.promise.then(() => ({}));
      return Promise.resolve<Result>(order.length === 1 ? { requeueAfterMs: 100, periodic: true } : {});
    });
    const { controller, stop } = run(reconciler, { maxConcurrentReconciles: 1 });
    controller.enqueue({ ...req, name: "recheck" });
    await vi.advanceTimersByTimeAsync(50);
    controller.enqueue({ ...req, name: "blocker" });
    await vi.advanceTimersByTimeAsync(100);
    controller.enqueue({ ...req, name: "change" });
    expect(order).toEqual(["recheck", "blocker"]);
    blocker.resolve();
    await flush();
    expect(order).toEqual(["recheck", "blocker", "change", "recheck"]);
    await stop();
  });

  it("resets the backoff when a reconcile asks for requeueAfterMs", async () => {
    vi.useFakeTimers();
    let calls = 0;
    const reconciler = reconcilerFunc(() =>
      ++calls === 1 ? Promise.reject(new Error("once")) : Promise.resolve({ requeueAfterMs: 60_000 }),
    );
    const { controller, stop } = run(reconciler);
    controller.enqueue(req);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toBe(2);
    expect(controller.queue.numRequeues(requestKey(req))).toBe(0);
    await stop();
  });

  it.each([
    ["a TerminalError", new TerminalError("spec is invalid")],
    [
      "an error caused by a TerminalError",
      new Error("wrapped", { cause: new TerminalError("spec is invalid") }),
    ],
  ])("does not retry %s", async (_, error) => {
    vi.useFakeTimers();
    let calls = 0;
    const { controller, stop } = run(reconcilerFunc(() => (calls++, Promise.reject(error))));
    controller.enqueue(req);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toBe(1);
    expect(controller.queue.numRequeues(requestKey(req))).toBe(0);
    await stop();
    const labels = { controller: controller.name };
    expect(await metricValue("controller_runtime_terminal_reconcile_errors_total", labels)).toBe(1);
    expect(await metricValue("controller_runtime_reconcile_errors_total", labels)).toBe(1);
  });

  it("survives a reconciler that throws synchronously, counting it as a panic", async () => {
    vi.useFakeTimers();
    const seen: string[] = [];
    const reconciler: Reconciler = {
      reconcile(_ctx, r) {
        seen.push(r.name);
        if (r.name === "bad") throw new Error("not even a promise");
        return Promise.resolve({});
      },
    };
    const { controller, stop } = run(reconciler, { rateLimiter: itemExponentialRateLimiter(1_000, 1_000) });
    controller.enqueue({ ...req, name: "bad" });
    controller.enqueue({ ...req, name: "good" });
    await flush();
    expect(seen).toEqual(["bad", "good"]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen).toEqual(["bad", "good", "bad"]);
    await stop();
    expect(
      await metricValue("controller_runtime_reconcile_panics_total", { controller: controller.name }),
    ).toBe(2);
  });

  it("passes a logger and a live signal to the reconciler", async () => {
    let ctx: ReconcileContext | undefined;
    const { controller, stop } = run(reconcilerFunc((c) => ((ctx = c), Promise.resolve({}))));
    controller.enqueue(req);
    await vi.waitFor(() => expect(ctx).toBeDefined());
    expect(ctx!.signal.aborted).toBe(false);
    expect(typeof ctx!.log.info).toBe("function");
    await stop();
    expect(ctx!.signal.aborted).toBe(true);
  });

  it("writes its own lines about a reconcile with what the reconciler added to the context's logger", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger(
      {},
      "debug",
      (line) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    );
    const reconciler = reconcilerFunc((ctx) => {
      ctx.log = ctx.log.child({ correlationRequestId: "corr-1" });
      return Promise.reject(new Error("boom"));
    });
    const { controller, stop } = run(reconciler, { log });
    controller.enqueue(req);
    await vi.waitFor(() => expect(lines.map((l) => l["msg"])).toContain("Reconciler error"));
    await stop();
    expect(lines.find((l) => l["msg"] === "Reconciler error")).toMatchObject({
      name: "obj",
      correlationRequestId: "corr-1",
      err: "boom",
    });
  });

  it("aborts the signal of a reconcile that exceeds reconcileTimeoutMs", async () => {
    vi.useFakeTimers();
    let reason: unknown;
    const reconciler = reconcilerFunc(
      ({ signal }) =>
        new Promise<Result>((_, reject) =>
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            reject(signal.reason as Error);
          }),
        ),
    );
    const { controller, stop } = run(reconciler, { reconcileTimeoutMs: 1_000 });
    controller.enqueue(req);
    await vi.advanceTimersByTimeAsync(999);
    expect(reason).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect((reason as DOMException).name).toBe("TimeoutError");
    expect(controller.queue.numRequeues(requestKey(req))).toBe(1);
    await stop();
    expect(
      await metricValue("controller_runtime_reconcile_timeouts_total", { controller: controller.name }),
    ).toBe(1);
  });
});

describe("Controller concurrency", () => {
  it("runs at most maxConcurrentReconciles at once and never one key twice at once", async () => {
    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    let peak = 0;
    const calls: string[] = [];
    let requeuedOnce = false;
    const { controller, stop } = run(
      reconcilerFunc(async (_, r) => {
        if (inFlight.has(r.name)) overlaps.push(r.name);
        inFlight.add(r.name);
        calls.push(r.name);
        peak = Math.max(peak, inFlight.size);
        if (r.name === "k0" && !requeuedOnce) {
          requeuedOnce = true;
          controller.enqueue(r); // arrives while k0 is being reconciled
        }
        await sleep(5);
        inFlight.delete(r.name);
        return {};
      }),
      { maxConcurrentReconciles: 2 },
    );
    for (let i = 0; i < 6; i++) controller.enqueue({ ...req, name: `k${i}` });
    await vi.waitFor(() => expect(calls).toHaveLength(7));
    expect(peak).toBe(2);
    expect(overlaps).toEqual([]);
    expect(calls.filter((n) => n === "k0")).toHaveLength(2);
    expect(
      await metricValue("controller_runtime_max_concurrent_reconciles", { controller: controller.name }),
    ).toBe(2);
    await stop();
  });

  it("keeps a quarter of its workers for changes while periodic requeues wait", async () => {
    const held = new Map<string, ReturnType<typeof deferred<void>>>();
    const periodicInFlight = new Set<string>();
    const changes: string[] = [];
    let peakPeriodic = 0;
    const { controller, stop } = run(
      reconcilerFunc(async (_, r) => {
        if (!r.name.startsWith("recheck")) {
          changes.push(r.name);
          return {};
        }
        // First pass: ask for a periodic look; the look itself holds its worker until released.
        const look = held.get(r.name);
        if (!look) {
          held.set(r.name, deferred());
          return { requeueAfterMs: 1, periodic: true };
        }
        periodicInFlight.add(r.name);
        peakPeriodic = Math.max(peakPeriodic, periodicInFlight.size);
        await look.promise;
        periodicInFlight.delete(r.name);
        return {};
      }),
      { maxConcurrentReconciles: 4 },
    );
    for (let i = 0; i < 6; i++) controller.enqueue({ ...req, name: `recheck-${i}` });
    await vi.waitFor(() => expect(periodicInFlight.size + controller.queue.len()).toBe(6));
    expect(periodicInFlight.size).toBe(3);
    // The fourth worker takes a change at once, though three periodic looks still wait.
    controller.enqueue({ ...req, name: "change" });
    await vi.waitFor(() => expect(changes).toEqual(["change"]));
    expect([periodicInFlight.size, controller.queue.len()]).toEqual([3, 3]);
    for (const look of held.values()) look.resolve();
    await vi.waitFor(() => expect(periodicInFlight.size + controller.queue.len()).toBe(0));
    expect(peakPeriodic).toBe(3);
    await stop();
  });

  it("refuses a periodic bound below one", () => {
    expect(
      () =>
        new Controller({
          name: uniqueName(),
          reconciler: reconcilerFunc(() => Promise.resolve({})),
          maxConcurrentPeriodic: 0,
        }),
    ).toThrow(/maxConcurrentPeriodic/);
  });

  it("counts active workers while reconciling", async () => {
    const release = deferred();
    const entered = deferred();
    const { controller, stop } = run(
      reconcilerFunc(async () => {
        entered.resolve();
        await release.promise;
        return {};
      }),
    );
    controller.enqueue(req);
    await entered.promise;
    expect(await metricValue("controller_runtime_active_workers", { controller: controller.name })).toBe(1);
    release.resolve();
    await stop();
    expect(await metricValue("controller_runtime_active_workers", { controller: controller.name })).toBe(0);
  });
});

describe("Controller shutdown", () => {
  it("waits for an in-flight reconcile, aborts its signal and starts nothing new", async () => {
    const release = deferred();
    const entered = deferred<AbortSignal>();
    const seen: string[] = [];
    const { controller, stop } = run(
      reconcilerFunc(async ({ signal }, r) => {
        seen.push(r.name);
        entered.resolve(signal);
        await release.promise;
        return {};
      }),
    );
    controller.enqueue({ ...req, name: "first" });
    const signal = await entered.promise;
    controller.enqueue({ ...req, name: "second" });
    let stopped = false;
    const stopping = stop().then(() => (stopped = true));
    await aborted(signal);
    expect(signal.aborted).toBe(true);
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    expect(seen).toEqual(["first"]);
    expect(controller.queue.shuttingDown).toBe(true);
  });

  it("gives up on a reconcile that ignores its signal after shutdownTimeoutMs", async () => {
    const entered = deferred();
    const { controller, stop } = run(
      reconcilerFunc(() => {
        entered.resolve();
        return new Promise<Result>(() => undefined);
      }),
      { shutdownTimeoutMs: 20 },
    );
    controller.enqueue(req);
    await entered.promise;
    const before = Date.now();
    await stop();
    expect(Date.now() - before).toBeGreaterThanOrEqual(15);
  });

  it("stops at once when started with an aborted signal", async () => {
    const seen: string[] = [];
    const controller = new Controller({
      name: uniqueName(),
      reconciler: reconcilerFunc((_, r) => (seen.push(r.name), Promise.resolve({}))),
      log: silentLogger,
    });
    controller.enqueue(req);
    await controller.start(AbortSignal.abort());
    expect(seen).toEqual([]);
  });
});

describe("Controller metrics", () => {
  it("exposes controller-runtime series in the registry text", async () => {
    const { controller, stop } = run(
      reconcilerFunc(() => Promise.resolve({})),
      { maxConcurrentReconciles: 3 },
    );
    controller.enqueue(req);
    await vi.waitFor(async () =>
      expect(
        await metricValue("controller_runtime_reconcile_total", {
          controller: controller.name,
          result: "success",
        }),
      ).toBe(1),
    );
    await stop();
    const text = await metricsRegistry.metrics();
    const c = `controller="${controller.name}"`;
    for (const line of [
      `controller_runtime_reconcile_total{${c},result="success"} 1`,
      `controller_runtime_reconcile_total{${c},result="error"} 0`,
      `controller_runtime_reconcile_total{${c},result="requeue_after"} 0`,
      `controller_runtime_reconcile_total{${c},result="requeue"} 0`,
      `controller_runtime_reconcile_errors_total{${c}} 0`,
      `controller_runtime_terminal_reconcile_errors_total{${c}} 0`,
      `controller_runtime_reconcile_panics_total{${c}} 0`,
      `controller_runtime_reconcile_time_seconds_count{${c}} 1`,
      `controller_runtime_max_concurrent_reconciles{${c}} 3`,
      `controller_runtime_active_workers{${c}} 0`,
      `workqueue_adds_total{name="${controller.name}",${c}} 1`,
      `workqueue_depth{name="${controller.name}",${c}} 0`,
      `workqueue_queue_duration_seconds_count{name="${controller.name}",${c}} 1`,
      `workqueue_work_duration_seconds_count{name="${controller.name}",${c}} 1`,
    ]) {
      expect(text).toContain(line);
    }
  });

  it("shares series between controllers of the same name", async () => {
    const name = uniqueName();
    const make = (): Controller =>
      new Controller({ name, reconciler: reconcilerFunc(() => Promise.resolve({})), log: silentLogger });
    expect(() => [make(), make()]).not.toThrow();
    expect(await metricValue("controller_runtime_max_concurrent_reconciles", { controller: name })).toBe(1);
  });
});
