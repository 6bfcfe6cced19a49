/**
 * BreakglassCredential (hcp.aro.dev/v1alpha1): one temporary admin client certificate for an
 * HcpCluster, signed by the hosted cluster's customer break-glass signer; BreakglassRevocation:
 * every such certificate of the cluster issued before it stops working. Mirror
 * crds/hcp.aro.dev_breakglasscredentials.yaml and crds/hcp.aro.dev_breakglassrevocations.yaml.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import type { API_VERSION, Condition } from "./meta.ts";
import { GROUP, VERSION } from "./meta.ts";

export const BREAKGLASS_CREDENTIAL_KIND = "BreakglassCredential";

/** Held by the breakglass controller until the credential's work and the key's Secret are gone. */
export const BREAKGLASS_FINALIZER = "hcp.aro.dev/breakglass";

export const BreakglassCredentialResource = {
  group: GROUP,
  version: VERSION,
  kind: BREAKGLASS_CREDENTIAL_KIND,
  plural: "breakglasscredentials",
  namespaced: true,
} as const satisfies ResourceType;

/** The bounds of spec.expirationSeconds: Kubernetes' CSR minimum, and a day. */
export const BREAKGLASS_TTL_SECONDS = { min: 600, max: 86_400, default: 86_400 } as const;

/** The HyperShift signer class every credential here is signed by. */
export const CUSTOMER_BREAK_GLASS = "customer-break-glass";

export interface BreakglassCredential extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof BREAKGLASS_CREDENTIAL_KIND;
  spec: BreakglassCredentialSpec;
  status?: BreakglassCredentialStatus;
}

/** Immutable as a whole: a credential is requested once. */
export interface BreakglassCredentialSpec {
  /** An HcpCluster in the same namespace. */
  clusterRef: { name: string };
  /** Who asked (an ARM client object ID, a user name); in the certificate's subject and the audit log. */
  requester: string;
  /** Why; audit only. */
  reason?: string;
  /** How long the certificate is valid; BREAKGLASS_TTL_SECONDS bounds it. */
  expirationSeconds?: number;
  /**
   * A PEM PKCS#10 request the client made (it keeps the key); when absent the service makes the
   * key and the kubeconfig (with the key) goes into the Secret named in status.kubeconfigSecret.
   */
  certificateSigningRequest?: string;
}

export interface BreakglassCredentialStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  /** The signed client certificate, PEM; never the key. */
  certificate?: string;
  /** When the certificate stops being valid (its notAfter). */
  expirationTimestamp?: string;
  /**
   * The PEM CA bundle the hosted kube-apiserver's serving certificate chains to (HyperShift's
   * root-ca of the control plane), the kubeconfig's certificate-authority-data.
   */
  serverCA?: string;
  /** The Secret (same namespace) holding the kubeconfig with the key the service made. */
  kubeconfigSecret?: string;
  /** True once a revocation of the cluster's credentials covered this one. */
  revoked?: boolean;
}

export const BREAKGLASS_REVOCATION_KIND = "BreakglassRevocation";

/** Held by the breakglass controller until the revocation's work is gone. */
export const REVOCATION_FINALIZER = "hcp.aro.dev/breakglass-revocation";

export const BreakglassRevocationResource = {
  group: GROUP,
  version: VERSION,
  kind: BREAKGLASS_REVOCATION_KIND,
  plural: "breakglassrevocations",
  namespaced: true,
} as const satisfies ResourceType;

export interface BreakglassRevocation extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof BREAKGLASS_REVOCATION_KIND;
  /** Immutable as a whole. */
  spec: { clusterRef: { name: string }; requester: string; reason?: string };
  status?: BreakglassRevocationStatus;
}

export interface BreakglassRevocationStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  /** Every certificate valid before this time is revoked (HyperShift's revocation timestamp). */
  revocationTimestamp?: string;
}
