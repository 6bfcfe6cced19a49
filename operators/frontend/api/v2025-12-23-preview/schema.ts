/**
 * 2025-12-23-preview: 2024-06-10-preview's bodies with version.id required (and a cluster's
 * updatable), the VNet integration subnet (required), a customer-managed key's vault name and
 * visibility beside activeKey, image digest mirrors, and a node pool's OS disk type.
 */
import { armId, keyText, trackedResource } from "../arm-resource.ts";
import { arr, co, obj, str, type TypeOf } from "../schema.ts";
import * as previous from "../v2024-06-10-preview/schema.ts";

const versionProfile = obj({ ...previous.nodePoolVersion.properties }, { required: ["id"] });

export const clusterPlatform = obj(
  { ...previous.clusterPlatform.properties, vnetIntegrationSubnetId: co(armId) },
  { required: ["subnetId", "networkSecurityGroupId", "operatorsAuthentication", "vnetIntegrationSubnetId"] },
);

export const kms = obj(
  {
    vaultName: co(keyText),
    visibility: co(str({ enum: ["Public", "Private"] })),
    activeKey: obj({ name: co(keyText), version: keyText }, { required: ["name", "version"] }),
  },
  { required: ["vaultName", "visibility", "activeKey"] },
);

const dataEncryption = obj({
  ...previous.dataEncryption.properties,
  customerManaged: obj({ ...previous.dataEncryption.properties.customerManaged.properties, kms }),
});

export const clusterProperties = obj(
  {
    ...previous.clusterProperties.properties,
    version: versionProfile,
    platform: clusterPlatform,
    etcd: obj({ dataEncryption: { ...dataEncryption, default: {} } }, { default: {} }),
    imageDigestMirrors: arr(
      obj(
        { source: str({ maxLength: 255 }), mirrors: arr(str(), { minItems: 1, maxItems: 255 }) },
        { required: ["source", "mirrors"] },
      ),
      { maxItems: 240 },
    ),
  },
  { required: ["version", "platform"] },
);

export const osDisk = obj(
  {
    ...previous.osDisk.properties,
    diskType: co(str({ enum: ["Managed", "Ephemeral"], default: "Managed" })),
  },
  { default: {} },
);

export const nodePoolProperties = obj(
  {
    ...previous.nodePoolProperties.properties,
    version: versionProfile,
    platform: obj({ ...previous.nodePoolPlatform.properties, osDisk }, { required: ["vmSize"] }),
  },
  { required: ["platform"] },
);

export const externalAuthProperties = previous.externalAuthProperties;

export const SCHEMAS = {
  cluster: trackedResource(clusterProperties),
  nodePool: trackedResource(nodePoolProperties),
  externalAuth: previous.SCHEMAS.externalAuth,
};

export type ClusterProperties = TypeOf<typeof clusterProperties>;
