/**
 * The clusters list: search and filters applied on the server to the operators' cache in one
 * pass, then one page cut out, so a page costs a scan of the cache and the rendering of its rows,
 * never a call to the apiserver. The filters' choices come from the same pass.
 */
import type { HcpCluster } from "../api/v1alpha1/index.ts";

export const PAGE_SIZE = 50;

export interface ClusterQuery {
  /** Part of the name, namespace, cluster ID or subscription, any case. */
  q: string;
  subscription: string;
  state: string;
  version: string;
  managementCluster: string;
  /** From 1. */
  page: number;
}

export interface ClusterRow {
  namespace: string;
  name: string;
  id: string;
  subscription: string;
  state: string;
  version: string;
  managementCluster: string;
  ready: boolean;
}

export interface ClusterPage {
  rows: ClusterRow[];
  /** Clusters that match, over every page. */
  matched: number;
  page: number;
  pages: number;
  /** The values each filter can take, from every cluster. */
  choices: { subscription: string[]; state: string[]; version: string[]; managementCluster: string[] };
}

type TextField = "q" | "subscription" | "state" | "version" | "managementCluster";

/** The query from the URL's parameters; anything unknown or malformed is ignored, a bad page is 1. */
export function parseClusterQuery(params: Record<string, string | undefined>): ClusterQuery {
  const text = (k: TextField): string => (params[k] ?? "").trim().slice(0, 256);
  const page = Number(params["page"]);
  return {
    q: text("q"),
    subscription: text("subscription"),
    state: text("state"),
    version: text("version"),
    managementCluster: text("managementCluster"),
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

export function rowOf(c: HcpCluster): ClusterRow {
  const { metadata: m, status } = c;
  return {
    namespace: m.namespace ?? "",
    name: m.name ?? "",
    id: m.uid ?? "",
    subscription: c.spec.platform.azure.subscriptionId,
    ...statusOf(status),
    version: status?.version ?? c.spec.version.id,
  };
}

function statusOf(status: HcpCluster["status"]): Pick<ClusterRow, "state" | "managementCluster" | "ready"> {
  return {
    state: status?.phase ?? "Pending",
    managementCluster: status?.managementCluster ?? "",
    ready: status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") ?? false,
  };
}

function matches(r: ClusterRow, q: ClusterQuery, needle: string): boolean {
  if (q.subscription && r.subscription !== q.subscription) return false;
  if (q.state && r.state !== q.state) return false;
  if (q.version && r.version !== q.version) return false;
  if (q.managementCluster && r.managementCluster !== q.managementCluster) return false;
  if (!needle) return true;
  return [r.name, r.namespace, r.id, r.subscription].some((f) => f.toLowerCase().includes(needle));
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const sorted = (s: Set<string>): string[] => [...s].filter(Boolean).sort();

/** One page of the clusters the query matches, sorted by namespace and name. */
export function clusterPage(clusters: readonly HcpCluster[], query: ClusterQuery): ClusterPage {
  const needle = query.q.toLowerCase();
  const choices = {
    subscription: new Set<string>(),
    state: new Set<string>(),
    version: new Set<string>(),
    managementCluster: new Set<string>(),
  };
  const matched: ClusterRow[] = [];
  for (const c of clusters) {
    const r = rowOf(c);
    choices.subscription.add(r.subscription);
    choices.state.add(r.state);
    choices.version.add(r.version);
    choices.managementCluster.add(r.managementCluster);
    if (matches(r, query, needle)) matched.push(r);
  }
  // Code-point order: localeCompare costs ten times more, and names are ASCII.
  matched.sort((a, b) => compare(a.namespace, b.namespace) || compare(a.name, b.name));
  const pages = Math.max(1, Math.ceil(matched.length / PAGE_SIZE));
  const page = Math.min(query.page, pages);
  return {
    rows: matched.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE),
    matched: matched.length,
    page,
    pages,
    choices: {
      subscription: sorted(choices.subscription),
      state: sorted(choices.state),
      version: sorted(choices.version),
      managementCluster: sorted(choices.managementCluster),
    },
  };
}
