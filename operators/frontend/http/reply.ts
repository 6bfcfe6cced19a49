/**
 * Replies: every failure as a CloudError body with X-Ms-Error-Code; JSON or text written with the
 * request's IDs.
 */
import type { ServerResponse } from "node:http";
import type { Reply } from "../arm-request.ts";
import { CloudError, internalError, type CloudErrorBody } from "../errors.ts";

/** What was thrown, as ARM's error reply: a CloudError as it says, anything else a bare 500. */
export function errorReply(err: unknown): Reply {
  const e = err instanceof CloudError ? err : internalError();
  const body: { error: CloudErrorBody } = { error: e.body };
  return { status: e.status, body, headers: { "x-ms-error-code": e.body.code, ...e.headers } };
}

export function writeReply(
  res: Pick<ServerResponse, "writeHead" | "end">,
  reply: Reply,
  base: Record<string, string>,
): void {
  const headers: Record<string, string> = { ...base, ...reply.headers };
  let payload: string | undefined;
  if (reply.body !== undefined) {
    payload = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
    headers["content-type"] ??= typeof reply.body === "string" ? "text/plain" : "application/json";
  }
  res.writeHead(reply.status, headers);
  res.end(payload);
}
