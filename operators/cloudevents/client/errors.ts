/**
 * The client layer's own errors: controllers see why a publish was refused, never the transport's
 * error classes (Connection.publish translates them).
 */
import { NotConnectedError, PacketTooLargeError } from "../transport/transport.ts";

/** Why the broker side would not take an event: it does not fit in one packet, or there is no connection. */
export type PublishRefusal = "too-large" | "not-connected";

/** A publish that cannot succeed as things are; retrying at once would meet the same refusal. */
export class PublishRefusedError extends Error {
  readonly reason: PublishRefusal;
  constructor(reason: PublishRefusal, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PublishRefusedError";
    this.reason = reason;
  }
}

export function isPublishRefused(err: unknown, reason?: PublishRefusal): err is PublishRefusedError {
  return err instanceof PublishRefusedError && (reason === undefined || err.reason === reason);
}

/** The client layer's error for a transport error (the message kept); any other error as it is. */
export function translateTransportError(err: unknown): unknown {
  if (err instanceof PacketTooLargeError)
    return new PublishRefusedError("too-large", err.message, { cause: err });
  if (err instanceof NotConnectedError)
    return new PublishRefusedError("not-connected", err.message, { cause: err });
  return err;
}

/** The refusal Connection.publish throws while it has no connection. */
export function notConnected(what: string): PublishRefusedError {
  const cause = new NotConnectedError(what);
  return new PublishRefusedError("not-connected", cause.message, { cause });
}
