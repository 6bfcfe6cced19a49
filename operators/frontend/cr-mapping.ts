/**
 * ARM resources (in the hub version's shape) to CRs and back. Properties with a CR field go to
 * the spec; the rest (ARM-only: authorized CIDRs, ingress, etcd encryption, ...) and the envelope
 * (tags, systemData, identity) go to annotations, so GET returns what was sent. Read-only
 * properties come from the CR's status: provisioningState (provisioning-state.ts), API and console URLs,
 * base domain, conditions.
 */
import {
  API_VERSION,
  HCP_CLUSTER_KIND,
  NODE_POOL_KIND,
  type HcpCluster,
  type NodePool,
  type Taint,
} from "../api/v1alpha1/index.ts";
import { fieldErrors, type FieldError } from "./errors.ts";
import {
  ANNOTATIONS,
  LABELS,
  defaultDnsPrefix,
  defaultManagedResourceGroup,
  resourceGroupLabel,
} from "./names.ts";
import { normalizeLocation, resourceType, type ResourceId, type ResourceKind } from "./resource-id.ts";
import { isObject, type JsonObject } from "./body-schema.ts";
import { resourceState } from "./provisioning-state.ts";

/** An ARM resource in the hub version's shape. */
export interface ArmResource {
  id: string;
  name: string;
  type: string;
  location: string;
  tags?: Record<string, string>;
  systemData?: JsonObject;
  identity?: JsonObject;
  properties: JsonObject;
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
  /** For node pools: the HcpCluster's name. */
  clusterName?: string;
}

// ---- small path helpers over plain JSON ----

function get(o: unknown, path: string): unknown {
  let cur: unknown = o;
  for (const key of path.split(".")) {
    if (!isObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

function set(o: JsonObject, path: string, value: unknown): void {
  if (value === undefined) return;
  const keys = path.split(".");
  const last = keys.pop() ?? "";
  let cur = o;
  for (const key of keys) {
    if (!isObject(cur[key])) cur[key] = {};
    cur = cur[key] as JsonObject;
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

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);
const record = (v: unknown): Record<string, string> | undefined =>
  isObject(v) ? (v as Record<string, string>) : undefined;

function parseJson(text: string | undefined): JsonObject {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** Drops undefined values so that the CR has no explicit nulls. */
function compact<T extends JsonObject>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
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
  "platform.managedResourceGroup",
  "platform.subnetId",
  "platform.networkSecurityGroupId",
  "platform.outboundType",
  "platform.operatorsAuthentication",
  "platform.issuerUrl",
  "nodeDrainTimeoutMinutes",
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
  "platform.availabilityZone",
  "replicas",
  "autoRepair",
  "autoScaling",
  "labels",
  "taints",
  "nodeDrainTimeoutMinutes",
  "status",
];

function armOnly(properties: JsonObject, mapped: string[]): JsonObject {
  const rest = structuredClone(properties);
  for (const path of mapped) remove(rest, path);
  return rest;
}

function metadataFor(res: ArmResource, ctx: ToCRContext, properties: JsonObject): HcpCluster["metadata"] {
  const envelope = compact({
    location: res.location,
    tags: res.tags,
    systemData: res.systemData,
    identity: res.identity,
  });
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
export function defaultClusterProperties(id: ResourceId, properties: JsonObject): JsonObject {
  const out = structuredClone(properties);
  if (get(out, "dns.baseDomainPrefix") === undefined)
    set(out, "dns.baseDomainPrefix", defaultDnsPrefix(id.subscriptionId, id.resourceGroup, id.cluster));
  if (get(out, "platform.managedResourceGroup") === undefined)
    set(
      out,
      "platform.managedResourceGroup",
      defaultManagedResourceGroup(id.subscriptionId, id.resourceGroup, id.cluster),
    );
  return out;
}

export function clusterToCR(res: ArmResource, ctx: ToCRContext): HcpCluster {
  const p = res.properties;
  const identities = get(p, "platform.operatorsAuthentication.userAssignedIdentities");
  const spec: HcpCluster["spec"] = compact({
    version: compact({
      id: str(get(p, "version.id")) ?? "",
      channelGroup: str(get(p, "version.channelGroup")),
    }),
    dns: { baseDomainPrefix: str(get(p, "dns.baseDomainPrefix")) ?? "" },
    network: isObject(p["network"]) ? compact({ ...p["network"] }) : undefined,
    api: compact({ visibility: str(get(p, "api.visibility")) as "Public" | "Private" | undefined }),
    platform: {
      azure: compact({
        subscriptionId: ctx.id.subscriptionId,
        tenantId: ctx.tenantId,
        location: normalizeLocation(res.location),
        managedResourceGroup: str(get(p, "platform.managedResourceGroup")) ?? "",
        subnetId: str(get(p, "platform.subnetId")) ?? "",
        networkSecurityGroupId: str(get(p, "platform.networkSecurityGroupId")) ?? "",
        outboundType: str(get(p, "platform.outboundType")) as "LoadBalancer" | undefined,
        identities: compact({
          controlPlaneOperators: record(get(identities, "controlPlaneOperators")) ?? {},
          dataPlaneOperators: record(get(identities, "dataPlaneOperators")),
          serviceManagedIdentity: str(get(identities, "serviceManagedIdentity")) ?? "",
        }),
      }),
    },
    nodeDrainTimeoutMinutes: num(p["nodeDrainTimeoutMinutes"]),
  }) as HcpCluster["spec"];
  return {
    apiVersion: API_VERSION,
    kind: HCP_CLUSTER_KIND,
    metadata: metadataFor(res, ctx, armOnly(p, CLUSTER_MAPPED)),
    spec,
  };
}

function labelsToMap(labels: unknown, errors: FieldError[]): Record<string, string> | undefined {
  if (!Array.isArray(labels)) return undefined;
  const out: Record<string, string> = {};
  labels.forEach((l: unknown, i) => {
    const key = str(get(l, "key")) ?? "";
    if (key in out)
      errors.push({ target: `properties.labels[${i}].key`, message: `Duplicate label key '${key}'` });
    out[key] = str(get(l, "value")) ?? "";
  });
  return out;
}

function nodePoolSpecPlatform(p: JsonObject): NodePool["spec"]["platform"] {
  const osDisk = compact({
    sizeGiB: num(get(p, "platform.osDisk.sizeGiB")),
    diskStorageAccountType: str(get(p, "platform.osDisk.diskStorageAccountType")) as
      "Premium_LRS" | "StandardSSD_LRS" | "Standard_LRS" | undefined,
  });
  return {
    azure: compact({
      vmSize: str(get(p, "platform.vmSize")) ?? "",
      subnetId: str(get(p, "platform.subnetId")),
      encryptionAtHost: bool(get(p, "platform.enableEncryptionAtHost")),
      availabilityZone: str(get(p, "platform.availabilityZone")) as "1" | "2" | "3" | undefined,
      osDisk: Object.keys(osDisk).length > 0 ? osDisk : undefined,
    }),
  };
}

/** ARM allows replicas 0 beside autoScaling; the CR wants exactly one of them. */
function scaling(p: JsonObject, errors: FieldError[]): Pick<NodePool["spec"], "replicas" | "autoScaling"> {
  const auto = p["autoScaling"];
  const replicas = num(p["replicas"]);
  if (!isObject(auto)) return { replicas: replicas ?? 0 };
  if (replicas !== undefined && replicas !== 0)
    errors.push({
      target: "properties.replicas",
      message: "'properties.replicas' must be 0 when autoScaling is set",
    });
  const min = num(auto["min"]) ?? 0;
  const max = num(auto["max"]) ?? 0;
  if (max < min)
    errors.push({
      target: "properties.autoScaling.max",
      message: `'properties.autoScaling.max' (${max}) must not be less than 'properties.autoScaling.min' (${min})`,
    });
  return { autoScaling: { min, max } };
}

export function nodePoolToCR(res: ArmResource, ctx: ToCRContext): NodePool {
  const p = res.properties;
  const errors: FieldError[] = [];
  const spec: NodePool["spec"] = compact({
    clusterRef: { name: ctx.clusterName ?? "" },
    version: isObject(p["version"])
      ? compact({ id: str(get(p, "version.id")) ?? "", channelGroup: str(get(p, "version.channelGroup")) })
      : undefined,
    platform: nodePoolSpecPlatform(p),
    ...scaling(p, errors),
    labels: labelsToMap(p["labels"], errors),
    taints: Array.isArray(p["taints"])
      ? (p["taints"] as JsonObject[]).map((t) => compact({ ...t }) as unknown as Taint)
      : undefined,
    autoRepair: bool(p["autoRepair"]),
    nodeDrainTimeoutMinutes: num(p["nodeDrainTimeoutMinutes"]),
  }) as NodePool["spec"];
  if (errors.length > 0) throw fieldErrors(errors);
  return {
    apiVersion: API_VERSION,
    kind: NODE_POOL_KIND,
    metadata: metadataFor(res, ctx, armOnly(p, NODE_POOL_MAPPED)),
    spec,
  };
}

// ---- CR → ARM ----

function envelopeOf(
  cr: HcpCluster | NodePool,
  kind: ResourceKind,
  location: string | undefined,
): Omit<ArmResource, "properties"> {
  const a = cr.metadata.annotations ?? {};
  const env = parseJson(a[ANNOTATIONS.envelope]);
  const id = a[ANNOTATIONS.resourceId] ?? "";
  return compact({
    id,
    name: id.split("/").pop() ?? "",
    type: resourceType(kind),
    location: str(env["location"]) ?? location ?? "",
    tags: record(env["tags"]),
    systemData: isObject(env["systemData"]) ? env["systemData"] : undefined,
    identity: isObject(env["identity"]) ? env["identity"] : undefined,
  });
}

/** ARM's status.conditions (Available, Degraded, Progressing) from the CR's summary conditions. */
function armConditions(cr: HcpCluster | NodePool): JsonObject[] | undefined {
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

export function clusterFromCR(cr: HcpCluster): ArmResource {
  const p = parseJson(cr.metadata.annotations?.[ANNOTATIONS.properties]);
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
  set(p, "platform.managedResourceGroup", azure.managedResourceGroup);
  set(p, "platform.subnetId", azure.subnetId);
  set(p, "platform.outboundType", azure.outboundType);
  set(p, "platform.networkSecurityGroupId", azure.networkSecurityGroupId);
  set(p, "platform.operatorsAuthentication.userAssignedIdentities", compact({ ...azure.identities }));
  set(p, "nodeDrainTimeoutMinutes", spec.nodeDrainTimeoutMinutes);
  set(p, "status.conditions", armConditions(cr));
  return { ...envelopeOf(cr, "cluster", azure.location), properties: p };
}

export function nodePoolFromCR(pool: NodePool): ArmResource {
  const p = parseJson(pool.metadata.annotations?.[ANNOTATIONS.properties]);
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
  return { ...envelopeOf(pool, "nodePool", undefined), properties: p };
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
  ["spec.clusterRef", "id"],
  ["metadata.name", "name"],
  ["spec", "properties"],
];

/** Rewrites CR field paths (in a target or a message) to the ARM request's paths. */
export function armFieldPath(text: string): string {
  const pattern = new RegExp(FIELD_PATHS.map(([cr]) => cr.replace(/\./g, "\\.")).join("|"), "g");
  return text.replace(pattern, (m) => FIELD_PATHS.find(([cr]) => cr === m)?.[1] ?? m);
}
