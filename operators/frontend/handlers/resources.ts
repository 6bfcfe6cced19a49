/**
 * hcpOpenShiftClusters and their nodePools and externalAuths: PUT (create 201, replace 200), PATCH
 * (202, merged onto the stored resource, never creates), GET, DELETE (202, 204 when missing). One
 * flow serves the three kinds; what each adds is in cluster.ts, node-pool.ts and external-auth.ts.
 * A PUT or PATCH is one CR write that carries its operation (writes.ts); a DELETE stores its
 * operation in a ConfigMap first, then deletes the CR.
 */
import type { ArmRequest, Reply } from "../arm-request.ts";
import type { ArmCR } from "../mapping/common.ts";
import { conflict, resourceNotFound } from "../errors.ts";
import { toVersioned } from "../api/conversion.ts";
import { ARM_ANNOTATIONS as ANNOTATIONS, ARM_LABELS as LABELS } from "../../api/v1alpha1/index.ts";
import { resourceState } from "../mapping/provisioning-state.ts";
import { readPatchBody, readPutBody } from "../api/request-body.ts";
import { resourceName, resourceType, type ResourceId, type ResourceKind } from "../resource-id.ts";
import { crType } from "../service-cluster.ts";
import { toHub, type KindRules } from "./body.ts";
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

const RULES: Record<ResourceKind, KindRules> = {
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
  const rules = RULES[id.kind];
  let hub;
  try {
    hub = await toHub(deps, rules, req, id, [readPutBody(req, id, undefined), undefined]);
  } catch (err) {
    const existing = await findCR(deps.client, id.kind, t);
    if (!existing) throw err;
    return putRead(deps, req, t, existing);
  }
  const op = newOperation(deps, req, t, "Create", { location: hub.location });
  try {
    const cr = await writeChange(deps, { req, t, hub, op, existing: undefined, mayExist: true });
    return { status: 201, body: written(req, id, cr), headers: operationHeaders(req, op, false) };
  } catch (err) {
    if (!(err instanceof FoundExisting)) throw err;
    return putRead(deps, req, t, await findCR(deps.client, id.kind, t));
  }
}

async function putRead(
  deps: ResourceDeps,
  req: ArmRequest,
  t: Target,
  existing: ArmCR | undefined,
): Promise<Reply> {
  const { id } = t;
  const rules = RULES[id.kind];
  if (existing?.metadata.deletionTimestamp)
    throw conflict('Cannot update resource while resource is "deleting"');
  const parent = await checkParent(deps, id, existing ? "update" : "create");
  if (!existing) await rules.checkCreate?.(deps, t);
  const versionFixOnly = existing ? checkSettled(existing) : false;
  const stored = existing ? fromCR(id.kind, existing) : undefined;
  const old = stored ? toVersioned(stored, req.apiVersion, id.kind) : undefined;
  const doc = readPutBody(req, id, old);
  let hub = await toHub(deps, rules, req, id, [doc, stored]);
  hub = rules.checkWithParent?.(parent, hub, !existing) ?? hub;
  if (existing && versionFixOnly && stored) checkVersionFix(existing, stored, hub);
  const op = newOperation(deps, req, t, existing ? "Update" : "Create", {
    location: hub.location,
    upgrade: isUpgrade(stored, hub),
  });
  const cr = await writeChange(deps, { req, t, hub, op, existing });
  return {
    status: existing ? 200 : 201,
    body: written(req, id, cr),
    headers: operationHeaders(req, op, false),
  };
}

export async function patchResource(deps: ResourceDeps, req: ArmRequest, id: ResourceId): Promise<Reply> {
  const t = targetOf(id);
  const rules = RULES[id.kind];
  const existing = await findCR(deps.client, id.kind, t);
  if (!existing) throw resourceNotFound(resourceType(id.kind), resourceName(id), id.resourceGroup);
  if (existing.metadata.deletionTimestamp)
    throw conflict('Cannot update resource while resource is "deleting"');
  const parent = await checkParent(deps, id, "update");
  const versionFixOnly = checkSettled(existing);
  const stored = fromCR(id.kind, existing);
  const doc = readPatchBody(req, id, toVersioned(stored, req.apiVersion, id.kind));
  let hub = await toHub(deps, rules, req, id, [doc, stored]);
  hub = rules.checkWithParent?.(parent, hub, false) ?? hub;
  if (versionFixOnly) checkVersionFix(existing, stored, hub);
  const op = newOperation(deps, req, t, "Update", {
    location: hub.location,
    upgrade: isUpgrade(stored, hub),
  });
  const cr = await writeChange(deps, { req, t, hub, op, existing });
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
    ...newOperation(deps, req, t, "Delete", { location }),
    ...(existing.metadata.uid ? { targetUid: existing.metadata.uid } : {}),
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
        labels: { [LABELS.notification]: op.notificationUri ? op.id : null },
        annotations: {
          // This request's IDs replace the last one's; a request without them leaves none.
          [ANNOTATIONS.correlationRequestId]: null,
          [ANNOTATIONS.clientRequestId]: null,
          ...requestAnnotations(req, op),
          [ANNOTATIONS.operationDoc]: null,
          [ANNOTATIONS.operationHistory]: null,
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
