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

/** The reconcile's logger with the ARM request IDs the object carries. */
export function requestLog(ctx: ReconcileContext, obj: Annotated): Logger {
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(requestIdAnnotations(obj)))
    fields[key.replace("hcp.aro.dev/", "")] = value;
  return Object.keys(fields).length > 0 ? ctx.log.child(fields) : ctx.log;
}
