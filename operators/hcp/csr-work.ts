/**
 * A client certificate from a hosted control plane's signer, the HyperShift way: a ManifestWork
 * holding a Kubernetes CertificateSigningRequest for `hypershift.openshift.io/<ns>.<signer class>`
 * and HyperShift's CertificateSigningRequestApproval of the same name (HyperShift signs nothing
 * without one), with feedback on the CSR's conditions and certificate, and a read-only look at the
 * control plane's root-ca ConfigMap, whose CA goes into the kubeconfig as the server's. Break-glass
 * credentials (customer-break-glass) and SRE access sessions (sre-break-glass) both use it.
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
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import type { JsonPath, ManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import { feedbackOf } from "../api/v1alpha1/feedback.ts";
import type { ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { workLabels } from "../api/v1alpha1/labels.ts";
import { asManifest, manifestWork } from "./work.ts";

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

export interface CsrWorkInput {
  /** The work's name, in the consumer's namespace. */
  workName: string;
  /** The CSR's and its approval's name: global on the management cluster. */
  csrName: string;
  signerClass: string;
  expirationSeconds: number;
  cluster: HcpCluster;
  names: ClusterNames;
  consumer: string;
  /** Labels beside the cluster's own: the owner's, so its controller finds the work. */
  labels: Record<string, string>;
  /** The PEM request. */
  request: string;
}

export function csrWork(input: CsrWorkInput): ManifestWork {
  const { csrName: name, names } = input;
  const csr: CertificateSigningRequest = {
    apiVersion: CSR_API_VERSION,
    kind: CSR_KIND,
    metadata: { name, labels: { "api.openshift.com/id": names.clusterID } },
    spec: {
      request: Buffer.from(input.request, "utf8").toString("base64"),
      signerName: hyperShiftSignerName(names.controlPlaneNamespace, input.signerClass),
      expirationSeconds: input.expirationSeconds,
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
    name: input.workName,
    consumer: input.consumer,
    labels: { ...workLabels(input.cluster), ...input.labels },
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

export function csrReport(work: ManifestWorkObject | undefined, csrName: string): CsrReport {
  const fb = feedbackOf(work, { kind: CSR_KIND, name: csrName });
  const raw = fb[FEEDBACK.certificate];
  const certificate =
    typeof raw === "string" && raw ? Buffer.from(raw, "base64").toString("utf8") : undefined;
  const ca = feedbackOf(work, { kind: ConfigMapResource.kind, name: ROOT_CA_CONFIGMAP })[FEEDBACK.serverCA];
  const approved = csrCondition(fb[FEEDBACK.approved]);
  const denied = csrCondition(fb[FEEDBACK.denied]);
  const failed = csrCondition(fb[FEEDBACK.failed]);
  return {
    ...(certificate ? { certificate } : {}),
    ...(typeof ca === "string" && ca.includes("BEGIN CERTIFICATE") ? { serverCA: ca } : {}),
    ...(approved ? { approved } : {}),
    ...(denied ? { denied } : {}),
    ...(failed ? { failed } : {}),
  };
}
