/**
 * Azure Container Networking's multitenancy API (`multitenancy.acn.azure.com/v1alpha1`), the two
 * kinds ARO HCP sends a management cluster for a cluster's VNet integration subnet ("Swift"): a
 * cluster-scoped PodNetwork for the customer's subnet, and a PodNetworkInstance in the hosted
 * control plane's namespace that pods join by naming it (HyperShift's router does, through the
 * HostedCluster annotation SWIFT_POD_NETWORK_INSTANCE_ANNOTATION). The subset this project writes;
 * shapes from github.com/Azure/azure-container-networking crd/multitenancy/api/v1alpha1.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";

export const ACN_GROUP = "multitenancy.acn.azure.com";
export const ACN_VERSION = "v1alpha1";
export const ACN_API_VERSION = `${ACN_GROUP}/${ACN_VERSION}` as const;
export const POD_NETWORK_KIND = "PodNetwork";
export const POD_NETWORK_INSTANCE_KIND = "PodNetworkInstance";

export const PodNetworkResource = {
  group: ACN_GROUP,
  version: ACN_VERSION,
  kind: POD_NETWORK_KIND,
  plural: "podnetworks",
  namespaced: false,
} as const satisfies ResourceType;

export const PodNetworkInstanceResource = {
  group: ACN_GROUP,
  version: ACN_VERSION,
  kind: POD_NETWORK_INSTANCE_KIND,
  plural: "podnetworkinstances",
  namespaced: true,
} as const satisfies ResourceType;

/** The NIC pods get on the network: a VNet NIC (Swift) or an InfiniBand one. */
export type DeviceType = "acn.azure.com/vnet-nic" | "acn.azure.com/infiniband-nic";

/** A customer subnet pods may join. Cluster-scoped. */
export interface PodNetwork extends KubeObject {
  apiVersion?: typeof ACN_API_VERSION;
  kind?: typeof POD_NETWORK_KIND;
  spec: {
    /** The subnet's ARM resource ID. */
    subnetResourceID: string;
    /** The subnet's GUID (ARO HCP reads it from the subnet's service association link). */
    subnetGUID?: string;
    /** The virtual network's GUID. */
    networkID?: string;
    deviceType?: DeviceType;
    /** Single (the default) or PrefixBlock. */
    subnetAllocationMode?: "Single" | "PrefixBlock";
  };
}

/** Which PodNetworks the pods of one namespace that name this instance join. */
export interface PodNetworkInstance extends KubeObject {
  apiVersion?: typeof ACN_API_VERSION;
  kind?: typeof POD_NETWORK_INSTANCE_KIND;
  spec: {
    podNetworkConfigs: Array<{
      /** A PodNetwork's name. */
      podNetwork: string;
      /** Addresses reserved up front; 0 (the default): allocated per pod. */
      podIPReservationSize?: number;
    }>;
    /** Whether pods start with a deny-all network policy; default false. */
    defaultDenyACL?: boolean;
  };
}
