/**
 * Prometheus metrics for the process, under controller-runtime's names and labels so existing
 * controller-runtime dashboards and alerts work unchanged. Creation is idempotent per registry:
 * several controllers (or tests) with the same name share one series instead of failing with
 * "already registered".
 */
import client, { type Registry } from "prom-client";
import type { InProgressWork, WorkQueueMetrics, WorkQueueMetricsProvider } from "./workqueue.ts";

/** The registry served on /metrics. */
export const metricsRegistry: Registry = new client.Registry();

export type ReconcileResultLabel = "success" | "error" | "requeue_after" | "requeue";
export const reconcileResultLabels: readonly ReconcileResultLabel[] = [
  "success",
  "error",
  "requeue_after",
  "requeue",
];

/** Reconcile durations from 5 ms to 60 s. */
const reconcileTimeBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 45, 60,
];
/** Queue wait and work durations from 10 ns to 1000 s, one bucket per decade. */
const workQueueBuckets = client.exponentialBuckets(1e-8, 10, 12);

const defaultMetricsRegistries = new WeakSet<Registry>();

/**
 * Adds the Node process metrics (CPU, memory, event loop, GC) to `registry`, once. Called by the
 * manager rather than at import, so importing this module starts no collectors.
 */
export function collectDefaultMetricsOnce(registry: Registry = metricsRegistry): void {
  if (defaultMetricsRegistries.has(registry)) return;
  defaultMetricsRegistries.add(registry);
  client.collectDefaultMetrics({ register: registry });
}

export function counter<L extends string>(
  registry: Registry,
  config: client.CounterConfiguration<L>,
): client.Counter<L> {
  const existing = registry.getSingleMetric(config.name);
  if (existing instanceof client.Counter) return existing;
  return new client.Counter({ ...config, registers: [registry] });
}

export function gauge<L extends string>(
  registry: Registry,
  config: client.GaugeConfiguration<L>,
): client.Gauge<L> {
  const existing = registry.getSingleMetric(config.name);
  if (existing instanceof client.Gauge) return existing;
  return new client.Gauge({ ...config, registers: [registry] });
}

export function histogram<L extends string>(
  registry: Registry,
  config: client.HistogramConfiguration<L>,
): client.Histogram<L> {
  const existing = registry.getSingleMetric(config.name);
  if (existing instanceof client.Histogram) return existing;
  return new client.Histogram({ ...config, registers: [registry] });
}

/**
 * Seconds spent in each named phase of a reconcile (runPhases), by controller and phase: where a
 * slow reconcile's time goes, Azure, the apiserver or the reconcile's own work.
 */
export function phaseTime(registry: Registry = metricsRegistry): client.Histogram<"controller" | "phase"> {
  return histogram(registry, {
    name: "controller_runtime_phase_seconds",
    help: "Seconds spent in one phase of a reconcile, by controller and phase",
    labelNames: ["controller", "phase"] as const,
    buckets: reconcileTimeBuckets,
  });
}

type ControllerLabel = "controller";

export interface ControllerMetrics {
  reconcileTotal: client.Counter<"controller" | "result">;
  reconcileErrors: client.Counter<ControllerLabel>;
  terminalReconcileErrors: client.Counter<ControllerLabel>;
  reconcilePanics: client.Counter<ControllerLabel>;
  reconcileTimeouts: client.Counter<ControllerLabel>;
  reconcileTime: client.Histogram<ControllerLabel>;
  maxConcurrentReconciles: client.Gauge<ControllerLabel>;
  activeWorkers: client.Gauge<ControllerLabel>;
}

/** The controller_runtime_* metrics in `registry`, created on first use. */
export function controllerMetrics(registry: Registry = metricsRegistry): ControllerMetrics {
  const c = ["controller"] as const;
  return {
    reconcileTotal: counter(registry, {
      name: "controller_runtime_reconcile_total",
      help: "Reconciles finished, by controller and outcome",
      labelNames: ["controller", "result"],
    }),
    reconcileErrors: counter(registry, {
      name: "controller_runtime_reconcile_errors_total",
      help: "Reconciles that ended in an error, by controller",
      labelNames: c,
    }),
    terminalReconcileErrors: counter(registry, {
      name: "controller_runtime_terminal_reconcile_errors_total",
      help: "Reconciles that ended in a terminal (not retried) error, by controller",
      labelNames: c,
    }),
    reconcilePanics: counter(registry, {
      name: "controller_runtime_reconcile_panics_total",
      help: "Reconcilers that threw instead of returning a promise, by controller",
      labelNames: c,
    }),
    reconcileTimeouts: counter(registry, {
      name: "controller_runtime_reconcile_timeouts_total",
      help: "Reconciles that failed after their timeout aborted them, by controller",
      labelNames: c,
    }),
    reconcileTime: histogram(registry, {
      name: "controller_runtime_reconcile_time_seconds",
      help: "Seconds spent in one reconcile, by controller",
      labelNames: c,
      buckets: reconcileTimeBuckets,
    }),
    maxConcurrentReconciles: gauge(registry, {
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Configured worker count, by controller",
      labelNames: c,
    }),
    activeWorkers: gauge(registry, {
      name: "controller_runtime_active_workers",
      help: "Workers currently reconciling, by controller",
      labelNames: c,
    }),
  };
}

type QueueLabel = "name" | "controller";

interface WorkQueueMetricSet {
  depth: client.Gauge<QueueLabel>;
  adds: client.Counter<QueueLabel>;
  queueDuration: client.Histogram<QueueLabel>;
  workDuration: client.Histogram<QueueLabel>;
  retries: client.Counter<QueueLabel>;
}

/** Per registry, the queues whose in-progress work is read on scrape. */
const inProgressProbes = new WeakMap<Registry, Map<string, () => InProgressWork>>();

function probesOf(registry: Registry): Map<string, () => InProgressWork> {
  let probes = inProgressProbes.get(registry);
  if (!probes) inProgressProbes.set(registry, (probes = new Map<string, () => InProgressWork>()));
  return probes;
}

/** A gauge that reads every live queue's in-progress work when scraped. */
function inProgressGauge(
  registry: Registry,
  name: string,
  help: string,
  pick: (w: InProgressWork) => number,
): void {
  const probes = probesOf(registry);
  gauge(registry, {
    name,
    help,
    labelNames: ["name", "controller"],
    collect() {
      // Reset so queues that shut down disappear instead of reporting their last value forever.
      this.reset();
      for (const [queue, probe] of probes) this.set({ name: queue, controller: queue }, pick(probe()));
    },
  });
}

function workQueueMetricSet(registry: Registry): WorkQueueMetricSet {
  const labelNames = ["name", "controller"] as const;
  inProgressGauge(
    registry,
    "workqueue_unfinished_work_seconds",
    "Seconds of work started and not yet done, summed over items; a steady climb means a stuck worker",
    (w) => w.unfinishedSeconds,
  );
  inProgressGauge(
    registry,
    "workqueue_longest_running_processor_seconds",
    "Seconds the oldest unfinished item has been processed",
    (w) => w.longestRunningSeconds,
  );
  return {
    depth: gauge(registry, {
      name: "workqueue_depth",
      help: "Items waiting in the queue for a worker",
      labelNames,
    }),
    adds: counter(registry, {
      name: "workqueue_adds_total",
      help: "Items added to the queue",
      labelNames: labelNames,
    }),
    queueDuration: histogram(registry, {
      name: "workqueue_queue_duration_seconds",
      help: "Seconds an item waited in the queue before a worker took it",
      labelNames,
      buckets: workQueueBuckets,
    }),
    workDuration: histogram(registry, {
      name: "workqueue_work_duration_seconds",
      help: "Seconds a worker spent on an item",
      labelNames,
      buckets: workQueueBuckets,
    }),
    retries: counter(registry, {
      name: "workqueue_retries_total",
      help: "Items re-added through the rate limiter",
      labelNames: labelNames,
    }),
  };
}

/**
 * Reports work queues to `registry` as workqueue_* metrics. As in controller-runtime, the queue
 * name doubles as the `controller` label.
 */
export function workQueueMetricsProvider(registry: Registry = metricsRegistry): WorkQueueMetricsProvider {
  return {
    forQueue(name: string, inProgress: () => InProgressWork): WorkQueueMetrics {
      const set = workQueueMetricSet(registry);
      const labels = { name, controller: name };
      const probes = probesOf(registry);
      probes.set(name, inProgress);
      // This queue's share of the depth gauge, removed on release so a successor starts clean.
      let depth = 0;
      return {
        added: () => {
          depth++;
          set.adds.inc(labels);
          set.depth.inc(labels);
        },
        started: (queuedSeconds) => {
          // After release the queue still hands out what it holds, already taken off the gauge.
          if (depth > 0) {
            depth--;
            set.depth.dec(labels);
          }
          set.queueDuration.observe(labels, queuedSeconds);
        },
        finished: (workSeconds) => set.workDuration.observe(labels, workSeconds),
        retried: () => set.retries.inc(labels),
        release: () => {
          set.depth.dec(labels, depth);
          depth = 0;
          // A newer queue may have taken the name over; only remove our own probe.
          if (probes.get(name) === inProgress) probes.delete(name);
        },
      };
    },
  };
}
