/**
 * The usage controller's metrics, one set per registry (the operators' /metrics, or a test's):
 *
 *   hcp_usage_observations_total{dimension,change}        segments the recorder opened, changed, closed
 *   hcp_usage_record_errors_total{kind}                    objects the ledger refused (named in the log)
 *   hcp_usage_hours_recorded_total                         hourly rows the roll-up wrote
 *   hcp_usage_hours_exported_total{dimension,outcome}      rows marked reported: accepted, or duplicate
 *                                                          (an earlier attempt's answer was lost)
 *   hcp_usage_hours_unreportable_total{state,reason}       rows marked rejected (the API's code) or expired
 *   hcp_usage_export_failures_total{failure}               calls whose outcome was unknown or refused whole
 *   hcp_usage_oldest_unreported_hour_age_seconds           age of the oldest hour not reported (0 when none;
 *                                                          while passes fail, at least since the hour they began failing in)
 */
import type { Counter, Registry } from "prom-client";
import { counter, gauge, metricsRegistry } from "../runtime/metrics.ts";

export interface UsageMetrics {
  observations: Counter<"dimension" | "change">;
  recordErrors: Counter<"kind">;
  hoursRecorded: Counter;
  exported: Counter<"dimension" | "outcome">;
  unreportable: Counter<"state" | "reason">;
  exportFailures: Counter<"failure">;
  /**
   * The oldest unreported hour the last export pass found, since when passes fail (then the hour
   * in progress then cannot have been reported either), and the clock they are aged by at scrape.
   */
  lag: { oldest: Date | undefined; stalledSince: Date | undefined; now: () => Date };
}

const byRegistry = new WeakMap<Registry, UsageMetrics>();

export function usageMetrics(registry: Registry = metricsRegistry): UsageMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const lag: UsageMetrics["lag"] = { oldest: undefined, stalledSince: undefined, now: () => new Date() };
  const m: UsageMetrics = {
    observations: counter(registry, {
      name: "hcp_usage_observations_total",
      help: "Usage segments the recorder wrote to the ledger: opened, changed (a new rate), closed",
      labelNames: ["dimension", "change"],
    }),
    recordErrors: counter(registry, {
      name: "hcp_usage_record_errors_total",
      help: "HcpClusters and NodePools whose usage the ledger refused (the operators' log names the object and the field)",
      labelNames: ["kind"],
    }),
    hoursRecorded: counter(registry, {
      name: "hcp_usage_hours_recorded_total",
      help: "Hourly usage rows the roll-up wrote to the ledger",
    }),
    exported: counter(registry, {
      name: "hcp_usage_hours_exported_total",
      help: "Hourly usage rows marked reported: accepted by the metering API, or answered duplicate (an earlier attempt got through)",
      labelNames: ["dimension", "outcome"],
    }),
    unreportable: counter(registry, {
      name: "hcp_usage_hours_unreportable_total",
      help: "Hourly usage rows marked rejected (reason: the metering API's code) or expired (reason: lateness, older than the API takes; api, the API said so)",
      labelNames: ["state", "reason"],
    }),
    exportFailures: counter(registry, {
      name: "hcp_usage_export_failures_total",
      help: "Metering API calls whose outcome was unknown (server, throttled, timeout, connection, token) or that were refused whole (refused); their rows stay unreported",
      labelNames: ["failure"],
    }),
    lag,
  };
  gauge(registry, {
    name: "hcp_usage_oldest_unreported_hour_age_seconds",
    help: "Seconds since the start of the oldest hourly usage row not yet reported, as the leader's last export pass found it (0 when every row is reported or marked)",
    collect() {
      const stalled = lag.stalledSince && Math.floor(lag.stalledSince.getTime() / 3600_000) * 3600_000;
      const oldest = Math.min(lag.oldest?.getTime() ?? Infinity, stalled ?? Infinity);
      this.set(Number.isFinite(oldest) ? Math.max(0, (lag.now().getTime() - oldest) / 1000) : 0);
    },
  });
  byRegistry.set(registry, m);
  return m;
}
