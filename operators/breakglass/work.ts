/**
 * What a BreakglassCredential sends to the management cluster and what comes back: a ManifestWork
 * of its own holding a Kubernetes CertificateSigningRequest for the hosted control plane's
 * customer break-glass signer and HyperShift's CertificateSigningRequestApproval of the same
 * name (HyperShift signs nothing without one), with feedback on the CSR's conditions and
 * certificate, and a read-only look at the control plane's root-ca ConfigMap, whose CA goes into
 * the kubeconfig as the server's. Then the kubeconfig built from the certificate and what the
 * HcpCluster knows.
 */
import { ConfigMapResource } from "../api/core.ts";
import { ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from "../api/hypershift/v1beta1/index.ts";
import {
  CSR_API_VERSION,
  CSR_KIND,
  CertificateSigningRequestResource,
  HYPERSHIFT_CERTIFICATES_API_VERSION,
  hyperShiftSignerName,
  type CertificateSigningRequest,
  type CertificateSigningRequestApproval,
  type CsrCondition,
} from "../api/certificates/v1.ts";
import {
  BREAKGLASS_TTL_SECONDS,
  CUSTOMER_BREAK_GLASS,
  type BreakglassCredential,
  type HcpCluster,
  originalUid,
} from "../api/v1alpha1/index.ts";
import type { JsonPath, ManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import { feedbackOf } from "../api/v1alpha1/feedback.ts";
import type { ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS, workLabels } from "../api/v1alpha1/labels.ts";
import { asManifest, manifestWork } from "../hcp/work.ts";

/** The CSR's (and its approval's) name: global on the management cluster, so the credential's uid. */
export function csrName(credential: BreakglassCredential): string {
  return `breakglass-${originalUid(credential)}`;
}

export function workName(credential: BreakglassCredential, names: ClusterNames): string {
  return `${names.clusterID}-bg-${originalUid(credential).slice(0, 8)}`;
}

const FEEDBACK = {
  certificate: "certificate",
  approved: "approved",
  denied: "denied",
  failed: "failed",
  serverCA: "serverCA",
} as const;

const conditionPath = (type: string): string => `.status.conditions[?(@.type=="${type}")]`;

const CSR_FEEDBACK_PATHS: JsonPath[] = [
  { name: FEEDBACK.certificate, path: ".status.certificate" },
  { name: FEEDBACK.approved, path: conditionPath("Approved") },
  { name: FEEDBACK.denied, path: conditionPath("Denied") },
  { name: FEEDBACK.failed, path: conditionPath("Failed") },
];

export interface WorkInput {
  credential: BreakglassCredential;
  cluster: HcpCluster;
  names: ClusterNames;
  consumer: string;
  /** The PEM request to send (the client's, or the one made from the service's key). */
  request: string;
}

export function credentialWork({ credential, cluster, names, consumer, request }: WorkInput): ManifestWork {
  const name = csrName(credential);
  const csr: CertificateSigningRequest = {
    apiVersion: CSR_API_VERSION,
    kind: CSR_KIND,
    metadata: { name, labels: { "api.openshift.com/id": names.clusterID } },
    spec: {
      request: Buffer.from(request, "utf8").toString("base64"),
      signerName: hyperShiftSignerName(names.controlPlaneNamespace, CUSTOMER_BREAK_GLASS),
      expirationSeconds: credential.spec.expirationSeconds ?? BREAKGLASS_TTL_SECONDS.default,
      usages: ["client auth"],
    },
  };
  const approval: CertificateSigningRequestApproval = {
    apiVersion: HYPERSHIFT_CERTIFICATES_API_VERSION,
    kind: "CertificateSigningRequestApproval",
    metadata: { name, namespace: names.controlPlaneNamespace },
    spec: {},
  };
  return manifestWork({
    name: workName(credential, names),
    consumer,
    labels: { ...workLabels(cluster), [WORK_LABELS.breakglass]: credential.metadata.uid ?? "" },
    annotations: {},
    manifests: [asManifest(csr), asManifest(approval)],
    feedback: { type: CertificateSigningRequestResource, name, namespace: "", paths: CSR_FEEDBACK_PATHS },
    readOnly: [
      {
        manifest: asManifest({
          apiVersion: "v1",
          kind: ConfigMapResource.kind,
          metadata: { name: ROOT_CA_CONFIGMAP, namespace: names.controlPlaneNamespace },
        }),
        type: ConfigMapResource,
        name: ROOT_CA_CONFIGMAP,
        namespace: names.controlPlaneNamespace,
        paths: [{ name: FEEDBACK.serverCA, path: `.data['${ROOT_CA_KEY}']` }],
      },
    ],
  });
}

/** What the CSR reported: its certificate (PEM) and why it has none. */
export interface CsrReport {
  certificate?: string;
  /** The control plane's root CA (PEM), from the read-only root-ca ConfigMap. */
  serverCA?: string;
  approved?: CsrCondition;
  denied?: CsrCondition;
  failed?: CsrCondition;
}

function csrCondition(v: unknown): CsrCondition | undefined {
  return typeof v === "object" && v !== null && (v as { status?: unknown }).status === "True"
    ? (v as CsrCondition)
    : undefined;
}

export function csrReport(work: ManifestWorkObject | undefined, credential: BreakglassCredential): CsrReport {
  const fb = feedbackOf(work, { kind: CSR_KIND, name: csrName(credential) });
  const raw = fb[FEEDBACK.certificate];
  const certificate =
    typeof raw === "string" && raw ? Buffer.from(raw, "base64").toString("utf8") : undefined;
  const ca = feedbackOf(work, { kind: ConfigMapResource.kind, name: ROOT_CA_CONFIGMAP })[FEEDBACK.serverCA];
  return {
    ...(certificate ? { certificate } : {}),
    ...(typeof ca === "string" && ca.includes("BEGIN CERTIFICATE") ? { serverCA: ca } : {}),
    ...(csrCondition(fb[FEEDBACK.approved]) ? { approved: csrCondition(fb[FEEDBACK.approved]) } : {}),
    ...(csrCondition(fb[FEEDBACK.denied]) ? { denied: csrCondition(fb[FEEDBACK.denied]) } : {}),
    ...(csrCondition(fb[FEEDBACK.failed]) ? { failed: csrCondition(fb[FEEDBACK.failed]) } : {}),
  };
}
