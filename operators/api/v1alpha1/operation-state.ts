/**
 * What ARM is answered about an operation and a resource, worked out from the CR each time it is
 * asked (nothing but the CR and the operation document is stored): the frontend answers polls and
 * GETs with it, the notifier sends it, and hcpctl's trace shows the same answer.
 *
 * provisioningState from a CR: the operation that last changed it (annotation), its generation
 * against status.observedGeneration, and the summary conditions Ready, Progressing and Degraded:
 *
 *   not yet observed (observedGeneration < generation)   Accepted
 *   Degraded=True and not Progressing                     Failed (the Degraded reason and message)
 *   Ready=True and not Progressing                        Succeeded
 *   otherwise                                             Provisioning (Create) / Updating (Update)
 *   deletionTimestamp set                                 Deleting
 *
 * A state that is not terminal once the operation's deadline (fixed when it started, the
 * frontend's operations/deadlines.ts) has passed is Failed, so that ARM may send the next request.
 * A deleting CR's deadline is its Delete operation's only (a node pool deleted with its cluster has
 * no operation of its own, and shows Deleting until it goes). An operation's status never changes
 * once terminal.
 */
import type { Condition, KubeObject } from "../meta/v1.ts";
import { ARM_ANNOTATIONS, isTerminal } from "./arm.ts";
import { originalUid } from "./labels.ts";
import type { BreakglassCredential, BreakglassRevocation } from "./breakglasscredential.ts";
import type { CloudErrorBody, OperationDoc, ProvisioningState } from "./operation.ts";

/** The CloudError codes an operation's own answer uses (the frontend's CODES holds them all). */
export const OPERATION_ERROR_CODES = {
  Canceled: "Canceled",
  ResourceNotFound: "ResourceNotFound",
  InternalServerError: "InternalServerError",
} as const;
const CODES = OPERATION_ERROR_CODES;

const MINUTE = 60_000;

export interface StateResult {
  state: ProvisioningState;
  error?: CloudErrorBody;
  /** When the state was reached, when the result knows better than the CR's conditions (a deadline). */
  endTime?: string;
}

/** What this file reads of an HcpCluster or NodePool. */
export interface Observed extends KubeObject {
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

const isTrue = (conditions: Condition[], type: string): boolean =>
  conditions.some((c) => c.type === type && c.status === "True");

/** Where a Create or Update stands on the CR it wrote. */
export function progressState(request: "Create" | "Update", cr: Observed): StateResult {
  const generation = cr.metadata.generation ?? 1;
  const observed = cr.status?.observedGeneration;
  if (observed === undefined || observed < generation) return { state: "Accepted" };
  const conditions = cr.status?.conditions ?? [];
  const progressing = isTrue(conditions, "Progressing");
  const degraded = conditions.find((c) => c.type === "Degraded" && c.status === "True");
  if (degraded && !progressing)
    return { state: "Failed", error: { code: degraded.reason, message: degraded.message } };
  if (isTrue(conditions, "Ready") && !progressing) return { state: "Succeeded" };
  return { state: request === "Create" ? "Provisioning" : "Updating" };
}

/** The provisioningState GET shows for a CR at `now`. */
export function resourceState(cr: Observed, now = Date.now()): StateResult {
  const a = cr.metadata.annotations ?? {};
  const request = a[ARM_ANNOTATIONS.operationRequest];
  const deleting = cr.metadata.deletionTimestamp !== undefined;
  const result: StateResult = deleting
    ? { state: "Deleting" }
    : progressState(request === "Update" ? "Update" : "Create", cr);
  const deadline = a[ARM_ANNOTATIONS.operationDeadline];
  // The deadline belongs to the operation the CR names: a Delete's to a deleting CR, others' to one that is not.
  const ours = deleting === (request === "Delete");
  if (isTerminal(result.state) || !ours || !deadline || !isPast(deadline, now)) return result;
  return { state: "Failed", endTime: deadline };
}

/** Whether `deadline` (ISO; none: never) has passed at `now`. */
export function isPast(deadline: string | undefined, now: number): boolean {
  if (!deadline) return false;
  const t = Date.parse(deadline);
  return !Number.isNaN(t) && now >= t;
}

/** "20 minutes", "1 minute", "3 seconds": a bound as the error message says it. */
export function formatBound(ms: number): string {
  const unit = ms >= MINUTE && ms % MINUTE === 0 ? "minute" : "second";
  const n = unit === "minute" ? ms / MINUTE : Math.max(1, Math.round(ms / 1000));
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/**
 * The last thing the controllers said about the resource: why it is Degraded, else what is in
 * progress, else why it is not Ready.
 */
export function lastProgressMessage(conditions: Condition[] | undefined): string | undefined {
  const list = conditions ?? [];
  const find = (type: string, status: (s: string) => boolean): Condition | undefined =>
    list.find((c) => c.type === type && status(c.status) && c.message);
  const c =
    find("Degraded", (s) => s === "True") ??
    find("Progressing", (s) => s === "True") ??
    find("Ready", (s) => s !== "True");
  return c?.message;
}

/**
 * ARO HCP's answer to an operation past its deadline: InternalServerError, saying plainly how long
 * it was given, with the last progress message when the resource has one.
 */
export function deadlineError(
  startTime: string,
  deadline: string,
  conditions: Condition[] | undefined,
): CloudErrorBody {
  const bound = formatBound(Date.parse(deadline) - Date.parse(startTime));
  const last = lastProgressMessage(conditions);
  return {
    code: CODES.InternalServerError,
    message: `The operation did not finish within ${bound}.${last ? ` Last status: ${last}` : ""}`,
  };
}

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
  const same = doc.targetUid
    ? cr !== undefined && originalUid(cr) === doc.targetUid
    : cr !== undefined && current;
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
