/**
 * 2024-06-10-preview's bodies round-trip through the internal model. It cannot see a cluster's
 * ingress, FIPS, image digest mirrors, VNet integration subnet or key visibility, nor a node pool's
 * OS disk type: its updates keep them.
 */
import { conversionProperties } from "../../../../test/support/api-version-properties.ts";

conversionProperties("2024-06-10-preview", {
  cluster: [
    "cryptoRestrictions",
    "etcd.dataEncryption.customerManaged.kms.visibility",
    "imageDigestMirrors",
    "ingress",
    "platform.vnetIntegrationSubnetId",
  ],
  nodePool: ["platform.osDisk.diskType"],
  externalAuth: [],
});
