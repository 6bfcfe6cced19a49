/**
 * Valid HyperShift objects for tests against the real CRDs on the management clusters: an ARO HCP
 * shaped HostedCluster (Azure, ManagedIdentities, Route for every service) and an Azure NodePool.
 */
import {
  HYPERSHIFT_API_VERSION,
  type HostedCluster,
  type ManagedIdentity,
  type NodePool,
  type NodePoolSpec,
} from "../../operators/api/hypershift/v1beta1/index.ts";

export const RELEASE_4_19_7 = "quay.io/openshift-release-dev/ocp-release:4.19.7-multi";
export const RELEASE_4_19_8 = "quay.io/openshift-release-dev/ocp-release:4.19.8-multi";

const subscription = "5f5c9d7a-0d3b-4f5e-9a57-2a4f7c1e8b10";
const resourceGroup = `/subscriptions/${subscription}/resourceGroups/customer-rg`;
const vnet = `${resourceGroup}/providers/Microsoft.Network/virtualNetworks/customer-vnet`;
export const SUBNET_ID = `${vnet}/subnets/nodes`;

const identity = (name: string): ManagedIdentity => ({
  credentialsSecretName: name,
  objectEncoding: "utf-8",
});

export function hostedClusterFixture(namespace: string, name: string, image = RELEASE_4_19_7): HostedCluster {
  return {
    apiVersion: HYPERSHIFT_API_VERSION,
    kind: "HostedCluster",
    metadata: { name, namespace },
    spec: {
      release: { image },
      pullSecret: { name: "pull-secret" },
      dns: { baseDomain: "example.com", baseDomainPrefix: name },
      networking: {
        networkType: "OVNKubernetes",
        clusterNetwork: [{ cidr: "10.128.0.0/14", hostPrefix: 23 }],
        serviceNetwork: [{ cidr: "172.30.0.0/16" }],
        machineNetwork: [{ cidr: "10.0.0.0/16" }],
      },
      etcd: {
        managementType: "Managed",
        managed: { storage: { type: "PersistentVolume", persistentVolume: { size: "8Gi" } } },
      },
      // ARO HCP: OAuthServer, Konnectivity and Ignition must use Route (CEL rules of the CRD).
      services: (["APIServer", "OAuthServer", "Konnectivity", "Ignition"] as const).map((service) => ({
        service,
        servicePublishingStrategy: { type: "Route" as const },
      })),
      platform: {
        type: "Azure",
        azure: {
          location: "eastus",
          resourceGroup: "managed-rg",
          vnetID: vnet,
          subnetID: SUBNET_ID,
          subscriptionID: subscription,
          securityGroupID: `${resourceGroup}/providers/Microsoft.Network/networkSecurityGroups/nsg`,
          tenantID: subscription,
          azureAuthenticationConfig: {
            azureAuthenticationConfigType: "ManagedIdentities",
            managedIdentities: {
              controlPlane: {
                managedIdentitiesKeyVault: { name: "identities-kv", tenantID: subscription },
                cloudProvider: identity("cloud-provider"),
                nodePoolManagement: identity("nodepool-mgmt"),
                controlPlaneOperator: identity("cpo"),
                ingress: identity("ingress"),
                network: identity("network"),
                disk: identity("disk"),
                file: identity("file"),
              },
              dataPlane: {
                diskMSIClientID: subscription,
                fileMSIClientID: subscription,
                imageRegistryMSIClientID: subscription,
              },
            },
          },
        },
      },
    },
  };
}

export function nodePoolFixture(
  namespace: string,
  name: string,
  scale: Pick<NodePoolSpec, "replicas" | "autoScaling"> & { clusterName: string; image?: string },
): NodePool {
  return {
    apiVersion: HYPERSHIFT_API_VERSION,
    kind: "NodePool",
    metadata: { name, namespace },
    spec: {
      clusterName: scale.clusterName,
      ...(scale.autoScaling ? { autoScaling: scale.autoScaling } : { replicas: scale.replicas ?? 0 }),
      release: { image: scale.image ?? RELEASE_4_19_7 },
      management: { upgradeType: "Replace", autoRepair: true },
      nodeDrainTimeout: "10m0s",
      platform: {
        type: "Azure",
        azure: {
          vmSize: "Standard_D8s_v3",
          image: {
            type: "AzureMarketplace",
            azureMarketplace: {
              publisher: "azureopenshift",
              offer: "aro4",
              sku: "420-v2",
              version: "420.6.20250101",
            },
          },
          osDisk: { sizeGiB: 64, diskStorageAccountType: "StandardSSD_LRS", persistence: "Persistent" },
          subnetID: SUBNET_ID,
          encryptionAtHost: "Disabled",
          diagnostics: { storageAccountType: "Managed" },
        },
      },
    },
  };
}
