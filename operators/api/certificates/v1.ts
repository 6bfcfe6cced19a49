/**
 * The certificate APIs the break-glass path writes on a management cluster: Kubernetes'
 * `certificates.k8s.io/v1` CertificateSigningRequest, and HyperShift's
 * `certificates.hypershift.openshift.io/v1alpha1` CertificateSigningRequestApproval (a CSR for a
 * HyperShift signer is approved only when one of the same name exists in the hosted control
 * plane's namespace) and CertificateRevocationRequest (revokes every certificate of a signer
 * class issued before it). Shapes from `github.com/openshift/hypershift` api/certificates/v1alpha1
 * and docs/content/how-to/pki/break-glass-credentials.md.
 */
import type { Condition, KubeObject, ResourceType } from "../meta/v1.ts";

export const CSR_API_VERSION = "certificates.k8s.io/v1";
export const CSR_KIND = "CertificateSigningRequest";

export const CertificateSigningRequestResource = {
  group: "certificates.k8s.io",
  version: "v1",
  kind: CSR_KIND,
  plural: "certificatesigningrequests",
  namespaced: false,
} as const satisfies ResourceType;

export type KeyUsage = "client auth" | "digital signature" | "key encipherment";

export interface CertificateSigningRequest extends KubeObject {
  apiVersion?: typeof CSR_API_VERSION;
  kind?: typeof CSR_KIND;
  spec: {
    /** Base64 of the PEM request. */
    request: string;
    signerName: string;
    /** 600 or more. */
    expirationSeconds?: number;
    usages?: KeyUsage[];
    username?: string;
    groups?: string[];
  };
  status?: {
    /** Approved, Denied, Failed: {type, status, reason, message, lastUpdateTime, lastTransitionTime}. */
    conditions?: CsrCondition[];
    /** Base64 of the PEM certificate. */
    certificate?: string;
  };
}

export interface CsrCondition {
  type: "Approved" | "Denied" | "Failed";
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export const HYPERSHIFT_CERTIFICATES_GROUP = "certificates.hypershift.openshift.io";
export const HYPERSHIFT_CERTIFICATES_API_VERSION = `${HYPERSHIFT_CERTIFICATES_GROUP}/v1alpha1` as const;

export const CertificateSigningRequestApprovalResource = {
  group: HYPERSHIFT_CERTIFICATES_GROUP,
  version: "v1alpha1",
  kind: "CertificateSigningRequestApproval",
  plural: "certificatesigningrequestapprovals",
  namespaced: true,
} as const satisfies ResourceType;

export const CertificateRevocationRequestResource = {
  group: HYPERSHIFT_CERTIFICATES_GROUP,
  version: "v1alpha1",
  kind: "CertificateRevocationRequest",
  plural: "certificaterevocationrequests",
  namespaced: true,
} as const satisfies ResourceType;

/** Empty spec and status: its name (the CSR's) and namespace (the control plane's) are the approval. */
export interface CertificateSigningRequestApproval extends KubeObject {
  apiVersion?: typeof HYPERSHIFT_CERTIFICATES_API_VERSION;
  kind?: "CertificateSigningRequestApproval";
  spec?: Record<string, never>;
}

export interface CertificateRevocationRequest extends KubeObject {
  apiVersion?: typeof HYPERSHIFT_CERTIFICATES_API_VERSION;
  kind?: "CertificateRevocationRequest";
  spec: { signerClass: "customer-break-glass" | "sre-break-glass" };
  status?: {
    /** Certificates valid before this time are revoked. */
    revocationTimestamp?: string;
    previousSigner?: { name: string };
    /** SignerClassValid, RootCertificatesRegenerated, NewCertificatesTrusted, LeafCertificatesRegenerated, PreviousCertificatesRevoked. */
    conditions?: Condition[];
  };
}

/** HyperShift's signer name for a signer class of one hosted control plane. */
export function hyperShiftSignerName(controlPlaneNamespace: string, signerClass: string): string {
  return `hypershift.openshift.io/${controlPlaneNamespace}.${signerClass}`;
}

/** The subject CommonName prefix HyperShift requires of a signer class's requests. */
export function commonNamePrefix(signerClass: string): string {
  return `system:${signerClass}:`;
}
