/**
 * The tables `hcpctl get` prints, kubectl's way: upper-case headers, columns three spaces apart,
 * "<none>" for a value the object lacks, NAMESPACE first with -A, more columns with -o wide.
 */
import type { KubeObject } from "../api/meta/v1.ts";
import type { ExternalAuth, HcpCluster, ManagementCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import { MISSED_HEARTBEATS } from "../api/v1alpha1/managementcluster.ts";
import { find } from "./conditions.ts";
import type { ResourceKey } from "./resources.ts";
import { staleOf } from "./stale.ts";
import { ageOf, humanDuration } from "./time.ts";

/** An object that names its HcpCluster: a node pool or an external auth. */
export type ClusterChild = KubeObject & { spec: { clusterRef: { name: string } } };

/** What a row may need beyond its own object. */
export interface RowContext {
  now: number;
  /** The works that carry the object (its own, for a cluster; its pool's, for a node pool). */
  worksOf(obj: KubeObject): readonly ManifestWork[];
  /** The HcpCluster a node pool or external auth belongs to, when read. */
  clusterOf(child: ClusterChild): HcpCluster | undefined;
}

interface Column<T> {
  header: string;
  wide?: boolean;
  value(obj: T, ctx: RowContext): string | number | boolean | undefined;
}

const NONE = "<none>";

const readyOf = (o: { status?: { conditions?: Array<{ type: string; status: string; reason: string }> } }) =>
  find(o.status?.conditions, "Ready");

const stale = <T extends KubeObject>(): Column<T> => ({
  header: "STALE",
  wide: true,
  value: (o, ctx) => staleOf(o, ctx.worksOf(o), ctx.now).join("; ") || "-",
});

const age = <T extends KubeObject>(): Column<T> => ({
  header: "AGE",
  value: (o, ctx) => ageOf(o.metadata.creationTimestamp, ctx.now),
});

const CLUSTER_COLUMNS: Column<HcpCluster>[] = [
  { header: "NAME", value: (c) => c.metadata.name },
  { header: "VERSION", value: (c) => c.status?.version },
  { header: "PHASE", value: (c) => c.status?.phase },
  { header: "READY", value: (c) => readyOf(c)?.status },
  { header: "MANAGEMENT CLUSTER", value: (c) => c.status?.managementCluster },
  age(),
  { header: "REASON", wide: true, value: (c) => readyOf(c)?.reason },
  {
    header: "OBSERVED",
    wide: true,
    value: (c) => `${c.status?.observedGeneration ?? "-"}/${c.metadata.generation ?? "-"}`,
  },
  { header: "API URL", wide: true, value: (c) => c.status?.apiURL },
  { header: "CLUSTER ID", wide: true, value: (c) => c.status?.clusterID },
  stale(),
];

/** Ready nodes of desired ("2/3"), or of the autoscaling range ("2 (1-5)"). */
function nodes(p: NodePool): string {
  const ready = p.status?.readyReplicas ?? 0;
  const auto = p.spec.autoScaling;
  return auto ? `${ready} (${auto.min}-${auto.max})` : `${ready}/${p.spec.replicas ?? 0}`;
}

const POOL_COLUMNS: Column<NodePool>[] = [
  { header: "NAME", value: (p) => p.metadata.name },
  { header: "CLUSTER", value: (p) => p.spec.clusterRef.name },
  { header: "VERSION", value: (p) => p.status?.version },
  { header: "PHASE", value: (p) => p.status?.phase },
  { header: "READY", value: (p) => readyOf(p)?.status },
  { header: "NODES", value: nodes },
  age(),
  { header: "REASON", wide: true, value: (p) => readyOf(p)?.reason },
  {
    header: "OBSERVED",
    wide: true,
    value: (p) => `${p.status?.observedGeneration ?? "-"}/${p.metadata.generation ?? "-"}`,
  },
  { header: "VM SIZE", wide: true, value: (p) => p.spec.platform.azure.vmSize },
  {
    header: "MANAGEMENT CLUSTER",
    wide: true,
    value: (p, ctx) => ctx.clusterOf(p)?.status?.managementCluster,
  },
  stale(),
];

const AUTH_COLUMNS: Column<ExternalAuth>[] = [
  { header: "NAME", value: (a) => a.metadata.name },
  { header: "CLUSTER", value: (a) => a.spec.clusterRef.name },
  { header: "ISSUER", value: (a) => a.spec.issuer.url },
  { header: "PHASE", value: (a) => a.status?.phase },
  { header: "READY", value: (a) => readyOf(a)?.status },
  age(),
  { header: "REASON", wide: true, value: (a) => readyOf(a)?.reason },
  {
    header: "OBSERVED",
    wide: true,
    value: (a) => `${a.status?.observedGeneration ?? "-"}/${a.metadata.generation ?? "-"}`,
  },
  {
    header: "CLIENTS",
    wide: true,
    value: (a) => (a.spec.clients ?? []).map((c) => `${c.componentNamespace}/${c.componentName}`).join(","),
  },
  {
    header: "MANAGEMENT CLUSTER",
    wide: true,
    value: (a, ctx) => ctx.clusterOf(a)?.status?.managementCluster,
  },
  stale(),
];

/**
 * When the agent was last heard. While Connected is True the management cluster controller has
 * found it heard within its bound, so the row says "<30s" (three of its heartbeat intervals): the
 * stored lastHeardTime is refreshed only every few minutes. Otherwise the time stored at the
 * change, which is exact.
 */
function lastHeard(m: ManagementCluster, ctx: RowContext): string | undefined {
  const beat = m.status?.agent?.heartbeatSeconds;
  if (find(m.status?.conditions, "Connected")?.status === "True" && beat)
    return `<${humanDuration(MISSED_HEARTBEATS * beat * 1000)}`;
  return ageOf(m.status?.agent?.lastHeardTime, ctx.now) || undefined;
}

const MC_COLUMNS: Column<ManagementCluster>[] = [
  { header: "NAME", value: (m) => m.metadata.name },
  { header: "CONSUMER", value: (m) => m.spec.consumerName },
  { header: "PHASE", value: (m) => m.status?.phase },
  { header: "SCHEDULABLE", value: (m) => m.spec.schedulable ?? true },
  { header: "LOAD", value: (m) => `${m.status?.hostedClusters ?? 0}/${m.spec.capacity.maxHostedClusters}` },
  { header: "CONNECTED", value: (m) => find(m.status?.conditions, "Connected")?.status },
  { header: "LAST HEARD", value: lastHeard },
  age(),
  { header: "AGENT", wide: true, value: (m) => find(m.status?.conditions, "Connected")?.reason },
  { header: "REGION", wide: true, value: (m) => m.spec.region },
  {
    header: "LABELS",
    wide: true,
    value: (m) =>
      Object.entries(m.spec.labels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(",") || undefined,
  },
  stale(),
];

const COLUMNS: Record<ResourceKey, Column<never>[]> = {
  clusters: CLUSTER_COLUMNS,
  nodepools: POOL_COLUMNS,
  externalauths: AUTH_COLUMNS,
  managementclusters: MC_COLUMNS,
};

/** Paints one cell's text (padding is added after, so colour codes do not count as width). */
export type CellPainter = (text: string, row: number, column: number) => string;

/** Aligned columns; the last is not padded. */
export function formatTable(rows: readonly string[][], paint: CellPainter = (text) => text): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const pad = (cell: string, i: number, last: boolean): string =>
    last ? "" : " ".repeat((widths[i] ?? 0) - cell.length);
  return rows
    .map((row, r) =>
      row
        .map((cell, i) => (cell ? paint(cell, r, i) : cell) + pad(cell, i, i === row.length - 1))
        .join("   ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}

export interface TableOptions {
  wide: boolean;
  /** Show the NAMESPACE column (-A on a namespaced kind). */
  namespaceColumn: boolean;
}

function cell(v: string | number | boolean | undefined): string {
  return v === undefined || v === "" ? NONE : String(v);
}

export function renderObjects(
  key: ResourceKey,
  objects: readonly KubeObject[],
  ctx: RowContext,
  opts: TableOptions,
): string {
  const columns = COLUMNS[key].filter((c) => opts.wide || !c.wide);
  const header = [...(opts.namespaceColumn ? ["NAMESPACE"] : []), ...columns.map((c) => c.header)];
  const rows = objects.map((o) => [
    ...(opts.namespaceColumn ? [o.metadata.namespace ?? ""] : []),
    ...columns.map((c) => cell((c as Column<KubeObject>).value(o, ctx))),
  ]);
  return formatTable([header, ...rows]);
}
