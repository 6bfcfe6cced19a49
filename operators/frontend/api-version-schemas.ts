/**
 * The API versions served and what each one's bodies look like. The hub (the shape the frontend
 * stores and maps to CRs) is the newest served version, 2026-06-30-preview; 2024-06-10-preview
 * converts to and from it (hub-conversion.ts). Schemas follow ARO HCP's OpenAPI (../shared/docs/reference/hypershift-arohcp-api.md
 * B.1, B.2): `readOnly` is "r", `createOnly` is "r,c", anything else "r,c,u".
 */
import { anyValue, arr, bool, co, int, map, obj, ro, str, type TypeOf } from "./body-schema.ts";

export const API_VERSIONS = ["2024-06-10-preview", "2026-06-30-preview"] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const HUB_VERSION: ApiVersion = "2026-06-30-preview";
export const SUBSCRIPTION_API_VERSION = "2.0";

export function isServedVersion(v: string | undefined): v is ApiVersion {
  return API_VERSIONS.some((served) => served === v);
}

const conditions = ro(
  obj({
    conditions: arr(
      obj({ type: str(), status: str(), lastTransitionTime: str(), reason: str(), message: str() }),
      { maxItems: 10 },
    ),
  }),
);

const versionProfile = (idRequired: boolean, idCreateOnly: boolean) =>
  obj(
    {
      id: idCreateOnly ? co(str({ maxLength: 32 })) : str({ maxLength: 32 }),
      channelGroup: str({ maxLength: 32 }),
    },
    { required: idRequired ? ["id"] : [] },
  );

interface ClusterOptions {
  v2026: boolean;
}

function kmsSchema(o: ClusterOptions) {
  const activeKey = obj(
    {
      name: co(str()),
      version: str(),
      ...(o.v2026 ? {} : { vaultName: co(str()) }),
    },
    { required: o.v2026 ? ["name", "version"] : ["name", "vaultName", "version"] },
  );
  return obj(
    {
      ...(o.v2026 ? { vaultName: co(str()) } : {}),
      visibility: co(str({ enum: ["Public", "Private"] })),
      activeKey,
    },
    { required: o.v2026 ? ["vaultName", "activeKey"] : ["activeKey"] },
  );
}

function etcdSchema(o: ClusterOptions) {
  const modes = o.v2026 ? ["CustomerManaged"] : ["CustomerManaged", "PlatformManaged"];
  const dataEncryption = obj(
    {
      keyManagementMode: co(str({ enum: modes, ...(o.v2026 ? {} : { default: "PlatformManaged" }) })),
      customerManaged: obj({
        encryptionType: co(str({ enum: ["KMS"], default: "KMS" })),
        kms: kmsSchema(o),
      }),
    },
    { required: o.v2026 ? ["keyManagementMode"] : [] },
  );
  return obj(
    { dataEncryption: o.v2026 ? dataEncryption : { ...dataEncryption, default: {} } },
    o.v2026 ? {} : { default: {} },
  );
}

function clusterProperties(o: ClusterOptions) {
  const identities = obj(
    {
      controlPlaneOperators: map(str(), { maxProperties: 32 }),
      dataPlaneOperators: map(str(), { maxProperties: 32 }),
      serviceManagedIdentity: str(),
    },
    { required: ["controlPlaneOperators", "serviceManagedIdentity"] },
  );
  const platform = obj(
    {
      managedResourceGroup: co(str({ maxLength: 90 })),
      subnetId: co(str()),
      ...(o.v2026 ? { vnetIntegrationSubnetId: co(str()) } : {}),
      outboundType: co(str({ enum: ["LoadBalancer"], default: "LoadBalancer" })),
      networkSecurityGroupId: co(str()),
      operatorsAuthentication: obj(
        { userAssignedIdentities: identities },
        { required: ["userAssignedIdentities"] },
      ),
      issuerUrl: ro(str()),
    },
    {
      required: [
        "subnetId",
        "networkSecurityGroupId",
        "operatorsAuthentication",
        ...(o.v2026 ? ["vnetIntegrationSubnetId"] : []),
      ],
    },
  );
  return obj(
    {
      provisioningState: ro(str()),
      version: versionProfile(o.v2026, !o.v2026),
      dns: obj({ baseDomain: ro(str()), baseDomainPrefix: co(str({ maxLength: 15 })) }),
      network: obj({
        networkType: co(str({ enum: ["OVNKubernetes", "Other"] })),
        podCidr: co(str()),
        serviceCidr: co(str()),
        machineCidr: co(str()),
        hostPrefix: co(int()),
      }),
      console: ro(obj({ url: str() })),
      api: obj({
        url: ro(str()),
        visibility: co(str({ enum: ["Public", "Private"] })),
        authorizedCidrs: arr(str({ format: "cidr", maxLength: 43 }), { maxItems: 500 }),
      }),
      ...(o.v2026
        ? {
            ingress: obj(
              { type: co(str({ enum: ["Public", "Private", "Disabled"], default: "Public" })) },
              { default: {} },
            ),
          }
        : {}),
      platform,
      autoscaling: obj({
        maxNodesTotal: int(0),
        maxPodGracePeriodSeconds: int(0),
        maxNodeProvisionTimeSeconds: int(0),
        podPriorityThreshold: int(),
      }),
      etcd: etcdSchema(o),
      ...(o.v2026
        ? {
            imageDigestMirrors: arr(
              obj({ source: str(), mirrors: arr(str()) }, { required: ["source", "mirrors"] }),
              { maxItems: 240 },
            ),
          }
        : {}),
      nodeDrainTimeoutMinutes: int(0, 10080),
      clusterImageRegistry: obj(
        { state: co(str({ enum: ["Enabled", "Disabled"], default: "Enabled" })) },
        { default: {} },
      ),
      ...(o.v2026
        ? { status: conditions, cryptoRestrictions: co(str({ enum: ["None", "FIPS"], default: "None" })) }
        : {}),
    },
    { required: o.v2026 ? ["version", "platform"] : ["platform"] },
  );
}

function nodePoolProperties(o: ClusterOptions) {
  const osDisk = obj(
    {
      sizeGiB: co(int(64, o.v2026 ? 4095 : undefined)),
      diskStorageAccountType: co(str({ enum: ["Premium_LRS", "StandardSSD_LRS", "Standard_LRS"] })),
      encryptionSetId: co(str()),
      ...(o.v2026 ? { diskType: co(str({ enum: ["Managed", "Ephemeral"], default: "Managed" })) } : {}),
    },
    { default: {} },
  );
  return obj(
    {
      provisioningState: ro(str()),
      version: versionProfile(o.v2026, !o.v2026),
      platform: obj(
        {
          subnetId: co(str()),
          vmSize: co(str({ maxLength: 64 })),
          enableEncryptionAtHost: co(bool()),
          osDisk,
          availabilityZone: co(str()),
        },
        { required: ["vmSize"] },
      ),
      replicas: int(0),
      autoRepair: co(bool()),
      autoScaling: obj({ min: int(0), max: int(0) }),
      labels: arr(obj({ key: str(), value: str() }, { required: ["key"] })),
      taints: arr(
        obj(
          {
            key: str({ minLength: 1, maxLength: 316 }),
            value: str({ maxLength: 63 }),
            effect: str({ enum: ["NoSchedule", "PreferNoSchedule", "NoExecute"] }),
          },
          { required: ["key", "effect"] },
        ),
      ),
      nodeDrainTimeoutMinutes: int(0, 10080),
      ...(o.v2026 ? { status: conditions } : {}),
    },
    { required: ["platform"] },
  );
}

const identity = obj({
  type: str({ enum: ["None", "SystemAssigned", "UserAssigned", "SystemAssigned,UserAssigned"] }),
  userAssignedIdentities: map(anyValue()),
  principalId: ro(str()),
  tenantId: ro(str()),
});

/** An Azure region, as its name ("eastus") or display name ("East US"); never blank. */
const LOCATION = /^[A-Za-z0-9]+( [A-Za-z0-9]+)*$/;
const LOCATION_TEXT = "is not an Azure location such as 'eastus' or 'East US'";
/** ARM's tag name rules: at most 512 characters, none of < > % & \ ? / (values: 256, 50 tags). */
const TAG_NAME = {
  maxLength: 512,
  forbidden: /[<>%&\\?/]|^$/,
  forbiddenText: "is empty or contains one of the characters < > % & \\ ? /",
};

/** The whole ARM resource (TrackedResource + identity + properties). */
function envelope<P extends ReturnType<typeof clusterProperties> | ReturnType<typeof nodePoolProperties>>(
  properties: P,
) {
  return obj(
    {
      id: ro(str()),
      name: ro(str()),
      type: ro(str()),
      location: co(str({ pattern: LOCATION, patternText: LOCATION_TEXT, maxLength: 64 })),
      tags: map(str({ maxLength: 256 }), { maxProperties: 50, keys: TAG_NAME }),
      systemData: ro(anyValue()),
      identity,
      properties,
    },
    { required: ["location", "properties"] },
  );
}

const clusterSchema = (o: ClusterOptions) => envelope(clusterProperties(o));
const nodePoolSchema = (o: ClusterOptions) => envelope(nodePoolProperties(o));

export type ClusterSchema = ReturnType<typeof clusterSchema>;
export type NodePoolSchema = ReturnType<typeof nodePoolSchema>;
/** A cluster body of any served version, as read (every field optional). */
export type ClusterBody = TypeOf<ClusterSchema>;
export type ClusterProperties = NonNullable<ClusterBody["properties"]>;
export type NodePoolBody = TypeOf<NodePoolSchema>;
export type NodePoolProperties = NonNullable<NodePoolBody["properties"]>;
export type Identity = NonNullable<ClusterBody["identity"]>;

export const SCHEMAS: Record<ApiVersion, { cluster: ClusterSchema; nodePool: NodePoolSchema }> = {
  "2024-06-10-preview": {
    cluster: clusterSchema({ v2026: false }),
    nodePool: nodePoolSchema({ v2026: false }),
  },
  "2026-06-30-preview": {
    cluster: clusterSchema({ v2026: true }),
    nodePool: nodePoolSchema({ v2026: true }),
  },
};
