/**
 * The internal model: what the service means by a cluster, a node pool and an external auth,
 * whatever api-version a request spoke. Every api-version converts its bodies to and from it
 * (api/v*), and the CR mapping (mapping/) reads and writes only it. It holds every field any
 * served version has, in one place (a 2024-06-10-preview key vault name sits beside its key, as
 * later versions have it), with the defaults a new resource gets for fields its request's version
 * does not know, so a cluster created through any version is the same cluster. Its required fields
 * are those every version requires, or that the service always fills.
 */
import { armId, statusConditions } from "./arm-resource.ts";
import { applyDefaults } from "./schema-walks.ts";
import { arr, bool, int, map, obj, ro, str, type Complete } from "./schema.ts";
import type { JsonObject } from "./json.ts";

const versionProfile = obj({ id: str(), channelGroup: str() });

const operatorIdentities = obj(
  { controlPlaneOperators: map(str()), dataPlaneOperators: map(str()), serviceManagedIdentity: str() },
  { required: ["controlPlaneOperators", "serviceManagedIdentity"] },
);

const clusterPlatform = obj(
  {
    managedResourceGroup: str(),
    subnetId: armId,
    vnetIntegrationSubnetId: armId,
    outboundType: str({ enum: ["LoadBalancer"], default: "LoadBalancer" }),
    networkSecurityGroupId: armId,
    operatorsAuthentication: obj(
      { userAssignedIdentities: operatorIdentities },
      { required: ["userAssignedIdentities"] },
    ),
    issuerUrl: ro(str()),
  },
  { required: ["subnetId", "networkSecurityGroupId", "operatorsAuthentication"] },
);

const kms = obj(
  {
    vaultName: str(),
    visibility: str({ enum: ["Public", "Private"] }),
    activeKey: obj({ name: str(), version: str() }, { required: ["name", "version"] }),
  },
  { required: ["vaultName", "activeKey"] },
);

const etcd = obj({
  dataEncryption: obj({
    // CustomerManaged or PlatformManaged (2026-06-30-preview and later know the first only).
    keyManagementMode: str(),
    customerManaged: obj({ encryptionType: str({ enum: ["KMS"], default: "KMS" }), kms }),
  }),
});

const cluster = obj(
  {
    provisioningState: ro(str()),
    version: versionProfile,
    dns: obj({ baseDomain: ro(str()), baseDomainPrefix: str() }),
    network: obj({
      networkType: str({ enum: ["OVNKubernetes", "Other"] }),
      podCidr: str(),
      serviceCidr: str(),
      machineCidr: str(),
      hostPrefix: int(),
    }),
    console: ro(obj({ url: str() })),
    api: obj({
      url: ro(str()),
      visibility: str({ enum: ["Public", "Private"] }),
      authorizedCidrs: arr(str()),
    }),
    ingress: obj(
      { type: str({ enum: ["Public", "Private", "Disabled"], default: "Public" }) },
      { default: {} },
    ),
    platform: clusterPlatform,
    autoscaling: obj({
      maxNodesTotal: int(),
      maxPodGracePeriodSeconds: int(),
      maxNodeProvisionTimeSeconds: int(),
      podPriorityThreshold: int(),
    }),
    etcd,
    imageDigestMirrors: arr(obj({ source: str(), mirrors: arr(str()) }, { required: ["source", "mirrors"] })),
    nodeDrainTimeoutMinutes: int(),
    clusterImageRegistry: obj(
      { state: str({ enum: ["Enabled", "Disabled"], default: "Enabled" }) },
      { default: {} },
    ),
    status: statusConditions,
    cryptoRestrictions: str({ enum: ["None", "FIPS"], default: "None" }),
  },
  { required: ["platform"] },
);

const nodePool = obj(
  {
    provisioningState: ro(str()),
    version: versionProfile,
    platform: obj(
      {
        subnetId: armId,
        vmSize: str(),
        enableEncryptionAtHost: bool(),
        osDisk: obj(
          {
            sizeGiB: int(),
            diskStorageAccountType: str({ enum: ["Premium_LRS", "StandardSSD_LRS", "Standard_LRS"] }),
            encryptionSetId: armId,
            diskType: str({ enum: ["Managed", "Ephemeral"], default: "Managed" }),
          },
          { default: {} },
        ),
        availabilityZone: str(),
      },
      { required: ["vmSize"] },
    ),
    replicas: int(),
    autoRepair: bool(),
    autoScaling: obj({ min: int(), max: int() }),
    labels: arr(obj({ key: str(), value: str() }, { required: ["key"] })),
    taints: arr(
      obj(
        { key: str(), value: str(), effect: str({ enum: ["NoSchedule", "PreferNoSchedule", "NoExecute"] }) },
        { required: ["key", "effect"] },
      ),
    ),
    nodeDrainTimeoutMinutes: int(),
    status: statusConditions,
  },
  { required: ["platform"] },
);

const externalAuthClient = obj(
  {
    component: obj(
      { name: str(), authClientNamespace: str() },
      { required: ["name", "authClientNamespace"] },
    ),
    clientId: str(),
    extraScopes: arr(str()),
    type: str({ enum: ["Confidential", "Public"] }),
  },
  { required: ["component", "clientId", "type"] },
);

const claim = obj(
  {
    mappings: obj(
      {
        username: obj(
          { claim: str(), prefix: str(), prefixPolicy: str({ enum: ["None", "Prefix", "NoPrefix"] }) },
          { required: ["claim"] },
        ),
        groups: obj({ claim: str(), prefix: str() }, { required: ["claim"] }),
      },
      { required: ["username"] },
    ),
    validationRules: arr(
      obj(
        {
          type: str({ enum: ["RequiredClaim"] }),
          requiredClaim: obj(
            { claim: str(), requiredValue: str() },
            { required: ["claim", "requiredValue"] },
          ),
        },
        { required: ["requiredClaim"] },
      ),
    ),
  },
  { required: ["mappings"] },
);

const externalAuth = obj(
  {
    provisioningState: ro(str()),
    status: statusConditions,
    issuer: obj({ url: str(), audiences: arr(str()), ca: str() }, { required: ["url", "audiences"] }),
    clients: arr(externalAuthClient),
    claim,
  },
  { required: ["issuer", "claim"] },
);

/** The internal model's shapes: what a stored resource's properties can hold. */
export const INTERNAL_SCHEMAS = { cluster, nodePool, externalAuth };

/** The model's types: its required fields are required (`Complete`, schema.ts). */
export type ClusterProperties = Complete<typeof cluster>;
export type NodePoolProperties = Complete<typeof nodePool>;
/** A ProxyResource has no version: `undefined` says so to code that reads that of any resource. */
export type ExternalAuthProperties = Complete<typeof externalAuth> & { version?: undefined };
export type InternalProperties = ClusterProperties | NodePoolProperties | ExternalAuthProperties;

/** The properties of each resource kind. */
export interface PropertiesOf {
  cluster: ClusterProperties;
  nodePool: NodePoolProperties;
  externalAuth: ExternalAuthProperties;
}
export type InternalKind = keyof PropertiesOf;

/** A resource of the internal model: ARM's envelope and the properties of its kind. */
export interface InternalResource<P extends InternalProperties = InternalProperties> {
  id: string;
  name: string;
  type: string;
  location: string;
  tags?: Record<string, string>;
  systemData?: JsonObject;
  identity?: JsonObject;
  properties: P;
}

/**
 * A new resource's properties with the internal model's defaults for the fields its request's
 * version does not know (a cluster's ingress.type and cryptoRestrictions, a node pool's
 * osDisk.diskType): as ARO HCP builds every new resource on its internal model's defaults, a
 * cluster created through 2024-06-10-preview shows ingress.type Public in 2026-06-30-preview.
 */
export function withInternalDefaults<P extends InternalProperties>(p: P, kind: InternalKind): P {
  // Defaults are values of the model's own fields: the properties stay properties of their kind.
  return (applyDefaults(INTERNAL_SCHEMAS[kind], p) ?? p) as P;
}

/**
 * A body's properties as the internal model's type, once `checkRequired` has checked them against
 * the schema of the version that read them: every version requires at least what the model does.
 */
export function checkedProperties<P extends InternalProperties>(properties: object): P {
  return properties as P;
}
