/**
 * What every `npm run bench` scenario returns: its figures, and each figure set beside its floor or
 * peer measured in the same run, with the ratio and whether the target is met.
 */

export interface Figure {
  name: string;
  value: number;
  unit: string;
  detail?: string;
}

export interface Comparison {
  name: string;
  unit: string;
  ours: number;
  /** What `ours` is measured against: a floor (raw client) or a peer (the real Maestro). */
  against: string;
  peer: number;
  /** ours / peer. */
  ratio: number;
  /** The target on the ratio, e.g. ">= 2" or "<= 0.5"; absent when the comparison is informational. */
  target?: string;
  met?: boolean;
  /** What the figures alone do not say (statuses lost, a side that failed). */
  note?: string;
}

export interface ScenarioResult {
  figures: Figure[];
  comparisons: Comparison[];
  /** The scenario's whole measurement, kept in .local/bench.json (requests by verb, per component). */
  report?: unknown;
}

export interface ScenarioOptions {
  /** `--n`, when given: the scenario's main count (works, clusters, requests). */
  n: number | undefined;
  /** The whole command line, for the scenario's own flags (parsed with `strict: false`). */
  argv: string[];
}

export interface Scenario {
  describe: string;
  run(opts: ScenarioOptions): Promise<ScenarioResult>;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** A comparison with a target on the ratio: "at least" (higher is better) or "at most". */
export function compare(
  c: Omit<Comparison, "ratio" | "target" | "met">,
  target?: { atLeast?: number; atMost?: number },
): Comparison {
  const ratio = Math.round((c.ours / c.peer) * 100) / 100;
  if (target?.atLeast !== undefined)
    return { ...c, ratio, target: `>= ${target.atLeast}`, met: ratio >= target.atLeast };
  if (target?.atMost !== undefined)
    return { ...c, ratio, target: `<= ${target.atMost}`, met: ratio <= target.atMost };
  return { ...c, ratio };
}
