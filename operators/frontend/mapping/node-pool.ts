/**
 * A node pool of the internal model ⇄ its NodePool CR, as cluster.ts does for clusters: spec
 * fields, the ARM-only remainder in annotations, read-only properties from the status.
 */
import {
  API_VERSION,
  ARM_ANNOTATIONS,
  type AzureNodePoolPlatform,
  NODE_POOL_KIND,
  type NodePool,
  type OsDiskType,
  resourceState,
} from "../../api/v1alpha1/index.ts";
import {
  checkedProperties,
  INTERNAL_SCHEMAS,
  type InternalResource,
  type NodePoolProperties,
} from "../api/internal.ts";
import { shorten } from "../api/json.ts";
import { project } from "../api/schema-walks.ts";
import { fieldErrors, type FieldError } from "../errors.ts";
import { versionSpec } from "./cluster.ts";
import {
  armConditions,
  armOnly,
  compact,
  envelopeOf,
  metadataFor,
  parseJson,
  set,
  type ToCRContext,
} from "./common.ts";

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

export function nodePoolToCR(res: InternalResource<NodePoolProperties>, ctx: ToCRContext): NodePool {
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

export function nodePoolFromCR(pool: NodePool): InternalResource<NodePoolProperties> {
  const p = armOnly(parseJson(pool.metadata.annotations?.[ARM_ANNOTATIONS.properties]), NODE_POOL_MAPPED);
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
    properties: checkedProperties(project(INTERNAL_SCHEMAS.nodePool, p) ?? {}),
  };
}
