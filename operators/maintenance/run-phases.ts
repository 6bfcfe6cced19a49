/**
 * The phases of a MaintenanceRun, in order: find the cluster (gone: Cancelled); schedule (before
 * notBefore, past notAfter, outside the cluster's window); admit (one Running run per cluster, a
 * bounded number per management cluster), whose Running is written before any step executes;
 * then, once Running is stored, execute ONE step and record its outcome in the same reconcile's
 * status write. A crash anywhere re-runs at most the current step, which is idempotent. The run's
 * task may be paused (nothing admitted, no next step begun) or cancelled (runs not yet Running end).
 */
import {
  FINISHED_RUN_PHASES,
  type MaintenanceRunPhase,
  type MaintenanceTask,
  type MaintenanceStepStatus,
} from "../api/v1alpha1/index.ts";
import { maintenanceWindowAt } from "../hcp/maintenance-window.ts";
import { getCondition } from "../runtime/conditions.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { errorMessage } from "../runtime/errors.ts";
import type { Phase, PhaseResult } from "../runtime/phases.ts";
import type { RunEvent, RunScope, WaitReason } from "./run-scope.ts";
import { MAX_STEP_ATTEMPTS } from "./run-scope.ts";
import { RUN_CONDITIONS } from "./run-status.ts";
import type { MaintenanceStep, StepOutcome } from "./step.ts";

/** The longest requeue: a window a week away is looked at again hourly (a changed spec wakes it anyway). */
const MAX_REQUEUE_MS = 3_600_000;
/** How often a run refused admission looks again (a run on its cluster finishing also wakes it). */
const ADMISSION_RETRY_MS = 30_000;
const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 300_000;

const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, "Z");
const requeue = (ms: number): PhaseResult => ({
  requeueAfterMs: Math.max(1_000, Math.min(ms, MAX_REQUEUE_MS)),
});

/** Whether the phases still have anything to do: a finished run is left as it is. */
const active = (scope: RunScope): boolean => !FINISHED_RUN_PHASES.includes(scope.facts.phase);

/** Still to be started: active, its cluster found, not yet Running in the stored status, not held. */
const toStart = (scope: RunScope): boolean =>
  active(scope) && scope.cluster !== undefined && scope.stored !== "Running" && !scope.held;

function finish(scope: RunScope, phase: MaintenanceRunPhase, message: string, event?: RunEvent): void {
  const { facts } = scope;
  facts.phase = phase;
  facts.reason = phase;
  facts.message = message;
  facts.completedAt = scope.now.toISOString();
  if (event) facts.events.push(event);
}

function wait(scope: RunScope, reason: WaitReason, message: string): void {
  scope.held = true;
  scope.facts.phase = "Waiting";
  scope.facts.reason = reason;
  scope.facts.message = message;
}

/** The run's cluster must still exist, and this version must know the run's task. */
export const findCluster: Phase<RunScope> = (_ctx, scope) => {
  if (!active(scope)) return {};
  const { run, deps } = scope;
  const namespace = run.metadata.namespace ?? "";
  const cluster = deps.clusters.get(namespace, run.spec.clusterRef.name);
  if (!cluster || cluster.metadata.deletionTimestamp) {
    const why = cluster ? "is being deleted" : "no longer exists";
    finish(scope, "Cancelled", `HcpCluster ${namespace}/${run.spec.clusterRef.name} ${why}`, {
      type: "Warning",
      reason: "Cancelled",
      message: `Cancelled: HcpCluster ${run.spec.clusterRef.name} ${why}`,
    });
    return {};
  }
  if (!scope.definition) {
    const message = `This version of the operators has no definition of task ${run.spec.taskType}`;
    finish(scope, "Failed", message, { type: "Warning", reason: "Failed", message });
    return {};
  }
  scope.cluster = cluster;
  return {};
};

const instant = (text: string | undefined): Date | undefined => (text ? new Date(text) : undefined);

/** The run's task as the cache shows it; a task gone (its runs follow it) pauses and cancels nothing. */
const taskOf = (scope: RunScope): MaintenanceTask | undefined =>
  scope.deps.maintenanceTasks.get("", scope.run.spec.task);

/**
 * A cancelled task cancels the runs not yet Running; a paused one admits none. Running runs are
 * left to executeStep: they finish their steps when cancelled (an upgrade half asked for is not
 * worth taking back) and finish the step they are on when paused.
 */
export const heedTask: Phase<RunScope> = (_ctx, scope) => {
  if (!toStart(scope)) return {};
  const task = taskOf(scope);
  const name = scope.run.spec.task;
  if (task?.spec.cancelled) {
    const message = `MaintenanceTask ${name} was cancelled (spec.cancelled) before this run began`;
    finish(scope, "Cancelled", message, { type: "Warning", reason: "Cancelled", message });
  } else if (task?.spec.paused) {
    // No requeue: a change of the task wakes its runs.
    wait(scope, "TaskPaused", `Waiting: MaintenanceTask ${name} is paused (spec.paused)`);
  }
  return {};
};

/** Past notAfter without having started: TimedOut, saying what it last waited for. */
function timeOut(scope: RunScope, notAfter: Date): PhaseResult {
  const why = getCondition(scope.run.status?.conditions, RUN_CONDITIONS.Progressing)?.message;
  const message = `Not started by ${iso(notAfter)} (spec.notAfter)${why ? `; last: ${why}` : ""}`;
  finish(scope, "TimedOut", message, { type: "Warning", reason: "TimedOut", message });
  return {};
}

/** Not before notBefore, not begun after notAfter, and (unless urgent) inside the cluster's window. */
export const schedule: Phase<RunScope> = (_ctx, scope) => {
  const { run, now, cluster } = scope;
  if (!toStart(scope) || !cluster) return {};
  const notBefore = instant(run.spec.notBefore);
  if (notBefore && now < notBefore) {
    wait(scope, "NotBefore", `Waiting until ${iso(notBefore)} (spec.notBefore)`);
    return requeue(notBefore.getTime() - now.getTime());
  }
  const notAfter = instant(run.spec.notAfter);
  if (notAfter && now >= notAfter) return timeOut(scope, notAfter);
  const verdict = maintenanceWindowAt(cluster.spec.maintenance, now, run.spec.urgency === "Urgent");
  if (verdict.open) return {};
  wait(scope, "OutsideMaintenanceWindow", `Waiting: ${verdict.reason}`);
  const opens = verdict.opensAt?.getTime() ?? now.getTime() + MAX_REQUEUE_MS;
  return requeue(Math.min(opens, notAfter?.getTime() ?? opens) - now.getTime());
};

/** Running, written before any step executes, when the cluster and its management cluster have room. */
export const admit: Phase<RunScope> = (_ctx, scope) => {
  const { run, now, cluster, facts, deps } = scope;
  if (!toStart(scope) || !cluster) return {};
  const managementCluster = cluster.status?.managementCluster;
  if (!managementCluster) {
    wait(
      scope,
      "NotPlaced",
      `Waiting for HcpCluster ${cluster.metadata.name ?? ""} to be placed on a management cluster`,
    );
    return requeue(ADMISSION_RETRY_MS);
  }
  const verdict = deps.admissions.admit(run, managementCluster, now);
  if (!verdict.admitted) {
    wait(scope, verdict.reason, verdict.message);
    return requeue(ADMISSION_RETRY_MS);
  }
  facts.phase = "Running";
  facts.reason = "Running";
  facts.message = "";
  facts.startedAt = verdict.admission.startedAt;
  facts.managementCluster = managementCluster;
  const first = facts.steps[0]?.name ?? "";
  facts.events.push({
    type: "Normal",
    reason: "Started",
    message: `Admitted on management cluster ${managementCluster}; step ${first} runs next`,
  });
  return {};
};

function backoffMs(attempts: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1), BACKOFF_MAX_MS);
}

async function outcomeOf(
  ctx: ReconcileContext,
  scope: RunScope,
  step: MaintenanceStep,
): Promise<StepOutcome> {
  const { run, cluster, now } = scope;
  try {
    return await step.execute({ run, cluster: cluster!, now, signal: ctx.signal });
  } catch (err) {
    // A step cut short by shutdown is neither done nor failed: nothing is recorded.
    if (ctx.signal.aborted) throw err;
    return { kind: "transient", message: errorMessage(err) };
  }
}

/** A transient failure: retried with backoff until the bound, then the step has failed. */
function retryOrFail(
  scope: RunScope,
  status: MaintenanceStepStatus,
  message: string,
): PhaseResult | undefined {
  const attempts = (status.attempts ?? 0) + 1;
  const max = scope.deps.maxAttempts ?? MAX_STEP_ATTEMPTS;
  status.attempts = attempts;
  if (attempts < max) {
    status.state = "Running";
    status.message = `Attempt ${attempts} of ${max} failed: ${message}`;
    return requeue(backoffMs(attempts));
  }
  status.message = `Failed ${attempts} times: ${message}`;
  return undefined;
}

function stepDone(
  scope: RunScope,
  index: number,
  status: MaintenanceStepStatus,
  message: string,
): PhaseResult {
  const { facts, run, definition } = scope;
  status.state = "Succeeded";
  status.completedAt = scope.now.toISOString();
  facts.events.push({ type: "Normal", reason: "StepSucceeded", message: `Step ${status.name}: ${message}` });
  if (index === (definition?.steps.length ?? 0) - 1)
    finish(scope, "Succeeded", "Every step succeeded", {
      type: "Normal",
      reason: "Succeeded",
      message: `Every step of ${run.spec.taskType} succeeded`,
    });
  return {};
}

function stepFailed(scope: RunScope, status: MaintenanceStepStatus): PhaseResult {
  status.state = "Failed";
  status.completedAt = scope.now.toISOString();
  const message = `Step ${status.name} failed: ${status.message ?? ""}`;
  finish(scope, "Failed", message, { type: "Warning", reason: "Failed", message });
  return {};
}

/** One step of a run whose Running status is stored; its outcome goes into this reconcile's write. */
export const executeStep: Phase<RunScope> = async (ctx, scope) => {
  const { facts, definition } = scope;
  if (!active(scope) || scope.stored !== "Running" || !scope.cluster) return {};
  const index = facts.steps.findIndex((s) => s.state !== "Succeeded");
  const step = definition?.steps[index];
  const status = facts.steps[index];
  if (!step || !status) {
    finish(scope, "Succeeded", "Every step succeeded");
    return {};
  }
  // Paused: the step under way (it has begun) goes on to its end; the next one does not begin.
  if (status.state === "Pending" && taskOf(scope)?.spec.paused) {
    facts.paused = `Paused before step ${status.name}: MaintenanceTask ${scope.run.spec.task} is paused (spec.paused)`;
    return {};
  }
  const outcome = await outcomeOf(ctx, scope, step);
  status.startedAt ??= scope.now.toISOString();
  status.message = outcome.message;
  return recordOutcome(scope, index, status, outcome);
};

function recordOutcome(
  scope: RunScope,
  index: number,
  status: MaintenanceStepStatus,
  outcome: StepOutcome,
): PhaseResult {
  switch (outcome.kind) {
    case "done":
      return stepDone(scope, index, status, outcome.message);
    case "waiting":
      status.state = "Running";
      return requeue(outcome.requeueMs);
    case "transient":
      return retryOrFail(scope, status, outcome.message) ?? stepFailed(scope, status);
    case "terminal":
      return stepFailed(scope, status);
  }
}

export const RUN_PHASES: readonly Phase<RunScope>[] = [findCluster, heedTask, schedule, admit, executeStep];
