/**
 * The frontend's routes: each pattern with the resource type it serves, its checks, and the
 * handler of each method. Handlers that act on one resource take its ID as the names middleware
 * parsed it (names.ts), once per request.
 */
import type { KubeClient } from "../../runtime/kube.ts";
import type { ArmRequest } from "../arm-request.ts";
import type { AzureChecks } from "../checks/azure-checks.ts";
import { internalError } from "../errors.ts";
import { requestAdminCredential, revokeCredentials } from "../handlers/credentials.ts";
import type { ResourceDeps } from "../handlers/deps.ts";
import { listResources, listScope } from "../handlers/list.ts";
import { deleteResource, getResource, patchResource, putResource } from "../handlers/resources.ts";
import { getSubscription, putSubscription, type SubscriptionStore } from "../handlers/subscriptions.ts";
import { getVersions, type CatalogReader } from "../versions/openshift-versions.ts";
import { getOperationResult, getOperationStatus } from "../operations/endpoints.ts";
import type { OperationStore } from "../operations/store.ts";
import { getRoleSets } from "../checks/operator-identities.ts";
import { preflight } from "../handlers/preflight.ts";
import { listProviderOperations } from "../handlers/provider-operations.ts";
import { PROVIDER, type ResourceId } from "../resource-id.ts";
import { PATTERNS, route, type Handler, type Route } from "./routes.ts";

export interface RouteDeps {
  client: KubeClient;
  operations: OperationStore;
  subscriptions: SubscriptionStore;
  catalog: CatalogReader;
  resources: ResourceDeps;
  azure: AzureChecks | undefined;
}

const CLUSTERS = `${PROVIDER}/hcpOpenShiftClusters`;
const NODE_POOLS = `${PROVIDER}/nodePools`;
const EXTERNAL_AUTHS = `${PROVIDER}/externalAuths`;
const OPERATIONS = `${PROVIDER}/hcpOperationStatuses`;
const VERSIONS = `${PROVIDER}/locations/hcpOpenShiftVersions`;
const ROLE_SETS = `${PROVIDER}/locations/hcpOperatorIdentityRoleSets`;

/** The resource the request's path names; only routes with a cluster in their path use it. */
function resourceOf(req: ArmRequest): ResourceId {
  if (!req.resource) throw internalError();
  return req.resource;
}

export function routeTable(deps: RouteDeps): Route[] {
  const res = deps.resources;
  const crud: Partial<Record<string, Handler>> = {
    GET: (r) => getResource(res, r, resourceOf(r)),
    PUT: (r) => putResource(res, r, resourceOf(r)),
    PATCH: (r) => patchResource(res, r, resourceOf(r)),
    DELETE: (r) => deleteResource(res, r, resourceOf(r)),
  };
  const ops = { client: deps.client, operations: deps.operations };
  const subs = { ...ops, subscriptions: deps.subscriptions };
  const versions: Handler = (r) => getVersions(deps.catalog, r);
  const roleSets: Handler = (r) => getRoleSets(deps.catalog, r);
  return [
    route({
      pattern: PATTERNS.subscription,
      resourceType: CLUSTERS,
      apiVersion: "subscription",
      checkSubscription: false,
      methods: { PUT: (r) => putSubscription(subs, r), GET: (r) => getSubscription(subs, r) },
    }),
    route({
      pattern: PATTERNS.clustersInSubscription,
      resourceType: CLUSTERS,
      methods: { GET: (r) => listResources(res, r, "cluster", listScope(r)) },
    }),
    route({
      pattern: PATTERNS.operationStatus,
      resourceType: OPERATIONS,
      methods: { GET: (r) => getOperationStatus(ops, r) },
    }),
    route({
      pattern: PATTERNS.operationResult,
      resourceType: OPERATIONS,
      methods: { GET: (r) => getOperationResult(ops, r) },
    }),
    route({ pattern: PATTERNS.versions, resourceType: VERSIONS, methods: { GET: versions } }),
    route({ pattern: PATTERNS.version, resourceType: VERSIONS, methods: { GET: versions } }),
    route({ pattern: PATTERNS.roleSets, resourceType: ROLE_SETS, methods: { GET: roleSets } }),
    route({ pattern: PATTERNS.roleSet, resourceType: ROLE_SETS, methods: { GET: roleSets } }),
    // Tenant-wide, and the same whatever the api-version (ARM asks with any of the provider's).
    route({
      pattern: PATTERNS.providerOperations,
      apiVersion: "none",
      checkSubscription: false,
      methods: { GET: () => listProviderOperations() },
    }),
    route({
      pattern: PATTERNS.clusters,
      resourceType: CLUSTERS,
      methods: { GET: (r) => listResources(res, r, "cluster", listScope(r)) },
    }),
    route({ pattern: PATTERNS.cluster, resourceType: CLUSTERS, methods: crud }),
    route({
      pattern: PATTERNS.requestAdminCredential,
      resourceType: CLUSTERS,
      methods: { POST: (r) => requestAdminCredential(res, r, resourceOf(r)) },
    }),
    route({
      pattern: PATTERNS.revokeCredentials,
      resourceType: CLUSTERS,
      methods: { POST: (r) => revokeCredentials(res, r, resourceOf(r)) },
    }),
    route({
      pattern: PATTERNS.nodePools,
      resourceType: NODE_POOLS,
      methods: { GET: (r) => listResources(res, r, "nodePool", listScope(r)) },
    }),
    route({ pattern: PATTERNS.nodePool, resourceType: NODE_POOLS, methods: crud }),
    route({
      pattern: PATTERNS.externalAuths,
      resourceType: EXTERNAL_AUTHS,
      methods: { GET: (r) => listResources(res, r, "externalAuth", listScope(r)) },
    }),
    route({ pattern: PATTERNS.externalAuth, resourceType: EXTERNAL_AUTHS, methods: crud }),
    route({
      pattern: PATTERNS.preflight,
      apiVersion: "none",
      methods: { POST: (r) => preflight(deps.client, r, deps.azure) },
    }),
  ];
}
