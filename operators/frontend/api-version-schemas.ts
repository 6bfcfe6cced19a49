/**
 * The API versions served and what each looks like. The hub (the shape the frontend stores and
 * translates to CRs) is the newest served version, 2026-06-30-preview; 2024-06-10-preview converts
 * to and from it. Schemas follow ARO HCP's OpenAPI (../shared/docs/reference/hypershift-arohcp-api.md
 * B.1, B.2): `readOnly` is "r", `createOnly` is "r,c", anything else "r,c,u".
 */
import type { ObjectSchema, Schema, StringSchema } from "./body-schema.ts";
import { isObject, type JsonObject } from "./body-schema.ts";

export const API_VERSIONS = ["2024-06-10-preview", "2026-06-30-preview"] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const HUB_VERSION: ApiVersion = "2026-06-30-preview";
export const SUBSCRIPTION_API_VERSION = "2.0";

export function isServedVersion(v: string | undefined): v is ApiVersion {
  return API_VERSIONS.includes(v as ApiVersion);
}

const str = (extra: Omit<StringSchema, "type"> = {}): StringSchema => ({ type: "string", ...extra });
const ro = (s: Schema): Schema => ({ ...s, readOnly: true });
const co = <S extends Schema>(s: S): S => ({ ...s, createOnly: true });
const obj = (properties: Record<string, Schema>, extra: Partial<ObjectSchema> = {}): ObjectSchema => ({
  type: "object",
  properties,
  ...extra,
});
const int = (minimum?: number, maximum?: number): Schema => ({ type: "integer", minimum, maximum });
const strings: Schema = { type: "array", items: str() };

const conditions: Schema = ro(
  obj({
    conditions: {
      type: "array",
      maxItems: 10,
      items: obj({ type: str(), status: str(), lastTransitionTime: str(), reason: str(), message: str() }),
    },
  }),
);

const versionProfile = (idRequired: boolean, idCreateOnly: boolean): ObjectSchema =>
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

function kmsSchema(o: ClusterOptions): ObjectSchema {
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

function etcdSchema(o: ClusterOptions): ObjectSchema {
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

function clusterProperties(o: ClusterOptions): ObjectSchema {
  const identities = obj(
    {
      controlPlaneOperators: { type: "map", values: str(), maxProperties: 32 },
      dataPlaneOperators: { type: "map", values: str(), maxProperties: 32 },
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
        authorizedCidrs: { type: "array", items: str(), maxItems: 500 },
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
            imageDigestMirrors: {
              type: "array",
              maxItems: 240,
              items: obj({ source: str(), mirrors: strings }, { required: ["source", "mirrors"] }),
            },
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

function nodePoolProperties(o: ClusterOptions): ObjectSchema {
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
          enableEncryptionAtHost: co({ type: "boolean" }),
          osDisk,
          availabilityZone: co(str()),
        },
        { required: ["vmSize"] },
      ),
      replicas: int(0),
      autoRepair: co({ type: "boolean" }),
      autoScaling: obj({ min: int(0), max: int(0) }),
      labels: { type: "array", items: obj({ key: str(), value: str() }, { required: ["key"] }) },
      taints: {
        type: "array",
        items: obj(
          {
            key: str({ minLength: 1, maxLength: 316 }),
            value: str({ maxLength: 63 }),
            effect: str({ enum: ["NoSchedule", "PreferNoSchedule", "NoExecute"] }),
          },
          { required: ["key", "effect"] },
        ),
      },
      nodeDrainTimeoutMinutes: int(0, 10080),
      ...(o.v2026 ? { status: conditions } : {}),
    },
    { required: ["platform"] },
  );
}

const identity: Schema = obj({
  type: str({ enum: ["None", "SystemAssigned", "UserAssigned", "SystemAssigned,UserAssigned"] }),
  userAssignedIdentities: { type: "map", values: { type: "any" } },
  principalId: ro(str()),
  tenantId: ro(str()),
});

/** The whole ARM resource (TrackedResource + identity + properties). */
function envelope(properties: ObjectSchema): ObjectSchema {
  return obj(
    {
      id: ro(str()),
      name: ro(str()),
      type: ro(str()),
      location: co(str()),
      tags: { type: "map", values: str({ maxLength: 256 }), maxProperties: 50 },
      systemData: ro({ type: "any" }),
      identity,
      properties,
    },
    { required: ["location", "properties"] },
  );
}

export interface VersionAdapter {
  cluster: ObjectSchema;
  nodePool: ObjectSchema;
  /** Versioned properties → hub properties (clusters only differ). */
  clusterToHub(p: JsonObject): JsonObject;
  clusterFromHub(p: JsonObject): JsonObject;
}

const identityAdapter = (p: JsonObject): JsonObject => p;

type Kms = { vaultName?: string; activeKey?: JsonObject } & JsonObject;

/** Returns the kms object of properties.etcd.dataEncryption.customerManaged, if any (a copy's). */
function kmsOf(p: JsonObject): Kms | undefined {
  const etcd = p["etcd"];
  if (!isObject(etcd) || !isObject(etcd["dataEncryption"])) return undefined;
  const cm = etcd["dataEncryption"]["customerManaged"];
  return isObject(cm) && isObject(cm["kms"]) ? cm["kms"] : undefined;
}

/** 2024-06-10-preview kept the vault name inside activeKey; later versions moved it up to kms. */
function moveVaultName(p: JsonObject, toHub: boolean): JsonObject {
  const out = structuredClone(p);
  const kms = kmsOf(out);
  if (!kms) return out;
  if (toHub && isObject(kms.activeKey) && kms.activeKey["vaultName"] !== undefined) {
    kms.vaultName = kms.activeKey["vaultName"] as string;
    delete kms.activeKey["vaultName"];
  } else if (!toHub && kms.vaultName !== undefined) {
    kms.activeKey = { ...(kms.activeKey ?? {}), vaultName: kms.vaultName };
    delete kms.vaultName;
  }
  return out;
}

export const VERSIONS: Record<ApiVersion, VersionAdapter> = {
  "2024-06-10-preview": {
    cluster: envelope(clusterProperties({ v2026: false })),
    nodePool: envelope(nodePoolProperties({ v2026: false })),
    clusterToHub: (p) => moveVaultName(p, true),
    clusterFromHub: (p) => moveVaultName(p, false),
  },
  "2026-06-30-preview": {
    cluster: envelope(clusterProperties({ v2026: true })),
    nodePool: envelope(nodePoolProperties({ v2026: true })),
    clusterToHub: identityAdapter,
    clusterFromHub: identityAdapter,
  },
};
