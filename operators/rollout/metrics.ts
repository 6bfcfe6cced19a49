/**
 * The rollout gauges, read from the rollouts cache when /metrics is scraped: rollouts by phase,
 * and waves by state (a wave held over its failure budget is the one an SRE must look at).
 */
import type { Gauge } from "prom-client";
import { ROLLOUT_PHASES, ROLLOUT_WAVE_STATES, type Rollout } from "../api/v1alpha1/index.ts";
import type { Lister } from "../runtime/informer.ts";
import { gauge, metricsRegistry } from "../runtime/metrics.ts";

/** The cache the gauges read: the latest started controller's (one per process in production). */
let source: Lister<Rollout> | undefined;
let registered: Gauge[] | undefined;

export function registerRolloutGauges(rollouts: Lister<Rollout>): void {
  source = rollouts;
  registered ??= [
    gauge(metricsRegistry, {
      name: "hcp_rollouts",
      help: "Rollouts by phase",
      labelNames: ["phase"],
      collect() {
        this.reset();
        if (!source) return;
        for (const phase of ROLLOUT_PHASES) this.set({ phase }, 0);
        for (const r of source.list()) if (r.status?.phase) this.inc({ phase: r.status.phase });
      },
    }),
    gauge(metricsRegistry, {
      name: "hcp_rollout_waves",
      help: "Waves of the rollouts by state (FailureBudgetExceeded: a rollout paused itself)",
      labelNames: ["state"],
      collect() {
        this.reset();
        if (!source) return;
        for (const state of ROLLOUT_WAVE_STATES) this.set({ state }, 0);
        for (const r of source.list()) for (const w of r.status?.waves ?? []) this.inc({ state: w.state });
      },
    }),
  ];
}
