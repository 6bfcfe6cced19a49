/**
 * Severity from polarity, as clusterctl reads conditions: a positive condition (Ready, Available,
 * a step done) is healthy when True; a negative one (Degraded, Paused, Deleting) when False.
 * A positive condition that is False is Info while it is on its way (its reason says it waits or
 * works), Warning when something went wrong that may pass, and Error when the object is Degraded
 * for that very reason (only the user can fix it).
 */
import type { ConditionStatus } from "../api/meta/v1.ts";
import { isProgressReason } from "../api/v1alpha1/feedback.ts";
import type { ConditionView, Severity, Summary } from "./model.ts";

/** Conditions that are healthy when False. */
const NEGATIVE = new Set(["Degraded", "Paused", "Deleting", "Stalled"]);

/** Reasons that mean "under way": the controllers' waits and HyperShift's progress reasons. */
const PROGRESS =
  /^(Pending|Waiting|InProgress|Deleting|Provisioning|Progressing|Scaling|Updating|Upgrading|Conflict|DeletePublished|Published|Applying)/;

export function isProgress(reason: string): boolean {
  return PROGRESS.test(reason) || isProgressReason(reason);
}

/** The shape feedback carries: a condition whose fields may be missing. */
export interface LooseCondition {
  type: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

function statusOf(s: string | undefined): ConditionStatus {
  return s === "True" || s === "False" ? s : "Unknown";
}

function negativeSeverity(type: string, status: ConditionStatus): Severity {
  if (status !== "True") return "";
  if (type === "Degraded" || type === "Stalled") return "Error";
  return type === "Deleting" ? "Info" : "Warning";
}

/**
 * One condition's severity. `degraded` is the object's Degraded condition: a False condition with
 * the reason Degraded carries is the failure itself.
 */
export function severityOf(c: LooseCondition, degraded?: LooseCondition): Severity {
  const status = statusOf(c.status);
  if (NEGATIVE.has(c.type)) return negativeSeverity(c.type, status);
  if (c.type === "Progressing") return status === "True" ? "Info" : "";
  if (status === "True") return "";
  if (status === "Unknown") return "Warning";
  const reason = c.reason ?? "";
  if (degraded?.status === "True" && degraded.reason === reason) return "Error";
  return isProgress(reason) ? "Info" : "Warning";
}

export function viewOf(c: LooseCondition, degraded?: LooseCondition): ConditionView {
  return {
    type: c.type,
    status: statusOf(c.status),
    severity: severityOf(c, degraded),
    reason: c.reason ?? "",
    message: c.message ?? "",
    ...(c.lastTransitionTime ? { lastTransitionTime: c.lastTransitionTime } : {}),
    ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}),
  };
}

/** Every condition of an object, as views, in the order the object keeps them. */
export function viewsOf(conditions: readonly LooseCondition[] | undefined): ConditionView[] {
  const list = conditions ?? [];
  const degraded = list.find((c) => c.type === "Degraded");
  return list.map((c) => viewOf(c, degraded));
}

export function find<C extends { type: string }>(
  list: readonly C[] | undefined,
  type: string,
): C | undefined {
  return list?.find((c) => c.type === type);
}

/**
 * The object's row from one condition (Ready for ours, Available for a HostedCluster). A False
 * summary of an object that is Degraded is an Error even when the reason differs.
 */
export function summaryOf(views: readonly ConditionView[], type: string): Summary | undefined {
  const c = find(views, type);
  if (!c) return undefined;
  const degraded = find(views, "Degraded");
  const severity = c.status === "False" && degraded?.status === "True" ? "Error" : c.severity;
  return {
    ready: c.status,
    condition: c.type,
    severity,
    reason: c.reason,
    ...(c.lastTransitionTime ? { since: c.lastTransitionTime } : {}),
    message: c.message,
  };
}

/** A summary for an object that reports nothing yet. */
export function unknownSummary(reason: string, message: string): Summary {
  return { ready: "Unknown", severity: "Warning", reason, message };
}
