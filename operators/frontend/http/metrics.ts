/**
 * Route-labelled request metrics: the label is the route's pattern (or a special path, or
 * UNMATCHED_ROUTE), never the path itself, so that callers cannot grow the label set.
 */
import type { Registry } from "prom-client";
import { counter, histogram } from "../../runtime/metrics.ts";
import { match, type Route } from "./routes.ts";
import { SPECIAL_PATHS } from "./special-paths.ts";

/** The route label of requests no route matches (real 404s). */
export const UNMATCHED_ROUTE = "unmatched";

export function routeLabel(routes: Route[], path: string | undefined): string {
  if (path === undefined) return UNMATCHED_ROUTE;
  if (SPECIAL_PATHS.includes(path)) return path;
  return match(routes, path)?.route.name ?? UNMATCHED_ROUTE;
}

export interface RequestMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
}

export function requestMetrics(registry: Registry): RequestMetrics {
  const requests = counter(registry, {
    name: "hcp_frontend_requests_total",
    help: "ARM requests by method, route and status code",
    labelNames: ["method", "route", "code"] as const,
  });
  const duration = histogram(registry, {
    name: "hcp_frontend_request_duration_seconds",
    help: "ARM request latency by method and route",
    labelNames: ["method", "route"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });
  return {
    observe(method: string, route: string, status: number, seconds: number): void {
      requests.inc({ method, route, code: String(status) });
      duration.observe({ method, route }, seconds);
    },
  };
}
