/**
 * Only ARM may call: a client certificate signed by the configured client CA (the TLS server asks
 * for one and leaves the verdict to this check, so that anything else is a CloudError, not a
 * failed handshake).
 */
import type { TLSSocket } from "node:tls";
import { CloudError, CODES } from "../errors.ts";

export function checkClientCertificate(socket: Pick<TLSSocket, "authorized">): void {
  if (!socket.authorized)
    throw new CloudError(401, {
      code: CODES.Unauthorized,
      message: "A client certificate signed by the configured ARM client CA is required.",
    });
}
