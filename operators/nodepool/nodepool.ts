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
} from "../api/hypershift/v1beta1.ts";
import type { HcpCluster, NodePool } from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, WORK_API_VERSION, type ManifestWork } from "../api/work/v1.ts";
import {
  asManifest,
  LABELS,
  requestIdAnnotations,
  workLabels,
  type ClusterNames,
} from "../cluster/hostedcluster.ts";
import type { Release } from "../releases/catalog.ts";

/** Small values only: OCM's agent refuses raw JSON over 1 KiB. */
export const POOL_FEEDBACK = { replicas: "replicas", version: "version", ready: "ready" } as const;

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

export function hyperShiftNodePool(
  pool: NodePool,
  cluster: HcpCluster,
  names: ClusterNames,
  release: Release,
): HyperShiftNodePool {
  const azure = pool.spec.platform.azure;
  const drain = pool.spec.nodeDrainTimeoutMinutes ?? cluster.spec.nodeDrainTimeoutMinutes;
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
      ...(pool.spec.autoScaling
        ? { autoScaling: { min: pool.spec.autoScaling.min, max: pool.spec.autoScaling.max } }
        : { replicas: pool.spec.replicas ?? 0 }),
      ...(drain !== undefined ? { nodeDrainTimeout: `${drain}m` } : {}),
      ...(pool.spec.labels ? { nodeLabels: pool.spec.labels } : {}),
      ...(pool.spec.taints ? { taints: pool.spec.taints } : {}),
      platform: {
        type: "Azure",
        azure: {
          vmSize: azure.vmSize,
          image: marketplaceImage(release.version),
          osDisk: {
            sizeGiB: azure.osDisk?.sizeGiB ?? 64,
            diskStorageAccountType: azure.osDisk?.diskStorageAccountType ?? "Premium_LRS",
            persistence: "Persistent",
          },
          subnetID: azure.subnetId ?? cluster.spec.platform.azure.subnetId,
          encryptionAtHost: azure.encryptionAtHost ? "Enabled" : "Disabled",
          ...(azure.availabilityZone ? { availabilityZone: azure.availabilityZone } : {}),
        },
      },
    },
  };
}

export function nodePoolWork(
  pool: NodePool,
  cluster: HcpCluster,
  names: ClusterNames,
  release: Release,
  consumer: string,
): ManifestWork {
  const manifest = hyperShiftNodePool(pool, cluster, names, release);
  return {
    apiVersion: WORK_API_VERSION,
    kind: ManifestWorkResource.kind,
    metadata: {
      name: poolNames(pool, names).workName,
      namespace: consumer,
      labels: { ...workLabels(cluster), [LABELS.nodePool]: pool.metadata.uid ?? "" },
      annotations: requestIdAnnotations(pool),
    },
    spec: {
      workload: { manifests: [asManifest(manifest)] },
      deleteOption: { propagationPolicy: "Foreground" },
      manifestConfigs: [
        {
          resourceIdentifier: {
            group: HyperShiftNodePoolResource.group,
            resource: HyperShiftNodePoolResource.plural,
            name: manifest.metadata.name ?? "",
            namespace: names.hostedClusterNamespace,
          },
          updateStrategy: {
            type: "ServerSideApply",
            serverSideApply: { force: true, fieldManager: "work-agent" },
          },
          feedbackRules: [
            {
              type: "JSONPaths",
              jsonPaths: [
                { name: POOL_FEEDBACK.replicas, path: ".status.replicas" },
                { name: POOL_FEEDBACK.version, path: ".status.version" },
                { name: POOL_FEEDBACK.ready, path: '.status.conditions[?(@.type=="Ready")]' },
              ],
            },
          ],
        },
      ],
    },
  };
}
