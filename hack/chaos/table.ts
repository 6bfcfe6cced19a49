/** The chaos table: one row per fault, its runs summed up. */
import type { RunResult } from "./run.ts";

export interface Row {
  fault: string;
  runs: number;
  /** Runs that converged. */
  converged: number;
  /** The slowest run's time to converge, seconds; undefined when none converged. */
  convergeSeconds?: number;
  lost: number;
  duplicated: number;
  orphaned: number;
  /** Changes asked for after the restored backup was taken; only for a fault that restores the region. */
  lostBeyondRpo?: number;
  /** The fault was not run (not implemented, or not chosen). */
  notRun?: boolean;
}

export function summarize(fault: string, results: RunResult[]): Row {
  const times = results
    .filter((r) => r.converged && r.convergeMs !== undefined)
    .map((r) => r.convergeMs ?? 0);
  const sum = (pick: (r: RunResult) => string[]): number => results.reduce((n, r) => n + pick(r).length, 0);
  return {
    fault,
    runs: results.length,
    converged: results.filter((r) => r.converged).length,
    ...(times.length > 0 ? { convergeSeconds: Math.round(Math.max(...times) / 100) / 10 } : {}),
    lost: sum((r) => r.lost),
    duplicated: sum((r) => r.duplicated),
    orphaned: sum((r) => r.orphaned),
    ...(results.some((r) => r.lostBeyondRpo) ? { lostBeyondRpo: sum((r) => r.lostBeyondRpo ?? []) } : {}),
  };
}

/** Whether every run of the row converged with nothing lost, duplicated or orphaned. */
export const clean = (r: Row): boolean =>
  !r.notRun && r.converged === r.runs && r.lost + r.duplicated + r.orphaned === 0;

/**
 * The table as Markdown, as docs/reliability.md shows it; with a column for what was lost beyond
 * the recovery point when a row restored the region ("–" for a fault that loses nothing by design).
 */
export function formatTable(rows: Row[]): string {
  const rpo = rows.some((r) => r.lostBeyondRpo !== undefined);
  const columns = [
    "fault",
    "runs",
    "converged",
    "time to converge",
    "lost",
    ...(rpo ? ["lost beyond RPO"] : []),
    "duplicated",
    "orphaned",
  ];
  const lines = [`| ${columns.join(" | ")} |`, `| ${columns.map(() => "---").join(" | ")} |`];
  for (const r of rows) {
    if (r.notRun) {
      lines.push(`| ${r.fault} | not run |${" |".repeat(columns.length - 2)}`);
      continue;
    }
    const time = r.convergeSeconds === undefined ? "–" : `${r.convergeSeconds} s`;
    const cells = [r.fault, r.runs, `${r.converged}/${r.runs}`, time, r.lost];
    if (rpo) cells.push(r.lostBeyondRpo ?? "–");
    cells.push(r.duplicated, r.orphaned);
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}
