/**
 * ARM resources (in the hub version's shape) to CRs and back. Properties with a CR field go to
 * the spec; the rest (ARM-only ones, and those no field holds yet) and the envelope
 * (tags, systemData, identity) go to annotations, so GET returns what was sent. Read-only
 * properties come from the CR's status: provisioningState (provisioning-state.ts), API and console URLs,
 * base domain, conditions.
 */
import { wantsSingleReplica } from "./preview-features.ts";
import {
  API_VERSION,
  HCP_CLUSTER_KIND,
  type ExternalAuth,
  NODE_POOL_KIND,
  type AzureNodePoolPlatform,
  type ChannelGroup,
  type HcpCluster,
  type KeyManagementMode,
  type KmsEncryptionSpec,
  type NodePool,
  type OsDiskType,
  type VersionSpec,
} from "../api/v1alpha1/index.ts";
import {
  HUB_VERSION,
  SCHEMAS,
  type ClusterProperties,
  type NodePoolProperties,
} from "./api-version-schemas.ts";
import { isObject, project, shorten, type JsonObject } from "./body-schema.ts";
import { fieldErrors, type FieldError } from "./errors.ts";
import type { ArmResource } from "./hub-conversion.ts";
import {
  ANNOTATIONS,
  LABELS,
  defaultDnsPrefix,
  defaultManagedResourceGroup,
  resourceGroupLabel,
} from "./names.ts";
import { identityWithDetails } from "./managed-identities.ts";
import { resourceState } from "./provisioning-state.ts";
import { normalizeLocation, resourceType, type ResourceId, type ResourceKind } from "./resource-id.ts";

/** Every CR an ARM resource maps to. */
export type ArmCR = HcpCluster | NodePool | ExternalAuth;

export function isNodePool(cr: ArmCR): cr is NodePool {
  return "clusterRef" in cr.spec && "platform" in cr.spec;
}

export function isExternalAuth(cr: ArmCR): cr is ExternalAuth {
  return "issuer" in cr.spec;
}

/** What the CR gets besides the resource: where it lives and who asked. */
export interface ToCRContext {
  id: ResourceId;
  namespace: string;
  name: string;
  /** The customer's tenant (X-Ms-Home-Tenant-Id or the subscription's). */
  tenantId?: string;
  /** Annotations of this request: operation, correlation IDs. */
  annotations: Record<string, string>;
  /** For node pools and external auths: the HcpCluster's name. */
  clusterName?: string;
}

// ---- small path helpers over plain JSON (the ARM-only remainder, the response properties) ----

export function set(o: JsonObject, path: string, value: unknown): void {
  if (value === undefined) return;
  const keys = path.split(".");
  const last = keys.pop() ?? "";
  let cur = o;
  for (const key of keys) {
    const next = cur[key];
    if (isObject(next)) cur = next;
    else cur = cur[key] = {};
  }
  cur[last] = value;
}

/** Deletes a path and then any objects it left empty. */
function remove(o: JsonObject, path: string): void {
  const keys = path.split(".");
  const last = keys.pop() ?? "";
  const parents: JsonObject[] = [o];
  for (const key of keys) {
    const next = parents[parents.length - 1]?.[key];
    if (!isObject(next)) return;
    parents.push(next);
  }
  delete parents[parents.length - 1]?.[last];
  for (let i = keys.length - 1; i >= 0; i--) {
    const parent = parents[i];
    const key = keys[i] ?? "";
    if (parent && isObject(parent[key]) && Object.keys(parent[key]).length === 0) delete parent[key];
  }
}

export function parseJson(text: string | undefined): JsonObject {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** Drops undefined values so that the CR has no explicit nulls. */
export function compact<T extends object>(o: T): T {
  const out = { ...o };
  for (const [key, value] of Object.entries(out)) if (value === undefined) Reflect.deleteProperty(out, key);
  return out;
}

/** Properties with a spec field or computed from status; everything else is kept in an annotation. */
const CLUSTER_MAPPED = [
  "provisioningState",
  "version",
  "dns.baseDomainPrefix",
  "dns.baseDomain",
  "network",
  "console",
  "api.url",
  "api.visibility",
  "api.authorizedCidrs",
  "ingress.type",
  "platform.managedResourceGroup",
  "platform.subnetId",
  "platform.vnetIntegrationSubnetId",
  "platform.networkSecurityGroupId",
  "platform.outboundType",
  "platform.operatorsAuthentication",
  "platform.issuerUrl",
  "nodeDrainTimeoutMinutes",
  "cryptoRestrictions",
  "clusterImageRegistry",
  "imageDigestMirrors",
  "autoscaling",
  "etcd",
  "status",
];

const NODE_POOL_MAPPED = [
  "provisioningState",
  "version",
  "platform.subnetId",
  "platform.vmSize",
  "platform.enableEncryptionAtHost",
  "platform.osDisk.sizeGiB",
  "platform.osDisk.diskStorageAccountType",
  "platform.osDisk.diskType",
  "platform.osDisk.encryptionSetId",
  "platform.availabilityZone",
  "replicas",
  "autoRepair",
  "autoScaling",
  "labels",
  "taints",
  "nodeDrainTimeoutMinutes",
  "status",
];

export function armOnly(properties: JsonObject, mapped: string[]): JsonObject {
  const rest = structuredClone(properties);
  for (const path of mapped) remove(rest, path);
  return rest;
}

/**
 * The most the request's ARM-only fields (envelope and properties without a spec field) may take
 * in the CR's annotations: the API server allows 256 KiB of annotations per object, and the
 * operation documents need the rest.
 */
export const MAX_STORED_ARM_BYTES = 128 * 1024;

const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? "");

/**
 * Refuses a resource whose annotations would pass the API server's limit, before writing it,
 * naming the largest field (rather than letting the API server name `metadata.annotations`).
 */
function checkStoredSize(envelope: JsonObject, properties: JsonObject): void {
  const total = jsonBytes(envelope) + jsonBytes(properties);
  if (total <= MAX_STORED_ARM_BYTES) return;
  const parts: Array<[string, number]> = [
    ...Object.entries(envelope).map(([k, v]): [string, number] => [k, jsonBytes(v)]),
    ...Object.entries(properties).map(([k, v]): [string, number] => [`properties.${k}`, jsonBytes(v)]),
  ];
  const [target, size] = parts.reduce((a, b) => (b[1] > a[1] ? b : a), ["properties", 0]);
  throw fieldErrors([
    {
      target,
      message: `The resource's tags, identity and properties take ${total} bytes, more than the ${MAX_STORED_ARM_BYTES} bytes (128 KiB) the service stores; '${target}' takes ${size}`,
    },
  ]);
}

/**
 * `spec`: properties stored in the spec whose total size the CRD cannot bound (image digest
 * mirrors), counted with the annotations' so that a resource too large to store is refused naming
 * its largest field rather than with the API server's request size limit.
 */
export function metadataFor(
  res: ArmResource,
  ctx: ToCRContext,
  properties: JsonObject,
  spec: JsonObject = {},
): HcpCluster["metadata"] {
  const envelope = compact({
    location: res.location,
    tags: res.tags,
    systemData: res.systemData,
    identity: res.identity,
  });
  checkStoredSize(envelope, { ...properties, ...spec });
  return {
    name: ctx.name,
    namespace: ctx.namespace,
    labels: {
      [LABELS.resourceGroup]: resourceGroupLabel(ctx.id.resourceGroup),
      ...(ctx.clusterName ? { [LABELS.cluster]: ctx.clusterName } : {}),
    },
    annotations: {
      [ANNOTATIONS.resourceId]: res.id,
      [ANNOTATIONS.envelope]: JSON.stringify(envelope),
      [ANNOTATIONS.properties]: JSON.stringify(properties),
      ...ctx.annotations,
    },
  };
}

/** Fills the defaults the service picks (not the schema): DNS prefix and managed resource group. */
export function defaultClusterProperties(id: ResourceId, properties: ClusterProperties): ClusterProperties {
  const out = structuredClone(properties);
  if (out.dns?.baseDomainPrefix === undefined)
    out.dns = {
      ...out.dns,
      baseDomainPrefix: defaultDnsPrefix(id.cluster),
    };
  if (out.platform?.managedResourceGroup === undefined)
    out.platform = {
      ...out.platform,
      managedResourceGroup: defaultManagedResourceGroup(id.subscriptionId, id.resourceGroup, id.cluster),
    };
  return out;
}

/**
 * ARM takes any channel group name (32 characters at most); the CRD's enum refuses those it does
 * not know, naming the field, so the value goes to the CR as sent.
 */
const channelGroup = (name: string | undefined): ChannelGroup | undefined => name as ChannelGroup | undefined;

export function versionSpec(v: { id?: string; channelGroup?: string } | undefined): VersionSpec {
  return compact({ id: v?.id ?? "", channelGroup: channelGroup(v?.channelGroup) });
}

function clusterAzure(
  res: ArmResource<ClusterProperties>,
  ctx: ToCRContext,
): HcpCluster["spec"]["platform"]["azure"] {
  const platform = res.properties.platform ?? {};
  return compact({
    subscriptionId: ctx.id.subscriptionId,
    tenantId: ctx.tenantId,
    location: normalizeLocation(res.location),
    managedResourceGroup: platform.managedResourceGroup ?? "",
    subnetId: platform.subnetId ?? "",
    vnetIntegrationSubnetId: platform.vnetIntegrationSubnetId,
    networkSecurityGroupId: platform.networkSecurityGroupId ?? "",
    outboundType: platform.outboundType,
    identities: identitiesSpec(platform.operatorsAuthentication?.userAssignedIdentities ?? {}),
  });
}

type ArmIdentities = NonNullable<
  NonNullable<NonNullable<ClusterProperties["platform"]>["operatorsAuthentication"]>["userAssignedIdentities"]
>;

function identitiesSpec(identities: ArmIdentities): HcpCluster["spec"]["platform"]["azure"]["identities"] {
  return compact({
    controlPlaneOperators: identities.controlPlaneOperators ?? {},
    dataPlaneOperators: identities.dataPlaneOperators,
    serviceManagedIdentity: identities.serviceManagedIdentity ?? "",
  });
}

type ArmDataEncryption = NonNullable<NonNullable<ClusterProperties["etcd"]>["dataEncryption"]>;
type ArmKms = NonNullable<NonNullable<ArmDataEncryption["customerManaged"]>["kms"]>;

/** Required fields ARM's schema already demanded; an empty one is refused by the CRD, naming it. */
function kmsSpec(kms: ArmKms | undefined): KmsEncryptionSpec {
  return compact({
    vaultName: kms?.vaultName ?? "",
    visibility: kms?.visibility,
    activeKey: { name: kms?.activeKey?.name ?? "", version: kms?.activeKey?.version ?? "" },
  });
}

/** ARM's etcd encryption is the spec's, field for field (the vault at the hub's place). */
function etcdSpec(etcd: ClusterProperties["etcd"]): HcpCluster["spec"]["etcd"] {
  const encryption = etcd?.dataEncryption;
  if (!encryption) return undefined;
  const customer = encryption.customerManaged;
  return {
    dataEncryption: compact({
      // ARM's modes are the CRD's enum (2026-06-30-preview's one among them).
      keyManagementMode: (encryption.keyManagementMode ?? "PlatformManaged") as KeyManagementMode,
      customerManaged: customer
        ? compact({ encryptionType: customer.encryptionType, kms: kmsSpec(customer.kms) })
        : undefined,
    }),
  };
}

export function clusterToCR(res: ArmResource<ClusterProperties>, ctx: ToCRContext): HcpCluster {
  const p = res.properties;
  const spec: HcpCluster["spec"] = compact({
    version: versionSpec(p.version),
    dns: { baseDomainPrefix: p.dns?.baseDomainPrefix ?? "" },
    network: p.network ? compact({ ...p.network }) : undefined,
    api: compact({ visibility: p.api?.visibility, authorizedCIDRs: p.api?.authorizedCidrs }),
    ingress: ingressSpec(p.ingress),
    platform: { azure: clusterAzure(res, ctx) },
    nodeDrainTimeoutMinutes: p.nodeDrainTimeoutMinutes,
    fips: p.cryptoRestrictions === undefined ? undefined : p.cryptoRestrictions === "FIPS",
    clusterImageRegistry: p.clusterImageRegistry ? compact({ ...p.clusterImageRegistry }) : undefined,
    autoscaling: p.autoscaling ? compact({ ...p.autoscaling }) : undefined,
    imageDigestMirrors: p.imageDigestMirrors?.map((m) => ({
      source: m.source ?? "",
      mirrors: m.mirrors ?? [],
    })),
    etcd: etcdSpec(p.etcd),
    // Admitted by preview-features.ts; the tag itself stays in the envelope, for GET.
    controllerAvailabilityPolicy: wantsSingleReplica(res.tags) ? "SingleReplica" : undefined,
  });
  return {
    apiVersion: API_VERSION,
    kind: HCP_CLUSTER_KIND,
    metadata: metadataFor(
      res,
      ctx,
      armOnly(p, CLUSTER_MAPPED),
      compact({ imageDigestMirrors: p.imageDigestMirrors }),
    ),
    spec,
  };
}

function labelsToMap(
  labels: NodePoolProperties["labels"],
  errors: FieldError[],
): Record<string, string> | undefined {
  if (!labels) return undefined;
  // A Map, not an object: a key such as "constructor" or "__proto__" is a key like any other.
  const out = new Map<string, string>();
  labels.forEach((l, i) => {
    const key = l.key ?? "";
    if (out.has(key))
      errors.push({
        target: `properties.labels[${i}].key`,
        message: `Duplicate label key '${shorten(key)}'`,
      });
    out.set(key, l.value ?? "");
  });
  return Object.fromEntries(out);
}

/**
 * ARM takes any availability zone name; the CRD's enum refuses those it does not know, naming the
 * field, so the value goes to the CR as sent.
 */
const zone = (name: string | undefined): AzureNodePoolPlatform["availabilityZone"] =>
  name as AzureNodePoolPlatform["availabilityZone"];

/** ARM's ingress types are the CRD's (the schema's enum checked the value). */
function ingressSpec(ingress: ClusterProperties["ingress"]): HcpCluster["spec"]["ingress"] {
  return ingress?.type === undefined ? undefined : { type: ingress.type };
}

/** ARM's disk types are the CRD's enum; another value is refused there, naming the field. */
const osDiskType = (t: string | undefined): OsDiskType | undefined => t as OsDiskType | undefined;

function osDiskSpec(disk: NonNullable<NodePoolProperties["platform"]>["osDisk"]) {
  const osDisk = compact({
    sizeGiB: disk?.sizeGiB,
    diskStorageAccountType: disk?.diskStorageAccountType,
    diskType: osDiskType(disk?.diskType),
    encryptionSetId: disk?.encryptionSetId,
  });
  return Object.keys(osDisk).length > 0 ? osDisk : undefined;
}

function nodePoolSpecPlatform(p: NodePoolProperties): NodePool["spec"]["platform"] {
  const platform = p.platform;
  return {
    azure: compact({
      vmSize: platform?.vmSize ?? "",
      subnetId: platform?.subnetId,
      encryptionAtHost: platform?.enableEncryptionAtHost,
      availabilityZone: zone(platform?.availabilityZone),
      osDisk: osDiskSpec(platform?.osDisk),
    }),
  };
}

/** ARM allows replicas 0 beside autoScaling; the CR wants exactly one of them. */
function scaling(
  p: NodePoolProperties,
  errors: FieldError[],
): Pick<NodePool["spec"], "replicas" | "autoScaling"> {
  const auto = p.autoScaling;
  const replicas = p.replicas;
  if (!auto) return { replicas: replicas ?? 0 };
  if (replicas !== undefined && replicas !== 0)
    errors.push({
      target: "properties.replicas",
      message: "'properties.replicas' must be 0 when autoScaling is set",
    });
  const min = auto.min ?? 0;
  const max = auto.max ?? 0;
  if (max < min)
    errors.push({
      target: "properties.autoScaling.max",
      message: `'properties.autoScaling.max' (${max}) must not be less than 'properties.autoScaling.min' (${min})`,
    });
  return { autoScaling: { min, max } };
}

/** Key and effect are required fields, checked before any mapping. */
function taints(p: NodePoolProperties): NodePool["spec"]["taints"] {
  return p.taints?.map((t) =>
    compact({ key: t.key ?? "", value: t.value, effect: t.effect ?? "NoSchedule" }),
  );
}

export function nodePoolToCR(res: ArmResource<NodePoolProperties>, ctx: ToCRContext): NodePool {
  const p = res.properties;
  const errors: FieldError[] = [];
  const spec: NodePool["spec"] = compact({
    clusterRef: { name: ctx.clusterName ?? "" },
    // A pool without a version.id (2024-06-10-preview allows it) runs its cluster's version.
    version: p.version?.id === undefined ? undefined : versionSpec(p.version),
    platform: nodePoolSpecPlatform(p),
    ...scaling(p, errors),
    labels: labelsToMap(p.labels, errors),
    taints: taints(p),
    autoRepair: p.autoRepair,
    nodeDrainTimeoutMinutes: p.nodeDrainTimeoutMinutes,
  });
  if (errors.length > 0) throw fieldErrors(errors);
  return {
    apiVersion: API_VERSION,
    kind: NODE_POOL_KIND,
    metadata: metadataFor(res, ctx, armOnly(p, NODE_POOL_MAPPED)),
    spec,
  };
}

// ---- CR → ARM ----

export function envelopeOf(
  cr: ArmCR,
  kind: ResourceKind,
  location: string | undefined,
  tenantId?: string,
): Omit<ArmResource, "properties"> {
  const a = cr.metadata.annotations ?? {};
  const env = parseJson(a[ANNOTATIONS.envelope]);
  const id = a[ANNOTATIONS.resourceId] ?? "";
  return compact({
    id,
    name: id.split("/").pop() ?? "",
    type: resourceType(kind),
    location: typeof env["location"] === "string" ? env["location"] : (location ?? ""),
    tags: stringMap(env["tags"]),
    systemData: isObject(env["systemData"]) ? env["systemData"] : undefined,
    identity: isObject(env["identity"]) ? identityWithDetails(env["identity"], tenantId) : undefined,
  });
}

/** The string entries of a JSON object (tags are strings, validated when they were sent). */
function stringMap(v: unknown): Record<string, string> | undefined {
  if (!isObject(v)) return undefined;
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/** The hub's properties schemas: what a stored resource's properties can hold. */
const HUB_PROPERTIES = {
  cluster: SCHEMAS[HUB_VERSION].cluster.properties.properties,
  nodePool: SCHEMAS[HUB_VERSION].nodePool.properties.properties,
};

/** ARM's status.conditions (Available, Degraded, Progressing) from the CR's summary conditions. */
export function armConditions(cr: ArmCR): JsonObject[] | undefined {
  const rename: Record<string, string> = {
    Ready: "Available",
    Degraded: "Degraded",
    Progressing: "Progressing",
  };
  const out = (cr.status?.conditions ?? [])
    .filter((c) => c.type in rename)
    .map((c) => ({
      type: rename[c.type],
      status: c.status,
      lastTransitionTime: c.lastTransitionTime,
      reason: c.reason,
      message: c.message,
    }));
  return out.length > 0 ? out : undefined;
}

/** `https://api.<prefix>.<baseDomain>:443` → `<baseDomain>` (B.7). */
function baseDomainOf(apiURL: string | undefined, prefix: string): string | undefined {
  if (!apiURL) return undefined;
  const host = URL.canParse(apiURL) ? new URL(apiURL).hostname : "";
  const lead = `api.${prefix}.`;
  return host.startsWith(lead) ? host.slice(lead.length) : undefined;
}

/** ARM's cryptoRestrictions of a spec.fips (which stored objects always have: the CRD defaults it). */
function cryptoRestrictions(fips: boolean | undefined): "FIPS" | "None" | undefined {
  if (fips === undefined) return undefined;
  return fips ? "FIPS" : "None";
}

export function clusterFromCR(cr: HcpCluster): ArmResource<ClusterProperties> {
  // What has a spec field is read from the spec alone: a value left in the annotation by a frontend
  // from before the field existed is not in effect, and GET must not say it is (adopt-settings.ts).
  const p = armOnly(parseJson(cr.metadata.annotations?.[ANNOTATIONS.properties]), CLUSTER_MAPPED);
  const { spec, status } = cr;
  const azure = spec.platform.azure;
  const state = resourceState(cr);
  set(p, "provisioningState", state.state);
  set(p, "version", compact({ id: spec.version.id, channelGroup: spec.version.channelGroup }));
  set(p, "dns.baseDomainPrefix", spec.dns.baseDomainPrefix);
  set(p, "dns.baseDomain", spec.dns.baseDomain ?? baseDomainOf(status?.apiURL, spec.dns.baseDomainPrefix));
  set(p, "network", spec.network);
  set(p, "console.url", status?.consoleURL);
  set(p, "api.url", status?.apiURL);
  set(p, "api.visibility", spec.api?.visibility);
  set(p, "api.authorizedCidrs", spec.api?.authorizedCIDRs);
  set(p, "ingress.type", spec.ingress?.type);
  set(p, "platform.managedResourceGroup", azure.managedResourceGroup);
  set(p, "platform.subnetId", azure.subnetId);
  set(p, "platform.vnetIntegrationSubnetId", azure.vnetIntegrationSubnetId);
  set(p, "platform.outboundType", azure.outboundType);
  set(p, "platform.networkSecurityGroupId", azure.networkSecurityGroupId);
  set(p, "platform.operatorsAuthentication.userAssignedIdentities", compact({ ...azure.identities }));
  set(p, "platform.issuerUrl", status?.issuerURL);
  set(p, "nodeDrainTimeoutMinutes", spec.nodeDrainTimeoutMinutes);
  set(p, "cryptoRestrictions", cryptoRestrictions(spec.fips));
  set(p, "clusterImageRegistry.state", spec.clusterImageRegistry?.state);
  set(p, "imageDigestMirrors", spec.imageDigestMirrors);
  set(p, "autoscaling", spec.autoscaling);
  set(p, "etcd", spec.etcd);
  set(p, "status.conditions", armConditions(cr));
  return {
    ...envelopeOf(cr, "cluster", azure.location, azure.tenantId),
    properties: project(HUB_PROPERTIES.cluster, p) ?? {},
  };
}

export function nodePoolFromCR(pool: NodePool): ArmResource<NodePoolProperties> {
  const p = armOnly(parseJson(pool.metadata.annotations?.[ANNOTATIONS.properties]), NODE_POOL_MAPPED);
  const { spec } = pool;
  const azure = spec.platform.azure;
  set(p, "provisioningState", resourceState(pool).state);
  set(
    p,
    "version",
    spec.version ? compact({ id: spec.version.id, channelGroup: spec.version.channelGroup }) : undefined,
  );
  set(p, "platform.subnetId", azure.subnetId);
  set(p, "platform.vmSize", azure.vmSize);
  set(p, "platform.enableEncryptionAtHost", azure.encryptionAtHost);
  set(p, "platform.osDisk.sizeGiB", azure.osDisk?.sizeGiB);
  set(p, "platform.osDisk.diskStorageAccountType", azure.osDisk?.diskStorageAccountType);
  set(p, "platform.osDisk.diskType", azure.osDisk?.diskType);
  set(p, "platform.osDisk.encryptionSetId", azure.osDisk?.encryptionSetId);
  set(p, "platform.availabilityZone", azure.availabilityZone);
  set(p, "replicas", spec.replicas ?? 0);
  set(p, "autoScaling", spec.autoScaling);
  set(p, "autoRepair", spec.autoRepair);
  set(
    p,
    "labels",
    spec.labels ? Object.entries(spec.labels).map(([key, value]) => ({ key, value })) : undefined,
  );
  set(p, "taints", spec.taints);
  set(p, "nodeDrainTimeoutMinutes", spec.nodeDrainTimeoutMinutes);
  set(p, "status.conditions", armConditions(pool));
  return {
    ...envelopeOf(pool, "nodePool", undefined),
    properties: project(HUB_PROPERTIES.nodePool, p) ?? {},
  };
}

/**
 * CR field paths as the API server names them in refusals, and the ARM paths they come from;
 * longest first so that the most specific mapping wins.
 */
const FIELD_PATHS: Array<[string, string]> = [
  ["spec.platform.azure.identities", "properties.platform.operatorsAuthentication.userAssignedIdentities"],
  ["spec.platform.azure.encryptionAtHost", "properties.platform.enableEncryptionAtHost"],
  ["spec.platform.azure.location", "location"],
  ["spec.platform.azure.subscriptionId", "id"],
  ["spec.platform.azure", "properties.platform"],
  ["spec.api.visibility", "properties.api.visibility"],
  ["spec.api.authorizedCIDRs", "properties.api.authorizedCidrs"],
  ["spec.fips", "properties.cryptoRestrictions"],
  ["spec.clusterRef", "id"],
  ["spec.clients", "properties.clients"],
  ["spec.issuer", "properties.issuer"],
  ["spec.claim", "properties.claim"],
  ["metadata.name", "name"],
  ["spec", "properties"],
];

/** Rewrites CR field paths (in a target or a message) to the ARM request's paths. */
export function armFieldPath(text: string): string {
  const pattern = new RegExp(FIELD_PATHS.map(([cr]) => cr.replace(/\./g, "\\.")).join("|"), "g");
  return text.replace(pattern, (m) => FIELD_PATHS.find(([cr]) => cr === m)?.[1] ?? m);
}
