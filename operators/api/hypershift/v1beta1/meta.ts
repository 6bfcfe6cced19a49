/**
 * What HostedCluster and NodePool share: the group, version and kinds, the names HyperShift gives
 * the objects beside a HostedCluster, and the small types both specs use.
 */
import type { ResourceType } from "../../meta/v1.ts";

export const HYPERSHIFT_GROUP = "hypershift.openshift.io";
export const HYPERSHIFT_VERSION = "v1beta1";
export const HYPERSHIFT_API_VERSION = `${HYPERSHIFT_GROUP}/${HYPERSHIFT_VERSION}` as const;
export const HOSTED_CLUSTER_KIND = "HostedCluster";
export const NODE_POOL_KIND = "NodePool";

export const HostedClusterResource = {
  group: HYPERSHIFT_GROUP,
  version: HYPERSHIFT_VERSION,
  kind: HOSTED_CLUSTER_KIND,
  plural: "hostedclusters",
  namespaced: true,
} as const satisfies ResourceType;

/** HyperShift's NodePool; not hcp.aro.dev's (../../v1alpha1/nodepool.ts). Has the scale subresource. */
export const NodePoolResource = {
  group: HYPERSHIFT_GROUP,
  version: HYPERSHIFT_VERSION,
  kind: NODE_POOL_KIND,
  plural: "nodepools",
  namespaced: true,
} as const satisfies ResourceType;

/**
 * Swift networking for the control plane (ARO HCP): the name of a PodNetworkInstance in the hosted
 * control plane's namespace (../../acn/v1alpha1.ts) that HyperShift's router pods join. HyperShift's
 * `SwiftPodNetworkInstanceAnnotation`; newer HyperShift has `spec.platform.azure.private.swift`.
 */
export const SWIFT_POD_NETWORK_INSTANCE_ANNOTATION = "hypershift.openshift.io/swift-pod-network-instance";

/** The finalizer the HyperShift operator puts on HostedClusters and NodePools. */
export const HYPERSHIFT_FINALIZER = "hypershift.openshift.io/finalizer";

/**
 * On an empty Secret beside a HostedCluster that an OIDC client's clientSecret names: HyperShift
 * (on ARO HCP) creates it empty in the hosted cluster's openshift-config and never overwrites it
 * there, so the customer puts the secret in on their own cluster, not on the service's.
 */
export const HOSTED_CLUSTER_SOURCED_ANNOTATION = "hypershift.openshift.io/hosted-cluster-sourced";

/** `<hcNamespace>-<hcName with "." → "-">`, HyperShift's `HostedControlPlaneNamespace`. */
export function controlPlaneNamespaceName(namespace: string, name: string): string {
  return `${namespace}-${name.replaceAll(".", "-")}`;
}

/** The admin kubeconfig Secret HyperShift writes beside the HostedCluster (key `kubeconfig`). */
export function adminKubeconfigSecretName(hostedClusterName: string): string {
  return `${hostedClusterName}-admin-kubeconfig`;
}
export const ADMIN_KUBECONFIG_KEY = "kubeconfig";

/**
 * The control plane's root CA as the control-plane-operator publishes it in the control plane's
 * namespace (`manifests.RootCAConfigMap`): the CA the kube-apiserver's serving certificate chains
 * to, and the certificate-authority-data of the admin kubeconfig. The certificate only; the key
 * stays in the Secret of the same name.
 */
export const ROOT_CA_CONFIGMAP = "root-ca";
export const ROOT_CA_KEY = "ca.crt";

export interface LocalObjectReference {
  /** default "". */
  name: string;
}

export type PlatformType = "AWS" | "Azure" | "IBMCloud" | "KubeVirt" | "Agent" | "PowerVS" | "None";

/** `^(\w+\S+)$`, ≤253. */
export interface Release {
  image: string;
}

export type AvailabilityPolicy = "HighlyAvailable" | "SingleReplica";

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}
