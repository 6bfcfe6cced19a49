/**
 * Request IDs and correlation: a new x-ms-request-id for every request; the caller's correlation
 * ID echoed, and its client request ID when it asks for it (x-ms-return-client-request-id). Only
 * carried headers that passed their check (carried-headers.ts) are echoed, logged or kept.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { header } from "../arm-request.ts";
import type { CheckedHeaders } from "./carried-headers.ts";

export interface RequestIds {
  requestId: string;
  correlationRequestId: string | undefined;
  clientRequestId: string | undefined;
  /** The headers every reply carries. */
  replyHeaders: Record<string, string>;
}

export function requestIds(
  incoming: IncomingHttpHeaders,
  checked: CheckedHeaders,
  newId: () => string = randomUUID,
): RequestIds {
  const requestId = newId();
  const carried = { headers: checked.headers };
  const correlationRequestId = header(carried, "x-ms-correlation-request-id");
  const clientRequestId = header(carried, "x-ms-client-request-id");
  const replyHeaders: Record<string, string> = { "x-ms-request-id": requestId };
  if (correlationRequestId) replyHeaders["x-ms-correlation-request-id"] = correlationRequestId;
  const echo = header({ headers: incoming }, "x-ms-return-client-request-id")?.toLowerCase() === "true";
  if (clientRequestId && echo) replyHeaders["x-ms-client-request-id"] = clientRequestId;
  return { requestId, correlationRequestId, clientRequestId, replyHeaders };
}
