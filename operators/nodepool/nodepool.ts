/**
 * The ManifestWork that carries one NodePool to its management cluster: the HyperShift NodePool
 * beside its HostedCluster, with feedback rules for replicas, version and conditions. A work of its
 * own per pool, so that a scale does not resend the cluster.
 */
import {
  HYPERSHIFT_API_VERSION,
  NODE_POOL_KIND,
  NodePoolResource as HyperShiftNodePoolResource,
  type NodePool as HyperShiftNodePool,
} from "../api/hypershift/v1beta1/index.ts";
import type { HcpCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import { NODE_POOL_FEEDBACK_PATHS } from "../api/v1alpha1/feedback.ts";
import type { ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS, workLabels } from "../api/v1alpha1/labels.ts";
import { requestIdAnnotations } from "../hcp/requests.ts";
import { asManifest, manifestWork } from "../hcp/work.ts";
import type { Release } from "../releases/catalog.ts";

export interface PoolNames {
  /** `<cluster prefix>-<pool name>`, as ARO HCP names it. */
  hyperShiftName: string;
  workName: string;
}

export function poolNames(pool: NodePool, cluster: ClusterNames): PoolNames {
  const name = pool.metadata.name ?? "";
  return { hyperShiftName: `${cluster.hostedClusterName}-${name}`, workName: `${cluster.clusterID}-${name}` };
}

/** RHCOS marketplace image of a release: ARO's publisher and offer, one SKU per minor. */
function marketplaceImage(version: string) {
  const [major = "4", minor = "0", patch = "0"] = version.split(".");
  return {
    type: "AzureMarketplace" as const,
    azureMarketplace: {
      publisher: "azureopenshift",
      offer: "aro4",
      sku: `${major}${minor}-v2`,
      version: `${major}${minor}.${patch}.0`,
      imageGeneration: "Gen2" as const,
    },
  };
}

/** Replicas or autoscaling, drain timeout, node labels and taints: what a user tunes on a pool. */
function scalingAndNodes(pool: NodePool, cluster: HcpCluster): Partial<HyperShiftNodePool["spec"]> {
  const { spec } = pool;
  const drain = spec.nodeDrainTimeoutMinutes ?? cluster.spec.nodeDrainTimeoutMinutes;
  return {
    ...(spec.autoScaling
      ? { autoScaling: { min: spec.autoScaling.min, max: spec.autoScaling.max } }
      : { replicas: spec.replicas ?? 0 }),
    ...(drain !== undefined ? { nodeDrainTimeout: `${drain}m` } : {}),
    ...(spec.labels ? { nodeLabels: spec.labels } : {}),
    ...(spec.taints ? { taints: spec.taints } : {}),
  };
}

function azurePlatform(
  pool: NodePool,
  cluster: HcpCluster,
  release: Release,
): HyperShiftNodePool["spec"]["platform"] {
  const azure = pool.spec.platform.azure;
  return {
    type: "Azure",
    azure: {
      vmSize: azure.vmSize,
      image: marketplaceImage(release.version),
      osDisk: {
        sizeGiB: azure.osDisk?.sizeGiB ?? 64,
        diskStorageAccountType: azure.osDisk?.diskStorageAccountType ?? "Premium_LRS",
        persistence: azure.osDisk?.diskType === "Ephemeral" ? "Ephemeral" : "Persistent",
        ...(azure.osDisk?.encryptionSetId ? { encryptionSetID: azure.osDisk.encryptionSetId } : {}),
      },
      subnetID: azure.subnetId ?? cluster.spec.platform.azure.subnetId,
      encryptionAtHost: azure.encryptionAtHost ? "Enabled" : "Disabled",
      ...(azure.availabilityZone ? { availabilityZone: azure.availabilityZone } : {}),
    },
  };
}

export function hyperShiftNodePool(
  pool: NodePool,
  cluster: HcpCluster,
  names: ClusterNames,
  release: Release,
): HyperShiftNodePool {
  return {
    apiVersion: HYPERSHIFT_API_VERSION,
    kind: NODE_POOL_KIND,
    metadata: {
      name: poolNames(pool, names).hyperShiftName,
      namespace: names.hostedClusterNamespace,
      labels: {
        "api.openshift.com/id": names.clusterID,
        "api.openshift.com/name": pool.metadata.name ?? "",
      },
    },
    spec: {
      clusterName: names.hostedClusterName,
      release: { image: release.image },
      management: { upgradeType: "Replace", autoRepair: pool.spec.autoRepair ?? true },
      ...scalingAndNodes(pool, cluster),
      platform: azurePlatform(pool, cluster, release),
    },
  };
}

/** What a pool's work is built from. */
export interface PoolWorkInput {
  pool: NodePool;
  cluster: HcpCluster;
  names: ClusterNames;
  release: Release;
  /** The consumer of the management cluster the cluster is placed on. */
  consumer: string;
}

export function nodePoolWork({ pool, cluster, names, release, consumer }: PoolWorkInput): ManifestWork {
  const manifest = hyperShiftNodePool(pool, cluster, names, release);
  return manifestWork({
    name: poolNames(pool, names).workName,
    consumer,
    labels: { ...workLabels(cluster), [WORK_LABELS.nodePool]: pool.metadata.uid ?? "" },
    annotations: requestIdAnnotations(pool),
    manifests: [asManifest(manifest)],
    feedback: {
      type: HyperShiftNodePoolResource,
      name: manifest.metadata.name ?? "",
      namespace: names.hostedClusterNamespace,
      paths: NODE_POOL_FEEDBACK_PATHS,
    },
  });
}
