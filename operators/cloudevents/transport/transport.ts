/**
 * The transport contract: moves CloudEvents, knows nothing of Kubernetes or of reconnecting. One
 * connection per instance; the client layer builds a new one after a failure.
 */
import type { CloudEvent } from "../types.ts";

export interface Transport {
  /** Opens the connection once; rejects if it cannot be established. */
  connect(signal?: AbortSignal): Promise<void>;
  /** Subscribes to the transport's topics; resolves when the broker granted them. */
  subscribe(): Promise<void>;
  /** Publishes one event and resolves when the broker acknowledged it (QoS 1). */
  send(event: CloudEvent): Promise<void>;
  /** Sets the handler for inbound events (called in arrival order). */
  receive(handler: (event: CloudEvent, topic: string) => void): void;
  /** Inbound messages that are not CloudEvents are reported here and dropped. */
  onBadMessage(handler: (err: Error, topic: string) => void): void;
  /** Called once when an established connection is lost or a receive fails irrecoverably. */
  onError(handler: (err: Error) => void): void;
  close(): Promise<void>;
}

/** The event does not fit in one packet the broker accepts. */
export class PacketTooLargeError extends Error {
  readonly bytes: number;
  readonly limit: number;
  constructor(bytes: number, limit: number) {
    super(`event of ${bytes} bytes exceeds the broker's maximum packet size of ${limit} bytes`);
    this.name = "PacketTooLargeError";
    this.bytes = bytes;
    this.limit = limit;
  }
}

/** Publishing needs a connection and there is none right now. */
export class NotConnectedError extends Error {
  constructor(what = "transport") {
    super(`${what} is not connected to the broker`);
    this.name = "NotConnectedError";
  }
}

/**
 * A message the broker kept with the retain flag and replays to each new subscriber: an old event
 * presented as a live one, which no Maestro peer sends. Refused as input.
 */
export class RetainedMessageError extends Error {
  readonly topic: string;
  constructor(topic: string) {
    super(`retained message on ${topic} ignored: a replay of an old event, not a live one`);
    this.name = "RetainedMessageError";
    this.topic = topic;
  }
}
