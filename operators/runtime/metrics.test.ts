import { describe, it, expect } from "vitest";
import client from "prom-client";
import {
  collectDefaultMetricsOnce,
  controllerMetrics,
  metricsRegistry,
  workQueueMetricsProvider,
} from "./metrics.ts";
import { WorkQueue } from "./workqueue.ts";

async function valueOf(
  registry: client.Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  const data = await metric?.get();
  const match = data?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return match?.value ?? Number.NaN;
}

describe("controllerMetrics", () => {
  it("creates the controller-runtime metrics once per registry", () => {
    const registry = new client.Registry();
    const first = controllerMetrics(registry);
    const second = controllerMetrics(registry);
    expect(second.reconcileTotal).toBe(first.reconcileTotal);
    expect(second.reconcileTime).toBe(first.reconcileTime);
    expect(controllerMetrics(new client.Registry()).reconcileTotal).not.toBe(first.reconcileTotal);
  });

  it.each([
    ["controller_runtime_reconcile_total", "counter", ["controller", "result"]],
    ["controller_runtime_reconcile_errors_total", "counter", ["controller"]],
    ["controller_runtime_terminal_reconcile_errors_total", "counter", ["controller"]],
    ["controller_runtime_reconcile_panics_total", "counter", ["controller"]],
    ["controller_runtime_reconcile_time_seconds", "histogram", ["controller"]],
    ["controller_runtime_max_concurrent_reconciles", "gauge", ["controller"]],
    ["controller_runtime_active_workers", "gauge", ["controller"]],
  ])("registers %s as a %s labelled %j", async (name, type, labelNames) => {
    const registry = new client.Registry();
    controllerMetrics(registry);
    const metric = registry.getSingleMetric(name);
    expect(metric).toBeDefined();
    const data = await metric!.get();
    expect(data.type).toBe(type);
    expect((metric as unknown as { labelNames: string[] }).labelNames).toEqual(labelNames);
  });

  it("uses reconcile time buckets from 5 ms to 60 s", async () => {
    const registry = new client.Registry();
    controllerMetrics(registry).reconcileTime.observe({ controller: "c" }, 0.001);
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_reconcile_time_seconds_bucket{le="0.005",controller="c"} 1');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_bucket{le="60",controller="c"} 1');
  });
});

describe("workQueueMetricsProvider", () => {
  it("reports depth, adds, latency, work duration and retries under name and controller", async () => {
    const registry = new client.Registry();
    let now = 0;
    const q = new WorkQueue({
      name: "widgets",
      metrics: workQueueMetricsProvider(registry),
      clock: () => now,
    });
    q.add("a");
    q.add("b");
    const labels = { name: "widgets", controller: "widgets" };
    expect(await valueOf(registry, "workqueue_depth", labels)).toBe(2);
    expect(await valueOf(registry, "workqueue_adds_total", labels)).toBe(2);
    const a = (await q.get())!;
    now = 250;
    q.done(a);
    q.addRateLimited("a");
    expect(await valueOf(registry, "workqueue_depth", labels)).toBe(1);
    expect(await valueOf(registry, "workqueue_retries_total", labels)).toBe(1);
    const text = await registry.metrics();
    expect(text).toContain('workqueue_queue_duration_seconds_count{name="widgets",controller="widgets"} 1');
    expect(text).toContain('workqueue_work_duration_seconds_sum{name="widgets",controller="widgets"} 0.25');
    q.shutDown();
  });

  it("computes unfinished work on scrape and drops the queue after shutdown", async () => {
    const registry = new client.Registry();
    let now = 0;
    const q = new WorkQueue({ name: "slow", metrics: workQueueMetricsProvider(registry), clock: () => now });
    q.add("a");
    q.add("b");
    await q.get();
    now = 1_000;
    await q.get();
    now = 3_000;
    const labels = { name: "slow", controller: "slow" };
    expect(await valueOf(registry, "workqueue_unfinished_work_seconds", labels)).toBe(5);
    expect(await valueOf(registry, "workqueue_longest_running_processor_seconds", labels)).toBe(3);
    q.shutDown();
    expect(await valueOf(registry, "workqueue_unfinished_work_seconds", labels)).toBeNaN();
  });

  it("removes a shut-down queue's items from the depth so a successor starts at zero", async () => {
    const registry = new client.Registry();
    const labels = { name: "again", controller: "again" };
    const old = new WorkQueue({ name: "again", metrics: workQueueMetricsProvider(registry) });
    old.add("a");
    old.add("b");
    old.shutDown();
    expect(await valueOf(registry, "workqueue_depth", labels)).toBe(0);
    await old.get();
    expect(await valueOf(registry, "workqueue_depth", labels)).toBe(0);
    const next = new WorkQueue({ name: "again", metrics: workQueueMetricsProvider(registry) });
    next.add("a");
    expect(await valueOf(registry, "workqueue_depth", labels)).toBe(1);
  });
});

describe("registries", () => {
  it("exposes one process registry", () => {
    expect(metricsRegistry).toBeInstanceOf(client.Registry);
  });

  it("collects default process metrics once per registry", async () => {
    const registry = new client.Registry();
    collectDefaultMetricsOnce(registry);
    expect(() => collectDefaultMetricsOnce(registry)).not.toThrow();
    expect(await registry.metrics()).toContain("process_cpu_user_seconds_total");
  });
});
