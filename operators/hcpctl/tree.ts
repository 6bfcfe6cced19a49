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
import type { ExternalAuth, HcpCluster, ManagementCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { Manifest, ManifestCondition, ManifestWork } from "../api/work/v1.ts";
import { feedbackOf, hostedReport, poolReport } from "../api/v1alpha1/feedback.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { authDeletion, clusterDeletion, poolDeletion, workDeletion, workDeletionWhy } from "./blockers.ts";
import { find, summaryOf, unknownSummary, viewsOf } from "./conditions.ts";
import { specWrittenAt } from "./stale.ts";
import type { ClusterSnapshot, ClusterTree, ConditionView, Summary, TreeNode } from "./model.ts";

export const HCP_GROUP = "hcp.aro.dev";
export const HYPERSHIFT_GROUP = "hypershift.openshift.io";
export const WORK_GROUP = "work.open-cluster-management.io";

type Details = TreeNode["details"];

/** Drops undefined and empty values, so details hold only what the objects say. */
function details(entries: Record<string, string | number | boolean | undefined>): Details {
  const out: Details = {};
  for (const [k, v] of Object.entries(entries)) if (v !== undefined && v !== "") out[k] = v;
  return out;
}

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

/** When the work's status was last written (its status field manager's time), if recorded. */
export function statusWrittenAt(obj: { metadata: ManifestWork["metadata"] }): string | undefined {
  const times = (obj.metadata.managedFields ?? [])
    .filter((m) => m.subresource === "status" && m.time)
    .map((m) => m.time ?? "");
  return times.sort().at(-1);
}

/** The generation of a condition that is True, else nothing. */
const trueAt = (c: ConditionView | undefined): number | undefined =>
  c?.status === "True" ? c.observedGeneration : undefined;

function poolNameOf(work: ManifestWork, pools: readonly NodePool[]): string | undefined {
  const uid = work.metadata.labels?.[WORK_LABELS.nodePool];
  if (!uid) return undefined;
  return pools.find((p) => p.metadata.uid === uid)?.metadata.name ?? `(uid ${uid}, gone)`;
}

function workNode(work: ManifestWork, pools: readonly NodePool[]): TreeNode {
  const views = viewsOf(work.status?.conditions);
  const deletion = workDeletion(work);
  return {
    kind: "ManifestWork",
    apiGroup: WORK_GROUP,
    name: work.metadata.name ?? "",
    namespace: work.metadata.namespace,
    summary: workSummary(work, views),
    conditions: views,
    details: details({
      nodePool: poolNameOf(work, pools),
      generation: work.metadata.generation,
      publishedGeneration: trueAt(find(views, "Published")),
      appliedGeneration: trueAt(find(views, "Applied")),
      statusWrittenAt: statusWrittenAt(work),
      specWrittenAt: specWrittenAt(work),
    }),
    ...(deletion ? { deletion } : {}),
    children: manifestNodes(work),
  };
}

/** "generation 3 sent, 3 applied": what the service sent against what the agent says it applied. */
export function generationText(work: ManifestWork): string {
  const sent = work.metadata.generation ?? 0;
  const applied = find(work.status?.conditions, "Applied");
  const acked = applied?.status === "True" ? applied.observedGeneration : undefined;
  return `generation ${sent} sent, ${acked === undefined ? "none" : acked} applied`;
}

function fromCondition(c: ConditionView, message: string): Summary {
  return {
    ready: c.status,
    condition: c.type,
    severity: c.severity,
    reason: c.reason,
    since: c.lastTransitionTime,
    message,
  };
}

/** A work that cannot be sent, or is being deleted: nothing else about it matters first. */
function blockedWorkSummary(work: ManifestWork, views: ConditionView[]): Summary | undefined {
  const published = find(views, "Published");
  if (published?.status === "False")
    return { ...fromCondition(published, published.message), severity: "Error" };
  if (!work.metadata.deletionTimestamp) return undefined;
  const since = work.metadata.deletionTimestamp;
  return { ready: "False", severity: "Info", reason: "Deleting", since, message: workDeletionWhy(work) };
}

/**
 * A work's row: applied at the generation the service holds, or why not. The agent's Applied
 * counts only for the generation it names; before that the work waits for the agent.
 */
function workSummary(work: ManifestWork, views: ConditionView[]): Summary {
  const blocked = blockedWorkSummary(work, views);
  if (blocked) return blocked;
  const published = find(views, "Published");
  const applied = find(views, "Applied");
  const gens = generationText(work);
  if (applied?.status === "True" && applied.observedGeneration === work.metadata.generation)
    return { ...fromCondition(applied, gens), reason: "Applied" };
  if (applied?.status === "False") return fromCondition(applied, `${gens}: ${applied.message}`);
  if (published?.status === "Unknown") return fromCondition(published, `${gens}: ${published.message}`);
  return {
    ready: "False",
    severity: "Info",
    reason: "WaitingForAgent",
    since: published?.lastTransitionTime,
    message: gens,
  };
}

function statusEntry(work: ManifestWork, ordinal: number, m: Manifest): ManifestCondition | undefined {
  const entries = work.status?.resourceStatus?.manifests ?? [];
  return (
    entries.find((e) => e.resourceMeta.ordinal === ordinal && e.resourceMeta.kind === m.kind) ??
    entries.find((e) => e.resourceMeta.kind === m.kind && e.resourceMeta.name === m.metadata?.name)
  );
}

function manifestNodes(work: ManifestWork): TreeNode[] {
  const manifests = work.spec?.workload?.manifests ?? [];
  return manifests.map((m, i) => {
    const entry = statusEntry(work, i, m);
    const group = groupOf(m.apiVersion);
    if (group === HYPERSHIFT_GROUP && m.kind === "HostedCluster") return hostedClusterNode(work, m, entry);
    if (group === HYPERSHIFT_GROUP && m.kind === "NodePool") return hyperShiftPoolNode(work, m, entry);
    return manifestNode(m, entry);
  });
}

const groupOf = (apiVersion: string): string =>
  apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "";

function base(m: Manifest): Omit<TreeNode, "summary" | "conditions" | "details"> {
  return {
    kind: m.kind,
    apiGroup: groupOf(m.apiVersion),
    name: m.metadata?.name ?? "",
    ...(m.metadata?.namespace ? { namespace: m.metadata.namespace } : {}),
    children: [],
  };
}

/** The manifest's own Applied condition as a summary, when the agent says it is not applied. */
function appliedSummary(entry: ManifestCondition | undefined): Summary | undefined {
  const views = viewsOf(entry?.conditions);
  const applied = summaryOf(views, "Applied");
  if (!entry) return unknownSummary("NotReported", "The agent has reported nothing about it yet");
  return applied?.ready === "True" ? undefined : applied;
}

function manifestNode(m: Manifest, entry: ManifestCondition | undefined): TreeNode {
  const views = viewsOf(entry?.conditions);
  return {
    ...base(m),
    summary: appliedSummary(entry) ?? summaryOf(views, "Applied") ?? unknownSummary("NotReported", ""),
    conditions: views,
    details: {},
  };
}

function hostedClusterNode(work: ManifestWork, m: Manifest, entry: ManifestCondition | undefined): TreeNode {
  const report = hostedReport(feedbackOf(work, { kind: m.kind, name: m.metadata?.name ?? "" }));
  const views = viewsOf(report.conditions);
  const summary =
    appliedSummary(entry) ??
    summaryOf(views, "Available") ??
    unknownSummary("NoFeedback", "The agent has carried back no status of it yet");
  return {
    ...base(m),
    summary,
    conditions: views,
    details: details({
      version: report.completedVersion,
      updatingTo: report.updatingTo,
      installing: report.installing,
      endpoint: report.endpoint ? `${report.endpoint.host}:${report.endpoint.port}` : undefined,
    }),
  };
}

function hyperShiftPoolNode(work: ManifestWork, m: Manifest, entry: ManifestCondition | undefined): TreeNode {
  const report = poolReport(feedbackOf(work, { kind: m.kind, name: m.metadata?.name ?? "" }));
  const views = viewsOf(report.conditions);
  const summary =
    appliedSummary(entry) ??
    summaryOf(views, "Ready") ??
    unknownSummary("NoFeedback", "The agent has carried back no status of it yet");
  return {
    ...base(m),
    summary,
    conditions: views,
    details: details({ version: report.version, replicas: report.replicas }),
  };
}

/** The zone the cluster's records live in: from its spec, else from what its work carries, else its API URL. */
function zoneOf(s: ClusterSnapshot): string {
  const prefix = s.cluster.spec.dns.baseDomainPrefix;
  const baseDomain = s.cluster.spec.dns.baseDomain ?? sentBaseDomain(s.works);
  if (baseDomain) return `${prefix}.${baseDomain}`;
  return s.cluster.status?.apiURL?.match(/^https:\/\/api\.([^:/]+)/)?.[1] ?? prefix;
}

/** The base domain the HostedCluster was sent with (the region's, when the cluster names none). */
function sentBaseDomain(works: readonly ManifestWork[]): string | undefined {
  const hosted = works
    .flatMap((w) => w.spec?.workload?.manifests ?? [])
    .find((m) => m.kind === "HostedCluster" && groupOf(m.apiVersion) === HYPERSHIFT_GROUP);
  return (hosted?.spec as { dns?: { baseDomain?: string } } | undefined)?.dns?.baseDomain;
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
