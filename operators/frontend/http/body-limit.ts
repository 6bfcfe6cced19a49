/**
 * The request body, read up to a limit below the service API server's 3 MiB request limit (and
 * etcd's 1.5 MiB object limit), so that a body too large to store is refused here, naming the limit.
 */
import type { IncomingMessage } from "node:http";
import { CloudError, CODES } from "../errors.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

function bodyTooLarge(limit: number, size: number): CloudError {
  return new CloudError(413, {
    code: CODES.InvalidResource,
    message: `The resource definition is invalid: the request body is ${size} bytes, more than the limit of ${limit} bytes (${limit / 1024 / 1024} MiB).`,
  });
}

/**
 * Reads the body, refusing more than `limit` bytes: at once when Content-Length says so (Node
 * discards the unread rest), else once the count passes it (the rest is drained, not kept; the
 * request timeout bounds how long).
 */
export async function readBody(
  req: Pick<IncomingMessage, "headers"> & AsyncIterable<Buffer>,
  limit = MAX_BODY_BYTES,
): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit) throw bodyTooLarge(limit, declared);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit) throw bodyTooLarge(limit, size);
  return Buffer.concat(chunks);
}
