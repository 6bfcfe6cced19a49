/**
 * Runs faults, each `runs` times, each run in a fresh region (or, for a short CI subset, all in
 * one region: later runs then also check that earlier runs' clusters stay as they were), and
 * sums the runs up into the table's rows.
 */
import { join } from "node:path";
import { errorMessage } from "../../operators/runtime/errors.ts";
import type { Fault } from "./faults.ts";
import { startChaosRegion, type ChaosRegion, type ChaosRegionOptions } from "./region.ts";
import { runFault, type RunResult, type RunSettings } from "./run.ts";
import { summarize, type Row } from "./table.ts";
import { Workload } from "./workload.ts";

export interface SuiteSettings extends RunSettings {
  faults: Fault[];
  runs: number;
  managementClusters: number;
  simulator: ChaosRegionOptions["simulator"];
  agentStatusSyncMs?: number;
  /** Each region's component logs go to a directory under this. */
  logRoot: string;
  /** One region for every run instead of one per run (a CI subset: startup is most of its time). */
  shareRegion?: boolean;
}

export interface SuiteReport {
  results: RunResult[];
  rows: Row[];
}

interface Running {
  chaos: ChaosRegion;
  workload: Workload;
}

async function startRunning(
  s: SuiteSettings,
  name: string,
  replicas: number,
  clusters: number,
): Promise<Running> {
  const chaos = await startChaosRegion({
    managementClusters: s.managementClusters,
    replicas,
    // Least-loaded placement spreads the clusters; room for all of them on each, and the extras.
    capacity: clusters + 20,
    simulator: s.simulator,
    agentStatusSyncMs: s.agentStatusSyncMs,
    logDir: join(s.logRoot, name),
  });
  return { chaos, workload: new Workload(chaos.service) };
}

function failed(fault: Fault, err: unknown): RunResult {
  const error = errorMessage(err);
  return {
    fault: fault.name,
    converged: false,
    lost: [],
    duplicated: [],
    orphaned: [],
    pending: [],
    notes: [],
    error,
  };
}

export async function runSuite(s: SuiteSettings): Promise<SuiteReport> {
  const results: RunResult[] = [];
  const replicas = Math.max(1, ...s.faults.map((f) => f.replicas ?? 1));
  const shared = s.shareRegion
    ? await startRunning(s, "shared", replicas, s.n * s.runs * s.faults.length)
    : undefined;
  try {
    for (const fault of s.faults) {
      for (let run = 1; run <= s.runs; run++) {
        const progress = (text: string): void => s.progress(`${fault.name} #${run}: ${text}`);
        results.push(await runOnce(s, { fault, run, shared, progress }));
      }
    }
  } finally {
    await shared?.chaos.stop();
  }
  const rows = s.faults.map((f) =>
    summarize(
      f.name,
      results.filter((r) => r.fault === f.name),
    ),
  );
  return { results, rows };
}

interface Attempt {
  fault: Fault;
  run: number;
  /** The region every run shares, if they do. */
  shared: Running | undefined;
  progress: (text: string) => void;
}

async function runOnce(s: SuiteSettings, { fault, run, shared, progress }: Attempt): Promise<RunResult> {
  let own: Running | undefined;
  try {
    progress(shared ? "starting" : "starting a region");
    own = shared ? undefined : await startRunning(s, `${fault.name}-${run}`, fault.replicas ?? 1, s.n);
    const { chaos, workload } = (shared ?? own)!;
    const result = await runFault(fault, chaos, workload, { ...s, progress });
    progress(
      `${result.converged ? "converged" : "NOT converged"}; lost ${result.lost.length}, duplicated ${result.duplicated.length}, orphaned ${result.orphaned.length}`,
    );
    return result;
  } catch (err) {
    progress(`failed: ${errorMessage(err)}`);
    return failed(fault, err);
  } finally {
    await own?.chaos.stop();
  }
}
