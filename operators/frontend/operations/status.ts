/**
 * Where an operation stands: worked out from the CR it acts on (or the credential CR it created)
 * each time it is asked for, Failed once past its deadline (deadlines.ts), never changed once
 * terminal.
 */
import type { BreakglassCredential, BreakglassRevocation, OperationDoc } from "../../api/v1alpha1/index.ts";
import { CODES, type CloudErrorBody } from "../errors.ts";
import { ARM_ANNOTATIONS } from "../../api/v1alpha1/index.ts";
import { deadlineError, isPast } from "./deadlines.ts";
import { isTerminal } from "../../api/v1alpha1/index.ts";
import { progressState, type Observed, type StateResult } from "../mapping/provisioning-state.ts";

export const SUPERSEDED: CloudErrorBody = {
  code: CODES.Canceled,
  message: "This operation was superseded by another",
};

/**
 * Where an operation stands at `now`, from the CR it acts on (undefined when the CR is gone): as
 * the CR says, unless that is not terminal and the deadline has passed (deadlines.ts).
 */
export function evaluate(doc: OperationDoc, cr: Observed | undefined, now = Date.now()): StateResult {
  return withDeadline(doc, stateFromCR(doc, cr), cr, now);
}

/** `result`, or Failed when it is not terminal past the operation's deadline. */
function withDeadline(
  doc: OperationDoc,
  result: StateResult,
  cr: Observed | undefined,
  now: number,
): StateResult {
  if (isTerminal(result.state) || !doc.deadline || !isPast(doc.deadline, now)) return result;
  return {
    state: "Failed",
    error: deadlineError(doc.startTime, doc.deadline, cr?.status?.conditions),
    endTime: doc.deadline,
  };
}

function stateFromCR(doc: OperationDoc, cr: Observed | undefined): StateResult {
  if (isTerminal(doc.status)) return { state: doc.status, ...(doc.error ? { error: doc.error } : {}) };
  const current = cr?.metadata.annotations?.[ARM_ANNOTATIONS.operation] === doc.id;
  if (doc.request === "Delete") return deleteState(doc, cr, current);
  if (!cr)
    return {
      state: "Failed",
      error: {
        code: CODES.ResourceNotFound,
        message: "The resource was deleted before the operation completed",
      },
    };
  if (!current || cr.metadata.deletionTimestamp) return { state: "Canceled", error: SUPERSEDED };
  return progressState(doc.request === "Update" ? "Update" : "Create", cr);
}

/**
 * A Delete runs while the CR it deletes exists. Known by uid: the CR names the operation only once
 * the DELETE has marked it, a moment after the operation's ConfigMap is written, and a poll (or the
 * notifier) may come in between. Documents without a uid go by the CR's current operation.
 */
function deleteState(doc: OperationDoc, cr: Observed | undefined, current: boolean): StateResult {
  const same = doc.targetUid ? cr?.metadata.uid === doc.targetUid : cr !== undefined && current;
  return same ? { state: "Deleting" } : { state: "Succeeded" };
}

/**
 * When an operation whose status the CR decides ended: the last transition of the CR's summary
 * conditions (or its deletion), not before the operation started; stable from poll to poll.
 */
function endTimeOf(doc: OperationDoc, cr: Observed): string {
  const times = [Date.parse(doc.startTime)];
  for (const c of cr.status?.conditions ?? [])
    if (["Ready", "Progressing", "Degraded"].includes(c.type)) times.push(Date.parse(c.lastTransitionTime));
  if (cr.metadata.deletionTimestamp) times.push(Date.parse(cr.metadata.deletionTimestamp));
  const t = Math.max(...times.filter((n) => !Number.isNaN(n)));
  return Number.isFinite(t) ? new Date(t).toISOString() : doc.startTime;
}

/** The document with a state computed from `cr`; `time` stamps a change when the CR gives none. */
export function withState(
  doc: OperationDoc,
  result: StateResult,
  cr: Observed | undefined,
  time: string,
): OperationDoc {
  if (isTerminal(doc.status) || doc.status === result.state) return doc;
  const end = isTerminal(result.state) ? (result.endTime ?? (cr ? endTimeOf(doc, cr) : time)) : undefined;
  return {
    ...doc,
    status: result.state,
    lastTransitionTime: end ?? time,
    ...(end ? { endTime: end } : {}),
    ...(result.error ? { error: result.error } : {}),
  };
}

/**
 * The document as a poll would answer it now, brought up to date with `cr` (undefined when the CR
 * is gone); nothing is written. `time` stamps a change the CR gives no time for.
 */
export function settle(doc: OperationDoc, cr: Observed | undefined, time: string): OperationDoc {
  return withState(doc, evaluate(doc, cr, Date.parse(time)), cr, time);
}

/** The document of the operation `cr` carries, as it ends when replaced now: Canceled if still running. */
export function frozen(doc: OperationDoc, cr: Observed): OperationDoc {
  const now = new Date().toISOString();
  const result = evaluate(doc, cr);
  if (isTerminal(result.state)) return withState(doc, result, cr, now);
  return withState(doc, { state: "Canceled", error: SUPERSEDED }, undefined, now);
}

/** What a credential action's CR shows: its conditions, and for a credential its certificate. */
export type CredentialCR = BreakglassCredential | BreakglassRevocation;

/** Where a credential action stands at `now`, from the CR it created (as a Create from its CR). */
export function credentialState(doc: OperationDoc, cr: CredentialCR | undefined, now: number): StateResult {
  return withDeadline(doc, credentialProgress(cr), cr, now);
}

function credentialProgress(cr: CredentialCR | undefined): StateResult {
  if (!cr)
    return {
      state: "Failed",
      error: {
        code: CODES.ResourceNotFound,
        message: "The credential request was deleted before it completed",
      },
    };
  return progressState("Create", cr);
}
