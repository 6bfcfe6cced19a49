/**
 * BreakglassCredential (hcp.aro.dev/v1alpha1): one temporary admin client certificate for an
 * HcpCluster, signed by the hosted cluster's customer break-glass signer; BreakglassRevocation:
 * every such certificate of the cluster issued before it stops working. Mirror
 * crds/hcp.aro.dev_breakglasscredentials.yaml and crds/hcp.aro.dev_breakglassrevocations.yaml.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import { ARM_LABELS } from "./arm.ts";
import { HCP_CLUSTER_KIND, type HcpCluster } from "./hcpcluster.ts";
import { API_VERSION, GROUP, VERSION, type Condition } from "./meta.ts";

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

/** Who asks for a break-glass object, for which cluster, and why (both ARM and hcpctl ask). */
export interface BreakglassAsk {
  /** The HcpCluster it is for, as read from the service cluster (its uid owns the object). */
  cluster: HcpCluster;
  name: string;
  requester: string;
  reason: string;
}

/**
 * Labelled with the cluster (the frontend lists a cluster's break-glass objects by it) and owned
 * by it, so that the garbage collector takes it with the cluster if nothing else does.
 */
function breakglassMetadata({ cluster, name }: BreakglassAsk): KubeObject["metadata"] {
  const clusterName = cluster.metadata.name ?? "";
  return {
    name,
    namespace: cluster.metadata.namespace,
    labels: { [ARM_LABELS.cluster]: clusterName },
    ownerReferences: [
      { apiVersion: API_VERSION, kind: HCP_CLUSTER_KIND, name: clusterName, uid: cluster.metadata.uid ?? "" },
    ],
  };
}

/** A BreakglassCredential as every client creates one. */
export function breakglassCredential(
  ask: BreakglassAsk & Pick<BreakglassCredentialSpec, "expirationSeconds" | "certificateSigningRequest">,
): BreakglassCredential {
  const { cluster, requester, reason, expirationSeconds, certificateSigningRequest } = ask;
  return {
    apiVersion: API_VERSION,
    kind: BREAKGLASS_CREDENTIAL_KIND,
    metadata: breakglassMetadata(ask),
    spec: {
      clusterRef: { name: cluster.metadata.name ?? "" },
      requester,
      reason,
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
      ...(certificateSigningRequest ? { certificateSigningRequest } : {}),
    },
  };
}

/** A BreakglassRevocation as every client creates one. */
export function breakglassRevocation(ask: BreakglassAsk): BreakglassRevocation {
  return {
    apiVersion: API_VERSION,
    kind: BREAKGLASS_REVOCATION_KIND,
    metadata: breakglassMetadata(ask),
    spec: {
      clusterRef: { name: ask.cluster.metadata.name ?? "" },
      requester: ask.requester,
      reason: ask.reason,
    },
  };
}
