/** The simulator's own metrics, beside the controller_runtime_* series of its two controllers. */
import type client from "prom-client";
import { counter, metricsRegistry } from "../../operators/runtime/metrics.ts";

export interface SimulatorMetrics {
  /** Events recorded, by management cluster, kind and event reason (Available, Scaled, …). */
  transitions: client.Counter<"cluster" | "kind" | "reason">;
  /** Objects whose finalizer the simulator released after cleaning up. */
  deletions: client.Counter<"cluster" | "kind">;
}

export function simulatorMetrics(registry: client.Registry = metricsRegistry): SimulatorMetrics {
  return {
    transitions: counter(registry, {
      name: "hypershift_simulator_transitions_total",
      help: "Status transitions the HyperShift simulator reported, by cluster, kind and reason",
      labelNames: ["cluster", "kind", "reason"],
    }),
    deletions: counter(registry, {
      name: "hypershift_simulator_deletions_total",
      help: "HostedClusters and NodePools the HyperShift simulator finished deleting, by cluster and kind",
      labelNames: ["cluster", "kind"],
    }),
  };
}
