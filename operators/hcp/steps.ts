/**
 * Steps: how the cluster and node pool controllers record what each phase found, before status.ts
 * turns it into conditions. A step is ready, pending (under way; look again), or failed — either
 * retryable (backoff, shown as Progressing) or needing the user (Degraded, not retried in a loop).
 */
import type { ManifestWorkObject, WorkCondition } from "../api/work/v1.ts";
import type { ConditionInput } from "../runtime/conditions.ts";

export type StepState =
  | { state: "ready"; reason?: string; message: string }
  /** retryAfterMs: when to look again, if the step knows (a long-running operation's poll interval). */
  | { state: "pending"; reason: string; message: string; retryAfterMs?: number }
  | { state: "failed"; reason: string; message: string; userActionRequired: boolean };

export type FailedStep = StepState & { state: "failed" };
export type ReadyStep = StepState & { state: "ready" };

/** Steps by condition type, as the phases recorded them in this reconcile. */
export type Steps<T extends string> = Partial<Record<T, StepState>>;

/** A step as its condition: True when ready, False otherwise, with the step's reason and message. */
export function stepCondition(type: string, s: StepState): ConditionInput {
  return s.state === "ready"
    ? { type, status: "True", reason: s.reason ?? "AsExpected", message: s.message }
    : { type, status: "False", reason: s.reason, message: s.message };
}

export function isReady(s: StepState | undefined): boolean {
  return s?.state === "ready";
}

/** The first step (in order) that is not ready, and how it stands (undefined: not reached). */
export function firstNotReady<T extends string>(
  order: readonly T[],
  steps: Steps<T>,
): { type: T; step: StepState | undefined } | undefined {
  const type = order.find((t) => !isReady(steps[t]));
  return type === undefined ? undefined : { type, step: steps[type] };
}

/** The steps that failed in this reconcile, retryable or not. */
export function failedSteps<T extends string>(steps: Steps<T>): Set<string> {
  return new Set(
    Object.entries<StepState | undefined>(steps).flatMap(([t, s]) => (s?.state === "failed" ? [t] : [])),
  );
}

/** The first step (in order) that failed with something only the user can fix. */
export function firstUserFailure<T extends string>(
  order: readonly T[],
  steps: Steps<T>,
): { type: T; step: FailedStep } | undefined {
  for (const type of order) {
    const step = steps[type];
    if (step?.state === "failed" && step.userActionRequired) return { type, step };
  }
  return undefined;
}

/** Degraded False: nothing the user must fix. */
export function notDegraded(type: string): ConditionInput {
  return { type, status: "False", reason: "AsExpected", message: "No problem found" };
}

/** Degraded from steps alone: True for the first user failure (degradedByUserFailure), else False. */
export function degradedFromSteps<T extends string>(
  type: string,
  order: readonly T[],
  steps: Steps<T>,
): ConditionInput {
  return degradedByUserFailure(type, order, steps) ?? notDegraded(type);
}

/** Degraded True for the first step (in order) that failed with something only the user can fix. */
export function degradedByUserFailure<T extends string>(
  type: string,
  order: readonly T[],
  steps: Steps<T>,
): ConditionInput | undefined {
  const failure = firstUserFailure(order, steps);
  return failure && { type, status: "True", reason: failure.step.reason, message: blockerMessage(failure) };
}

/** "<Step>: <message>", the way a summary condition names the step that holds it. */
export function blockerMessage(blocker: { type: string; step: StepState | undefined }): string {
  return `${blocker.type}: ${blocker.step?.message ?? "not started"}`;
}

/** A summary condition held by the first step not ready: that step's reason ("Pending" before it ran) and message. */
export function heldBy(
  type: string,
  status: ConditionInput["status"],
  blocker: { type: string; step: StepState | undefined },
): ConditionInput {
  return { type, status, reason: blocker.step?.reason ?? "Pending", message: blockerMessage(blocker) };
}

/**
 * A ManifestWork as a step: published and applied at its current generation, or why not.
 * maestro-server's `Published` condition is False when the work can never be sent as it is
 * (BundleTooLarge, InvalidManifests: the user must change the spec) and Unknown while the broker
 * is not reachable; the agent's `Applied` condition says whether the manifests are on the cluster.
 */
export function workStep(work: ManifestWorkObject): StepState {
  const conditions = work.status?.conditions ?? [];
  const published = conditions.find((c) => c.type === "Published");
  const applied = conditions.find((c) => c.type === "Applied");
  if (published?.status === "False")
    return {
      state: "failed",
      reason: published.reason,
      message: published.message,
      userActionRequired: true,
    };
  if (applied?.status === "True" && applied.observedGeneration === work.metadata.generation)
    return { state: "ready", reason: "Applied", message: `Applied on ${work.metadata.namespace ?? ""}` };
  if (applied?.status === "False")
    return { state: "pending", reason: applied.reason, message: applied.message };
  return waitingForAgent(work, published);
}

/** Not applied yet: the broker is out of reach, or the agent has not reported this generation. */
function waitingForAgent(work: ManifestWorkObject, published: WorkCondition | undefined): StepState {
  const where = work.metadata.namespace ?? "";
  const generation = work.metadata.generation ?? 0;
  return {
    state: "pending",
    reason: published?.reason === "BrokerNotConnected" ? published.reason : "WaitingForAgent",
    message: published?.message ?? `Waiting for the agent of ${where} to apply generation ${generation}`,
  };
}

/**
 * Steps as the object's conditions last showed them, for a reconcile that does not run the phases
 * (a paused object): True is ready, anything else pending with its reason and message.
 */
export function stepsFromConditions<T extends string>(
  order: readonly T[],
  conditions: ReadonlyArray<{ type: string; status: string; reason: string; message: string }>,
): Steps<T> {
  const steps: Steps<T> = {};
  for (const type of order) {
    const c = conditions.find((x) => x.type === type);
    if (!c) continue;
    steps[type] =
      c.status === "True"
        ? { state: "ready", reason: c.reason, message: c.message }
        : { state: "pending", reason: c.reason, message: c.message };
  }
  return steps;
}
