/**
 * The bodies of 2024-06-10-preview, ARO HCP's first preview, after its OpenAPI
 * (../shared/docs/reference/hypershift-arohcp-api.md B.1, B.2): `readOnly` is "r", `createOnly`
 * is "r,c", anything else "r,c,u". Later versions build on these schemas, stating what they change.
 */
import { armId, claimText, condition, keyText, proxyResource, trackedResource } from "../arm-resource.ts";
import { arr, bool, co, int, map, obj, ro, str, type TypeOf } from "../schema.ts";

const versionText = str({ maxLength: 32 });

/** A cluster's version.id is create-only here; a node pool's is updatable; neither is required. */
export const clusterVersion = obj({ id: co(versionText), channelGroup: versionText });
export const nodePoolVersion = obj({ id: versionText, channelGroup: versionText });

const identities = obj(
  {
    controlPlaneOperators: map(str(), { maxProperties: 32 }),
    dataPlaneOperators: map(str(), { maxProperties: 32 }),
    serviceManagedIdentity: str(),
  },
  { required: ["controlPlaneOperators", "serviceManagedIdentity"] },
);

export const clusterPlatform = obj(
  {
    managedResourceGroup: co(str({ maxLength: 90, caseInsensitive: true })),
    subnetId: co(armId),
    outboundType: co(str({ enum: ["LoadBalancer"], default: "LoadBalancer" })),
    networkSecurityGroupId: co(armId),
    operatorsAuthentication: obj(
      { userAssignedIdentities: identities },
      { required: ["userAssignedIdentities"] },
    ),
    issuerUrl: ro(str()),
  },
  { required: ["subnetId", "networkSecurityGroupId", "operatorsAuthentication"] },
);

/** The key vault's name sits inside activeKey in this version only. */
const kms = obj(
  {
    activeKey: obj(
      { name: co(keyText), version: keyText, vaultName: co(keyText) },
      { required: ["name", "vaultName", "version"] },
    ),
  },
  { required: ["activeKey"] },
);

/** keyManagementMode: CustomerManaged, or PlatformManaged, the default. */
export const dataEncryption = obj({
  keyManagementMode: co(str({ enum: ["CustomerManaged", "PlatformManaged"], default: "PlatformManaged" })),
  customerManaged: obj({ encryptionType: co(str({ enum: ["KMS"], default: "KMS" })), kms }),
});

export const clusterProperties = obj(
  {
    provisioningState: ro(str()),
    version: clusterVersion,
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
    platform: clusterPlatform,
    autoscaling: obj({
      maxNodesTotal: int(0),
      maxPodGracePeriodSeconds: int(0),
      maxNodeProvisionTimeSeconds: int(0),
      podPriorityThreshold: int(),
    }),
    etcd: obj({ dataEncryption: { ...dataEncryption, default: {} } }, { default: {} }),
    nodeDrainTimeoutMinutes: int(0, 10080),
    clusterImageRegistry: obj(
      { state: co(str({ enum: ["Enabled", "Disabled"], default: "Enabled" })) },
      { default: {} },
    ),
  },
  { required: ["platform"] },
);

export const osDisk = obj(
  {
    sizeGiB: co(int(64)),
    diskStorageAccountType: co(str({ enum: ["Premium_LRS", "StandardSSD_LRS", "Standard_LRS"] })),
    encryptionSetId: co(armId),
  },
  { default: {} },
);

export const nodePoolPlatform = obj(
  {
    subnetId: co(armId),
    vmSize: co(str({ maxLength: 64 })),
    enableEncryptionAtHost: co(bool()),
    osDisk,
    availabilityZone: co(str()),
  },
  { required: ["vmSize"] },
);

export const nodePoolProperties = obj(
  {
    provisioningState: ro(str()),
    version: nodePoolVersion,
    platform: nodePoolPlatform,
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
  },
  { required: ["platform"] },
);

const client = obj(
  {
    component: obj(
      { name: claimText, authClientNamespace: str({ minLength: 1, maxLength: 63 }) },
      { required: ["name", "authClientNamespace"] },
    ),
    clientId: claimText,
    extraScopes: arr(claimText, { maxItems: 32 }),
    type: str({ enum: ["Confidential", "Public"] }),
  },
  { required: ["component", "clientId", "type"] },
);

const mappings = obj(
  {
    username: obj(
      {
        claim: claimText,
        prefix: str({ maxLength: 256 }),
        prefixPolicy: str({ enum: ["None", "Prefix", "NoPrefix"] }),
      },
      { required: ["claim"] },
    ),
    groups: obj({ claim: claimText, prefix: str({ maxLength: 256 }) }, { required: ["claim"] }),
  },
  { required: ["username"] },
);

// A rule's type may be left out: RequiredClaim, its one value, is ARO HCP's default (the CR
// mapping writes it), so only the claim it requires is required.
const rule = obj(
  {
    type: str({ enum: ["RequiredClaim"] }),
    requiredClaim: obj(
      { claim: claimText, requiredValue: claimText },
      { required: ["claim", "requiredValue"] },
    ),
  },
  { required: ["requiredClaim"] },
);

/** The read-only state is one `condition` here (later versions: status.conditions). */
export const externalAuthProperties = obj(
  {
    provisioningState: ro(str()),
    condition: ro(condition),
    issuer: obj(
      {
        url: str({ minLength: 1, maxLength: 512 }),
        audiences: arr(claimText, { minItems: 1, maxItems: 10 }),
        ca: str({ maxLength: 65536 }),
      },
      { required: ["url", "audiences"] },
    ),
    clients: arr(client, { maxItems: 20 }),
    claim: obj({ mappings, validationRules: arr(rule, { maxItems: 16 }) }, { required: ["mappings"] }),
  },
  { required: ["issuer", "claim"] },
);

export const SCHEMAS = {
  cluster: trackedResource(clusterProperties),
  nodePool: trackedResource(nodePoolProperties),
  externalAuth: proxyResource(externalAuthProperties),
};

export type ClusterProperties = TypeOf<typeof clusterProperties>;
export type ExternalAuthProperties = TypeOf<typeof externalAuthProperties>;
