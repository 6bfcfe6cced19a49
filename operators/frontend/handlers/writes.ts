/**
 * A change's operation and its one CR write: the new operation's document goes on the CR, the
 * replaced one into its history (operations/store.ts), in the same write. A refused write leaves
 * nothing behind.
 */
import { KubeApiError } from "../../runtime/kube.ts";
import { header, type ArmRequest } from "../arm-request.ts";
import { isExternalAuth, isNodePool, type ArmCR } from "../mapping/common.ts";
import type { InternalKind, InternalResource, PropertiesOf } from "../api/internal.ts";
import {
  ARM_ANNOTATIONS,
  ARM_LABELS,
  currentOperationOf,
  type OperationDoc,
  type OperationRequest,
} from "../../api/v1alpha1/index.ts";
import { boundOf, deadlineAfter } from "../operations/deadlines.ts";
import { newOperationId, operationKey } from "../operations/document.ts";
import { notificationUriOf } from "../operations/notification-uri.ts";
import {
  formatResourceId,
  normalizeLocation,
  operationResultPath,
  operationStatusPath,
  type ResourceId,
} from "../resource-id.ts";
import { crType, kubeWrite } from "../service-cluster.ts";
import type { ResourceDeps } from "./deps.ts";
import { toCR, type Target } from "./target.ts";

/** One write of an ARM request: the resource of `kind` as it will be, its operation, the CR before. */
export interface Change<K extends InternalKind> {
  req: ArmRequest;
  t: Target;
  kind: K;
  resource: InternalResource<PropertiesOf[K]>;
  op: OperationDoc;
  existing: ArmCR | undefined;
  /** A create tried without reading first: a CR of that name is reported as FoundExisting. */
  mayExist?: boolean;
}

/** A create tried without reading first met a CR of that name: the PUT takes the reading path. */
export class FoundExisting extends Error {}

/** A new operation; `upgrade` when an Update changes version.id (its deadline is longer). */
export function newOperation(
  deps: ResourceDeps,
  req: ArmRequest,
  t: Target,
  { request, ...at }: { request: OperationRequest; location: string; upgrade?: boolean },
): OperationDoc {
  const { id } = t;
  const now = new Date().toISOString();
  const bound = boundOf(deps.deadlines, { request, kind: id.kind, upgrade: at.upgrade === true });
  const notificationUri = notificationUriOf(req, deps.notificationHosts);
  return {
    id: newOperationId(id.kind, t.name),
    request,
    resourceId: formatResourceId(id),
    kind: id.kind,
    target: t.name,
    location: normalizeLocation(at.location),
    apiVersion: req.apiVersion,
    tenantId: header(req, "x-ms-home-tenant-id"),
    clientObjectId: header(req, "x-ms-client-object-id"),
    clientRequestId: req.clientRequestId,
    correlationRequestId: req.correlationRequestId,
    startTime: now,
    lastTransitionTime: now,
    status: request === "Delete" ? "Deleting" : "Accepted",
    deadline: deadlineAfter(now, bound),
    ...(notificationUri ? { notificationUri } : {}),
  };
}

/** The annotations that name a request's operation and its IDs on the CR. */
export function requestAnnotations(req: ArmRequest, op: OperationDoc): Record<string, string> {
  return {
    [ARM_ANNOTATIONS.operation]: op.id,
    [ARM_ANNOTATIONS.operationRequest]: op.request,
    ...(op.deadline ? { [ARM_ANNOTATIONS.operationDeadline]: op.deadline } : {}),
    ...(req.correlationRequestId ? { [ARM_ANNOTATIONS.correlationRequestId]: req.correlationRequestId } : {}),
    ...(req.clientRequestId ? { [ARM_ANNOTATIONS.clientRequestId]: req.clientRequestId } : {}),
  };
}

export function operationHeaders(
  req: ArmRequest,
  op: OperationDoc,
  withLocation: boolean,
): Record<string, string> {
  const sub = req.params["subscriptionId"] ?? "";
  const q = `?api-version=${req.apiVersion}`;
  return {
    "azure-asyncoperation": `${req.base}${operationStatusPath(sub, op.location, op.id)}${q}`,
    ...(withLocation ? { location: `${req.base}${operationResultPath(sub, op.location, op.id)}${q}` } : {}),
    ...(op.notificationUri ? { "azure-asyncnotification": "Enabled" } : {}),
  };
}

/** Whether an update changes version.id: an upgrade, which has a longer deadline. */
export function isUpgrade(stored: InternalResource | undefined, resource: InternalResource): boolean {
  const before = stored?.properties.version?.id;
  const after = resource.properties.version?.id;
  return before !== undefined && after !== undefined && after !== before;
}

/**
 * The CR with the operation's document on it, and the replaced operation moved into its history:
 * one write.
 */
export async function writeChange<K extends InternalKind>(
  deps: ResourceDeps,
  change: Change<K>,
): Promise<ArmCR> {
  const { req, t, op, existing } = change;
  const history = existing ? await deps.operations.replace(t.namespace, existing) : {};
  const cr = buildCR(change, { [ARM_ANNOTATIONS.operationDoc]: JSON.stringify(op), ...history });
  const type = crType(t.id.kind);
  const written = await kubeWrite(() =>
    existing ? deps.client.replace<ArmCR>(type, cr) : create(deps, cr, t, change.mayExist === true),
  );
  // An operation of an older frontend, kept in a ConfigMap.
  const previous = existing?.metadata.annotations?.[ARM_ANNOTATIONS.operation];
  if (existing && previous && previous !== currentOperationOf(existing)?.id)
    await deps.operations.supersede(t.namespace, previous, existing, false);
  req.log.info("Wrote the CR of an ARM request", {
    operation: op.id,
    request: op.request,
    name: t.name,
    namespace: t.namespace,
  });
  return written;
}

async function create(deps: ResourceDeps, cr: ArmCR, t: Target, mayExist: boolean): Promise<ArmCR> {
  try {
    return await deps.client.create<ArmCR>(crType(t.id.kind), cr);
  } catch (err) {
    if (mayExist && err instanceof KubeApiError && err.reason === "AlreadyExists") throw new FoundExisting();
    throw err;
  }
}

/** `operationAnnotations`: the document and the history, besides the request's own. */
function buildCR<K extends InternalKind>(
  { req, t, kind, resource, op, existing }: Change<K>,
  operationAnnotations: Record<string, string>,
): ArmCR {
  const ctx = {
    id: existing ? idAsCreated(existing, t.id) : t.id,
    namespace: t.namespace,
    name: t.name,
    tenantId: tenantOfCR(existing) ?? tenantOf(req),
    annotations: { ...requestAnnotations(req, op), ...operationAnnotations },
    ...(t.clusterName ? { clusterName: t.clusterName } : {}),
  };
  const next: ArmCR = toCR(kind, resource, ctx);
  next.metadata.labels = {
    ...next.metadata.labels,
    [ARM_LABELS.operationKey]: operationKey(t.id.kind, t.name),
  };
  const cr = existing ? mergeExisting(existing, next) : next;
  // Names the operation the notifier is to watch on this CR; one without a URI takes it off.
  const labels = { ...cr.metadata.labels };
  delete labels[ARM_LABELS.notification];
  if (op.notificationUri) labels[ARM_LABELS.notification] = op.id;
  return { ...cr, metadata: { ...cr.metadata, labels } };
}

/** The tenant an HcpCluster was created for. */
function tenantOfCR(cr: ArmCR | undefined): string | undefined {
  return cr && !isNodePool(cr) && !isExternalAuth(cr) ? cr.spec.platform.azure.tenantId : undefined;
}

function tenantOf(req: ArmRequest): string | undefined {
  const tenant = header(req, "x-ms-home-tenant-id") ?? req.subscription?.properties?.tenantId;
  return typeof tenant === "string" && tenant !== "" ? tenant : undefined;
}

/**
 * The request's resource ID with the subscription cased as at creation: ARM IDs ignore case, so a
 * later request may case it otherwise, and the CR keeps what it was created with.
 */
function idAsCreated(existing: ArmCR, id: ResourceId): ResourceId {
  if (isNodePool(existing) || isExternalAuth(existing)) return id;
  const stored = existing.spec.platform.azure.subscriptionId;
  return stored && stored.toLowerCase() === id.subscriptionId.toLowerCase()
    ? { ...id, subscriptionId: stored }
    : id;
}

/**
 * The CR to PUT: the new spec and ARM annotations on the stored object's metadata (finalizers,
 * other labels and annotations, resourceVersion for optimistic concurrency), keeping the spec
 * fields ARM has no say in (placement, paused, backups, a restore, the DNS base domain, the upgrade policy).
 */
function mergeExisting(existing: ArmCR, next: ArmCR): ArmCR {
  // The last request's IDs go: this request's replace them, or none stays when it sent none.
  const kept = { ...existing.metadata.annotations };
  delete kept[ARM_ANNOTATIONS.correlationRequestId];
  delete kept[ARM_ANNOTATIONS.clientRequestId];
  const metadata = {
    ...existing.metadata,
    labels: { ...existing.metadata.labels, ...next.metadata.labels },
    annotations: { ...kept, ...next.metadata.annotations },
  };
  if (isNodePool(next) || isNodePool(existing) || isExternalAuth(next) || isExternalAuth(existing))
    return { ...next, metadata };
  const old = existing.spec;
  const upgradePolicy = old.version.upgradePolicy;
  const spec = {
    ...next.spec,
    ...(upgradePolicy ? { version: { ...next.spec.version, upgradePolicy } } : {}),
    ...(old.placement ? { placement: old.placement } : {}),
    ...(old.paused !== undefined ? { paused: old.paused } : {}),
    ...(old.backup ? { backup: old.backup } : {}),
    ...(old.restore ? { restore: old.restore } : {}),
    dns: old.dns,
  };
  return { ...next, metadata, spec };
}
