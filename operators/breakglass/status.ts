/**
 * BreakglassCredential status from what the phases found: a condition per step (the cluster can
 * take the request, the request is valid, the certificate is issued), Expired once it is issued,
 * then Ready, Progressing and Degraded, through the one conditions helper. Written once per
 * reconcile.
 */
import type { BreakglassCredential, BreakglassCredentialStatus } from "../api/v1alpha1/index.ts";
import { degradedFromSteps, firstNotReady, heldBy, stepCondition, type Steps } from "../hcp/steps.ts";
import { setCondition, type Condition, type ConditionInput } from "../runtime/conditions.ts";

export const CREDENTIAL_CONDITIONS = {
  Ready: "Ready",
  Progressing: "Progressing",
  Degraded: "Degraded",
  ClusterReady: "ClusterReady",
  RequestValid: "RequestValid",
  CertificateIssued: "CertificateIssued",
  Expired: "Expired",
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
  /** Set by observeCertificate once the signer answered (and HyperShift's root CA came back). */
  issued?: { certificate: string; expirationTimestamp: string; serverCA?: string };
  /** Set by prepareRequest when the service made the key. */
  kubeconfigSecret?: string;
  /** Set by markRevoked: a completed revocation of the cluster postdates the certificate. */
  revoked?: { before: string };
  /** Set by observeExpiry once issued: when the certificate expires and the credential goes. */
  expiry?: { expired: boolean; at: string; deleteAt: string };
}

/**
 * Ready, Progressing and Degraded from steps in order: Degraded on the first failure the user must
 * fix; Ready when every step is; otherwise held by the first step that is not. Shared by
 * credentials and revocations.
 */
export function stepSummary<T extends string>(
  order: readonly T[],
  steps: Steps<T>,
  done: { reason: string; message: string },
): ConditionInput[] {
  const degraded = degradedFromSteps("Degraded", order, steps);
  const blocker = firstNotReady(order, steps);
  const ready: ConditionInput = blocker
    ? heldBy("Ready", "False", blocker)
    : { type: "Ready", status: "True", ...done };
  return [ready, progressing(degraded.status === "True" ? degraded : undefined, blocker), degraded];
}

function progressing(
  degraded: ConditionInput | undefined,
  blocker: ReturnType<typeof firstNotReady>,
): ConditionInput {
  if (degraded)
    return { type: "Progressing", status: "False", reason: "UserActionRequired", message: degraded.message };
  if (blocker) return heldBy("Progressing", "True", blocker);
  return { type: "Progressing", status: "False", reason: "AsExpected", message: "Nothing left to do" };
}

function summary(facts: CredentialFacts): ConditionInput[] {
  if (facts.revoked) return revokedSummary(facts.revoked.before);
  if (facts.expiry?.expired) return expiredSummary(facts.expiry);
  return stepSummary(CREDENTIAL_STEPS, facts.steps, {
    reason: "Issued",
    message: "The certificate is issued",
  });
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

/** An expired credential is finished too: it says so until it is deleted. */
function expiredSummary(expiry: NonNullable<CredentialFacts["expiry"]>): ConditionInput[] {
  const message = `The certificate expired at ${expiry.at}; the credential is deleted at ${expiry.deleteAt}`;
  return [
    { type: "Ready", status: "False", reason: "Expired", message },
    { type: "Progressing", status: "False", reason: "Expired", message },
    { type: "Degraded", status: "False", reason: "Expired", message },
  ];
}

/** Expired, once there is a certificate to expire. */
export function expiredCondition(expiry: NonNullable<CredentialFacts["expiry"]>): ConditionInput {
  return expiry.expired
    ? {
        type: CREDENTIAL_CONDITIONS.Expired,
        status: "True",
        reason: "Expired",
        message: `The certificate expired at ${expiry.at}; the credential is deleted at ${expiry.deleteAt}`,
      }
    : {
        type: CREDENTIAL_CONDITIONS.Expired,
        status: "False",
        reason: "Valid",
        message: `The certificate is valid until ${expiry.at}`,
      };
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
  if (facts.expiry) conditions = setCondition(conditions, expiredCondition(facts.expiry), stamp);
  for (const c of summary(facts)) conditions = setCondition(conditions, c, stamp);
  return dropUndefined({
    conditions,
    observedGeneration: opts.succeeded ? credential.metadata.generation : previous.observedGeneration,
    ...observedFields(facts, previous),
  });
}

/** What the signer gave, as found now or as the status already said. */
function observedFields(
  facts: CredentialFacts,
  previous: BreakglassCredentialStatus,
): Omit<BreakglassCredentialStatus, "conditions" | "observedGeneration"> {
  const issued = facts.issued ?? previous;
  return {
    certificate: issued.certificate,
    expirationTimestamp: issued.expirationTimestamp,
    serverCA: issued.serverCA,
    kubeconfigSecret: facts.kubeconfigSecret ?? previous.kubeconfigSecret,
    revoked: facts.revoked ? true : previous.revoked,
  };
}

/** The status without absent fields, so that an unchanged one compares equal to what is stored. */
function dropUndefined(status: BreakglassCredentialStatus): BreakglassCredentialStatus {
  return Object.fromEntries(Object.entries(status).filter(([, v]) => v !== undefined && v !== ""));
}
