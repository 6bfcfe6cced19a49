/**
 * The names ARO HCP derives from an HcpCluster and the region it runs in: the HostedCluster is
 * named by the DNS prefix, its namespace by the environment and the cluster ID, and the cluster's
 * ManifestWork by the cluster ID. Every controller that reaches a cluster's objects derives them
 * here, so that they agree.
 */
import type { HcpCluster } from "./hcpcluster.ts";
import { originalUid } from "./labels.ts";

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

/**
 * Every name derived from the cluster; the clusterID is the uid the HcpCluster was first created
 * with (labels.ts originalUid), stable across restarts and region restores.
 */
export function clusterNames(cluster: HcpCluster, region: RegionSettings): ClusterNames {
  const clusterID = originalUid(cluster);
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
