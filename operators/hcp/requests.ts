/**
 * ARM request IDs: the frontend stamps them on a CR; they travel onto its ManifestWork and into
 * every log line about it, so that one request can be followed from the ARM call to the
 * management cluster.
 */
import { REQUEST_ID_ANNOTATIONS } from "../api/v1alpha1/labels.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { Logger } from "../runtime/logger.ts";

/** The longest request ID carried; ARM's are GUIDs (36 characters). */
export const MAX_REQUEST_ID_LENGTH = 256;

/**
 * Whether a request ID can travel: printable ASCII only, so that it survives an HTTP header, an
 * annotation, a ManifestWork and a log line unchanged (a non-ASCII header arrives as Latin-1 and
 * would reach the apiserver as control characters).
 */
export function isCarriableRequestId(value: string): boolean {
  return value.length > 0 && value.length <= MAX_REQUEST_ID_LENGTH && /^[\x20-\x7e]+$/.test(value);
}

interface Annotated {
  metadata: { annotations?: Record<string, string> };
}

/**
 * The request IDs to copy onto the object's work: only carriable ones, so that an annotation
 * written by hand (the frontend refuses such headers) cannot make every apply of the work fail.
 */
export function requestIdAnnotations(obj: Annotated): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of REQUEST_ID_ANNOTATIONS) {
    const value = obj.metadata.annotations?.[key];
    if (value !== undefined && isCarriableRequestId(value)) out[key] = value;
  }
  return out;
}

/**
 * Log keys of the request IDs: the frontend's own (frontend/server.ts), so that one query finds
 * every line about a request, from the ARM call to the agent.
 */
const LOG_KEYS: Record<(typeof REQUEST_ID_ANNOTATIONS)[number], string> = {
  "hcp.aro.dev/correlation-request-id": "correlationRequestId",
  "hcp.aro.dev/client-request-id": "clientRequestId",
};

/**
 * The reconcile's logger with the ARM request IDs the object carries, made the context's logger
 * so that the runtime's own lines about this reconcile (an error, a requeue) carry them too.
 */
export function requestLog(ctx: ReconcileContext, obj: Annotated): Logger {
  const carried = requestIdAnnotations(obj);
  const fields: Record<string, string> = {};
  for (const key of REQUEST_ID_ANNOTATIONS) {
    const value = carried[key];
    if (value !== undefined) fields[LOG_KEYS[key]] = value;
  }
  if (Object.keys(fields).length > 0) ctx.log = ctx.log.child(fields);
  return ctx.log;
}
