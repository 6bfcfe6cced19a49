/**
 * The steps each controller's reconcile runs, in order, each named by the condition type that
 * reports it: a step that is not True holds the ones after it. The controllers' status code
 * (operators/<controller>/status.ts) and the ARM frontend's operation progress (how many steps are
 * done, which one an operation waits on) read the same lists.
 */
export const HCP_CLUSTER_STEPS = [
  "Placed",
  "ValidVersion",
  "ResourceGroupReady",
  "DnsZoneReady",
  "DnsDelegated",
  "IngressReady",
  "OidcIssuerReady",
  "HostedClusterApplied",
  "HostedClusterValid",
  "HostedClusterAvailable",
  "DnsRecordsReady",
] as const;

export const NODE_POOL_STEPS = ["ClusterReady", "ValidVersion", "NodePoolApplied", "NodesReady"] as const;

export const EXTERNAL_AUTH_STEPS = ["ClusterReady", "ProviderApplied", "ProviderAccepted"] as const;
