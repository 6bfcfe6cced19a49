/** The runtime Controller's workers: concurrency, the periodic lane, shutdown, and its metrics. */
import { afterEach, describe, it, expect, vi } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { Controller, reconcilerFunc, type Result } from "./controller.ts";
import { silentLogger } from "./logger.ts";
import { metricsRegistry } from "./metrics.ts";

import {
  aborted,
  deferred,
  metricValue,
  req,
  run,
  uniqueName,
} from "../../test/support/running-controller.ts";

afterEach(() => {
  vi.useRealTimers();
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
