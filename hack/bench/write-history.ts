/**
 * What each write to one cluster's objects changed, as the service apiserver's watch shows it: the
 * first cluster's HcpCluster, NodePool and ManifestWorks, from their creates to the end of the
 * create. Each write the bench counts per cluster has a line here saying which conditions moved,
 * so a write that a user need not see is found by reading, not guessed.
 */
import { writeFile } from "node:fs/promises";
import { HcpClusterResource, NodePoolResource, WORK_LABELS } from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource } from "../../operators/api/work/v1.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../operators/runtime/kube.ts";

interface Condition {
  type: string;
  status?: string;
  reason?: string;
  message?: string;
}

type Observed = KubeObject & { status?: { conditions?: Condition[] } & Record<string, unknown> };

export interface HistoryLine {
  kind: string;
  name: string;
  /** ADDED, MODIFIED or DELETED, as the watch said. */
  event: string;
  changed: string[];
}

/** What moved from one version of an object to the next, in words short enough for a table. */
export function changes(before: Observed | undefined, after: Observed): string[] {
  if (!before) return ["created"];
  const out = [
    ...metadataChanges(before.metadata, after.metadata),
    ...conditionChanges(before.status?.conditions ?? [], after.status?.conditions ?? []),
  ];
  const sb: Record<string, unknown> = before.status ?? {};
  const sa: Record<string, unknown> = after.status ?? {};
  for (const key of new Set([...Object.keys(sb), ...Object.keys(sa)]))
    if (key !== "conditions" && JSON.stringify(sb[key]) !== JSON.stringify(sa[key]))
      out.push(`status.${key}`);
  return out.length ? out : ["nothing visible (resourceVersion only)"];
}

function metadataChanges(mb: KubeObject["metadata"], ma: KubeObject["metadata"]): string[] {
  const out: string[] = [];
  if (mb.generation !== ma.generation) out.push(`generation ${mb.generation} → ${ma.generation}`);
  for (const key of ["finalizers", "labels", "annotations", "ownerReferences"] as const)
    if (JSON.stringify(mb[key]) !== JSON.stringify(ma[key])) out.push(key);
  // A write that moved nothing else shows here: which manager's entry it touched.
  const entry = (m: KubeObject["metadata"]) =>
    new Map((m.managedFields ?? []).map((f) => [`${f.manager}/${f.subresource ?? ""}`, JSON.stringify(f)]));
  const [eb, ea] = [entry(mb), entry(ma)];
  for (const [k, v] of ea) if (eb.get(k) !== v) out.push(`managedFields ${k}`);
  return out;
}

function conditionChanges(before: Condition[], after: Condition[]): string[] {
  const old = new Map(before.map((c) => [c.type, c]));
  return after.flatMap((c) => {
    const o = old.get(c.type);
    if (!o) return [`+${c.type}=${c.status} ${c.reason ?? ""}`.trim()];
    if (o.status !== c.status || o.reason !== c.reason)
      return [`${c.type} ${o.status}/${o.reason ?? ""} → ${c.status}/${c.reason ?? ""}`];
    return o.message !== c.message ? [`${c.type} message`] : [];
  });
}

/** Watches the first cluster's objects until `stop`; `write(file)` keeps what was seen. */
export function watchWriteHistory(
  service: KubeClient,
  ref: { namespace: string; name: string },
  signal: AbortSignal,
): { lines: HistoryLine[]; write(file: string): Promise<void> } {
  const lines: HistoryLine[] = [];
  const follow = async (type: ResourceType, selector: { fieldSelector?: string; labelSelector?: string }) => {
    const last = new Map<string, Observed>();
    try {
      for await (const e of service.watch<Observed>(type, { namespace: undefined, ...selector, signal })) {
        const name = e.object.metadata.name ?? "";
        if (e.type === "BOOKMARK" || e.type === "ERROR") continue;
        lines.push({ kind: type.kind, name, event: e.type, changed: changes(last.get(name), e.object) });
        last.set(name, e.object);
      }
    } catch {
      // Aborted at the end of the create; a watch the apiserver closes early leaves a shorter history.
    }
  };
  void follow(HcpClusterResource, {
    fieldSelector: `metadata.name=${ref.name},metadata.namespace=${ref.namespace}`,
  });
  void follow(NodePoolResource, {
    fieldSelector: `metadata.name=${ref.name}-workers,metadata.namespace=${ref.namespace}`,
  });
  void follow(ManifestWorkResource, {
    labelSelector: `${WORK_LABELS.clusterName}=${ref.name},${WORK_LABELS.clusterNamespace}=${ref.namespace}`,
  });
  return {
    lines,
    write: (file) => writeFile(file, JSON.stringify(lines, null, 1)),
  };
}

/** Writes per kind in the history (its creates included). */
export function historyCounts(lines: HistoryLine[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lines) out[l.kind] = (out[l.kind] ?? 0) + 1;
  return out;
}
