/**
 * Routes (B.1, B.3): path patterns matched case-insensitively (ARM lower-cases paths for routing
 * and keeps the caller's casing for everything else), the resource type each serves, what each
 * method does, and which checks run before it: the api-version and the subscription's state. The
 * frontend's table is route-table.ts.
 */
import type { ArmRequest, Reply } from "../arm-request.ts";
import { CloudError, CODES } from "../errors.ts";

export type Handler = (req: ArmRequest) => Promise<Reply>;

export interface Route {
  /** For metrics and logs: the pattern, e.g. "/subscriptions/{subscriptionId}/...". */
  name: string;
  /** The ARM resource type served, as refusals name it ("Microsoft.RedHatOpenShift/hcpOpenShiftClusters"). */
  resourceType: string;
  segments: string[];
  /** "resource": one of the served versions; "subscription": 2.0; "none": not checked. */
  apiVersion: "resource" | "subscription" | "none";
  /** Whether the subscription's state is checked (every route but the subscription's own). */
  checkSubscription: boolean;
  methods: Partial<Record<string, Handler>>;
}

export interface RouteSpec {
  pattern: string;
  /** Default: the provider and the type segments of the pattern. */
  resourceType?: string;
  apiVersion?: Route["apiVersion"];
  checkSubscription?: boolean;
  methods: Partial<Record<string, Handler>>;
}

export function route(spec: RouteSpec): Route {
  return {
    name: spec.pattern,
    resourceType: spec.resourceType ?? typeOfPattern(spec.pattern),
    segments: spec.pattern.split("/").filter(Boolean),
    apiVersion: spec.apiVersion ?? "resource",
    checkSubscription: spec.checkSubscription ?? true,
    methods: spec.methods,
  };
}

/**
 * The provider and the type segments of a pattern: "…/providers/Microsoft.RedHatOpenShift/
 * hcpOpenShiftClusters/{cluster}/nodePools" → "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools".
 */
function typeOfPattern(pattern: string): string {
  const segments = pattern.split("/").filter(Boolean);
  const provider = segments.findIndex((s) => s.toLowerCase() === "providers");
  if (provider < 0) return "";
  const [namespace, ...rest] = segments.slice(provider + 1);
  return [namespace, ...rest.filter((s) => !s.startsWith("{"))].join("/");
}

/** A path segment decoded; undefined when its percent-encoding is malformed (`probe%ZZ`). */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function badEncoding(segment: string): CloudError {
  return new CloudError(400, {
    code: CODES.InvalidParameter,
    message: `The path segment '${segment.slice(0, 100)}' is not valid percent-encoding (RFC 3986).`,
  });
}

export interface Match {
  route: Route;
  /** Path parameters, decoded, with the caller's casing. */
  params: Record<string, string>;
  /** A parameter segment whose percent-encoding is malformed: the caller's error (`badEncoding`). */
  malformed?: string;
}

/**
 * The route a path matches and its parameters. A parameter segment with malformed
 * percent-encoding still matches (the route is known, for metrics and the 400); a literal one
 * matches nothing.
 */
export function match(routes: Route[], path: string): Match | undefined {
  const parts = path.split("/").filter(Boolean);
  for (const r of routes) {
    if (r.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const malformed: string[] = [];
    const ok = r.segments.every((seg, i) => {
      const raw = parts[i] ?? "";
      const part = decodeSegment(raw);
      if (!seg.startsWith("{")) return seg.toLowerCase() === part?.toLowerCase();
      if (part === undefined) malformed.push(raw);
      params[seg.slice(1, -1)] = part ?? "";
      return part !== "";
    });
    const [bad] = malformed;
    if (ok) return { route: r, params, ...(bad === undefined ? {} : { malformed: bad }) };
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
  providerOperations: `/${PROVIDER}/operations`,
  versions: `${SUB}/${PROVIDER}/locations/{location}/hcpOpenShiftVersions`,
  version: `${SUB}/${PROVIDER}/locations/{location}/hcpOpenShiftVersions/{version}`,
  roleSets: `${SUB}/${PROVIDER}/locations/{location}/hcpOperatorIdentityRoleSets`,
  roleSet: `${SUB}/${PROVIDER}/locations/{location}/hcpOperatorIdentityRoleSets/{roleSet}`,
  clusters: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters`,
  cluster: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}`,
  requestAdminCredential: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/requestAdminCredential`,
  revokeCredentials: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/revokeCredentials`,
  nodePools: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/nodePools`,
  nodePool: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/nodePools/{nodePool}`,
  externalAuths: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/externalAuths`,
  externalAuth: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/hcpOpenShiftClusters/{cluster}/externalAuths/{externalAuth}`,
  preflight: `${SUB}/resourceGroups/{resourceGroup}/${PROVIDER}/deployments/{deployment}/preflight`,
} as const;
