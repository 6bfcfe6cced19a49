/**
 * What Node's HTTP parser refuses before a request reaches the router (a lowercase or unknown
 * method, a malformed request line or header, headers too large, a request too slow), answered
 * as a CloudError like everything else, with the status Node itself would give.
 */
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { CloudError, CODES } from "../errors.ts";

export function clientErrorOf(err: NodeJS.ErrnoException): CloudError {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT")
    return new CloudError(408, {
      code: CODES.RequestTimeout,
      message: "The request did not arrive in time.",
    });
  if (err.code === "HPE_HEADER_OVERFLOW")
    return new CloudError(431, {
      code: CODES.RequestHeaderFieldsTooLarge,
      message: "The request's headers are too large.",
    });
  return new CloudError(400, {
    code: CODES.BadRequest,
    message: `The request is not valid HTTP/1.1 (${err.code ?? "unknown"}).`,
  });
}

/** Whether the error is about an HTTP request (rather than the TLS handshake or the connection). */
const isRequestError = (err: NodeJS.ErrnoException): boolean =>
  err.code === "ERR_HTTP_REQUEST_TIMEOUT" || err.code?.startsWith("HPE_") === true;

export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // Answered already: the parser reports the rest of a bad request too, and the answer must
  // reach the client before the connection closes (destroying it now would reset it).
  if (!socket.writable) return;
  // A failed handshake or a reset has no request to answer; a connection already carrying a
  // response cannot take another. With a clientError listener, closing them is ours to do.
  if (!isRequestError(err) || (socket as Partial<Socket>).bytesWritten) {
    socket.destroy();
    return;
  }
  const e = clientErrorOf(err);
  const body = JSON.stringify({ error: e.body });
  // What the client still sends is read and dropped: closing with it unread would reset the
  // connection, and the client would see the reset instead of this answer.
  socket.resume();
  socket.end(
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? ""}\r\n` +
      `Content-Type: application/json\r\nX-Ms-Error-Code: ${e.body.code}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
