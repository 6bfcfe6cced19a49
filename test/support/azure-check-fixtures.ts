/**
 * A cluster's network and identities as the unit tests of the frontend's Azure checks
 * (operators/frontend/checks/) name them: one subscription, its subnet, VNet and NSG, and the
 * properties of a cluster whose operators have an identity each.
 */
import type { ClusterProperties } from "../../operators/frontend/api/internal.ts";

export const SUB = "11111111-2222-4333-8444-555555555555";
export const NET = `/subscriptions/${SUB}/resourceGroups/net/providers/Microsoft.Network`;
export const SUBNET = `${NET}/virtualNetworks/vnet/subnets/nodes`;
export const VNET = `${NET}/virtualNetworks/vnet`;
export const NSG = `${NET}/networkSecurityGroups/nsg`;
export const OPERATORS = "properties.platform.operatorsAuthentication.userAssignedIdentities";

/** The resource ID of the user-assigned identity `name`. */
export const id = (name: string): string =>
  `/subscriptions/${SUB}/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${name}`;

/** A cluster on SUBNET and NSG with three control plane operators, one data plane operator and the service's identity. */
export function cluster(extra: Partial<ClusterProperties> = {}): ClusterProperties {
  return {
    platform: {
      subnetId: SUBNET,
      networkSecurityGroupId: NSG,
      operatorsAuthentication: {
        userAssignedIdentities: {
          controlPlaneOperators: {
            "cloud-controller-manager": id("ccm"),
            "disk-csi-driver": id("disk"),
            "control-plane": id("cp"),
          },
          dataPlaneOperators: { "file-csi-driver": id("dp-file") },
          serviceManagedIdentity: id("smi"),
        },
      },
    },
    ...extra,
  };
}
