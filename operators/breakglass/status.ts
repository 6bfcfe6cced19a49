/**
 * BreakglassCredential status from what the phases found: a condition per step (the cluster can
 * take the request, the request is valid, the certificate is issued), then Ready, Progressing and
 * Degraded, through the one conditions helper. Written once per reconcile.
 */
import type { BreakglassCredential, BreakglassCredentialStatus } from "../api/v1alpha1/index.ts";
import {
  blockerMessage,
  firstNotReady,
  firstUserFailure,
  heldBy,
  stepCondition,
  type Steps,
} from "../hcp/steps.ts";
import { setCondition, type Condition, type ConditionInput } from "../runtime/conditions.ts";

export const CREDENTIAL_CONDITIONS = {
  Ready: "Ready",
  Progressing: "Progressing",
  Degraded: "Degraded",
  ClusterReady: "ClusterReady",
  RequestValid: "RequestValid",
  CertificateIssued: "CertificateIssued",
} as const;

export const CREDENTIAL_STEPS = [
  CREDENTIAL_CONDITIONS.ClusterReady,
  CREDENTIAL_CONDITIONS.RequestValid,
  CREDENTIAL_CONDITIONS.CertificateIssued,
] as const;

export type CredentialStep = (typeof CREDENTIAL_STEPS)[number];

export interface CredentialFacts {
  credential: BreakglassCredential;
  steps: Steps<CredentialStep>;
  /** Set by observeCertificate once the signer answered. */
  issued?: { certificate: string; expirationTimestamp: string };
  /** Set by prepareRequest when the service made the key. */
  kubeconfigSecret?: string;
  /** Set by markRevoked: a completed revocation of the cluster postdates the certificate. */
  revoked?: { before: string };
}

function summary(facts: CredentialFacts): ConditionInput[] {
  if (facts.revoked) return revokedSummary(facts.revoked.before);
  const failure = firstUserFailure(CREDENTIAL_STEPS, facts.steps);
  const blocker = firstNotReady(CREDENTIAL_STEPS, facts.steps);
  const degraded: ConditionInput = failure
    ? { type: "Degraded", status: "True", reason: failure.step.reason, message: blockerMessage(failure) }
    : { type: "Degraded", status: "False", reason: "AsExpected", message: "No problem found" };
  const ready: ConditionInput = blocker
    ? heldBy("Ready", "False", blocker)
    : { type: "Ready", status: "True", reason: "Issued", message: "The certificate is issued" };
  const progressing: ConditionInput = failure
    ? { type: "Progressing", status: "False", reason: "UserActionRequired", message: degraded.message }
    : blocker
      ? heldBy("Progressing", "True", blocker)
      : { type: "Progressing", status: "False", reason: "AsExpected", message: "Nothing left to do" };
  return [ready, progressing, degraded];
}

/** A revoked credential is finished: not Ready, nothing under way, nothing to fix. */
function revokedSummary(before: string): ConditionInput[] {
  const message = `Revoked: every break-glass certificate of the cluster issued before ${before} is revoked`;
  return [
    { type: "Ready", status: "False", reason: "Revoked", message },
    { type: "Progressing", status: "False", reason: "Revoked", message },
    { type: "Degraded", status: "False", reason: "Revoked", message },
  ];
}

/** The whole status; `succeeded` moves observedGeneration. */
export function composeCredentialStatus(
  facts: CredentialFacts,
  opts: { succeeded: boolean },
): BreakglassCredentialStatus {
  const { credential } = facts;
  const previous = credential.status ?? {};
  const stamp = { observedGeneration: credential.metadata.generation };
  let conditions: Condition[] = previous.conditions ?? [];
  for (const type of CREDENTIAL_STEPS) {
    const s = facts.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), stamp);
  }
  for (const c of summary(facts)) conditions = setCondition(conditions, c, stamp);
  const observedGeneration = opts.succeeded ? credential.metadata.generation : previous.observedGeneration;
  return dropUndefined({
    conditions,
    observedGeneration,
    certificate: facts.issued?.certificate ?? previous.certificate,
    expirationTimestamp: facts.issued?.expirationTimestamp ?? previous.expirationTimestamp,
    kubeconfigSecret: facts.kubeconfigSecret ?? previous.kubeconfigSecret,
    revoked: facts.revoked ? true : previous.revoked,
  });
}

/** The status without absent fields, so that an unchanged one compares equal to what is stored. */
function dropUndefined(status: BreakglassCredentialStatus): BreakglassCredentialStatus {
  return Object.fromEntries(Object.entries(status).filter(([, v]) => v !== undefined && v !== ""));
}
