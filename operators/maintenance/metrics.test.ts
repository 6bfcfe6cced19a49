import { describe, expect, it } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import type { MaintenanceRun, MaintenanceRunPhase } from "../api/v1alpha1/index.ts";
import { metricsRegistry } from "../runtime/metrics.ts";
import { longestRunningSeconds, oldestPendingSeconds, registerMaintenanceGauges } from "./metrics.ts";

const NOW = Date.parse("2026-11-28T12:00:00Z");
const ago = (seconds: number): string => new Date(NOW - seconds * 1000).toISOString();

function run(name: string, phase: MaintenanceRunPhase, created: number, started?: number): MaintenanceRun {
  return {
    metadata: { name, namespace: "ns", creationTimestamp: ago(created) },
    spec: { task: "t", taskType: "UpgradeControlPlane", clusterRef: { name } },
    status: { phase, ...(started === undefined ? {} : { startedAt: ago(started) }) },
  };
}

const RUNS = [
  run("waiting", "Waiting", 900),
  run("long", "Running", 9000, 7200),
  run("short", "Running", 600, 60),
  run("done", "Succeeded", 99_000, 98_000),
];

describe("maintenance gauges", () => {
  it("longest running: since startedAt of the earliest Running run, finished runs aside; 0 when none runs", () => {
    expect(longestRunningSeconds(RUNS, NOW)).toBe(7200);
    expect(longestRunningSeconds([RUNS[0]!, RUNS[3]!], NOW)).toBe(0);
    expect(longestRunningSeconds([run("unstarted", "Running", 10)], NOW)).toBe(0);
  });

  it("oldest pending: the oldest run not yet started", () => {
    expect(oldestPendingSeconds(RUNS, NOW)).toBe(900);
  });

  it("exports both on /metrics from the runs cache", async () => {
    registerMaintenanceGauges(new FakeLister(RUNS), () => NOW);
    const text = await metricsRegistry.metrics();
    expect(text).toContain("hcp_maintenance_longest_running_run_seconds 7200");
    expect(text).toContain("hcp_maintenance_oldest_pending_run_seconds 900");
    expect(text).toContain('hcp_maintenance_runs{phase="Running"} 2');
  });
});
