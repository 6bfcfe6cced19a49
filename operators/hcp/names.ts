/**
 * Names and labels shared by everything that carries an HcpCluster to a management cluster: the
 * names ARO HCP derives from a cluster (HostedCluster = the DNS prefix, its namespace from the
 * environment and the cluster ID) and the labels that map a ManifestWork back to its owner.
 */
import type { HcpCluster } from "../api/v1alpha1/index.ts";

/**
 * Labels on every ManifestWork a cluster owns; they map a work back to its HcpCluster (and pool,
 * or break-glass credential).
 */
export const LABELS = {
  clusterUid: "hcp.aro.dev/cluster-uid",
  clusterName: "hcp.aro.dev/cluster-name",
  clusterNamespace: "hcp.aro.dev/cluster-namespace",
  nodePool: "hcp.aro.dev/nodepool",
  breakglass: "hcp.aro.dev/breakglass",
} as const;

/** What the service knows beyond the HcpCluster itself. */
export interface RegionSettings {
  /** ARO HCP's envIdentifier, e.g. "arohcpint"; names the management-cluster namespaces. */
  environment: string;
  /** The region's parent zone, used when the cluster names none. */
  baseDomain: string;
  /** Key Vault that holds the managed identities' credentials on the management clusters. */
  managedIdentitiesKeyVault: string;
  /** `.dockerconfigjson` for the release images. */
  pullSecret: string;
}

export interface ClusterNames {
  clusterID: string;
  hostedClusterName: string;
  hostedClusterNamespace: string;
  controlPlaneNamespace: string;
  baseDomain: string;
  /** `<prefix>.<baseDomain>`: the customer DNS zone. */
  zoneName: string;
  apiHost: string;
  consoleURL: string;
  workName: string;
}

/** Every name derived from the cluster; the clusterID is the HcpCluster's uid, stable across restarts. */
export function clusterNames(cluster: HcpCluster, region: RegionSettings): ClusterNames {
  const clusterID = cluster.metadata.uid ?? "";
  const prefix = cluster.spec.dns.baseDomainPrefix;
  const baseDomain = cluster.spec.dns.baseDomain ?? region.baseDomain;
  const hostedClusterNamespace = `ocm-${region.environment}-${clusterID}`;
  const zoneName = `${prefix}.${baseDomain}`;
  return {
    clusterID,
    hostedClusterName: prefix,
    hostedClusterNamespace,
    controlPlaneNamespace: `${hostedClusterNamespace}-${prefix}`,
    baseDomain,
    zoneName,
    apiHost: `api.${zoneName}`,
    consoleURL: `https://console-openshift-console.apps.${zoneName}`,
    workName: clusterID,
  };
}

/** The labels every work of a cluster carries (a node pool's adds LABELS.nodePool). */
export function workLabels(cluster: HcpCluster): Record<string, string> {
  return {
    [LABELS.clusterUid]: cluster.metadata.uid ?? "",
    [LABELS.clusterName]: cluster.metadata.name ?? "",
    [LABELS.clusterNamespace]: cluster.metadata.namespace ?? "",
  };
}
