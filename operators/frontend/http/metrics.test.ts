import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { requestMetrics, routeLabel, UNMATCHED_ROUTE } from "./metrics.ts";
import { PATTERNS, route } from "./routes.ts";

const routes = [route({ pattern: PATTERNS.cluster, methods: {} })];
const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";

describe("request metrics", () => {
  it("labels a request by its route's pattern, a special path, or as unmatched", () => {
    const path = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1`;
    expect(routeLabel(routes, path)).toBe(PATTERNS.cluster);
    expect(routeLabel(routes, "/metrics")).toBe("/metrics");
    expect(routeLabel(routes, "/random/path")).toBe(UNMATCHED_ROUTE);
    expect(routeLabel(routes, undefined)).toBe(UNMATCHED_ROUTE);
  });

  it("counts requests by method, route and code, and times them by method and route", async () => {
    const registry = new Registry();
    const metrics = requestMetrics(registry);
    metrics.observe("GET", PATTERNS.cluster, 200, 0.02);
    metrics.observe("GET", PATTERNS.cluster, 200, 0.03);
    const text = await registry.metrics();
    expect(text).toContain(
      `hcp_frontend_requests_total{method="GET",route="${PATTERNS.cluster}",code="200"} 2`,
    );
    expect(text).toContain(
      `hcp_frontend_request_duration_seconds_count{method="GET",route="${PATTERNS.cluster}"} 2`,
    );
  });
});
