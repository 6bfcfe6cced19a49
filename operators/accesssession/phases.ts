/**
 * The phases of an AccessSession reconcile, in order: the decision (policy's bounds and approval);
 * whether the session has ended; the cluster can take the request; the key and its request (kept
 * in a Secret of the operators' namespace); the certificate work; the certificate and the control
 * plane's root CA back through feedback; the kubeconfig beside the key; and, once ended, the
 * credential retired. A phase whose input is not ready does nothing; watches bring the session
 * back, and the expiry is a requeue, so nothing depends on a timer surviving a restart.
 */
import { generateKeyPairSync } from "node:crypto";
import { SecretResource } from "../api/core.ts";
import { commonNamePrefix } from "../api/certificates/v1.ts";
import {
  ACCESS_LEVEL_GROUPS,
  ACCESS_SESSION_LABEL,
  AccessSessionResource,
  SRE_BREAK_GLASS,
  type AccessSessionDecision,
} from "../api/v1alpha1/accesssession.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { ManifestWorkResource, type ManifestWork, type ManifestWorkObject } from "../api/work/v1.ts";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { csrReport, csrWork, type CsrReport } from "../hcp/csr-work.ts";
import { findClusterPhase, servingCluster } from "../hcp/cluster-ref.ts";
import { kubeconfig } from "../hcp/kubeconfig.ts";
import { certificateRequest } from "../hcp/pkcs10.ts";
import { isReady, workStep, type StepState } from "../hcp/steps.ts";
import { deleteWorks } from "../hcp/work.ts";
import type { KubeObject } from "../runtime/kube.ts";
import type { Phase, PhaseResult } from "../runtime/phases.ts";
import { auditFields, recordEnd, recordIssue } from "./audit.ts";
import { credentialSecretName, csrNameOf, sessionWorkOf, workNameOf, type SessionScope } from "./scope.ts";
import type { SessionStep } from "./status.ts";

/** The shortest certificate Kubernetes' CSR API issues (spec.expirationSeconds ≥ 600). */
const MIN_CERTIFICATE_SECONDS = 600;
/** The longest single wait: timers past 2^31 ms overflow; a shorter look costs one cached read. */
const MAX_WAIT_MS = 12 * 3600 * 1000;

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

function record(scope: SessionScope, type: SessionStep, step: StepState): PhaseResult {
  scope.facts.steps[type] = step;
  return {};
}

const POLICY_APPROVAL: AccessSessionDecision = {
  decision: "Approved",
  by: "policy",
  reason: "read-only sessions are approved by the region's policy",
};

/**
 * The policy's bound on the TTL, then the approval: a person's, the policy's for a read-only
 * session (written into the spec, where the gate and admission read it), or a wait for one.
 * The TTL counts from the first reconcile that sees the approval.
 */
export const decide: Phase<SessionScope> = async ({ signal }, scope) => {
  const { session, deps } = scope;
  const { level, ttlSeconds, approval } = session.spec;
  const limit = deps.policy.maxTtlSeconds[level];
  if (ttlSeconds > limit)
    return record(scope, "Approved", {
      state: "failed",
      reason: "TTLExceedsPolicy",
      message: `spec.ttlSeconds ${ttlSeconds} exceeds the region's limit of ${limit} seconds for ${level} sessions; request a new session`,
      userActionRequired: true,
    });
  if (approval?.decision === "Denied") {
    scope.facts.end = "Denied";
    return record(scope, "Approved", {
      state: "failed",
      reason: "Denied",
      message: `Denied by ${approval.by}`,
      userActionRequired: false,
    });
  }
  if (approval?.decision !== "Approved") return undecided(scope, signal);
  const approvedAt = Date.parse(session.status?.approvedAt ?? "") || deps.now();
  scope.facts.approvedAt = iso(approvedAt);
  scope.facts.expiresAt = iso(approvedAt + ttlSeconds * 1000);
  return record(scope, "Approved", {
    state: "ready",
    reason: "Approved",
    message: `Approved by ${approval.by}`,
  });
};

/** Not yet decided: the policy approves a read-only session now; anything else waits for a person. */
async function undecided(scope: SessionScope, signal: AbortSignal): Promise<PhaseResult> {
  const { session, deps } = scope;
  if (session.spec.level !== "ReadOnly" || !deps.policy.approveReadOnly || session.spec.revocation)
    return record(scope, "Approved", {
      state: "pending",
      reason: "PendingApproval",
      message: `Waiting for an approver who is not ${session.spec.owner}`,
    });
  // The resourceVersion makes it a compare-and-swap: a person's decision that came first stands.
  await deps.client.mergePatch(
    AccessSessionResource,
    { name: session.metadata.name ?? "" },
    { metadata: { resourceVersion: session.metadata.resourceVersion }, spec: { approval: POLICY_APPROVAL } },
    { signal },
  );
  scope.log.info("Audit: access session approved by policy", auditFields(scope, "approve"));
  return record(scope, "Approved", {
    state: "pending",
    reason: "ApprovingByPolicy",
    message: "Approved by the region's policy",
  });
}

/** Revoked or past its expiry: over, and asks to come back at the expiry while it is not. */
export const observeEnd: Phase<SessionScope> = (_ctx, scope) => {
  const { session, deps, facts } = scope;
  if (facts.end) return {};
  if (session.spec.revocation) {
    facts.end = "Revoked";
    return {};
  }
  const expiresAt = Date.parse(facts.expiresAt ?? "");
  if (Number.isNaN(expiresAt)) return {};
  const now = deps.now();
  if (now >= expiresAt) {
    facts.end = "Expired";
    return {};
  }
  return { requeueAfterMs: Math.min(Math.max(expiresAt - now, 1000), MAX_WAIT_MS) };
};

const going = (scope: SessionScope): boolean =>
  Boolean(scope.facts.end) || !isReady(scope.facts.steps.Approved);

/** The cluster must be Ready (its API server up) and placed; gone or going ends the session. */
export const findCluster = findClusterPhase<SessionScope>({
  referrer: (scope) => ({
    metadata: { namespace: scope.session.spec.clusterRef.namespace },
    spec: { clusterRef: { name: scope.session.spec.clusterRef.name } },
  }),
  record: (scope, step) => {
    if (going(scope)) return;
    if (step.state === "failed" || step.reason === "ClusterDeleting") scope.facts.end = "ClusterGone";
    const gone: StepState | undefined =
      step.state === "pending" && step.reason === "ClusterDeleting"
        ? { state: "failed", reason: step.reason, message: step.message, userActionRequired: false }
        : undefined;
    record(scope, "ClusterReady", gone ?? step);
  },
  judge: (scope, cluster) => {
    const { step, serving } = servingCluster(cluster, scope.deps.managementClusters, scope.deps.region);
    if (serving) Object.assign(scope, serving);
    return step;
  },
});

interface CredentialSecret extends KubeObject {
  data?: Record<string, string>;
}

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: string): string => Buffer.from(s, "base64").toString("utf8");

/** The certificate's subject: the owner's name and the session's, so every audit line names both. */
export function subjectOf(scope: Pick<SessionScope, "session">): {
  commonName: string;
  organizations: string[];
} {
  const { session } = scope;
  return {
    commonName: `${commonNamePrefix(SRE_BREAK_GLASS)}${session.spec.owner}:${session.metadata.name ?? ""}`,
    organizations: [ACCESS_LEVEL_GROUPS[session.spec.level]],
  };
}

async function newKeySecret(scope: SessionScope): Promise<CredentialSecret> {
  const { session, deps } = scope;
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const request = await certificateRequest(privateKey, subjectOf(scope));
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: credentialSecretName(session),
      namespace: deps.namespace,
      labels: { [ACCESS_SESSION_LABEL]: session.metadata.name ?? "" },
      annotations: { "hcp.aro.dev/access-session-uid": session.metadata.uid ?? "" },
    },
    type: "Opaque",
    data: {
      "tls.key": b64(privateKey.export({ type: "pkcs8", format: "pem" }).toString()),
      "csr.pem": b64(request),
    },
  };
}

/** The session's key and request, made on first use; the first one written stays. */
export const prepareKey: Phase<SessionScope> = async ({ signal }, scope) => {
  if (going(scope) || !isReady(scope.facts.steps.ClusterReady)) return {};
  const { session, deps } = scope;
  const name = credentialSecretName(session);
  const read = async () =>
    deps.client.find<CredentialSecret>(SecretResource, name, deps.namespace, { signal });
  let secret = await read();
  if (!secret) {
    await deps.client.createIfAbsent(SecretResource, await newKeySecret(scope), { signal });
    secret = await read();
  }
  const owned = secret?.metadata.annotations?.["hcp.aro.dev/access-session-uid"] === session.metadata.uid;
  const data = secret?.data ?? {};
  if (!owned || !data["tls.key"] || !data["csr.pem"])
    throw new Error(
      `Secret ${deps.namespace}/${name} is not this session's key (left by another session of this name?)`,
    );
  scope.key = {
    key: unb64(data["tls.key"]),
    request: unb64(data["csr.pem"]),
    stored: Boolean(data.kubeconfig),
  };
  return {};
};

/**
 * Applies the certificate work until the kubeconfig is stored, then deletes it: a work still
 * applied would have the agent send the request again once the CSR is garbage-collected.
 */
export const applyWork: Phase<SessionScope> = async ({ signal }, scope) => {
  const { session, cluster, names, consumer, key, deps } = scope;
  if (!cluster || !names || !consumer || !key) return {};
  if (key.stored) {
    const done = sessionWorkOf(scope);
    if (done) await deleteWorks(deps.writer, [done], signal);
    return {};
  }
  const desired = csrWork({
    workName: workNameOf(session, names),
    csrName: csrNameOf(session),
    signerClass: SRE_BREAK_GLASS,
    expirationSeconds: Math.max(MIN_CERTIFICATE_SECONDS, session.spec.ttlSeconds),
    cluster,
    names,
    consumer,
    labels: { [WORK_LABELS.accessSession]: session.metadata.uid ?? "" },
    request: key.request,
  });
  scope.appliedWork = await deps.writer.applyIfChanged<ManifestWork>(
    ManifestWorkResource,
    desired,
    sessionWorkOf(scope),
    { signal },
  );
  return {};
};

/** The certificate from the signer, into the kubeconfig beside the key; or why there is none yet. */
export const storeKubeconfig: Phase<SessionScope> = async ({ signal }, scope) => {
  const { session, cluster, key, deps, facts } = scope;
  if (!cluster || !key) return {};
  const name = credentialSecretName(session);
  if (!key.stored) {
    const signed = signedKubeconfig(scope, cluster, key.key);
    if (typeof signed !== "string") return record(scope, "CredentialIssued", signed);
    await deps.client.mergePatch(
      SecretResource,
      { name, namespace: deps.namespace },
      { data: { kubeconfig: b64(signed) } },
      { signal },
    );
  }
  facts.credentialSecret = name;
  facts.credentialSubject = subjectOf(scope).commonName;
  await recordIssue(scope, signal);
  return record(scope, "CredentialIssued", {
    state: "ready",
    reason: "Issued",
    message: `Signed by the SRE break-glass signer; kept in ${deps.namespace}/${name}`,
  });
};

/** The signer's refusal of the request as a step, if it refused. */
function refusedStep(report: CsrReport): StepState | undefined {
  const refused = report.denied ?? report.failed;
  if (!refused) return undefined;
  const why = `${refused.reason ?? ""} ${refused.message ?? ""}`.trim();
  return {
    state: "failed",
    reason: `Signer${refused.type}`,
    message: `The SRE break-glass signer refused the request: ${why}`,
    userActionRequired: false,
  };
}

/** What the certificate waits for: the work applied, the approval, the signature. */
function waiting(work: ManifestWorkObject | undefined, report: CsrReport): StepState {
  const applied = work ? workStep(work) : undefined;
  if (applied && !isReady(applied)) return applied;
  return {
    state: "pending",
    reason: report.approved ? "WaitingForSignature" : "WaitingForApproval",
    message: "Waiting for the SRE break-glass signer's certificate and the control plane's root CA",
  };
}

/** The kubeconfig once the signer and the root CA came back through feedback, or the step that waits. */
function signedKubeconfig(scope: SessionScope, cluster: HcpCluster, key: string): string | StepState {
  const { session } = scope;
  const work = scope.appliedWork ?? sessionWorkOf(scope);
  const report = csrReport(work, csrNameOf(session));
  const refused = refusedStep(report);
  if (refused) return refused;
  if (!report.certificate || !report.serverCA) return waiting(work, report);
  return kubeconfig({
    cluster: cluster.metadata.name ?? "",
    server: cluster.status?.apiURL ?? "",
    user: `sre-${session.spec.owner}`,
    certificate: report.certificate,
    key,
    certificateAuthority: report.serverCA,
  });
}

/** Once ended: the work and the key's Secret go, so nothing can use the certificate again. */
export const retireCredential: Phase<SessionScope> = async ({ signal }, scope) => {
  if (!scope.facts.end) return {};
  await removeCredential(scope, signal);
  await recordEnd(scope, signal);
  return {};
};

/** Deletes the session's work and Secret; `scope.deleting` while the work is still going. */
export async function removeCredential(scope: SessionScope, signal: AbortSignal): Promise<void> {
  const { session, deps } = scope;
  const work = sessionWorkOf(scope);
  if (work) await deleteWorks(deps.writer, [work], signal);
  scope.deleting = Boolean(work);
  await deps.client.delete(
    SecretResource,
    { name: credentialSecretName(session), namespace: deps.namespace },
    { signal },
  );
}

export const SESSION_PHASES: readonly Phase<SessionScope>[] = [
  decide,
  observeEnd,
  findCluster,
  prepareKey,
  applyWork,
  storeKubeconfig,
  retireCredential,
];
