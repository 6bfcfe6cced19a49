/**
 * hcpOpenShiftClusters and their nodePools and externalAuths: PUT (create 201, replace 200), PATCH
 * (202, merged onto the stored resource, never creates), GET, DELETE (202, 204 when missing). One
 * flow serves the three kinds; what each adds is in cluster.ts, node-pool.ts and external-auth.ts.
 * A PUT or PATCH is one CR write that carries its operation (writes.ts); a DELETE stores its
 * operation in a ConfigMap first, then deletes the CR.
 */
import type { ArmRequest, Reply } from "../arm-request.ts";
import type { ArmCR } from "../mapping/common.ts";
import { conflict, resourceNotFound, type CloudError } from "../errors.ts";
import { toVersioned, type VersionedBody } from "../api/conversion.ts";
import type { InternalKind, InternalResource, PropertiesOf } from "../api/internal.ts";
import {
  ARM_ANNOTATIONS,
  ARM_LABELS,
  originalUid,
  type OperationDoc,
  resourceState,
} from "../../api/v1alpha1/index.ts";
import { readPatchBody, readPutBody } from "../api/request-body.ts";
import { resourceName, resourceType, type ResourceId } from "../resource-id.ts";
import { crType } from "../service-cluster.ts";
import { toInternal, type KindRules } from "./body.ts";
import { clusterRules } from "./cluster.ts";
import { checkParent, checkSettled, checkVersionFix } from "./conflicts.ts";
import type { ResourceDeps } from "./deps.ts";
import { externalAuthRules } from "./external-auth.ts";
import { nodePoolRules } from "./node-pool.ts";
import { findCR, fromCR, targetOf, type Target } from "./target.ts";
import {
  FoundExisting,
  isUpgrade,
  newOperation,
  operationHeaders,
  requestAnnotations,
  writeChange,
} from "./writes.ts";

const RULES: { [K in InternalKind]: KindRules<K> } = {
  cluster: clusterRules,
  nodePool: nodePoolRules,
  externalAuth: externalAuthRules,
};

/** The reply to a PUT or PATCH: the resource as written, in the request's api-version. */
function written(req: ArmRequest, id: ResourceId, cr: ArmCR): unknown {
  return toVersioned(fromCR(id.kind, cr), req.apiVersion, id.kind);
}

export async function getResource(deps: ResourceDeps, req: ArmRequest, id: ResourceId): Promise<Reply> {
  const cr = await findCR(deps.client, id.kind, targetOf(id));
  if (!cr) throw resourceNotFound(resourceType(id.kind), resourceName(id), id.resourceGroup);
  return { status: 200, body: toVersioned(fromCR(id.kind, cr), req.apiVersion, id.kind) };
}

export async function putResource(deps: ResourceDeps, req: ArmRequest, id: ResourceId): Promise<Reply> {
  // With the customer's Azure to check, reading first is cheaper: a PUT of an existing cluster
  // would otherwise pay for a create's checks (tens of ARM calls) before learning it is an update.
  if (id.kind === "cluster" && !deps.azure) return createFirst(deps, req, id);
  const t = targetOf(id);
  return putRead(deps, req, t, await findCR(deps.client, id.kind, t));
}

/**
 * Most cluster PUTs create, so the create is tried without reading first: one apiserver call
 * instead of two. When a CR of that name exists, the reading path answers with that resource in
 * view; a body refused as a create is the answer unless the resource turns out to exist. (A node
 * pool PUT reads its parent anyway.)
 */
async function createFirst(deps: ResourceDeps, req: ArmRequest, id: ResourceId): Promise<Reply> {
  const t = targetOf(id);
  let resource;
  try {
    const doc = readPutBody(req, id, undefined);
    resource = await toInternal(deps, clusterRules, req, { kind: "cluster", id, doc, stored: undefined });
  } catch (err) {
    const existing = await findCR(deps.client, id.kind, t);
    if (!existing) throw err;
    return putRead(deps, req, t, existing);
  }
  const op = newOperation(deps, req, t, { request: "Create", location: resource.location });
  try {
    const cr = await writeChange(deps, {
      req,
      t,
      kind: "cluster",
      resource,
      op,
      existing: undefined,
      mayExist: true,
    });
    return { status: 201, body: written(req, id, cr), headers: operationHeaders(req, op, false) };
  } catch (err) {
    if (!(err instanceof FoundExisting)) throw err;
    return putRead(deps, req, t, await findCR(deps.client, id.kind, t));
  }
}

/** The CR a change replaces, settled; its resource; whether only a new version may pass (conflicts.ts). */
interface Prior<K extends InternalKind> {
  existing: ArmCR;
  stored: InternalResource<PropertiesOf[K]>;
  versionFixOnly: boolean;
}

const deleting = (): CloudError => conflict('Cannot update resource while resource is "deleting"');

function priorOf<K extends InternalKind>(kind: K, existing: ArmCR): Prior<K> {
  return { existing, versionFixOnly: checkSettled(existing), stored: fromCR(kind, existing) };
}

/**
 * The resource a PUT or PATCH asks for, checked once (body.ts, then against its parent and, for a
 * node pool held on its version, as the version fix it must be), and its one write.
 */
async function change<K extends InternalKind>(
  deps: ResourceDeps,
  req: ArmRequest,
  t: Target,
  {
    kind,
    doc,
    prior,
    parent,
  }: { kind: K; doc: VersionedBody; prior: Prior<K> | undefined; parent: ArmCR | undefined },
): Promise<{ cr: ArmCR; op: OperationDoc }> {
  const rules = RULES[kind];
  const stored = prior?.stored;
  const checked = await toInternal(deps, rules, req, { kind, id: t.id, doc, stored });
  const resource = rules.checkWithParent?.(parent, checked, !prior) ?? checked;
  if (prior?.versionFixOnly) checkVersionFix(prior.existing, prior.stored, resource);
  const op = newOperation(deps, req, t, {
    request: prior ? "Update" : "Create",
    location: resource.location,
    upgrade: isUpgrade(stored, resource),
  });
  const cr = await writeChange(deps, { req, t, kind, resource, op, existing: prior?.existing });
  return { cr, op };
}

async function putRead(
  deps: ResourceDeps,
  req: ArmRequest,
  t: Target,
  existing: ArmCR | undefined,
): Promise<Reply> {
  const { id } = t;
  if (existing?.metadata.deletionTimestamp) throw deleting();
  const parent = await checkParent(deps, id, existing ? "update" : "create");
  if (!existing) await RULES[id.kind].checkCreate?.(deps, t);
  const prior = existing ? priorOf(id.kind, existing) : undefined;
  const old = prior ? toVersioned(prior.stored, req.apiVersion, id.kind) : undefined;
  const doc = readPutBody(req, id, old);
  const { cr, op } = await change(deps, req, t, { kind: id.kind, doc, prior, parent });
  return {
    status: existing ? 200 : 201,
    body: written(req, id, cr),
    headers: operationHeaders(req, op, false),
  };
}

export async function patchResource(deps: ResourceDeps, req: ArmRequest, id: ResourceId): Promise<Reply> {
  const t = targetOf(id);
  const existing = await findCR(deps.client, id.kind, t);
  if (!existing) throw resourceNotFound(resourceType(id.kind), resourceName(id), id.resourceGroup);
  if (existing.metadata.deletionTimestamp) throw deleting();
  const parent = await checkParent(deps, id, "update");
  const prior = priorOf(id.kind, existing);
  const doc = readPatchBody(req, id, toVersioned(prior.stored, req.apiVersion, id.kind));
  const { cr, op } = await change(deps, req, t, { kind: id.kind, doc, prior, parent });
  return { status: 202, body: written(req, id, cr), headers: operationHeaders(req, op, true) };
}

export async function deleteResource(deps: ResourceDeps, req: ArmRequest, id: ResourceId): Promise<Reply> {
  const t = targetOf(id);
  const existing = await findCR(deps.client, id.kind, t);
  if (!existing) return { status: 204 };
  // A delete past its deadline is Failed, and ARM may send another: it starts a new operation.
  if (resourceState(existing).state === "Deleting") throw conflict("Resource is already deleting");
  if (id.kind !== "cluster") await checkParent(deps, id, "delete");
  const location = fromCR(id.kind, existing).location;
  const op = {
    ...newOperation(deps, req, t, { request: "Delete", location }),
    // The uid it was first created with, so a region restore between this and a poll keeps it.
    ...(originalUid(existing) ? { targetUid: originalUid(existing) } : {}),
  };
  await deps.operations.create(t.namespace, op);
  await deps.operations.retire(t.namespace, existing);
  await RULES[id.kind].beforeDelete?.(deps, t);
  const type = crType(id.kind);
  await deps.client.mergePatch(
    type,
    { name: t.name, namespace: t.namespace },
    {
      metadata: {
        labels: { [ARM_LABELS.notification]: op.notificationUri ? op.id : null },
        annotations: {
          // This request's IDs replace the last one's; a request without them leaves none.
          [ARM_ANNOTATIONS.correlationRequestId]: null,
          [ARM_ANNOTATIONS.clientRequestId]: null,
          ...requestAnnotations(req, op),
          [ARM_ANNOTATIONS.operationDoc]: null,
          [ARM_ANNOTATIONS.operationHistory]: null,
        },
      },
    },
  );
  if (!existing.metadata.deletionTimestamp)
    await deps.client.delete(
      type,
      { name: t.name, namespace: t.namespace },
      { propagationPolicy: "Background" },
    );
  req.log.info("Deleting the CR of an ARM request", {
    operation: op.id,
    name: t.name,
    namespace: t.namespace,
  });
  return { status: 202, headers: operationHeaders(req, op, true) };
}
