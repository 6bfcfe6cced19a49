/**
 * Deployment preflight (B.3): each hcpOpenShiftClusters and nodePools resource of an ARM template
 * gets the validation of a create, the CRD's included (a server-side dry run). Best effort:
 * resources with template expressions, other types and unknown API versions are skipped. The
 * answer is always 200: Succeeded, or Failed with the reasons.
 */
import type { HcpCluster, NodePool } from "../../api/v1alpha1/index.ts";
import type { KubeClient } from "../../runtime/kube.ts";
import { KubeApiError } from "../../runtime/kube.ts";
import { isServedVersion, type ApiVersion } from "../api/registry.ts";
import { toInternalProperties } from "../api/conversion.ts";
import { schemaFor } from "../api/registry.ts";
import {
  CloudError,
  CODES,
  fieldErrors,
  internalError,
  type CloudErrorBody,
  type FieldError,
} from "../errors.ts";
import type { ArmRequest, Reply } from "../arm-request.ts";
import { checkDnsPrefixFree, cloudErrorFromKube, crType, dryRunCreate } from "../service-cluster.ts";
import { CLUSTER_TYPE, NODE_POOL_TYPE, formatResourceId, type ResourceId } from "../resource-id.ts";
import { checkResourceName } from "../http/names.ts";
import { targetOf } from "./target.ts";
import { applyDefaults, checkRequired, readValue } from "../api/schema-walks.ts";
import { isObject, shorten, text, type JsonObject } from "../api/json.ts";
import { clusterToCR, defaultClusterProperties } from "../mapping/cluster.ts";
import { nodePoolToCR } from "../mapping/node-pool.ts";
import type { VersionedBody } from "../api/conversion.ts";
import { checkOperatorIdentities } from "../checks/managed-identities.ts";
import { AzureCheckError, type AzureChecks } from "../checks/azure-checks.ts";

function hasTemplateExpression(v: unknown): boolean {
  if (typeof v === "string") return v.startsWith("[") && v.endsWith("]");
  if (Array.isArray(v)) return v.some(hasTemplateExpression);
  if (isObject(v)) return Object.values(v).some(hasTemplateExpression);
  return false;
}

/** The resource's ID from its template name ("c" or "c/np"); undefined when it is not ours. */
function resourceIdOf(req: ArmRequest, r: JsonObject): ResourceId | undefined {
  const type = text(r["type"]).toLowerCase();
  const name = text(r["name"]);
  const base = {
    subscriptionId: req.params["subscriptionId"] ?? "",
    resourceGroup: req.params["resourceGroup"] ?? "",
  };
  if (type === CLUSTER_TYPE.toLowerCase()) return { kind: "cluster", ...base, cluster: name };
  const [cluster, nodePool, ...rest] = name.split("/");
  if (type === NODE_POOL_TYPE.toLowerCase() && cluster && nodePool && rest.length === 0)
    return { kind: "nodePool", ...base, cluster, nodePool };
  return undefined;
}

/** A template resource of ours: its ID, its body and the API version it is written in. */
interface Candidate {
  id: ResourceId;
  body: JsonObject;
  version: ApiVersion;
}

/** What a create of the candidate would write: the CR its body maps to, and its Azure checks. */
interface CandidateCreate {
  cr: HcpCluster | NodePool;
  /** The customer's Azure resources the create relies on, as a create checks them. */
  checkAzure: (azure: AzureChecks) => Promise<void>;
}

/** The CR a create of the candidate would write: the request's validation, then the mapping. */
function candidateCR({ id, body, version }: Candidate): CandidateCreate {
  checkResourceName("cluster", id.cluster);
  if (id.nodePool !== undefined) checkResourceName("nodePool", id.nodePool);
  const schema = schemaFor(version, id.kind);
  const errors: FieldError[] = [];
  const doc: VersionedBody = applyDefaults(schema, readValue(schema, body, "", errors)) ?? {};
  checkRequired(schema, doc, "", errors);
  const t = targetOf(id);
  const envelope = { id: formatResourceId(id), name: "", type: "", location: doc.location ?? "" };
  const ctx = {
    id,
    namespace: t.namespace,
    name: t.name,
    annotations: {},
    ...(t.clusterName ? { clusterName: t.clusterName } : {}),
  };
  const { subscriptionId } = id;
  if (id.kind === "cluster") {
    const read = toInternalProperties(doc, version, "cluster");
    errors.push(...checkOperatorIdentities(doc.identity, read));
    if (errors.length > 0) throw fieldErrors(errors);
    const properties = defaultClusterProperties(id, read);
    return {
      cr: clusterToCR({ ...envelope, properties }, ctx),
      checkAzure: (azure) => azure.cluster({ subscriptionId, identity: doc.identity, properties }),
    };
  }
  const properties = toInternalProperties(doc, version, "nodePool");
  if (errors.length > 0) throw fieldErrors(errors);
  return {
    cr: nodePoolToCR({ ...envelope, properties }, ctx),
    checkAzure: (azure) => azure.nodePool({ subscriptionId, location: doc.location ?? "", properties }),
  };
}

async function validate(
  client: KubeClient,
  candidate: Candidate,
  azure: AzureChecks | undefined,
): Promise<void> {
  const create = candidateCR(candidate);
  const { cr } = create;
  if ("dns" in cr.spec)
    await checkDnsPrefixFree(client, cr.spec.dns.baseDomainPrefix, targetOf(candidate.id));
  if (cr.spec.version?.id !== "") await dryRun(client, candidate, cr); // 2024-06-10-preview: the version comes from the catalog
  // Last, once the body is known good, as on a create.
  if (azure) await create.checkAzure(azure);
}

async function dryRun(client: KubeClient, candidate: Candidate, cr: HcpCluster | NodePool): Promise<void> {
  try {
    await dryRunCreate(client, crType(candidate.id.kind), cr);
  } catch (err) {
    if (err instanceof KubeApiError && (err.code === 409 || err.code === 404)) return; // exists / no namespace: not content
    throw cloudErrorFromKube(err) ?? err;
  }
}

function failure(id: ResourceId, name: string, err: unknown): CloudErrorBody {
  const e = err instanceof CloudError ? err : internalError();
  return {
    code: e.body.code,
    message: `Content validation failed for '${shorten(name)}'`,
    target: formatResourceId(id),
    details: e.body.details ?? [e.body],
  };
}

/**
 * ARM's own limit on the resources of one template: a preflight from ARM never lists more. Each
 * of ours costs a dry run on the apiserver, so a longer list is refused, not worked through.
 */
export const MAX_PREFLIGHT_RESOURCES = 800;

function listedResources(req: ArmRequest): unknown[] {
  const listed = isObject(req.body) ? req.body["resources"] : undefined;
  const resources: unknown[] = Array.isArray(listed) ? listed : [];
  if (resources.length > MAX_PREFLIGHT_RESOURCES)
    throw fieldErrors([
      {
        target: "resources",
        message: `A preflight lists at most ${MAX_PREFLIGHT_RESOURCES} resources (ARM's template limit), not ${resources.length}`,
      },
    ]);
  return resources;
}

export async function preflight(
  client: KubeClient,
  req: ArmRequest,
  azure: AzureChecks | undefined,
): Promise<Reply> {
  const resources = listedResources(req);
  const failures: CloudErrorBody[] = [];
  for (const r of resources) {
    if (!isObject(r) || hasTemplateExpression(r)) continue;
    const version = text(r["apiVersion"]);
    const id = resourceIdOf(req, r);
    if (!id || !isServedVersion(version)) continue;
    try {
      await validate(client, { id, body: r, version }, azure);
    } catch (err) {
      // Azure that could not answer fails no resource: ARM asks again after Retry-After.
      if (err instanceof AzureCheckError && err.status >= 500) throw err;
      if (!(err instanceof CloudError)) req.log.error("Preflight validation failed unexpectedly", err);
      failures.push(failure(id, text(r["name"]), err));
    }
  }
  const [only] = failures;
  if (!only) return { status: 200, body: { status: "Succeeded" } };
  const error =
    failures.length === 1
      ? only
      : {
          code: CODES.MultipleErrorsOccurred,
          message: "Preflight validation failed on multiple resources",
          details: failures,
        };
  return { status: 200, body: { status: "Failed", error } };
}
