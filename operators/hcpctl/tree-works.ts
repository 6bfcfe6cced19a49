/**
 * The describe tree's ManifestWork nodes and what they carry: each work's row (applied at the
 * generation the service holds, or why not) and its manifests, the HostedCluster and HyperShift
 * NodePool read from the agent's feedback. Pure, as tree.ts.
 */
import { HYPERSHIFT_GROUP } from "../api/hypershift/v1beta1/index.ts";
import { feedbackOf, hostedReport, poolReport } from "../api/v1alpha1/feedback.ts";
import type { NodePool } from "../api/v1alpha1/index.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { WORK_GROUP, type Manifest, type ManifestCondition, type ManifestWork } from "../api/work/v1.ts";
import { workDeletion, workDeletionWhy } from "./blockers.ts";
import { find, summaryOf, unknownSummary, viewsOf } from "./conditions.ts";
import type { ConditionView, Summary, TreeNode } from "./model.ts";
import { specWrittenAt } from "./stale.ts";

export type Details = TreeNode["details"];

/** Drops undefined and empty values, so details hold only what the objects say. */
export function details(entries: Record<string, string | number | boolean | undefined>): Details {
  const out: Details = {};
  for (const [k, v] of Object.entries(entries)) if (v !== undefined && v !== "") out[k] = v;
  return out;
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

export function workNode(work: ManifestWork, pools: readonly NodePool[]): TreeNode {
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

/** The base domain the HostedCluster was sent with (the region's, when the cluster names none). */
export function sentBaseDomain(works: readonly ManifestWork[]): string | undefined {
  const hosted = works
    .flatMap((w) => w.spec?.workload?.manifests ?? [])
    .find((m) => m.kind === "HostedCluster" && groupOf(m.apiVersion) === HYPERSHIFT_GROUP);
  return (hosted?.spec as { dns?: { baseDomain?: string } } | undefined)?.dns?.baseDomain;
}
