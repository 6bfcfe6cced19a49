/**
 * 2026-06-30-preview: 2025-12-23-preview's bodies with a cluster's ingress type, FIPS
 * (cryptoRestrictions) and status conditions; etcd keys customer-managed only (keyManagementMode
 * required whenever dataEncryption is sent, no default); node pool OS disks of at most 4095 GiB
 * and status conditions; an external auth's state as status.conditions instead of `condition`.
 */
import { proxyResource, statusConditions, trackedResource } from "../arm-resource.ts";
import { co, int, obj, str } from "../schema.ts";
import * as previous from "../v2025-12-23-preview/schema.ts";
import * as first from "../v2024-06-10-preview/schema.ts";

const dataEncryption = obj(
  {
    keyManagementMode: co(str({ enum: ["CustomerManaged"] })),
    customerManaged: obj({ encryptionType: co(str({ enum: ["KMS"], default: "KMS" })), kms: previous.kms }),
  },
  { required: ["keyManagementMode"] },
);

const clusterProperties = obj(
  {
    ...previous.clusterProperties.properties,
    ingress: obj(
      { type: co(str({ enum: ["Public", "Private", "Disabled"], default: "Public" })) },
      { default: {} },
    ),
    etcd: obj({ dataEncryption }),
    status: statusConditions,
    cryptoRestrictions: co(str({ enum: ["None", "FIPS"], default: "None" })),
  },
  { required: ["version", "platform"] },
);

const osDisk = obj({ ...previous.osDisk.properties, sizeGiB: co(int(64, 4095)) }, { default: {} });

const nodePoolProperties = obj(
  {
    ...previous.nodePoolProperties.properties,
    platform: obj({ ...first.nodePoolPlatform.properties, osDisk }, { required: ["vmSize"] }),
    status: statusConditions,
  },
  { required: ["platform"] },
);

// eslint-disable-next-line @typescript-eslint/no-unused-vars -- left out: the state is status.conditions here
const { condition, ...externalAuthFields } = first.externalAuthProperties.properties;
const externalAuthProperties = obj(
  { ...externalAuthFields, status: statusConditions },
  { required: ["issuer", "claim"] },
);

export const SCHEMAS = {
  cluster: trackedResource(clusterProperties),
  nodePool: trackedResource(nodePoolProperties),
  externalAuth: proxyResource(externalAuthProperties),
};
