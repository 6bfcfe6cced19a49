/**
 * The MQTT 5 transport, in CloudEvents binary mode as Maestro's Go clients use it: context
 * attributes and extensions travel as `ce-*` user properties, `datacontenttype` as the Content
 * Type property, `data` as the payload. Inbound, structured mode is accepted too. QoS 1, clean
 * start, no session kept: a lost connection is repaired by resync, not by the broker.
 *
 * One instance is one connection: the client layer builds a new transport after a failure, which
 * is why mqtt.js's own fixed-period reconnect is turned off.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import mqtt, {
  type IClientOptions,
  type IClientPublishOptions,
  type IPublishPacket,
  type MqttClient,
} from "mqtt";
import type { BackoffOptions } from "../../runtime/backoff.ts";
import { DecodeError, type CloudEvent } from "../types.ts";
import { NotConnectedError, PacketTooLargeError, RetainedMessageError, type Transport } from "./transport.ts";

export interface MqttTransportOptions {
  /** `mqtts://host:port` (or `mqtt://` without TLS). */
  url: string;
  clientId: string;
  /** PEM contents for mutual TLS. */
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Default 60, as Maestro's config. */
  keepaliveSeconds?: number;
  /** Default 30 000. */
  connectTimeoutMs?: number;
  /** Topics to subscribe to with QoS 1. */
  subscriptions: string[];
  /** Where an outbound event goes. */
  publishTopic(event: CloudEvent): string;
}

const CE_PREFIX = "ce-";
const STRUCTURED_CONTENT_TYPE = "application/cloudevents+json";
const CORE_ATTRIBUTES = ["specversion", "id", "source", "type", "time"] as const;
const QOS = 1;

type UserProperties = Record<string, string | string[]>;

/** The binary-mode MQTT message for an event. */
export function toBinaryMessage(event: CloudEvent): { payload: Buffer; options: IClientPublishOptions } {
  const userProperties: UserProperties = {};
  for (const attr of CORE_ATTRIBUTES) {
    const value = event[attr];
    if (value !== undefined) userProperties[CE_PREFIX + attr] = value;
  }
  for (const [name, value] of Object.entries(event.extensions)) userProperties[CE_PREFIX + name] = value;
  const payload = event.data === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(event.data));
  const properties = { userProperties, contentType: event.datacontenttype ?? "application/json" };
  return { payload, options: { qos: QOS, properties } };
}

function firstValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The JSON in `payload` (undefined when empty); `field` names it in the refusal of anything else. */
function parsePayload(payload: Buffer, field: string): unknown {
  if (payload.length === 0) return undefined;
  try {
    return JSON.parse(payload.toString("utf8"));
  } catch (err) {
    throw new DecodeError(field, `is not JSON (${err instanceof Error ? err.message.slice(0, 200) : ""})`);
  }
}

function fromBinary(props: UserProperties, contentType: string | undefined, payload: Buffer): CloudEvent {
  const attrs: Record<string, string> = {};
  for (const [key, value] of Object.entries(props)) {
    const v = firstValue(value);
    if (key.startsWith(CE_PREFIX) && v !== undefined) attrs[key.slice(CE_PREFIX.length)] = v;
  }
  const { specversion = "", id = "", source = "", type = "", time, ...extensions } = attrs;
  return {
    specversion,
    id,
    source,
    type,
    time,
    datacontenttype: contentType,
    extensions,
    data: parsePayload(payload, "data"),
  };
}

function fromStructured(payload: Buffer): CloudEvent {
  const body = parsePayload(payload, "payload");
  if (typeof body !== "object" || body === null)
    throw new DecodeError("payload", "structured event body is not a JSON object");
  const { specversion, id, source, type, time, datacontenttype, data, data_base64, ...rest } = body as Record<
    string,
    unknown
  >;
  const extensions: Record<string, string> = {};
  for (const [k, v] of Object.entries(rest)) extensions[k] = typeof v === "string" ? v : JSON.stringify(v);
  const decoded =
    typeof data_base64 === "string" ? parsePayload(Buffer.from(data_base64, "base64"), "data_base64") : data;
  const str = (v: unknown): string => (typeof v === "string" ? v : "");
  return {
    specversion: str(specversion),
    id: str(id),
    source: str(source),
    type: str(type),
    time: typeof time === "string" ? time : undefined,
    datacontenttype: typeof datacontenttype === "string" ? datacontenttype : undefined,
    extensions,
    data: decoded,
  };
}

/** The event in an MQTT message, binary or structured mode; throws a DecodeError on anything else. */
export function fromMessage(packet: Pick<IPublishPacket, "payload" | "properties">): CloudEvent {
  const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
  const props = packet.properties?.userProperties ?? {};
  const contentType = packet.properties?.contentType;
  const event =
    firstValue(props[CE_PREFIX + "specversion"]) !== undefined
      ? fromBinary(props, contentType, payload)
      : contentType?.startsWith(STRUCTURED_CONTENT_TYPE)
        ? fromStructured(payload)
        : undefined;
  if (!event)
    throw new DecodeError("payload", "message is neither a binary-mode nor a structured-mode CloudEvent");
  const missing = CORE_ATTRIBUTES.filter((a) => a !== "time" && !event[a]);
  const [first] = missing;
  if (first) throw new DecodeError(first, `CloudEvent lacks required attributes: ${missing.join(", ")}`);
  return event;
}

/** The event of a message as it arrives: retained replays are refused before decoding. */
export function receivedEvent(
  topic: string,
  packet: Pick<IPublishPacket, "payload" | "properties" | "retain">,
): CloudEvent {
  if (packet.retain) throw new RetainedMessageError(topic);
  return fromMessage(packet);
}

/**
 * A client ID for one connection: the readable prefix and 64 random bits. A broker that lets a
 * client ID name any session (mosquitto without use_username_as_clientid, Event Grid before the
 * session is taken) would otherwise let anyone who guesses the ID drop or squat the connection.
 */
export function connectionClientId(prefix: string): string {
  return `${prefix}-${randomBytes(8).toString("hex")}`;
}

const utf8 = (s: string): number => Buffer.byteLength(s, "utf8");

/** An upper bound of the PUBLISH packet's size, to refuse what the broker would drop. */
export function publishPacketBytes(topic: string, payload: Buffer, options: IClientPublishOptions): number {
  const props = options.properties ?? {};
  let propBytes = props.contentType === undefined ? 0 : 3 + utf8(props.contentType);
  for (const [k, v] of Object.entries(props.userProperties ?? {})) {
    for (const value of Array.isArray(v) ? v : [v]) propBytes += 5 + utf8(k) + utf8(String(value));
  }
  // fixed header (≤5) + topic length prefix + packet id + property length (≤4)
  return 5 + 2 + utf8(topic) + 2 + 4 + propBytes + payload.length;
}

export class MqttTransport implements Transport {
  readonly #opts: MqttTransportOptions;
  #client: MqttClient | undefined;
  #maxPacketBytes: number | undefined;
  #onEvent: (event: CloudEvent, topic: string) => void = () => undefined;
  #onError: (err: Error) => void = () => undefined;
  #onBadMessage: (err: Error, topic: string) => void = () => undefined;
  #failed = false;

  constructor(opts: MqttTransportOptions) {
    this.#opts = opts;
  }

  get clientId(): string {
    return this.#opts.clientId;
  }

  /** The broker's Maximum Packet Size from CONNACK, if it announced one. */
  get maxPacketBytes(): number | undefined {
    return this.#maxPacketBytes;
  }

  connect(signal?: AbortSignal): Promise<void> {
    const o = this.#opts;
    const options: IClientOptions = {
      protocolVersion: 5,
      clientId: o.clientId,
      clean: true,
      keepalive: o.keepaliveSeconds ?? 60,
      connectTimeout: o.connectTimeoutMs ?? 30_000,
      reconnectPeriod: 0,
      ca: o.ca,
      cert: o.cert,
      key: o.key,
      rejectUnauthorized: true,
      // Otherwise mqtt-packet builds a Buffer for each of the 65,536 two-byte numbers at the first
      // write: 6.5 MB of heap in every agent and server, to save a 2-byte allocation per packet.
      writeCache: false,
    };
    const client = mqtt.connect(o.url, options);
    this.#client = client;
    return new Promise<void>((resolve, reject) => {
      const fail = (err: Error): void => {
        cleanup();
        client.end(true);
        reject(err);
      };
      const onAbort = (): void => fail(new Error("connect aborted"));
      const onClose = (): void => fail(new Error(`connection to ${o.url} closed before CONNACK`));
      const onConnect = (connack: { properties?: { maximumPacketSize?: number } }): void => {
        cleanup();
        this.#maxPacketBytes = connack.properties?.maximumPacketSize;
        this.#wire(client);
        resolve();
      };
      const cleanup = (): void => {
        client.off("connect", onConnect);
        client.off("error", fail);
        client.off("close", onClose);
        signal?.removeEventListener("abort", onAbort);
      };
      client.once("connect", onConnect);
      client.once("error", fail);
      client.once("close", onClose);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #wire(client: MqttClient): void {
    client.on("message", (topic, _payload, packet) => {
      let event: CloudEvent;
      try {
        event = receivedEvent(topic, packet);
      } catch (err) {
        this.#onBadMessage(err instanceof Error ? err : new Error(String(err)), topic);
        return;
      }
      this.#onEvent(event, topic);
    });
    const lost = (err?: Error): void => {
      if (this.#failed) return;
      this.#failed = true;
      this.#onError(err ?? new Error("connection to the broker closed"));
    };
    client.on("error", lost);
    client.on("close", () => lost());
    client.on("disconnect", (packet) =>
      lost(new Error(`broker disconnected us (reason ${packet.reasonCode ?? 0})`)),
    );
  }

  async subscribe(): Promise<void> {
    const client = this.#connected();
    const granted = await client.subscribeAsync(this.#opts.subscriptions, { qos: QOS });
    const refused = granted.filter((g) => g.qos > 2);
    if (refused.length > 0) {
      throw new Error(
        `broker refused subscriptions: ${refused.map((g) => `${g.topic} (reason ${g.qos})`).join(", ")}`,
      );
    }
  }

  async send(event: CloudEvent): Promise<void> {
    const client = this.#connected();
    const topic = this.#opts.publishTopic(event);
    const { payload, options } = toBinaryMessage(event);
    const bytes = publishPacketBytes(topic, payload, options);
    if (this.#maxPacketBytes !== undefined && bytes > this.#maxPacketBytes) {
      throw new PacketTooLargeError(bytes, this.#maxPacketBytes);
    }
    await client.publishAsync(topic, payload, options);
  }

  receive(handler: (event: CloudEvent, topic: string) => void): void {
    this.#onEvent = handler;
  }

  onBadMessage(handler: (err: Error, topic: string) => void): void {
    this.#onBadMessage = handler;
  }

  onError(handler: (err: Error) => void): void {
    this.#onError = handler;
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#failed = true;
    this.#client = undefined;
    if (client) await client.endAsync(true);
  }

  #connected(): MqttClient {
    const client = this.#client;
    if (!client || this.#failed || !client.connected)
      throw new NotConnectedError(`MQTT client ${this.#opts.clientId}`);
    return client;
  }
}

/** PEM contents for mutual TLS. */
export interface TlsMaterial {
  ca: string | Buffer;
  cert: string | Buffer;
  key: string | Buffer;
}

/** Broker address and mutual-TLS material (file paths, or a source of PEM that wins over them). */
export interface BrokerConnectionOptions {
  url: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** Read at each connection attempt; undefined falls back to the files (an agent that renews its certificate). */
  tls?: () => TlsMaterial | undefined;
  /** MQTT client ID prefix; each connection appends random bits (connectionClientId). */
  clientId: string;
  backoff?: BackoffOptions;
}

export function mqttTransportFactory(
  broker: BrokerConnectionOptions,
  route: Pick<MqttTransportOptions, "subscriptions" | "publishTopic">,
): () => MqttTransport {
  // Read on each attempt so rotated certificates are picked up on reconnect.
  const material = (): TlsMaterial =>
    broker.tls?.() ?? {
      ca: readFileSync(broker.caFile),
      cert: readFileSync(broker.certFile),
      key: readFileSync(broker.keyFile),
    };
  return () =>
    new MqttTransport({
      url: broker.url,
      clientId: connectionClientId(broker.clientId),
      ...material(),
      ...route,
    });
}
