/**
 * A MaintenanceRun's status from the facts of one reconcile: the phase, the steps, a condition per
 * step, Ready (the run succeeded) and Progressing (a step is running; else why not).
 */
import type { Condition, MaintenanceRunStatus, MaintenanceStepStatus } from "../api/v1alpha1/index.ts";
import { getCondition, setCondition, type ConditionInput } from "../runtime/conditions.ts";
import type { RunFacts } from "./run-scope.ts";

export const RUN_CONDITIONS = { Ready: "Ready", Progressing: "Progressing" } as const;

function stepCondition(step: MaintenanceStepStatus): ConditionInput {
  const message = step.message ?? "";
  if (step.state === "Succeeded") return { type: step.name, status: "True", reason: "Succeeded", message };
  return { type: step.name, status: "False", reason: step.state, message };
}

function progressing(facts: RunFacts): ConditionInput {
  if (facts.phase !== "Running")
    return {
      type: RUN_CONDITIONS.Progressing,
      status: "False",
      reason: facts.reason,
      message: facts.message,
    };
  if (facts.paused !== undefined)
    return { type: RUN_CONDITIONS.Progressing, status: "False", reason: "TaskPaused", message: facts.paused };
  const current = facts.steps.find((s) => s.state !== "Succeeded");
  return {
    type: RUN_CONDITIONS.Progressing,
    status: "True",
    reason: "StepRunning",
    message: current ? `Step ${current.name}: ${current.message ?? "starting"}` : "Finishing",
  };
}

function ready(facts: RunFacts): ConditionInput {
  if (facts.phase === "Succeeded")
    return {
      type: RUN_CONDITIONS.Ready,
      status: "True",
      reason: "Succeeded",
      message: "Every step succeeded",
    };
  return {
    type: RUN_CONDITIONS.Ready,
    status: "False",
    reason: facts.phase,
    message: facts.phase === "Running" ? "The run is under way" : facts.message,
  };
}

export function composeRunStatus(
  facts: RunFacts,
  previous: readonly Condition[] | undefined,
  generation: number | undefined,
  now: Date,
): MaintenanceRunStatus {
  const opts = { observedGeneration: generation, now };
  let conditions: Condition[] = [];
  for (const input of [ready(facts), progressing(facts), ...facts.steps.map(stepCondition)]) {
    // setCondition keeps a condition's transition time from the stored one when its status holds.
    const kept = getCondition(previous, input.type);
    conditions = setCondition(kept ? [...conditions, kept] : conditions, input, opts);
  }
  return {
    phase: facts.phase,
    conditions,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    steps: facts.steps,
    ...(facts.startedAt === undefined ? {} : { startedAt: facts.startedAt }),
    ...(facts.completedAt === undefined ? {} : { completedAt: facts.completedAt }),
    ...(facts.managementCluster === undefined ? {} : { managementCluster: facts.managementCluster }),
  };
}
