/**
 * The describe tree as text, in clusterctl's layout: NAME (with the tree drawn in front) / READY /
 * SEVERITY / REASON / SINCE / MESSAGE. Siblings in the same state are grouped into one row
 * ("3 Manifests", "See …"); `--show-conditions` expands an object's conditions under it; a
 * deleting object gets a row with its finalizers and one per thing that blocks the deletion.
 */
import type { ClusterTree, ConditionView, Severity, TreeNode } from "./model.ts";
import { stateStyle, type Painter } from "./paint.ts";
import { ageOf } from "./time.ts";

/** Which objects' conditions to expand: every object's, or those of the kinds named. */
export type ShowConditions = { all: true } | { all: false; kinds: ReadonlySet<string> };

export const SHOW_NONE: ShowConditions = { all: false, kinds: new Set() };

export interface TreeRenderOptions {
  /** Milliseconds since the epoch, for SINCE. */
  now: number;
  showConditions: ShowConditions;
  /** Group siblings in the same state (default on). */
  grouping: boolean;
  paint: Painter;
}

type RowStyle = "object" | "heading" | "condition" | "deletion";

interface Row {
  tree: string;
  name: string;
  ready: string;
  severity: Severity;
  reason: string;
  since: string;
  message: string;
  style: RowStyle;
}

/** Something drawn under a node: its rows, given the connector in front of it and the indent under it. */
type Item = (lead: string, indent: string) => Row[];

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim();

export function conditionsShown(node: TreeNode, show: ShowConditions): boolean {
  if (!node.kind) return false;
  if (show.all) return true;
  const kind = node.kind.toLowerCase();
  return show.kinds.has(kind) || (node.apiGroup !== undefined && show.kinds.has(`${kind}.${node.apiGroup}`));
}

/** The summary's message; a work's says when its status was last written. */
function messageOf(node: TreeNode, now: number): string {
  const message = node.summary?.message ?? "";
  const written = node.details.statusWrittenAt;
  if (node.kind !== "ManifestWork" || typeof written !== "string") return message;
  return `${message}; status written ${ageOf(written, now)} ago`;
}

function objectRow(node: TreeNode, tree: string, opts: TreeRenderOptions): Row {
  const s = node.summary;
  const message = messageOf(node, opts.now);
  return {
    tree,
    name: node.kind ? `${node.kind}/${node.name}` : node.name,
    ready: s?.ready ?? "",
    severity: s?.severity ?? "",
    reason: s?.reason ?? "",
    since: ageOf(s?.since, opts.now),
    message: oneLine(message),
    style: node.kind ? "object" : "heading",
  };
}

function conditionRow(c: ConditionView, tree: string, now: number): Row {
  return {
    tree,
    name: c.type,
    ready: c.status,
    severity: c.severity,
    reason: c.reason,
    since: ageOf(c.lastTransitionTime, now),
    message: oneLine(c.message),
    style: "condition",
  };
}

function deletionItems(node: TreeNode, now: number): Item[] {
  const d = node.deletion;
  if (!d) return [];
  const finalizers = d.finalizers.length > 0 ? d.finalizers.join(", ") : "none";
  const first: Item = (lead) => [
    {
      tree: lead,
      name: "Deleting",
      ready: "",
      severity: "Info",
      reason: "Finalizers",
      since: ageOf(d.since, now),
      message: `finalizers: ${finalizers}`,
      style: "deletion",
    },
  ];
  const blockers: Item[] = d.blockedBy.map((b) => (lead) => [
    {
      tree: lead,
      name: `Blocked by ${b.kind}/${b.name}`,
      ready: "",
      severity: "Warning",
      reason: "",
      since: "",
      message: oneLine(b.why),
      style: "deletion",
    },
  ]);
  return [first, ...blockers];
}

function groupKind(node: TreeNode): string {
  if (node.apiGroup === "azure") return "Azure resource";
  if (!node.apiGroup || !node.apiGroup.includes(".") || node.apiGroup.endsWith(".k8s.io")) return "Manifest";
  if (["hcp.aro.dev", "hypershift.openshift.io", "work.open-cluster-management.io"].includes(node.apiGroup))
    return node.kind;
  return "Manifest";
}

function groupable(node: TreeNode, opts: TreeRenderOptions): boolean {
  return (
    Boolean(node.kind && node.summary) &&
    node.children.length === 0 &&
    !node.deletion &&
    !conditionsShown(node, opts.showConditions)
  );
}

function groupKey(node: TreeNode): string {
  const s = node.summary;
  return [groupKind(node), s?.ready, s?.severity, s?.reason].join("|");
}

/** Children in order, siblings in one state merged at the place of the first of them. */
function childItems(node: TreeNode, opts: TreeRenderOptions): Item[] {
  const groups = new Map<string, TreeNode[]>();
  if (opts.grouping)
    for (const c of node.children.filter((c) => groupable(c, opts))) {
      const key = groupKey(c);
      groups.set(key, [...(groups.get(key) ?? []), c]);
    }
  const items: Item[] = [];
  for (const child of node.children) {
    const group = opts.grouping && groupable(child, opts) ? groups.get(groupKey(child)) : undefined;
    if (group && group.length > 1) {
      if (group[0] === child) items.push((lead) => [groupRow(group, lead, opts)]);
      continue;
    }
    items.push((lead, indent) => nodeRows(child, lead, indent, opts));
  }
  return items;
}

function plural(kind: string): string {
  return kind.endsWith("s") ? kind : `${kind}s`;
}

function groupRow(nodes: TreeNode[], tree: string, opts: TreeRenderOptions): Row {
  const first = nodes[0]!;
  const kind = groupKind(first);
  const sameKind = nodes.every((n) => n.kind === first.kind);
  const names = nodes.map((n) => (sameKind ? n.name : `${n.kind}/${n.name}`));
  const newest = nodes
    .map((n) => n.summary?.since ?? "")
    .sort()
    .at(-1);
  const row = objectRow(first, tree, opts);
  return {
    ...row,
    name: `${nodes.length} ${plural(kind)}`,
    since: ageOf(newest || undefined, opts.now),
    message: `See ${names.join(", ")}`,
  };
}

function nodeRows(node: TreeNode, lead: string, indent: string, opts: TreeRenderOptions): Row[] {
  const summaryType = node.summary?.condition;
  const conditions: Item[] = conditionsShown(node, opts.showConditions)
    ? node.conditions.filter((c) => c.type !== summaryType).map((c) => (l) => [conditionRow(c, l, opts.now)])
    : [];
  const items = [...deletionItems(node, opts.now), ...conditions, ...childItems(node, opts)];
  const rows = [objectRow(node, lead, opts)];
  items.forEach((item, i) => {
    const last = i === items.length - 1;
    rows.push(...item(`${indent}${last ? "└─" : "├─"}`, `${indent}${last ? "  " : "│ "}`));
  });
  return rows;
}

const HEADER: Row = {
  tree: "",
  name: "NAME",
  ready: "READY",
  severity: "SEVERITY" as Severity,
  reason: "REASON",
  since: "SINCE",
  message: "MESSAGE",
  style: "heading",
};

function paintRow(row: Row, widths: number[], paint: Painter, header: boolean): string {
  const cells = [row.tree + row.name, row.ready, row.severity, row.reason, row.since, row.message];
  const color = header ? undefined : stateStyle(row.ready, row.severity);
  const styled = cells.map((text, i) => {
    const pad = i < cells.length - 1 ? " ".repeat(Math.max(0, (widths[i] ?? 0) - text.length)) : "";
    if (header || text === "") return text + pad;
    if (i === 0) return row.tree + paintName(row, paint) + pad;
    if (i >= 1 && i <= 3 && color) return paint(color, text) + pad;
    return text + pad;
  });
  return styled.join("  ").trimEnd();
}

function paintName(row: Row, paint: Painter): string {
  if (row.style === "heading") return paint("bold", row.name);
  if (row.style === "deletion") return paint("yellow", row.name);
  if (row.style === "condition") return paint("dim", row.name);
  return row.name;
}

export function renderTree(tree: ClusterTree, opts: TreeRenderOptions): string {
  const rows = nodeRows(tree.root, "", "", opts);
  const all = [HEADER, ...rows];
  const widths = [0, 1, 2, 3, 4].map((i) =>
    Math.max(...all.map((r) => [r.tree + r.name, r.ready, r.severity, r.reason, r.since][i]!.length)),
  );
  return all.map((r, i) => paintRow(r, widths, opts.paint, i === 0)).join("\n") + "\n";
}
