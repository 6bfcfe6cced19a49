/**
 * The route table (B.1, B.3): path patterns matched case-insensitively (ARM lower-cases paths for
 * routing and keeps the caller's casing for everything else), what each method does, and which
 * checks run before it: the api-version and the subscription's state.
 */
import type { ArmRequest, Reply } from "./arm-request.ts";

export type Handler = (req: ArmRequest) => Promise<Reply>;

export interface Route {
  /** For metrics and logs: the pattern, e.g. "/subscriptions/{subscriptionId}/...". */
  name: string;
  segments: string[];
  /** "resource": one of the served versions; "subscription": 2.0; "none": not checked. */
  apiVersion: "resource" | "subscription" | "none";
  /** Whether the subscription's state is checked (every route but the subscription's own). */
  checkSubscription: boolean;
  methods: Partial<Record<string, Handler>>;
}

export interface RouteSpec {
  pattern: string;
  apiVersion?: Route["apiVersion"];
  checkSubscription?: boolean;
  methods: Partial<Record<string, Handler>>;
}

export function route(spec: RouteSpec): Route {
  return {
    name: spec.pattern,
    segments: spec.pattern.split("/").filter(Boolean),
    apiVersion: spec.apiVersion ?? "resource",
    checkSubscription: spec.checkSubscription ?? true,
    methods: spec.methods,
  };
}

/** The route and path parameters (caller's casing) a path matches. */
export function match(
  routes: Route[],
  path: string,
): { route: Route; params: Record<string, string> } | undefined {
  const parts = path.split("/").filter(Boolean);
  for (const r of routes) {
    if (r.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = r.segments.every((seg, i) => {
      const part = decodeURIComponent(parts[i] ?? "");
      if (seg.startsWith("{")) {
        params[seg.slice(1, -1)] = part;
        return part !== "";
      }
      return seg.toLowerCase() === part.toLowerCase();
    });
    if (ok) return { route: r, params };
  }
  return undefined;
}

const SUB = "/subscriptions/{subscriptionId}";
const PROVIDER = "providers/Microsoft.RedHatOpenShift";
export const PATTERNS = {
  subscription: SUB,
  clustersInSubscription: `${SUB}/${PROVIDER}/hcpOpenShiftClusters`,
  operationStatus: `${SUB}/${PROVIDER}/locations/{location}/hcpOperationStatuses/{operationId}`,
  operationResult: `${SUB}/${PROVIDER}/locations/{location}/hcpOperationResults/{operationId}`,
  versions: `${SUB}/${PROVIDER}/locations/{location}/hcpOpenShiftVersions`,
  version: `${SUB}/${PROVIDER}/locations/{location}/hcpOpenShiftVersions/{version}`,
  clusters: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters`,
  cluster: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}`,
  requestAdminCredential: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/requestAdminCredential`,
  revokeCredentials: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/revokeCredentials`,
  nodePools: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/nodePools`,
  nodePool: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/nodePools/{nodePool}`,
  preflight: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/deployments/{deployment}/preflight`,
} as const;
