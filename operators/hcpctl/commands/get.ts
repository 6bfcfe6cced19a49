/**
 * `hcpctl get clusters|nodepools|externalauths|managementclusters [NAME...]`: kubectl's get for the four kinds,
 * with the filters an SRE needs across the region (--management-cluster, --phase, --stale) and the
 * output forms kubectl has (-o wide|json|yaml|name).
 */
import type { KubeObject } from "../../api/meta/v1.ts";
import { HcpClusterResource, type HcpCluster } from "../../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../api/work/v1.ts";
import { WORK_LABELS } from "../../api/v1alpha1/labels.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { printData, type OutputFormat } from "../output.ts";
import { resolvePhase, resolveResource, type ResourceInfo } from "../resources.ts";
import { staleOf } from "../stale.ts";
import { renderObjects, type ClusterChild, type RowContext } from "../table.ts";

export interface GetOptions {
  namespace?: string;
  allNamespaces: boolean;
  selector?: string;
  managementCluster?: string;
  phase?: string;
  stale: boolean;
  output: OutputFormat;
}

interface Query {
  info: ResourceInfo;
  names: string[];
  /** undefined: all namespaces (or a cluster-scoped kind). */
  namespace: string | undefined;
  phase?: string;
  opts: GetOptions;
}

/** Everything about the arguments that can be wrong before any request. */
function validate(resource: string, names: string[], opts: GetOptions): Omit<Query, "namespace"> {
  const info = resolveResource(resource);
  if (names.length > 0 && opts.selector)
    throw new CliError("names and a label selector (-l) cannot be given together");
  if (names.length > 0 && opts.allNamespaces && info.type.namespaced)
    throw new CliError("an object cannot be named across all namespaces (-A): give -n NAMESPACE instead");
  const phase = opts.phase === undefined ? undefined : resolvePhase(info, opts.phase);
  return { info, names, opts, ...(phase ? { phase } : {}) };
}

async function fetchObjects(conn: Connection, q: Query): Promise<KubeObject[]> {
  const { info } = q;
  if (q.names.length === 0)
    return (await conn.list(info.type, { namespace: q.namespace, labelSelector: q.opts.selector })).items;
  const found = await Promise.all(q.names.map((n) => conn.get(info.type, n, q.namespace)));
  return found.map((obj, i) => {
    if (obj) return obj;
    const where = info.type.namespaced ? ` in namespace "${q.namespace ?? ""}"` : "";
    throw new CliError(`${info.singular} "${q.names[i] ?? ""}" not found${where}`);
  });
}

/** Kinds whose objects name their HcpCluster in spec.clusterRef. */
const clusterChild = (q: Query): boolean => q.info.key === "nodepools" || q.info.key === "externalauths";

/**
 * The works and clusters a row may look at, read only when the columns or filters need them. An
 * external auth has no work of its own (its cluster's work carries it), so none is read for it.
 */
async function rowContext(conn: Connection, q: Query, now: number): Promise<RowContext> {
  const wide = q.opts.output === "wide";
  const needWorks = (wide || q.opts.stale) && (q.info.key === "clusters" || q.info.key === "nodepools");
  const needClusters = clusterChild(q) && (wide || q.opts.managementCluster !== undefined);
  const [works, clusters] = await Promise.all([
    needWorks
      ? conn.list<ManifestWork>(ManifestWorkResource, { labelSelector: WORK_LABELS.clusterUid })
      : undefined,
    needClusters ? conn.list<HcpCluster>(HcpClusterResource, { namespace: q.namespace }) : undefined,
  ]);
  const workItems = works?.items ?? [];
  return {
    now,
    worksOf: (obj) =>
      q.info.key === "nodepools"
        ? workItems.filter((w) => w.metadata.labels?.[WORK_LABELS.nodePool] === obj.metadata.uid)
        : workItems.filter(
            (w) =>
              w.metadata.labels?.[WORK_LABELS.clusterUid] === obj.metadata.uid &&
              !w.metadata.labels?.[WORK_LABELS.nodePool],
          ),
    clusterOf: (child: ClusterChild) =>
      clusters?.items.find(
        (c) =>
          c.metadata.namespace === child.metadata.namespace && c.metadata.name === child.spec.clusterRef.name,
      ),
  };
}

function managementClusterOf(q: Query, obj: KubeObject, ctx: RowContext): string | undefined {
  if (q.info.key === "managementclusters") return obj.metadata.name;
  if (q.info.key === "clusters") return (obj as HcpCluster).status?.managementCluster;
  return ctx.clusterOf(obj as ClusterChild)?.status?.managementCluster;
}

function filter(q: Query, objects: KubeObject[], ctx: RowContext): KubeObject[] {
  return objects.filter((o) => {
    const status = (o as { status?: { phase?: string } }).status;
    if (q.phase !== undefined && status?.phase !== q.phase) return false;
    if (q.opts.managementCluster !== undefined && managementClusterOf(q, o, ctx) !== q.opts.managementCluster)
      return false;
    return !q.opts.stale || staleOf(o, ctx.worksOf(o), ctx.now).length > 0;
  });
}

const sortKey = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

function noneFound(q: Query): string {
  if (!q.info.type.namespaced || q.namespace === undefined) return "No resources found\n";
  return `No resources found in ${q.namespace} namespace.\n`;
}

export async function runGet(
  io: Io,
  connect: Connect,
  args: { resource: string; names: string[]; opts: GetOptions },
): Promise<void> {
  const base = validate(args.resource, args.names, args.opts);
  const conn = connect();
  const namespaced = base.info.type.namespaced;
  const namespace =
    !namespaced || args.opts.allNamespaces ? undefined : (args.opts.namespace ?? conn.namespace);
  const q: Query = { ...base, namespace };
  const now = io.now();
  const [objects, ctx] = await Promise.all([fetchObjects(conn, q), rowContext(conn, q, now)]);
  const shown = filter(q, objects, ctx).sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
  const { output } = args.opts;
  if (output === "json" || output === "yaml" || output === "name") {
    io.stdout.write(printData(q.info, shown, output, q.names.length === 1));
    return;
  }
  if (shown.length === 0) {
    io.stderr.write(noneFound(q));
    return;
  }
  const opts = { wide: output === "wide", namespaceColumn: namespaced && namespace === undefined };
  io.stdout.write(renderObjects(q.info.key, shown, ctx, opts));
}
