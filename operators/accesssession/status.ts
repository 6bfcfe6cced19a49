/**
 * AccessSession status from what the phases found: a condition per step (approved, cluster ready,
 * credential issued), Active, the phase people read, then Ready, Progressing and Degraded through
 * the one conditions helper. Written once per reconcile.
 */
import {
  ACCESS_SESSION_CONDITIONS,
  type AccessSession,
  type AccessSessionPhase,
  type AccessSessionStatus,
} from "../api/v1alpha1/accesssession.ts";
import { firstNotReady, stepCondition, type StepState, type Steps } from "../hcp/steps.ts";
import { setCondition, type Condition, type ConditionInput } from "../runtime/conditions.ts";
import type { SessionEnd } from "./scope.ts";

export const SESSION_STEPS = [
  ACCESS_SESSION_CONDITIONS.approved,
  "ClusterReady",
  ACCESS_SESSION_CONDITIONS.credentialIssued,
] as const;
export type SessionStep = (typeof SESSION_STEPS)[number];

export interface SessionFacts {
  session: AccessSession;
  steps: Steps<SessionStep>;
  /** Set by decide once approved: when (first seen), and approvedAt + ttlSeconds. */
  approvedAt?: string;
  expiresAt?: string;
  /** Set by observeEnd: why the session is over, if it is. */
  end?: SessionEnd;
  /** Set by storeKubeconfig once the Secret holds the kubeconfig. */
  credentialSecret?: string;
  credentialSubject?: string;
}

const END_MESSAGES: Record<SessionEnd, (s: AccessSession, f: SessionFacts) => string> = {
  Denied: (s) => `Denied by ${s.spec.approval?.by ?? ""}${reasonOf(s.spec.approval?.reason)}`,
  Revoked: (s) => `Revoked by ${s.spec.revocation?.by ?? ""}${reasonOf(s.spec.revocation?.reason)}`,
  Expired: (_s, f) => `Expired at ${f.expiresAt ?? ""}`,
  ClusterGone: (s) => `HcpCluster ${s.spec.clusterRef.namespace}/${s.spec.clusterRef.name} is gone or going`,
};

const reasonOf = (reason: string | undefined): string => (reason ? `: ${reason}` : "");

export function phaseOf(facts: SessionFacts): AccessSessionPhase {
  switch (facts.end) {
    case "Denied":
    case "Revoked":
    case "Expired":
      return facts.end;
    case "ClusterGone":
      return "Failed";
    default:
  }
  if (SESSION_STEPS.some((t) => facts.steps[t]?.state === "failed")) return "Failed";
  if (facts.credentialSecret) return "Active";
  return facts.steps.Approved?.state === "ready" ? "Approved" : "Pending";
}

/** Why the session stands where it does: its end, its activity, or the first step not ready. */
function whyOf(facts: SessionFacts, phase: AccessSessionPhase): { reason: string; message: string } {
  const { session } = facts;
  if (facts.end) return { reason: facts.end, message: END_MESSAGES[facts.end](session, facts) };
  if (phase === "Active")
    return {
      reason: "Active",
      message: `The gate forwards ${session.spec.owner}'s requests until ${facts.expiresAt ?? ""}`,
    };
  const blocker = firstNotReady(SESSION_STEPS, facts.steps)?.step;
  return { reason: blocker?.reason ?? phase, message: blocker?.message ?? phase };
}

/** Active, and the summary: Ready is Active; Progressing while the controller has work to do. */
function summary(facts: SessionFacts, phase: AccessSessionPhase): ConditionInput[] {
  const why = whyOf(facts, phase);
  const active = phase === "Active" ? "True" : "False";
  const failed = phase === "Failed";
  const waitingForPerson = facts.steps.Approved?.reason === "PendingApproval";
  const progressing = !facts.end && !failed && phase !== "Active" && !waitingForPerson;
  const fine = { reason: "AsExpected", message: "Nothing to fix" };
  return [
    { type: ACCESS_SESSION_CONDITIONS.active, status: active, ...why },
    { type: "Ready", status: active, ...why },
    { type: "Progressing", status: progressing ? "True" : "False", ...why },
    { type: "Degraded", status: failed ? "True" : "False", ...(failed ? why : fine) },
  ];
}

/** Once the session ended, its credential is gone: CredentialIssued says so. */
function credentialStep(facts: SessionFacts): StepState | undefined {
  if (!facts.end) return facts.steps.CredentialIssued;
  return {
    state: "pending",
    reason: "CredentialDeleted",
    message: `The session ended (${facts.end}); its key and kubeconfig are deleted`,
  };
}

export function composeSessionStatus(facts: SessionFacts, opts: { succeeded: boolean }): AccessSessionStatus {
  const { session } = facts;
  const previous = session.status ?? {};
  const stamp = { observedGeneration: session.metadata.generation };
  let conditions: Condition[] = previous.conditions ?? [];
  for (const type of SESSION_STEPS) {
    const s = type === ACCESS_SESSION_CONDITIONS.credentialIssued ? credentialStep(facts) : facts.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), stamp);
  }
  const phase = phaseOf(facts);
  for (const c of summary(facts, phase)) conditions = setCondition(conditions, c, stamp);
  const status: AccessSessionStatus = {
    conditions,
    observedGeneration: opts.succeeded ? session.metadata.generation : previous.observedGeneration,
    phase,
    approvedAt: facts.approvedAt ?? previous.approvedAt,
    expiresAt: facts.expiresAt ?? previous.expiresAt,
    // An ended session names no Secret: the gate has nothing to look up.
    credentialSecret: facts.end ? undefined : facts.credentialSecret,
    credentialSubject: facts.credentialSubject ?? previous.credentialSubject,
  };
  return Object.fromEntries(Object.entries(status).filter(([, v]) => v !== undefined && v !== ""));
}
