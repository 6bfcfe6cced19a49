/**
 * LIST of clusters (in a subscription or a resource group) and of a cluster's node pools or
 * external auths: a page of CRs selected by label, nextLink carrying the API server's continue
 * token as $skipToken.
 */
import type { ArmRequest, Reply } from "../arm-request.ts";
import type { ArmCR } from "../mapping/common.ts";
import { CloudError, CODES } from "../errors.ts";
import { toVersioned } from "../api/conversion.ts";
import { ARM_ANNOTATIONS, ARM_LABELS } from "../../api/v1alpha1/index.ts";
import { clusterCRName, resourceGroupLabel, subscriptionNamespace } from "../mapping/names.ts";
import type { ResourceKind } from "../resource-id.ts";
import { crType } from "../service-cluster.ts";
import type { ResourceDeps } from "./deps.ts";
import { fromCR } from "./target.ts";

/** What a LIST covers: a subscription, a resource group, or a cluster's children. */
export interface ListScope {
  subscriptionId: string;
  resourceGroup?: string;
  cluster?: string;
}

/** The scope a LIST route's path names. */
export function listScope(req: ArmRequest): ListScope {
  return {
    subscriptionId: req.params["subscriptionId"] ?? "",
    resourceGroup: req.params["resourceGroup"] ?? "",
    ...(req.params["cluster"] ? { cluster: req.params["cluster"] } : {}),
  };
}

export async function listResources(
  deps: ResourceDeps,
  req: ArmRequest,
  kind: ResourceKind,
  scope: ListScope,
): Promise<Reply> {
  const namespace = subscriptionNamespace(scope.subscriptionId);
  const selectors: string[] = [];
  if (scope.resourceGroup)
    selectors.push(`${ARM_LABELS.resourceGroup}=${resourceGroupLabel(scope.resourceGroup)}`);
  if (scope.cluster)
    selectors.push(`${ARM_LABELS.cluster}=${clusterCRName(scope.resourceGroup ?? "", scope.cluster)}`);
  const token = req.query.get("$skipToken") ?? undefined;
  const page = await deps.client
    .list<ArmCR>(crType(kind), {
      namespace,
      labelSelector: selectors.join(","),
      limit: deps.pageSize,
      ...(token ? { continue: token } : {}),
    })
    .catch((err: unknown) => {
      throw token !== undefined ? (skipTokenError(err) ?? err) : err;
    });
  const value = page.items
    .filter((cr) => inScope(cr, scope))
    .map((cr) => toVersioned(fromCR(kind, cr), req.apiVersion, kind));
  const next = page.metadata.continue;
  const nextLink = next
    ? `${req.base}${req.path}?api-version=${req.apiVersion}&$skipToken=${encodeURIComponent(next)}`
    : undefined;
  return { status: 200, body: { value, ...(nextLink ? { nextLink } : {}) } };
}

/** A LIST the API server refused because of the continue token ARM passed as $skipToken. */
function skipTokenError(err: unknown): CloudError | undefined {
  const code = err instanceof Error && "code" in err ? err.code : undefined;
  if (code === 410)
    return new CloudError(400, {
      code: CODES.InvalidParameter,
      message: "The $skipToken has expired; list again from the start.",
      target: "$skipToken",
    });
  if (code === 400)
    return new CloudError(400, {
      code: CODES.InvalidParameter,
      message: "The $skipToken is not one this service issued; use the nextLink of a previous page.",
      target: "$skipToken",
    });
  return undefined;
}

function inScope(cr: ArmCR, scope: ListScope): boolean {
  const id = cr.metadata.annotations?.[ARM_ANNOTATIONS.resourceId]?.toLowerCase();
  if (!id) return false;
  const prefix = scope.resourceGroup
    ? `/subscriptions/${scope.subscriptionId}/resourcegroups/${scope.resourceGroup}/`.toLowerCase()
    : `/subscriptions/${scope.subscriptionId}/`.toLowerCase();
  if (!id.startsWith(prefix)) return false;
  if (!scope.cluster) return true;
  const cluster = `/hcpopenshiftclusters/${scope.cluster.toLowerCase()}/`;
  return id.includes(`${cluster}nodepools/`) || id.includes(`${cluster}externalauths/`);
}
