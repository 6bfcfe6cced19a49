/**
 * A CloudEvents connection that stays up: it builds a transport, connects, subscribes, then
 * reports "subscribed" so the owner resyncs; when the connection drops it waits out a jittered
 * exponential backoff (mqtt.js only knows a fixed period) and starts over. Its state feeds
 * `/readyz` and the `maestro_mqtt_*` metrics. Inbound events that fail to decode are dropped here,
 * counted and logged, never thrown at a controller.
 */
import { Backoff, sleep, type BackoffOptions } from "../../runtime/backoff.ts";
import { errorMessage } from "../../runtime/errors.ts";
import { silentLogger, type Logger } from "../../runtime/logger.ts";
import { counter, gauge, metricsRegistry } from "../../runtime/metrics.ts";
import { eventTypeLabel, type CloudEvent } from "../types.ts";
import { RetainedMessageError, type Transport } from "../transport/transport.ts";
import { notConnected, translateTransportError } from "./errors.ts";

export type ConnectionState = "connecting" | "connected" | "disconnected";

export interface ConnectionOptions {
  /** Names this connection in logs and metrics, e.g. "maestro-server" or "maestro-agent/mgmt-1". */
  name: string;
  /** A fresh, unconnected transport for each attempt. */
  newTransport(): Transport;
  /** Default 1 s → 30 s, ×2, jitter 1.0, reset after 2 min connected. */
  backoff?: BackoffOptions;
  log?: Logger;
}

function connectionMetrics() {
  const labelNames = ["client"] as const;
  return {
    connected: gauge(metricsRegistry, {
      name: "maestro_mqtt_connected",
      help: "1 while the CloudEvents client is connected and subscribed, else 0",
      labelNames,
    }),
    connects: counter(metricsRegistry, {
      name: "maestro_mqtt_connects_total",
      help: "Successful (re)connections to the broker",
      labelNames,
    }),
    failures: counter(metricsRegistry, {
      name: "maestro_mqtt_connection_failures_total",
      help: "Failed connection attempts and lost connections",
      labelNames,
    }),
    sent: counter(metricsRegistry, {
      name: "maestro_cloudevents_sent_total",
      help: "CloudEvents published, by type",
      labelNames: ["client", "type"] as const,
    }),
    received: counter(metricsRegistry, {
      name: "maestro_cloudevents_received_total",
      help: "CloudEvents received, by type (types outside the protocol as other)",
      labelNames: ["client", "type"] as const,
    }),
    dropped: counter(metricsRegistry, {
      name: "maestro_cloudevents_dropped_total",
      help: "Inbound messages dropped, by reason",
      labelNames: ["client", "reason"] as const,
    }),
  };
}

export class Connection {
  readonly name: string;
  readonly #opts: ConnectionOptions;
  readonly #log: Logger;
  readonly #metrics = connectionMetrics();
  #transport: Transport | undefined;
  #state: ConnectionState = "disconnected";
  readonly #eventHandlers: Array<(event: CloudEvent, topic: string) => void> = [];
  readonly #subscribedHandlers: Array<() => void> = [];
  readonly #disconnectedHandlers: Array<() => void> = [];
  /** Why the current connection is being closed on purpose (reconnect), so the loop does not back off. */
  #reconnectReason: string | undefined;
  #closeCurrent: (() => void) | undefined;

  constructor(opts: ConnectionOptions) {
    this.name = opts.name;
    this.#opts = opts;
    this.#log = (opts.log ?? silentLogger).child({ client: opts.name });
    this.#metrics.connected.labels(this.name).set(0);
    this.#metrics.connects.labels(this.name).inc(0);
  }

  get state(): ConnectionState {
    return this.#state;
  }

  isConnected(): boolean {
    return this.#state === "connected";
  }

  onEvent(handler: (event: CloudEvent, topic: string) => void): void {
    this.#eventHandlers.push(handler);
  }

  /** Called after every successful subscribe: the first one and each after a reconnect. */
  onSubscribed(handler: () => void): void {
    this.#subscribedHandlers.push(handler);
  }

  /** Called when a subscribed connection is lost or stopped (not for attempts that never subscribed). */
  onDisconnected(handler: () => void): void {
    this.#disconnectedHandlers.push(handler);
  }

  /** Counts and logs an inbound event a handler could not use. */
  drop(reason: string, err: unknown, event?: CloudEvent): void {
    this.#metrics.dropped.labels(this.name, reason).inc();
    this.#log.info("Dropping event", { reason, err: errorMessage(err), id: event?.id, type: event?.type });
  }

  /**
   * Publishes on the current connection. A PublishRefusedError says why not: "not-connected" while
   * there is no connection, "too-large" when the event exceeds the broker's packet size.
   */
  async publish(event: CloudEvent): Promise<void> {
    const transport = this.#transport;
    if (!transport || this.#state !== "connected") throw notConnected(this.name);
    try {
      await transport.send(event);
    } catch (err) {
      throw translateTransportError(err);
    }
    this.#metrics.sent.labels(this.name, event.type).inc();
  }

  /**
   * Closes the current connection on purpose and connects again at once, with a new transport
   * (new credentials, for one): not counted as a failure, no backoff. The owner's resync after the
   * subscribe repairs what the broker dropped in between, as after any reconnect. Returns false
   * when there is no connection to close (the next attempt uses the new transport anyway).
   */
  reconnect(reason: string): boolean {
    const close = this.#closeCurrent;
    if (!close) return false;
    this.#reconnectReason = reason;
    close();
    return true;
  }

  /** Keeps the connection up until the signal aborts. Never throws. */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: 1000, maxMs: 30_000, ...this.#opts.backoff });
    while (!signal.aborted) {
      const lost = await this.#session(signal);
      if (signal.aborted) break;
      const reason = this.#reconnectReason;
      this.#reconnectReason = undefined;
      if (reason !== undefined) {
        this.#log.info("Reconnecting to the broker", { reason });
        continue;
      }
      this.#metrics.failures.labels(this.name).inc();
      const delayMs = Math.round(backoff.next());
      this.#log.info("Broker connection lost, reconnecting", { err: errorMessage(lost), delayMs });
      await sleep(delayMs, signal);
    }
  }

  /** One connection from connect to loss; resolves with why it ended. */
  async #session(signal: AbortSignal): Promise<unknown> {
    this.#state = "connecting";
    const transport = this.#opts.newTransport();
    const ended = new Promise<Error>((resolve) => {
      transport.onError(resolve);
      signal.addEventListener("abort", () => resolve(new Error("stopped")), { once: true });
      this.#closeCurrent = () => resolve(new Error("closed to reconnect"));
    });
    try {
      transport.receive((event, topic) => this.#deliver(event, topic));
      transport.onBadMessage((err) =>
        this.drop(err instanceof RetainedMessageError ? "retained" : "malformed", err),
      );
      await transport.connect(signal);
      await transport.subscribe();
      this.#transport = transport;
      this.#state = "connected";
      this.#metrics.connected.labels(this.name).set(1);
      this.#metrics.connects.labels(this.name).inc();
      this.#log.info("Connected to the broker");
      for (const h of this.#subscribedHandlers) h();
      return await ended;
    } catch (err) {
      return err;
    } finally {
      const wasConnected = this.#state === "connected";
      this.#closeCurrent = undefined;
      this.#state = "disconnected";
      this.#transport = undefined;
      this.#metrics.connected.labels(this.name).set(0);
      if (wasConnected) for (const h of this.#disconnectedHandlers) h();
      await transport.close().catch(() => undefined);
    }
  }

  #deliver(event: CloudEvent, topic: string): void {
    this.#metrics.received.labels(this.name, eventTypeLabel(event.type)).inc();
    for (const h of this.#eventHandlers) {
      try {
        h(event, topic);
      } catch (err) {
        this.drop("handler", err, event);
      }
    }
  }
}
