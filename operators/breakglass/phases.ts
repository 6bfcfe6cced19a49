/**
 * The phases of a BreakglassCredential reconcile, in order: the cluster can take the request; the
 * request is valid (the client's) or made (from a key the service keeps in a Secret of its own
 * namespace); the work is applied; the certificate and the control plane's root CA come back
 * through feedback; the kubeconfig is stored in the credential's namespace and the issue
 * recorded; once the status holds the certificate, the work and the key's Secret go; the expiry
 * is watched (expiry.ts). A phase whose input is not ready does nothing; watches bring the
 * credential back.
 */
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { SecretResource } from "../api/core.ts";
import { commonNamePrefix } from "../api/certificates/v1.ts";
import { CUSTOMER_BREAK_GLASS, type BreakglassCredential } from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { breakGlassRequestProblem, certificateRequest } from "../hcp/pkcs10.ts";
import { findClusterPhase, servingCluster } from "../hcp/cluster-ref.ts";
import { isReady, workStep, type StepState } from "../hcp/steps.ts";
import { deleteWorks } from "../hcp/work.ts";
import type { KubeObject } from "../runtime/kube.ts";
import type { Phase, PhaseResult } from "../runtime/phases.ts";
import { keySecretName, kubeconfigSecretName, credentialWorkOf, type CredentialScope } from "./scope.ts";
import { observeExpiry } from "./expiry.ts";
import { CREDENTIAL_CONDITIONS, type CredentialFacts, type CredentialStep } from "./status.ts";
import { kubeconfig } from "../hcp/kubeconfig.ts";
import { revokedBefore } from "./revocation.ts";
import { credentialWork, csrReport } from "./work.ts";

function record(scope: CredentialScope, type: CredentialStep, step: StepState): PhaseResult {
  scope.facts.steps[type] = step;
  return {};
}

const stepReady = (scope: CredentialScope, type: CredentialStep): boolean => isReady(scope.facts.steps[type]);

/** The cluster must be Ready (its API server up) and placed. */
export const findCluster = findClusterPhase<CredentialScope>({
  referrer: (scope) => scope.credential,
  record: (scope, step) => void record(scope, CREDENTIAL_CONDITIONS.ClusterReady, step),
  judge: (scope, cluster) => {
    const { step, serving } = servingCluster(cluster, scope.deps.managementClusters, scope.deps.region);
    if (serving) Object.assign(scope, serving);
    return step;
  },
});

function keyOf(secret: KubeObject | undefined): { key: string; request: string } | undefined {
  const data = (secret as { data?: Record<string, string> } | undefined)?.data;
  if (!data?.["tls.key"] || !data["csr.pem"]) return undefined;
  return {
    key: Buffer.from(data["tls.key"], "base64").toString("utf8"),
    request: Buffer.from(data["csr.pem"], "base64").toString("utf8"),
  };
}

/**
 * A new key and its request, in a Secret of the operators' namespace (an owner reference cannot
 * cross namespaces: the reconciler deletes it); the first one written stays.
 */
async function keySecret(
  credential: BreakglassCredential,
  namespace: string,
): Promise<KubeObject & { type: string; data: Record<string, string> }> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const request = await certificateRequest(privateKey, {
    commonName: `${commonNamePrefix(CUSTOMER_BREAK_GLASS)}${credential.spec.requester}`,
    organizations: ["system:masters"],
  });
  const key = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: keySecretName(credential),
      namespace,
      labels: { [WORK_LABELS.breakglass]: credential.metadata.uid ?? "" },
      annotations: {
        [CREDENTIAL_ANNOTATION]: `${credential.metadata.namespace ?? ""}/${credential.metadata.name ?? ""}`,
      },
    },
    type: "Opaque",
    data: { "tls.key": b64(key), "csr.pem": b64(request) },
  };
}

/** On the key's Secret: whose key it is (namespace/name), for whoever looks at hcp-system. */
const CREDENTIAL_ANNOTATION = "hcp.aro.dev/breakglass-credential";

/**
 * The service's key and request from its Secret, made on first use. Once the status holds the
 * certificate and the key's Secret is gone, the key is in the kubeconfig's Secret alone: nothing
 * to send or store any more.
 */
async function serviceKey(scope: CredentialScope, signal: AbortSignal): Promise<void> {
  const { credential, deps } = scope;
  const name = keySecretName(credential);
  const namespace = deps.namespace;
  scope.facts.kubeconfigSecret = kubeconfigSecretName(credential);
  let found = keyOf(await deps.client.find(SecretResource, name, namespace, { signal }));
  if (!found && credential.status?.certificate) return;
  if (!found) {
    await deps.client.createIfAbsent(SecretResource, await keySecret(credential, namespace), { signal });
    found = keyOf(await deps.client.find(SecretResource, name, namespace, { signal }));
  }
  if (!found) throw new Error(`Secret ${namespace}/${name} holds no key and request`);
  scope.request = found.request;
  scope.key = found.key;
}

/** The client's request, checked as HyperShift's signer would; or the service's own key and request. */
export const prepareRequest: Phase<CredentialScope> = async ({ signal }, scope) => {
  const { credential } = scope;
  if (!stepReady(scope, CREDENTIAL_CONDITIONS.ClusterReady)) return {};
  const given = credential.spec.certificateSigningRequest;
  if (given) {
    const problem = await breakGlassRequestProblem(given, CUSTOMER_BREAK_GLASS);
    if (problem)
      return record(scope, CREDENTIAL_CONDITIONS.RequestValid, {
        state: "failed",
        reason: "InvalidCertificateSigningRequest",
        message: `spec.certificateSigningRequest: ${problem}`,
        userActionRequired: true,
      });
    scope.request = given;
  } else {
    await serviceKey(scope, signal);
  }
  return record(scope, CREDENTIAL_CONDITIONS.RequestValid, {
    state: "ready",
    reason: "RequestValid",
    message: given ? "The client's certificate request is valid" : "The service made the key and request",
  });
};

/**
 * Applies the request's work until the certificate is in the status, then deletes it: the
 * management cluster's controller manager removes issued CSRs after about an hour, and a work
 * still applied would have the agent send the request again and a second certificate come back.
 */
export const applyWork: Phase<CredentialScope> = async ({ signal }, scope) => {
  const { credential, cluster, names, consumer, request, deps } = scope;
  if (credential.status?.certificate) {
    const done = credentialWorkOf(scope);
    if (done) await deleteWorks(deps.writer, [done], signal);
    return {};
  }
  if (!cluster || !names || !consumer || !request) return {};
  const desired = credentialWork({ credential, cluster, names, consumer, request });
  scope.appliedWork = await deps.writer.applyIfChanged<ManifestWork>(
    ManifestWorkResource,
    desired,
    credentialWorkOf(scope),
    { signal },
  );
  if (scope.appliedWork)
    scope.log.info("Applied the break-glass ManifestWork", {
      work: `${consumer}/${desired.metadata.name ?? ""}`,
    });
  return {};
};

/** The certificate as the signer returned it through feedback, or why there is none yet. */
export const observeCertificate: Phase<CredentialScope> = (_ctx, scope) => {
  const { certificate, expirationTimestamp, serverCA } = scope.credential.status ?? {};
  if (certificate && expirationTimestamp)
    return issuedAs(scope, { certificate, expirationTimestamp, serverCA });
  const work = scope.appliedWork ?? credentialWorkOf(scope);
  if (!work || !scope.request) return {};
  const report = csrReport(work, scope.credential);
  const refused = report.denied ?? report.failed;
  if (refused) return record(scope, CREDENTIAL_CONDITIONS.CertificateIssued, refusedBySigner(refused));
  if (report.certificate) return signed(scope, report.certificate, report.serverCA);
  const applied = workStep(work);
  if (!isReady(applied)) return record(scope, CREDENTIAL_CONDITIONS.CertificateIssued, applied);
  return record(scope, CREDENTIAL_CONDITIONS.CertificateIssued, awaitingSigner(Boolean(report.approved)));
};

/**
 * Signed: issued once the control plane's root CA came back with it, so that the kubeconfig
 * verifies the server (HyperShift publishes root-ca before the API server serves, so the wait is
 * at most one feedback round).
 */
function signed(scope: CredentialScope, certificate: string, serverCA: string | undefined): PhaseResult {
  if (!serverCA)
    return record(scope, CREDENTIAL_CONDITIONS.CertificateIssued, {
      state: "pending",
      reason: "WaitingForServerCA",
      message: "Signed; waiting for the control plane's root-ca, the server's CA for the kubeconfig",
    });
  const expirationTimestamp = new Date(new X509Certificate(certificate).validTo).toISOString();
  return issuedAs(scope, { certificate, expirationTimestamp, serverCA });
}

function awaitingSigner(approved: boolean): StepState {
  return approved
    ? {
        state: "pending",
        reason: "WaitingForSignature",
        message: "The request is approved; waiting for the signer",
      }
    : {
        state: "pending",
        reason: "WaitingForApproval",
        message: "Waiting for the break-glass signer to approve the request",
      };
}

function refusedBySigner(refused: { type: string; reason?: string; message?: string }): StepState {
  return {
    state: "failed",
    reason: `Signer${refused.type}`,
    message:
      `The break-glass signer refused the request: ${refused.reason ?? ""} ${refused.message ?? ""}`.trim(),
    userActionRequired: true,
  };
}

function issuedAs(scope: CredentialScope, issued: NonNullable<CredentialFacts["issued"]>): PhaseResult {
  scope.facts.issued = issued;
  return record(scope, CREDENTIAL_CONDITIONS.CertificateIssued, {
    state: "ready",
    reason: "Issued",
    message: `Issued by the break-glass signer; valid until ${issued.expirationTimestamp}`,
  });
}

/**
 * With the service's key, the kubeconfig (key and server CA included) goes into a Secret of the
 * credential's namespace, owned by the credential (the garbage collector deletes it with it) and
 * immutable: written once, never read back, so the operators need no read of Secrets outside
 * their own namespace. Once the status holds the certificate, the key's own Secret goes.
 */
export const storeKubeconfig: Phase<CredentialScope> = async ({ signal }, scope) => {
  const { credential, cluster, key, deps } = scope;
  const issued = scope.facts.issued;
  if (!issued || !key || !cluster) return {};
  const config = kubeconfig({
    cluster: cluster.metadata.name ?? "",
    server: cluster.status?.apiURL ?? "",
    user: `break-glass-${credential.spec.requester}`,
    certificate: issued.certificate,
    key,
    certificateAuthority: issued.serverCA,
  });
  await deps.client.createIfAbsent(SecretResource, kubeconfigSecret(credential, config), { signal });
  if (credential.status?.certificate)
    await deps.client.delete(
      SecretResource,
      { name: keySecretName(credential), namespace: deps.namespace },
      { signal },
    );
  return {};
};

function kubeconfigSecret(credential: BreakglassCredential, config: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: kubeconfigSecretName(credential),
      namespace: credential.metadata.namespace,
      labels: { [WORK_LABELS.breakglass]: credential.metadata.uid ?? "" },
      ownerReferences: [
        {
          apiVersion: "hcp.aro.dev/v1alpha1",
          kind: "BreakglassCredential",
          name: credential.metadata.name ?? "",
          uid: credential.metadata.uid ?? "",
          controller: true,
        },
      ],
    },
    type: "Opaque",
    immutable: true,
    data: { kubeconfig: Buffer.from(config, "utf8").toString("base64") },
  };
}

/** The first reconcile that sees the certificate tells the cluster's audience: an Event and an audit line. */
export const recordIssue: Phase<CredentialScope> = async ({ signal }, scope) => {
  const { credential, cluster, deps } = scope;
  const issued = scope.facts.issued;
  if (!issued || !cluster || credential.status?.certificate) return {};
  const { requester, reason } = credential.spec;
  scope.log.info("Audit: break-glass credential issued", {
    audit: "breakglass",
    action: "issue",
    credential: credential.metadata.name,
    cluster: cluster.metadata.name,
    requester,
    reason: reason ?? "",
    expires: issued.expirationTimestamp,
  });
  await deps.events.record(cluster, {
    type: "Normal",
    reason: "BreakglassCredentialIssued",
    message: `Break-glass credential ${credential.metadata.name ?? ""} issued to ${requester}${reason ? ` (${reason})` : ""}, valid until ${issued.expirationTimestamp}`,
    signal,
  });
  return {};
};

/** A completed revocation of the cluster after the certificate's notBefore revokes it (HyperShift's rule). */
export const markRevoked: Phase<CredentialScope> = (_ctx, scope) => {
  const { credential, deps } = scope;
  const certificate = scope.facts.issued?.certificate ?? credential.status?.certificate;
  if (!certificate) return {};
  const notBefore = Date.parse(new X509Certificate(certificate).validFrom);
  const covering = deps.revocations
    .list(credential.metadata.namespace)
    .filter((r) => r.spec.clusterRef.name === credential.spec.clusterRef.name)
    .map(revokedBefore)
    .filter((t): t is number => t !== undefined && t > notBefore)
    .sort((a, b) => a - b)[0];
  if (covering !== undefined) scope.facts.revoked = { before: new Date(covering).toISOString() };
  return {};
};

export const CREDENTIAL_PHASES: readonly Phase<CredentialScope>[] = [
  findCluster,
  prepareRequest,
  applyWork,
  observeCertificate,
  storeKubeconfig,
  recordIssue,
  markRevoked,
  observeExpiry,
];
