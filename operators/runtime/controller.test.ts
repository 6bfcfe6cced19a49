import { afterEach, describe, it, expect, vi } from "vitest";
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
import { createLogger } from "./logger.ts";
import { itemExponentialRateLimiter } from "./ratelimiter.ts";

import { deferred, flush, metricValue, req, run, uniqueName } from "../../test/support/running-controller.ts";

afterEach(() => {
  vi.useRealTimers();
});

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
