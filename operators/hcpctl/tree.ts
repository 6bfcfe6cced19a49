/**
 * The describe tree, built from a snapshot of service-cluster objects and nothing else:
 *
 *   HcpCluster
 *   ├─NodePools            the cluster's NodePools
 *   ├─ExternalAuths        the cluster's ExternalAuths (OIDC providers of its HostedCluster)
 *   ├─ManagementCluster    where the control plane was placed
 *   │ └─ManifestWork       each work the cluster and its pools sent there
 *   │   └─HostedCluster / HyperShift NodePool / other manifests, as the agent's feedback tells
 *   └─Azure                the resources the cluster's conditions record
 *
 * The management-cluster side is what the agent carried back in the works' status, so no
 * management-cluster credentials are needed. Pure: the same snapshot gives the same tree.
 */
import {
  GROUP as HCP_GROUP,
  type ExternalAuth,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import { authDeletion, clusterDeletion, poolDeletion } from "./blockers.ts";
import { summaryOf, unknownSummary, viewsOf } from "./conditions.ts";
import type { ClusterSnapshot, ClusterTree, ConditionView, Summary, TreeNode } from "./model.ts";
import { details, sentBaseDomain, workNode, type Details } from "./tree-works.ts";

function heading(name: string, children: TreeNode[]): TreeNode {
  return { kind: "", name, conditions: [], details: {}, children };
}

export function buildTree(s: ClusterSnapshot, now: Date): ClusterTree {
  return {
    apiVersion: "hcpctl.hcp.aro.dev/v1alpha1",
    kind: "ClusterTree",
    observedAt: now.toISOString().replace(/\.\d+Z$/, "Z"),
    root: clusterNode(s),
  };
}

function clusterNode(s: ClusterSnapshot): TreeNode {
  const { cluster } = s;
  const views = viewsOf(cluster.status?.conditions);
  const deletion = clusterDeletion(s);
  const children: TreeNode[] = [];
  if (s.nodePools.length > 0)
    children.push(
      heading(
        "NodePools",
        s.nodePools.map((p) => poolNode(p, s.works)),
      ),
    );
  if (s.externalAuths.length > 0) children.push(heading("ExternalAuths", s.externalAuths.map(authNode)));
  children.push(...placementNodes(s));
  children.push(heading("Azure", azureNodes(s)));
  return {
    kind: "HcpCluster",
    apiGroup: HCP_GROUP,
    name: cluster.metadata.name ?? "",
    namespace: cluster.metadata.namespace,
    summary:
      summaryOf(views, "Ready") ?? unknownSummary("NoStatus", "The cluster controller has not reported yet"),
    conditions: views,
    details: clusterDetails(cluster),
    ...(deletion ? { deletion } : {}),
    children,
  };
}

function clusterDetails(c: HcpCluster): Details {
  const st = c.status ?? {};
  return details({
    phase: st.phase,
    version: st.version,
    desiredVersion: c.spec.version.id,
    generation: c.metadata.generation,
    observedGeneration: st.observedGeneration,
    clusterID: st.clusterID,
    managementCluster: st.managementCluster,
    hostedClusterNamespace: st.hostedClusterNamespace,
    apiURL: st.apiURL,
    consoleURL: st.consoleURL,
  });
}

function poolNode(pool: NodePool, works: readonly ManifestWork[]): TreeNode {
  const views = viewsOf(pool.status?.conditions);
  const deletion = poolDeletion(pool, works);
  const st = pool.status ?? {};
  const auto = pool.spec.autoScaling;
  return {
    kind: "NodePool",
    apiGroup: HCP_GROUP,
    name: pool.metadata.name ?? "",
    namespace: pool.metadata.namespace,
    summary:
      summaryOf(views, "Ready") ??
      unknownSummary("NoStatus", "The node pool controller has not reported yet"),
    conditions: views,
    details: details({
      phase: st.phase,
      version: st.version,
      replicas: auto ? `${auto.min}-${auto.max} (autoscaling)` : pool.spec.replicas,
      currentReplicas: st.replicas,
      readyReplicas: st.readyReplicas,
      vmSize: pool.spec.platform.azure.vmSize,
      generation: pool.metadata.generation,
      observedGeneration: st.observedGeneration,
    }),
    ...(deletion ? { deletion } : {}),
    children: [],
  };
}

/** An ExternalAuth: its state (Ready, or why not) and the issuer and clients it gives the HostedCluster. */
function authNode(auth: ExternalAuth): TreeNode {
  const views = viewsOf(auth.status?.conditions);
  const deletion = authDeletion(auth);
  const st = auth.status ?? {};
  const clients = auth.spec.clients ?? [];
  return {
    kind: "ExternalAuth",
    apiGroup: HCP_GROUP,
    name: auth.metadata.name ?? "",
    namespace: auth.metadata.namespace,
    summary:
      summaryOf(views, "Ready") ??
      unknownSummary("NoStatus", "The external auth controller has not reported yet"),
    conditions: views,
    details: details({
      phase: st.phase,
      issuer: auth.spec.issuer.url,
      audiences: auth.spec.issuer.audiences.join(","),
      clients: clients.map((c) => `${c.componentNamespace}/${c.componentName}`).join(",") || undefined,
      generation: auth.metadata.generation,
      observedGeneration: st.observedGeneration,
    }),
    ...(deletion ? { deletion } : {}),
    children: [],
  };
}

/** The ManagementCluster with the works under it; works elsewhere under a heading of their own. */
function placementNodes(s: ClusterSnapshot): TreeNode[] {
  const mc = s.managementCluster;
  const consumer = mc?.spec.consumerName;
  const here = s.works.filter((w) => consumer !== undefined && w.metadata.namespace === consumer);
  const elsewhere = s.works.filter((w) => !here.includes(w));
  const out: TreeNode[] = [];
  if (mc)
    out.push(
      managementClusterNode(
        mc,
        here.map((w) => workNode(w, s.nodePools)),
      ),
    );
  else if (s.cluster.status?.managementCluster)
    out.push(missingManagementCluster(s.cluster.status.managementCluster));
  if (elsewhere.length > 0)
    out.push(
      heading(
        "ManifestWorks",
        elsewhere.map((w) => workNode(w, s.nodePools)),
      ),
    );
  return out;
}

function missingManagementCluster(name: string): TreeNode {
  return {
    kind: "ManagementCluster",
    apiGroup: HCP_GROUP,
    name,
    summary: unknownSummary(
      "NotFound",
      `ManagementCluster ${name} named in the cluster's status does not exist`,
    ),
    conditions: [],
    details: {},
    children: [],
  };
}

function managementClusterNode(mc: ManagementCluster, works: TreeNode[]): TreeNode {
  const views = viewsOf(mc.status?.conditions);
  const st = mc.status ?? {};
  return {
    kind: "ManagementCluster",
    apiGroup: HCP_GROUP,
    name: mc.metadata.name ?? "",
    summary: managementClusterSummary(views),
    conditions: views,
    details: details({
      consumer: mc.spec.consumerName,
      phase: st.phase,
      hostedClusters: st.hostedClusters,
      capacity: mc.spec.capacity.maxHostedClusters,
      schedulable: mc.spec.schedulable ?? true,
      region: mc.spec.region,
      agentLastHeard: st.agent?.lastHeardTime,
      agentHeartbeatSeconds: st.agent?.heartbeatSeconds,
    }),
    children: works,
  };
}

/**
 * A ManagementCluster reports no Ready of its own: its row shows Connected while it is False (what
 * the clusters under it show is stale), else Schedulable; Full is no problem for the clusters
 * already placed there.
 */
function managementClusterSummary(views: ConditionView[]): Summary {
  const ready = summaryOf(views, "Ready");
  if (ready) return ready;
  const connected = summaryOf(views, "Connected");
  if (connected?.ready === "False") return connected;
  const schedulable = summaryOf(views, "Schedulable");
  if (!schedulable)
    return unknownSummary("NoStatus", "The management cluster controller has not reported yet");
  return schedulable.ready === "False" ? { ...schedulable, severity: "Info" } : schedulable;
}

/** The zone the cluster's records live in: from its spec, else from what its work carries, else its API URL. */
function zoneOf(s: ClusterSnapshot): string {
  const prefix = s.cluster.spec.dns.baseDomainPrefix;
  const baseDomain = s.cluster.spec.dns.baseDomain ?? sentBaseDomain(s.works);
  if (baseDomain) return `${prefix}.${baseDomain}`;
  return s.cluster.status?.apiURL?.match(/^https:\/\/api\.([^:/]+)/)?.[1] ?? prefix;
}

/**
 * The Azure resources the cluster controller makes, each with the condition that records it. The
 * status keeps conditions, not resource IDs: names are derived as the controller derives them.
 */
function azureNodes(s: ClusterSnapshot): TreeNode[] {
  const azure = s.cluster.spec.platform.azure;
  const prefix = s.cluster.spec.dns.baseDomainPrefix;
  const zone = zoneOf(s);
  const ingress = `${prefix}-ingress`;
  // The public IP is the ingress's only for a Public ingress; without an ingress there is no *.apps.
  const type = s.cluster.spec.ingress?.type ?? "Public";
  const publicIp = type === "Public" ? `${ingress}-pip` : `${prefix}-api-pip`;
  const made: Details =
    type === "Disabled" ? { type, publicIp } : { type, publicIp, loadBalancer: `${ingress}-lb` };
  const records = type === "Disabled" ? `api.${zone}` : `{api,*.apps}.${zone}`;
  const rows: Array<[kind: string, name: string, condition: string, extra: Details]> = [
    [
      "ResourceGroup",
      azure.managedResourceGroup,
      "ResourceGroupReady",
      { subscription: azure.subscriptionId, location: azure.location },
    ],
    ["DnsZone", zone, "DnsZoneReady", {}],
    ["NsDelegation", prefix, "DnsDelegated", { parentZone: zone.slice(prefix.length + 1) }],
    ["Ingress", ingress, "IngressReady", made],
    ["DnsRecords", records, "DnsRecordsReady", {}],
  ];
  const views = viewsOf(s.cluster.status?.conditions);
  return rows.map(([kind, name, condition, extra]) => ({
    kind,
    apiGroup: "azure",
    name,
    summary: summaryOf(views, condition) ?? {
      ready: "",
      severity: "",
      reason: "NotReached",
      message: `${condition} not reported yet`,
    },
    conditions: views.filter((v) => v.type === condition),
    details: { condition, ...extra },
    children: [],
  }));
}
