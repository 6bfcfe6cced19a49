/**
 * The tables of `hcpctl maintenance`: tasks with their runs by phase, runs with the step they are
 * on, a run's steps, and conditions. Plain text in kubectl's table form (table.ts).
 */
import {
  MAINTENANCE_RUN_PHASES,
  type Condition,
  type MaintenanceClusters,
  type MaintenanceRun,
  type MaintenanceRunPhase,
  type MaintenanceStepStatus,
  type MaintenanceTask,
} from "../../api/v1alpha1/index.ts";
import { find } from "../conditions.ts";
import { formatTable } from "../table.ts";
import { ageOf } from "../time.ts";

/** "Running=1 Succeeded=3" in the phases' order; "-" when there are none. */
export function runsByPhase(runs: Partial<Record<MaintenanceRunPhase, number>> | undefined): string {
  const parts = MAINTENANCE_RUN_PHASES.filter((p) => (runs?.[p] ?? 0) > 0).map((p) => `${p}=${runs?.[p]}`);
  return parts.join(" ") || "-";
}

/** Counts of runs by phase, read from the runs themselves (a run without a phase yet is Pending). */
export function countRuns(runs: readonly MaintenanceRun[]): Partial<Record<MaintenanceRunPhase, number>> {
  const counts: Partial<Record<MaintenanceRunPhase, number>> = {};
  for (const r of runs) {
    const phase = r.status?.phase ?? "Pending";
    counts[phase] = (counts[phase] ?? 0) + 1;
  }
  return counts;
}

export function clustersText(clusters: MaintenanceClusters): string {
  if (clusters.names) return clusters.names.join(",");
  const sel = clusters.selector;
  const labels = Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  const exprs = (sel?.matchExpressions ?? []).map(
    (e) => `${e.key} ${e.operator}${e.values ? ` (${e.values.join(",")})` : ""}`,
  );
  return `selector ${[...labels, ...exprs].join(",")}`;
}

/**
 * The step a run is on: the one running or failed, else the next pending one, else (all done) the
 * last; undefined before the run has steps.
 */
export function currentStep(run: MaintenanceRun): MaintenanceStepStatus | undefined {
  const steps = run.status?.steps ?? [];
  return (
    steps.find((s) => s.state === "Running" || s.state === "Failed") ??
    steps.find((s) => s.state === "Pending") ??
    steps.at(-1)
  );
}

/**
 * What a run says about itself now: its step's message while Running, else why it is where it is
 * (a failed run's Ready and Progressing say only "Failed": then its step says why).
 */
export function runMessage(run: MaintenanceRun): string {
  const conditions = run.status?.conditions;
  const step = currentStep(run);
  if (run.status?.phase === "Running" && step?.message) return step.message;
  const progressing = find(conditions, "Progressing");
  const ready = find(conditions, "Ready");
  return progressing?.message || ready?.message || step?.message || "";
}

function taskState(t: MaintenanceTask): string {
  if (t.spec.cancelled) return "Cancelled";
  if (find(t.status?.conditions, "Complete")?.status === "True") return "Complete";
  if (t.spec.paused) return "Paused";
  const accepted = find(t.status?.conditions, "Accepted");
  if (accepted && accepted.status !== "True") return accepted.reason;
  return accepted ? "Active" : "Pending";
}

const taskType = (t: MaintenanceTask): string =>
  t.spec.release ? `${t.spec.task} ${t.spec.release.version}` : t.spec.task;

export function tasksTable(tasks: readonly MaintenanceTask[], now: number): string {
  const rows = tasks.map((t) => [
    t.metadata.name ?? "",
    taskType(t),
    taskState(t),
    String(t.status?.clusters ?? 0),
    runsByPhase(t.status?.runs),
    t.spec.urgency ?? "Normal",
    ageOf(t.metadata.creationTimestamp, now),
  ]);
  return formatTable([["TASK", "TYPE", "STATE", "CLUSTERS", "RUNS", "URGENCY", "AGE"], ...rows]);
}

export function stepText(run: MaintenanceRun): string {
  const step = currentStep(run);
  return step ? `${step.name} (${step.state})` : "-";
}

export function runsTable(
  runs: readonly MaintenanceRun[],
  now: number,
  opts: { namespaceColumn: boolean; message: boolean },
): string {
  const header = [
    ...(opts.namespaceColumn ? ["NAMESPACE"] : []),
    "CLUSTER",
    "TASK",
    "PHASE",
    "STEP",
    "ATTEMPTS",
    "AGE",
    ...(opts.message ? ["MESSAGE"] : []),
  ];
  const rows = runs.map((r) => [
    ...(opts.namespaceColumn ? [r.metadata.namespace ?? ""] : []),
    r.spec.clusterRef.name,
    r.spec.task,
    r.status?.phase ?? "Pending",
    stepText(r),
    String(currentStep(r)?.attempts ?? 0),
    ageOf(r.metadata.creationTimestamp, now),
    ...(opts.message ? [runMessage(r)] : []),
  ]);
  return formatTable([header, ...rows]);
}

export function stepsTable(run: MaintenanceRun, now: number): string {
  const rows = (run.status?.steps ?? []).map((s) => [
    s.name,
    s.state,
    String(s.attempts ?? 0),
    s.startedAt ? ageOf(s.startedAt, now) : "-",
    s.completedAt ? ageOf(s.completedAt, now) : "-",
    s.message ?? "",
  ]);
  return formatTable([["STEP", "STATE", "ATTEMPTS", "STARTED", "COMPLETED", "MESSAGE"], ...rows]);
}

export function conditionsTable(conditions: readonly Condition[] | undefined, now: number): string {
  const rows = (conditions ?? []).map((c) => [
    c.type,
    c.status,
    c.reason,
    ageOf(c.lastTransitionTime, now),
    c.message,
  ]);
  return formatTable([["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"], ...rows]);
}

/** "key: value" lines, the keys aligned, empty values left out. */
export function fields(
  pairs: ReadonlyArray<readonly [string, string | number | boolean | undefined]>,
): string {
  const shown = pairs.filter(([, v]) => v !== undefined && v !== "");
  const width = Math.max(0, ...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${String(v)}\n`).join("");
}

export const indent = (text: string): string =>
  text
    .split("\n")
    .map((l) => (l ? `  ${l}` : l))
    .join("\n");
