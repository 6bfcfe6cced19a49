/**
 * `locations/{loc}/hcpOperationStatuses/{id}` and `hcpOperationResults/{id}` (B.3): the operation
 * is found by ID and its status computed from the CR on every poll until it is frozen
 * (operations.ts); an operation is visible only to the tenant, client and subscription that
 * started it.
 */
import type { KubeClient } from "../../runtime/kube.ts";
import type { ApiVersion } from "../api/registry.ts";
import { toVersioned } from "../api/conversion.ts";
import { CloudError, CODES, internalError } from "../errors.ts";
import { header, type ArmRequest, type Reply } from "../arm-request.ts";
import { subscriptionNamespace } from "../mapping/names.ts";
import { isTerminal, type Observed, type OperationDoc } from "../../api/v1alpha1/index.ts";
import type { FoundOperation, OperationStore } from "./store.ts";
import { normalizeLocation, operationResultPath, operationStatusPath } from "../resource-id.ts";
import { fromCR } from "../handlers/target.ts";
import { operationProgress } from "./progress.ts";
import { credentialResult } from "../handlers/credentials.ts";

export interface OperationDeps {
  client: KubeClient;
  operations: OperationStore;
}

function notFound(id: string): CloudError {
  return new CloudError(404, { code: CODES.NotFound, message: `The operation '${id}' was not found.` });
}

function visible(doc: OperationDoc, req: ArmRequest): boolean {
  const matches = (stored: string | undefined, name: string): boolean =>
    stored === undefined || stored.toLowerCase() === (header(req, name) ?? "").toLowerCase();
  return (
    matches(doc.tenantId, "x-ms-home-tenant-id") &&
    matches(doc.clientObjectId, "x-ms-client-object-id") &&
    normalizeLocation(req.params["location"] ?? "") === doc.location
  );
}

/** The operation, brought up to date with its CR; also returns the CR for the result endpoint. */
async function current(deps: OperationDeps, req: ArmRequest): Promise<FoundOperation> {
  const id = req.params["operationId"] ?? "";
  const namespace = subscriptionNamespace(req.params["subscriptionId"] ?? "");
  const found = await deps.operations.find(namespace, id);
  if (!found || !visible(found.doc, req)) throw notFound(id);
  return found;
}

/**
 * The operation status ARM reads: the poll's answer, and the body of its notification (notifier.ts).
 * With the CR it acts on, a running one also says how far it has come and what it waits on
 * (operation-progress.ts).
 */
export function operationStatusBody(
  doc: OperationDoc,
  subscriptionId: string,
  cr?: Observed,
): Record<string, unknown> {
  const { percentComplete, step, message } = operationProgress(doc, cr);
  return {
    id: operationStatusPath(subscriptionId, doc.location, doc.id),
    name: doc.id,
    status: doc.status,
    startTime: doc.startTime,
    ...(doc.endTime ? { endTime: doc.endTime } : {}),
    ...(percentComplete !== undefined ? { percentComplete } : {}),
    ...(message ? { properties: { ...(step ? { step } : {}), message } } : {}),
    ...(doc.error ? { error: doc.error } : {}),
  };
}

export async function getOperationStatus(deps: OperationDeps, req: ArmRequest): Promise<Reply> {
  const { doc, cr } = await current(deps, req);
  return { status: 200, body: operationStatusBody(doc, req.params["subscriptionId"] ?? "", cr) };
}

export async function getOperationResult(deps: OperationDeps, req: ArmRequest): Promise<Reply> {
  const { doc, cr, credential } = await current(deps, req);
  if (!isTerminal(doc.status)) {
    const sub = req.params["subscriptionId"] ?? "";
    const location = `${req.base}${operationResultPath(sub, doc.location, doc.id)}?api-version=${req.apiVersion}`;
    return { status: 202, headers: { location, "retry-after": "1" } };
  }
  // ARM reads failures from the status endpoint; the result of one is an internal error (B.3).
  if (doc.status !== "Succeeded") throw internalError();
  if (doc.request === "RequestCredential") {
    if (credential?.kind !== "BreakglassCredential") throw internalError();
    return { status: 200, body: await credentialResult(deps.client, credential) };
  }
  if (doc.request === "Delete" || doc.request === "RevokeCredentials" || !cr) return { status: 204 };
  const version: ApiVersion = req.apiVersion;
  const body = toVersioned(fromCR(doc.kind, cr), version, doc.kind);
  return { status: doc.request === "Create" ? 201 : 200, body };
}
