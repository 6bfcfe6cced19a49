/**
 * The API versions served and what each one's bodies look like. The hub (the shape the frontend
 * stores and maps to CRs) is 2026-06-30-preview, the newest ARO HCP serves; every other version
 * converts to and from it (hub-conversion.ts). 2026-09-01-preview, the newest in ARO HCP's spec,
 * has the hub's cluster and node pool shapes. Schemas follow ARO HCP's OpenAPI of each version
 * (../shared/docs/reference/hypershift-arohcp-api.md B.1, B.2): `readOnly` is "r", `createOnly` is
 * "r,c", anything else "r,c,u".
 */
import { anyValue, arr, bool, co, int, map, obj, ro, str, type TypeOf } from "./body-schema.ts";

export const API_VERSIONS = [
  "2024-06-10-preview",
  "2025-12-23-preview",
  "2026-06-30-preview",
  "2026-09-01-preview",
] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const HUB_VERSION: ApiVersion = "2026-06-30-preview";
export const SUBSCRIPTION_API_VERSION = "2.0";

export function isServedVersion(v: string | undefined): v is ApiVersion {
  return API_VERSIONS.some((served) => served === v);
}

/** What changed between the versions, by the version that brought it. */
interface Features {
  /**
   * 2025-12-23-preview: version.id required (and a cluster's updatable), the VNet integration
   * subnet, kms.vaultName and kms.visibility beside activeKey (2024-06-10-preview had
   * activeKey.vaultName), image digest mirrors, the OS disk type.
   */
  since2025: boolean;
  /**
   * 2026-06-30-preview: ingress, cryptoRestrictions, status conditions, etcd keys customer-managed
   * only (keyManagementMode required), OS disks of at most 4095 GiB.
   */
  since2026: boolean;
}

const FEATURES: Record<ApiVersion, Features> = {
  "2024-06-10-preview": { since2025: false, since2026: false },
  "2025-12-23-preview": { since2025: true, since2026: false },
  "2026-06-30-preview": { since2025: true, since2026: true },
  "2026-09-01-preview": { since2025: true, since2026: true },
};

const conditions = ro(
  obj({
    conditions: arr(
      obj({ type: str(), status: str(), lastTransitionTime: str(), reason: str(), message: str() }),
      { maxItems: 10 },
    ),
  }),
);

/** A cluster's version.id is create-only in 2024-06-10-preview; a node pool's is always updatable. */
const versionProfile = (o: Features, idCreateOnly: boolean) =>
  obj(
    {
      id: idCreateOnly ? co(str({ maxLength: 32 })) : str({ maxLength: 32 }),
      channelGroup: str({ maxLength: 32 }),
    },
    { required: o.since2025 ? ["id"] : [] },
  );

const keyText = () => str({ minLength: 1, maxLength: 255 });
/** An Azure resource ID: the same resource in any casing. */
const armId = str({ caseInsensitive: true });

function kmsSchema(o: Features) {
  const activeKey = obj(
    {
      name: co(keyText()),
      version: keyText(),
      ...(o.since2025 ? {} : { vaultName: co(keyText()) }),
    },
    { required: o.since2025 ? ["name", "version"] : ["name", "vaultName", "version"] },
  );
  return obj(
    {
      ...(o.since2025
        ? { vaultName: co(keyText()), visibility: co(str({ enum: ["Public", "Private"] })) }
        : {}),
      activeKey,
    },
    { required: o.since2025 ? ["vaultName", "visibility", "activeKey"] : ["activeKey"] },
  );
}

/**
 * keyManagementMode: CustomerManaged or PlatformManaged (the default) until 2026-06-30-preview,
 * which knows CustomerManaged only and requires it whenever dataEncryption is sent.
 */
function etcdSchema(o: Features) {
  const modes = o.since2026 ? ["CustomerManaged"] : ["CustomerManaged", "PlatformManaged"];
  const dataEncryption = obj(
    {
      keyManagementMode: co(str({ enum: modes, ...(o.since2026 ? {} : { default: "PlatformManaged" }) })),
      customerManaged: obj({
        encryptionType: co(str({ enum: ["KMS"], default: "KMS" })),
        kms: kmsSchema(o),
      }),
    },
    { required: o.since2026 ? ["keyManagementMode"] : [] },
  );
  return obj(
    { dataEncryption: o.since2026 ? dataEncryption : { ...dataEncryption, default: {} } },
    o.since2026 ? {} : { default: {} },
  );
}

function clusterProperties(o: Features) {
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
      managedResourceGroup: co(str({ maxLength: 90, caseInsensitive: true })),
      subnetId: co(armId),
      ...(o.since2025 ? { vnetIntegrationSubnetId: co(armId) } : {}),
      outboundType: co(str({ enum: ["LoadBalancer"], default: "LoadBalancer" })),
      networkSecurityGroupId: co(armId),
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
        ...(o.since2025 ? ["vnetIntegrationSubnetId"] : []),
      ],
    },
  );
  return obj(
    {
      provisioningState: ro(str()),
      version: versionProfile(o, !o.since2025),
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
      ...(o.since2026
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
      ...(o.since2025
        ? {
            imageDigestMirrors: arr(
              obj(
                { source: str({ maxLength: 255 }), mirrors: arr(str(), { minItems: 1, maxItems: 255 }) },
                { required: ["source", "mirrors"] },
              ),
              { maxItems: 240 },
            ),
          }
        : {}),
      nodeDrainTimeoutMinutes: int(0, 10080),
      clusterImageRegistry: obj(
        { state: co(str({ enum: ["Enabled", "Disabled"], default: "Enabled" })) },
        { default: {} },
      ),
      ...(o.since2026
        ? { status: conditions, cryptoRestrictions: co(str({ enum: ["None", "FIPS"], default: "None" })) }
        : {}),
    },
    { required: o.since2025 ? ["version", "platform"] : ["platform"] },
  );
}

function nodePoolProperties(o: Features) {
  const osDisk = obj(
    {
      sizeGiB: co(int(64, o.since2026 ? 4095 : undefined)),
      diskStorageAccountType: co(str({ enum: ["Premium_LRS", "StandardSSD_LRS", "Standard_LRS"] })),
      encryptionSetId: co(armId),
      ...(o.since2025 ? { diskType: co(str({ enum: ["Managed", "Ephemeral"], default: "Managed" })) } : {}),
    },
    { default: {} },
  );
  return obj(
    {
      provisioningState: ro(str()),
      version: versionProfile(o, false),
      platform: obj(
        {
          subnetId: co(armId),
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
      ...(o.since2026 ? { status: conditions } : {}),
    },
    { required: ["platform"] },
  );
}
const conditionSchema = () =>
  obj({ type: str(), status: str(), lastTransitionTime: str(), reason: str(), message: str() });

const claimText = () => str({ minLength: 1, maxLength: 256 });

/**
 * An external auth's properties: the same writable fields in every version; until
 * 2026-06-30-preview the read-only state was one `condition`, since then `status.conditions` as
 * the cluster's.
 */
function externalAuthProperties(o: Features) {
  const client = obj(
    {
      component: obj(
        { name: claimText(), authClientNamespace: str({ minLength: 1, maxLength: 63 }) },
        { required: ["name", "authClientNamespace"] },
      ),
      clientId: claimText(),
      extraScopes: arr(claimText(), { maxItems: 32 }),
      type: str({ enum: ["Confidential", "Public"] }),
    },
    { required: ["component", "clientId", "type"] },
  );
  const mappings = obj(
    {
      username: obj(
        {
          claim: claimText(),
          prefix: str({ maxLength: 256 }),
          prefixPolicy: str({ enum: ["None", "Prefix", "NoPrefix"] }),
        },
        { required: ["claim"] },
      ),
      groups: obj({ claim: claimText(), prefix: str({ maxLength: 256 }) }, { required: ["claim"] }),
    },
    { required: ["username"] },
  );
  // A rule's type may be left out: RequiredClaim, its one value, is ARO HCP's default (the CR
  // mapping writes it), so only the claim it requires is required.
  const rule = obj(
    {
      type: str({ enum: ["RequiredClaim"] }),
      requiredClaim: obj(
        { claim: claimText(), requiredValue: claimText() },
        { required: ["claim", "requiredValue"] },
      ),
    },
    { required: ["requiredClaim"] },
  );
  return obj(
    {
      provisioningState: ro(str()),
      ...(o.since2026 ? { status: conditions } : { condition: ro(conditionSchema()) }),
      issuer: obj(
        {
          url: str({ minLength: 1, maxLength: 512 }),
          audiences: arr(claimText(), { minItems: 1, maxItems: 10 }),
          ca: str({ maxLength: 65536 }),
        },
        { required: ["url", "audiences"] },
      ),
      clients: arr(client, { maxItems: 20 }),
      claim: obj({ mappings, validationRules: arr(rule, { maxItems: 16 }) }, { required: ["mappings"] }),
    },
    { required: ["issuer", "claim"] },
  );
}

/** ManagedServiceIdentity: what a request sends of an assigned identity is its ID, the key. */
const identity = obj({
  type: str({ enum: ["None", "SystemAssigned", "UserAssigned", "SystemAssigned,UserAssigned"] }),
  userAssignedIdentities: map(obj({ principalId: ro(str()), clientId: ro(str()) })),
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

/** An external auth is a ProxyResource: no location, tags or identity. */
const externalAuthSchema = (o: Features) =>
  obj(
    {
      id: ro(str()),
      name: ro(str()),
      type: ro(str()),
      systemData: ro(anyValue()),
      properties: externalAuthProperties(o),
    },
    { required: ["properties"] },
  );

const clusterSchema = (o: Features) => envelope(clusterProperties(o));
const nodePoolSchema = (o: Features) => envelope(nodePoolProperties(o));

export type ClusterSchema = ReturnType<typeof clusterSchema>;
export type NodePoolSchema = ReturnType<typeof nodePoolSchema>;
/** A cluster body of any served version, as read (every field optional). */
export type ClusterBody = TypeOf<ClusterSchema>;
export type ClusterProperties = NonNullable<ClusterBody["properties"]>;
export type NodePoolBody = TypeOf<NodePoolSchema>;
export type NodePoolProperties = NonNullable<NodePoolBody["properties"]>;
export type Identity = NonNullable<ClusterBody["identity"]>;
export type ExternalAuthSchema = ReturnType<typeof externalAuthSchema>;
/**
 * Every version's external auth properties, read-only state of both shapes included. A
 * ProxyResource has no version, location, tags or identity: `undefined` says so to the code that
 * reads those of any resource.
 */
export type ExternalAuthProperties = NonNullable<TypeOf<ExternalAuthSchema>["properties"]> & {
  condition?: TypeOf<ReturnType<typeof conditionSchema>>;
  status?: TypeOf<typeof conditions>;
  version?: undefined;
};
export type ExternalAuthBody = Omit<TypeOf<ExternalAuthSchema>, "properties"> & {
  properties?: ExternalAuthProperties;
  location?: undefined;
  tags?: undefined;
  identity?: undefined;
};

const schemasOf = (v: ApiVersion) => ({
  cluster: clusterSchema(FEATURES[v]),
  nodePool: nodePoolSchema(FEATURES[v]),
  externalAuth: externalAuthSchema(FEATURES[v]),
});

export const SCHEMAS: Record<
  ApiVersion,
  { cluster: ClusterSchema; nodePool: NodePoolSchema; externalAuth: ExternalAuthSchema }
> = {
  "2024-06-10-preview": schemasOf("2024-06-10-preview"),
  "2025-12-23-preview": schemasOf("2025-12-23-preview"),
  "2026-06-30-preview": schemasOf("2026-06-30-preview"),
  "2026-09-01-preview": schemasOf("2026-09-01-preview"),
};
