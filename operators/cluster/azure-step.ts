/**
 * How a cluster phase records its step and when it looks again, and how an Azure step is run: not
 * at all while a failure only the user can fix stands (UserErrorHold), trusted while it was found
 * ready recently (VerifiedSteps) or, after a restart, as the status recorded it, and read again at
 * its recheck within its subscription's read budget (RecheckBudget).
 */
import { isReady, type ReadyStep, type StepState } from "../hcp/steps.ts";
import { getCondition } from "../runtime/conditions.ts";
import type { PhaseResult } from "../runtime/phases.ts";
import type { Trusted } from "./holds.ts";
import type { InfraResult } from "./infrastructure.ts";
import { RETRY_ANNOTATION } from "../api/v1alpha1/labels.ts";
import { AZURE_POLL_MS, infraRecheckMs, recheckMs, type ClusterScope } from "./scope.ts";
import type { StepCondition } from "./status.ts";

/** Thrown (after the step is recorded) so the queue retries with backoff. */
export class RetryableStepError extends Error {
  override readonly name = "RetryableStepError";
}

/**
 * Records a step and says when to look again: a pending step at its poll interval, a user failure
 * at the recheck interval; a retryable failure throws, so the queue backs off.
 */
export function recordStep(scope: ClusterScope, type: StepCondition, step: StepState): PhaseResult {
  scope.facts.steps[type] = step;
  if (step.state === "pending") return { requeueAfterMs: step.retryAfterMs ?? AZURE_POLL_MS };
  if (step.state === "failed" && step.userActionRequired) return { requeueAfterMs: recheckMs(scope) };
  if (step.state === "failed") throw new RetryableStepError(`${type}: ${step.message}`);
  return {};
}

export function stepReady(scope: ClusterScope, type: StepCondition): boolean {
  return isReady(scope.facts.steps[type]);
}

/** What the step knows when it calls Azure. */
export interface StepCallHint {
  /**
   * The cluster's status never showed the step ready: its resources are most likely still to be
   * made, so an ensure that can create on condition of absence writes before it reads.
   */
  createFirst: boolean;
}

interface TrustOptions<R> {
  /** The result as the cluster's status recorded it; default: a step with no result fields. */
  recorded?: (step: ReadyStep) => R | undefined;
  /** False when a trusted result no longer fits this reconcile's inputs (the step runs). */
  stillHolds?: (result: R) => boolean;
  /**
   * Whose read budget the step's recheck spends (RecheckBudget): an Azure subscription, by default
   * the cluster's; null for a step that reads no ARM (the issuer's storage).
   */
  account?: string | null;
}

/**
 * Runs one Azure step unless a failure only the user can fix still stands for this generation
 * (see UserErrorHold) or the step was found ready recently (VerifiedSteps), and records it.
 * Resolves the step's result when it is ready. A step found ready is looked at again at its
 * recheck, so drift is found even when nothing else wakes the cluster. `recorded` rebuilds the
 * result from what the cluster's status recorded, for the first look after a restart.
 */
export async function azureStep<R extends InfraResult>(
  scope: ClusterScope,
  type: StepCondition,
  call: (hint: StepCallHint) => Promise<R>,
  opts: TrustOptions<R> = {},
): Promise<{ phase: PhaseResult; ready?: R }> {
  const owner = scope.cluster.metadata.uid ?? "";
  const generation = scope.cluster.metadata.generation ?? 0;
  const retry = scope.cluster.metadata.annotations?.[RETRY_ANNOTATION] ?? "";
  const key = { generation, retry };
  const held = scope.memory.holds.held(owner, type, key);
  if (held) return { phase: recordStep(scope, type, held) };
  const { verified } = scope.memory;
  const trusted = trustedResult(scope, type, opts);
  if (trusted && (opts.stillHolds?.(trusted.result) ?? true)) {
    recordStep(scope, type, trusted.result.step);
    return { phase: { requeueAfterMs: trusted.recheckInMs, periodic: true }, ready: trusted.result };
  }
  const result = await call({ createFirst: neverShownReady(scope, type) });
  scope.memory.holds.note(owner, type, key, result.step);
  if (result.step.state !== "ready") {
    verified.drop(owner, type);
    return { phase: recordStep(scope, type, result.step) };
  }
  verified.note(owner, type, generation, result);
  recordStep(scope, type, result.step);
  return { phase: { requeueAfterMs: infraRecheckMs(scope), periodic: true }, ready: result };
}

/** The cluster's status never showed the step ready: most likely it has made nothing yet. */
function neverShownReady(scope: ClusterScope, type: StepCondition): boolean {
  return getCondition(scope.cluster.status?.conditions, type)?.status !== "True";
}

/** What this reconcile may take as the step's result without reading it, if anything. */
function trustedResult<R extends InfraResult>(
  scope: ClusterScope,
  type: StepCondition,
  opts: TrustOptions<R>,
): Trusted<R> | undefined {
  const owner = scope.cluster.metadata.uid ?? "";
  const generation = scope.cluster.metadata.generation ?? 0;
  const recorded = opts.recorded ?? ((step: ReadyStep) => ({ step }) as R);
  const account = opts.account === undefined ? scope.infraSpec.subscriptionId : opts.account;
  return (
    scope.memory.verified.verified<R>(owner, type, generation) ??
    seedFromStatus(scope, type, recorded) ??
    recheckLater<R>(scope, type, account)
  );
}

/**
 * A recheck that is due waits for a slot of its subscription's budget, still trusted; when the
 * slot comes it is read. Undefined: read now (a slot is free, or this is no recheck).
 */
function recheckLater<R>(
  scope: ClusterScope,
  type: StepCondition,
  account: string | null,
): Trusted<R> | undefined {
  const owner = scope.cluster.metadata.uid ?? "";
  const { verified, rechecks } = scope.memory;
  if (account === null || !verified.recheckDue(owner, type, scope.cluster.metadata.generation ?? 0))
    return undefined;
  const waitMs = rechecks.reserve(account);
  return waitMs > 0 ? verified.postpone<R>(owner, type, waitMs) : undefined;
}

/** A step the cluster's status shows ready for this generation, trusted once after a restart. */
function seedFromStatus<R extends InfraResult>(
  scope: ClusterScope,
  type: StepCondition,
  recorded: (step: ReadyStep) => R | undefined,
): Trusted<R> | undefined {
  const { cluster } = scope;
  const generation = cluster.metadata.generation ?? 0;
  const c = getCondition(cluster.status?.conditions, type);
  if (c?.status !== "True" || c.observedGeneration !== generation) return undefined;
  const result = recorded({ state: "ready", reason: c.reason, message: c.message ?? "" });
  if (!result) return undefined;
  return scope.memory.verified.seed(cluster.metadata.uid ?? "", type, generation, result);
}
