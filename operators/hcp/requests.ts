/**
 * ARM request IDs: the frontend stamps them on a CR; they travel onto its ManifestWork and into
 * every log line about it, so that one request can be followed from the ARM call to the
 * management cluster.
 */
import type { ReconcileContext } from "../runtime/controller.ts";
import type { Logger } from "../runtime/logger.ts";

export const REQUEST_ID_ANNOTATIONS = [
  "hcp.aro.dev/correlation-request-id",
  "hcp.aro.dev/client-request-id",
] as const;

interface Annotated {
  metadata: { annotations?: Record<string, string> };
}

export function requestIdAnnotations(obj: Annotated): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of REQUEST_ID_ANNOTATIONS) {
    const value = obj.metadata.annotations?.[key];
    if (value) out[key] = value;
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
  const fields: Record<string, string> = {};
  for (const key of REQUEST_ID_ANNOTATIONS) {
    const value = obj.metadata.annotations?.[key];
    if (value) fields[LOG_KEYS[key]] = value;
  }
  if (Object.keys(fields).length > 0) ctx.log = ctx.log.child(fields);
  return ctx.log;
}
