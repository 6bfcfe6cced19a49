/** The session gate's metrics: requests by code, what is open, and streams cut and why. */
import type client from "prom-client";
import { counter, gauge, metricsRegistry } from "../runtime/metrics.ts";

export interface GateMetrics {
  requests: client.Counter<"code">;
  inFlight: client.Gauge;
  streamsCut: client.Counter<"reason">;
}

export function gateMetrics(registry: client.Registry = metricsRegistry): GateMetrics {
  return {
    requests: counter(registry, {
      name: "hcp_sessiongate_requests_total",
      help: "Requests through the session gate by HTTP status (refusals included).",
      labelNames: ["code"],
    }),
    inFlight: gauge(registry, {
      name: "hcp_sessiongate_in_flight",
      help: "Requests and streams open through the session gate.",
    }),
    streamsCut: counter(registry, {
      name: "hcp_sessiongate_streams_cut_total",
      help: "Requests and streams the gate cut because their session ended, by why.",
      labelNames: ["reason"],
    }),
  };
}
