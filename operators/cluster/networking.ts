/**
 * What a cluster's network choices make of its HostedCluster and work. The ingress: Private has
 * HyperShift publish the default ingress controller on an internal load balancer; Disabled turns
 * off the Ingress capability and, as HyperShift's CEL demands, the Console. The VNet integration
 * subnet (ARO HCP's Swift): a PodNetwork for the customer's subnet, a PodNetworkInstance of it in
 * the hosted control plane's namespace, and the HostedCluster annotation naming that instance,
 * which HyperShift's router pods join.
 */
import {
  ACN_API_VERSION,
  POD_NETWORK_INSTANCE_KIND,
  POD_NETWORK_KIND,
  type PodNetwork,
  type PodNetworkInstance,
} from "../api/acn/v1alpha1.ts";
import {
  SWIFT_POD_NETWORK_INSTANCE_ANNOTATION,
  type OperatorConfiguration,
  type OptionalCapability,
} from "../api/hypershift/v1beta1/index.ts";
import { INGRESS_DISABLED_SINCE, type HcpCluster, type IngressType } from "../api/v1alpha1/index.ts";
import type { Manifest } from "../api/work/v1.ts";
import type { ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { asManifest } from "../hcp/work.ts";

/** The PodNetworkInstance of a cluster's VNet integration subnet, in its control plane's namespace. */
export const VNET_INTEGRATION_INSTANCE = "vnet-integration";

export function ingressTypeOf(cluster: HcpCluster): IngressType {
  return cluster.spec.ingress?.type ?? "Public";
}

/**
 * HyperShift's ingress operator settings. A Public ingress sets none: HyperShift's default on Azure
 * is the same LoadBalancerService with scope External, and the HostedClusters of every cluster made
 * before the field stay exactly as they were applied.
 */
export function ingressOperatorConfiguration(cluster: HcpCluster): OperatorConfiguration | undefined {
  if (ingressTypeOf(cluster) !== "Private") return undefined;
  return {
    ingressOperator: {
      endpointPublishingStrategy: {
        type: "LoadBalancerService",
        loadBalancer: { scope: "Internal", dnsManagementPolicy: "Managed" },
      },
    },
  };
}

/**
 * The capabilities the HostedCluster turns off, in HyperShift's enum order: the image registry's
 * when disabled; Ingress and Console without an ingress (HyperShift refuses Ingress without Console:
 * the console is served through the ingress). None: undefined, so the field stays unset.
 */
export function disabledCapabilities(cluster: HcpCluster): OptionalCapability[] | undefined {
  const disabled: OptionalCapability[] = [];
  if (cluster.spec.clusterImageRegistry?.state === "Disabled") disabled.push("ImageRegistry");
  if (ingressTypeOf(cluster) === "Disabled") disabled.push("Console", "Ingress");
  return disabled.length > 0 ? disabled : undefined;
}

/** Whether OpenShift `version` (major.minor[.patch]) runs without the Ingress and Console capabilities. */
export function runsWithoutIngress(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const since = INGRESS_DISABLED_SINCE;
  return major > since.major || (major === since.major && minor >= since.minor);
}

/** The HostedCluster's metadata for Swift: the annotation naming the instance its router joins. */
export function swiftMetadata(cluster: HcpCluster): { annotations?: Record<string, string> } {
  return cluster.spec.platform.azure.vnetIntegrationSubnetId
    ? { annotations: { [SWIFT_POD_NETWORK_INSTANCE_ANNOTATION]: VNET_INTEGRATION_INSTANCE } }
    : {};
}

/**
 * The work's Swift objects, before the HostedCluster so that the instance exists when HyperShift
 * reads the annotation: the control plane's namespace (HyperShift makes it too, later, and keeps
 * one that exists), the cluster-scoped PodNetwork named after that namespace (one per cluster on a
 * management cluster), and the instance. None without the subnet.
 */
export function swiftManifests(cluster: HcpCluster, names: ClusterNames): Manifest[] {
  const subnet = cluster.spec.platform.azure.vnetIntegrationSubnetId;
  if (!subnet) return [];
  const labels = { "api.openshift.com/id": names.clusterID };
  const namespace: Manifest = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: names.controlPlaneNamespace, labels },
  };
  const podNetwork: PodNetwork = {
    apiVersion: ACN_API_VERSION,
    kind: POD_NETWORK_KIND,
    metadata: { name: names.controlPlaneNamespace, labels },
    spec: { subnetResourceID: subnet, deviceType: "acn.azure.com/vnet-nic" },
  };
  const instance: PodNetworkInstance = {
    apiVersion: ACN_API_VERSION,
    kind: POD_NETWORK_INSTANCE_KIND,
    metadata: { name: VNET_INTEGRATION_INSTANCE, namespace: names.controlPlaneNamespace, labels },
    spec: { podNetworkConfigs: [{ podNetwork: names.controlPlaneNamespace }] },
  };
  return [namespace, asManifest(podNetwork), asManifest(instance)];
}
