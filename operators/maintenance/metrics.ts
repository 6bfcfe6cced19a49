/**
 * The maintenance gauges, read from the runs cache when /metrics is scraped: runs by phase, how
 * long the oldest run not yet started has waited, and how long the longest Running run has run
 * (HcpMaintenanceRunStuck reads it).
 */
import type { Gauge } from "prom-client";
import { MAINTENANCE_RUN_PHASES, type MaintenanceRun } from "../api/v1alpha1/index.ts";
import type { Lister } from "../runtime/informer.ts";
import { gauge, metricsRegistry } from "../runtime/metrics.ts";

/** The caches the gauges read: the latest started controller's (one per process in production). */
let source: { runs: Lister<MaintenanceRun>; now: () => number } | undefined;
let registered: Gauge[] | undefined;

/** Not started: made, waiting for its time, its window or admission. */
const notStarted = (r: MaintenanceRun): boolean => {
  const phase = r.status?.phase ?? "Pending";
  return phase === "Pending" || phase === "Waiting";
};

/** Seconds the oldest run not yet started has existed; 0 when none waits. */
export function oldestPendingSeconds(runs: readonly MaintenanceRun[], now: number): number {
  let oldest = now;
  for (const r of runs) {
    const created = Date.parse(r.metadata.creationTimestamp ?? "");
    if (notStarted(r) && !Number.isNaN(created)) oldest = Math.min(oldest, created);
  }
  return Math.max(0, (now - oldest) / 1000);
}

/** Seconds since status.startedAt of the longest Running run; 0 when none runs. */
export function longestRunningSeconds(runs: readonly MaintenanceRun[], now: number): number {
  let earliest = now;
  for (const r of runs) {
    const started = Date.parse(r.status?.startedAt ?? "");
    if (r.status?.phase === "Running" && !Number.isNaN(started)) earliest = Math.min(earliest, started);
  }
  return Math.max(0, (now - earliest) / 1000);
}

export function registerMaintenanceGauges(runs: Lister<MaintenanceRun>, now: () => number = Date.now): void {
  source = { runs, now };
  registered ??= [
    gauge(metricsRegistry, {
      name: "hcp_maintenance_runs",
      help: "MaintenanceRuns by phase",
      labelNames: ["phase"],
      collect() {
        this.reset();
        if (!source) return;
        for (const phase of MAINTENANCE_RUN_PHASES) this.set({ phase }, 0);
        for (const r of source.runs.list()) this.inc({ phase: r.status?.phase ?? "Pending" });
      },
    }),
    gauge(metricsRegistry, {
      name: "hcp_maintenance_oldest_pending_run_seconds",
      help: "Seconds the oldest MaintenanceRun not yet started (Pending or Waiting) has existed; 0 when none",
      collect() {
        if (source) this.set(oldestPendingSeconds(source.runs.list(), source.now()));
      },
    }),
    gauge(metricsRegistry, {
      name: "hcp_maintenance_longest_running_run_seconds",
      help: "Seconds since the longest Running MaintenanceRun started (status.startedAt); 0 when none runs",
      collect() {
        if (source) this.set(longestRunningSeconds(source.runs.list(), source.now()));
      },
    }),
  ];
}
