/**
 * The HTTPS server: mutual TLS against the configured client CA (the verdict is authentication.ts's,
 * so that a caller without a certificate gets a CloudError), and bounds on slow and numerous
 * clients; a connection past one is closed, a request past one answered (client-errors.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { Duplex } from "node:stream";
import type { Logger } from "../../runtime/logger.ts";
import { answerClientError } from "./client-errors.ts";

export interface ConnectionLimits {
  /** To finish the TLS handshake. */
  handshakeTimeoutMs: number;
  /** To send a request's headers. */
  headersTimeoutMs: number;
  /** To send a whole request, body included (a slow body is cut off with 408). */
  requestTimeoutMs: number;
  /** Without traffic on a connection, between requests or within one. */
  idleTimeoutMs: number;
  /** Open connections; more are closed as they arrive. */
  maxConnections: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  handshakeTimeoutMs: 10_000,
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 30_000,
  maxConnections: 2_000,
};

/** PEM: serving certificate and key, and the CA that signs ARM's client certificates. */
export interface TlsMaterial {
  cert: string | Buffer;
  key: string | Buffer;
  clientCA: string | Buffer;
}

export function createTlsServer(
  tls: TlsMaterial,
  limits: ConnectionLimits,
  log: Logger,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Server {
  const server = createServer(
    {
      cert: tls.cert,
      key: tls.key,
      ca: tls.clientCA,
      requestCert: true,
      rejectUnauthorized: false,
      handshakeTimeout: limits.handshakeTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.idleTimeoutMs,
      // How often the header and request timeouts are checked: often enough to keep them.
      connectionsCheckingInterval: Math.max(
        10,
        Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
      ),
    },
    handle,
  );
  server.maxConnections = limits.maxConnections;
  server.setTimeout(limits.idleTimeoutMs);
  server.on("tlsClientError", (err) => log.debug("A TLS connection failed", { err: err.message }));
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    log.debug("A request was not valid HTTP", { err: err.message, code: err.code });
    answerClientError(err, socket);
  });
  return server;
}
