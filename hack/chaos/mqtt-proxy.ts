/**
 * A man in the middle between the region's MQTT clients and mosquitto, for chaos runs. It
 * terminates each client's TLS with a server certificate from the broker's own CA (so clients
 * trust it unchanged), reads the client's identity from its certificate, and connects upstream
 * as that identity with a certificate of its own. In between it forwards MQTT packets whole, and
 * on request:
 *  - cuts identities off and refuses them, keeping their subscriptions alive upstream as a
 *    persistent session would, with Azure Event Grid's offline queue: at most 100 messages or
 *    1 MB, and a session that overflows it is terminated (queue lost); the queue is delivered when
 *    the identity connects again;
 *  - delivers PUBLISH packets late (each by its own random delay, so out of order) and twice
 *    (the copy as QoS 0, so no acknowledgement is owed twice, and possibly much later);
 *  - refuses connections that present a revoked certificate;
 *  - drops an identity's connections (a network blip).
 * Only PUBLISH packets are ever delayed, copied or queued; everything else passes as it came.
 */
import { X509Certificate } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { connect, createServer, type Server, type TLSSocket } from "node:tls";
import { issueBrokerCredentials, type BrokerCredentials, type BrokerInfo } from "../harness/broker.ts";
import { issueCert } from "../harness/certs.ts";

/** Event Grid's offline session queue (docs/reference/scale-and-faults.md P7). */
export const EVENT_GRID_QUEUE = { messages: 100, bytes: 1_000_000 };

/** Whether one more message of `bytes` would take an offline queue past Event Grid's limits. */
export function overflowsOfflineQueue(queued: { messages: number; bytes: number }, bytes: number): boolean {
  return queued.messages + 1 > EVENT_GRID_QUEUE.messages || queued.bytes + bytes > EVENT_GRID_QUEUE.bytes;
}

const PUBLISH = 3;
const SUBACK = 9;
const PINGRESP = 13;
const PINGREQ = Buffer.from([0xc0, 0x00]);
/** A held session pings upstream this often, so mosquitto does not time it out (keepalive 60 s). */
const HELD_PING_MS = 20_000;

// ---- MQTT framing ---------------------------------------------------------------------------

/** Cuts a byte stream into whole MQTT packets (fixed header: type byte, variable-length size). */
export class PacketReader {
  #buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const packets: Buffer[] = [];
    for (;;) {
      const size = packetSize(this.#buffer);
      if (size === undefined || this.#buffer.length < size) break;
      packets.push(this.#buffer.subarray(0, size));
      this.#buffer = this.#buffer.subarray(size);
    }
    return packets;
  }
}

/** The whole packet's size from its fixed header; undefined until the header is complete. */
function packetSize(buf: Buffer): number | undefined {
  let remaining = 0;
  for (let i = 1; i <= 4; i++) {
    const byte = buf[i];
    if (byte === undefined) return undefined;
    remaining += (byte & 0x7f) * 128 ** (i - 1);
    if ((byte & 0x80) === 0) return 1 + i + remaining;
  }
  throw new Error("malformed MQTT remaining length");
}

function encodeLength(length: number): Buffer {
  const bytes: number[] = [];
  let left = length;
  do {
    let byte = left % 128;
    left = Math.floor(left / 128);
    if (left > 0) byte |= 0x80;
    bytes.push(byte);
  } while (left > 0);
  return Buffer.from(bytes);
}

export const packetType = (p: Buffer): number => (p[0] ?? 0) >> 4;
const qosOf = (p: Buffer): number => ((p[0] ?? 0) >> 1) & 3;

function headerLength(p: Buffer): number {
  let i = 1;
  while (((p[i] ?? 0) & 0x80) !== 0) i++;
  return i + 1;
}

/** Where a PUBLISH's packet identifier sits (after the topic); present only at QoS > 0. */
function packetIdOffset(p: Buffer): number {
  const h = headerLength(p);
  return h + 2 + p.readUInt16BE(h);
}

/** A PUBLISH as QoS 0: same topic, properties and payload, no packet identifier, nothing to ack. */
export function asQos0(p: Buffer): Buffer {
  if (qosOf(p) === 0) return p;
  const h = headerLength(p);
  const at = packetIdOffset(p);
  const body = Buffer.concat([p.subarray(h, at), p.subarray(at + 2)]);
  return Buffer.concat([
    Buffer.from([(PUBLISH << 4) | ((p[0] ?? 0) & 0x01)]),
    encodeLength(body.length),
    body,
  ]);
}

/** The PUBACK a QoS 1 PUBLISH is owed (reason: success). */
function pubackFor(p: Buffer): Buffer | undefined {
  if (qosOf(p) !== 1) return undefined;
  const id = p.readUInt16BE(packetIdOffset(p));
  return Buffer.from([0x40, 0x02, id >> 8, id & 0xff]);
}

// ---- the proxy ------------------------------------------------------------------------------

interface Session {
  identity: string;
  down: TLSSocket;
  up: TLSSocket;
  /** Cut off downstream; upstream kept as an offline session with a bounded queue. */
  held?: { queue: Buffer[]; bytes: number; ping: NodeJS.Timeout };
}

export interface DeliveryChaos {
  /** Fraction of PUBLISH packets also sent a second time. */
  duplicateRatio: number;
  /** Each PUBLISH waits a random time up to this before it goes on. */
  maxDelayMs: number;
  /** A copy waits a random time up to this (a redelivery can come much later than the original). */
  maxDuplicateDelayMs: number;
}

export interface ProxyStats {
  connections: number;
  refused: number;
  delayed: number;
  duplicated: number;
  /** Messages queued for cut-off identities and delivered when they came back. */
  queueDelivered: number;
  /** Messages lost with an offline session that overflowed its queue. */
  queueDiscarded: number;
  sessionsTerminated: number;
}

export interface MqttProxy {
  /** mqtts://127.0.0.1:<port>: give this to clients instead of the broker's URL. */
  url: string;
  stats: ProxyStats;
  /** Cuts these identities off (all with "all") and refuses them until heal(). */
  cut(identities: string[] | "all"): void;
  heal(): void;
  /** Delays and duplicates PUBLISH packets until called with undefined. */
  setDeliveryChaos(chaos: DeliveryChaos | undefined): void;
  /** Refuses connections presenting the certificate (PEM) from now on. */
  revoke(certPem: string): void;
  /** Closes the identity's connections, both sides. */
  drop(identity: string): void;
  /** Connections of this identity let through so far. */
  connectionsOf(identity: string): number;
  stop(): Promise<void>;
}

export async function startMqttProxy(broker: BrokerInfo, dir: string): Promise<MqttProxy> {
  await mkdir(join(dir, "upstream"), { recursive: true });
  const ca = { name: "broker", certPath: broker.caPath, keyPath: broker.caKeyPath };
  const serving = await issueCert(ca, dir, {
    name: "mqtt-proxy",
    commonName: "mqtt-proxy",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  const caPem = await readFile(broker.caPath);
  const proxy = new Proxy(broker, dir, caPem);
  const server = createServer({
    cert: await readFile(serving.certPath),
    key: await readFile(serving.keyPath),
    ca: caPem,
    requestCert: true,
    rejectUnauthorized: true,
  });
  server.on("secureConnection", (down) => void proxy.accept(down));
  server.on("tlsClientError", () => proxy.stats.refused++);
  const port = await listen(server);
  return {
    url: `mqtts://127.0.0.1:${port}`,
    stats: proxy.stats,
    cut: (identities) => proxy.cut(identities),
    heal: () => proxy.heal(),
    setDeliveryChaos: (chaos) => (proxy.chaos = chaos),
    revoke: (pem) => proxy.revoked.add(new X509Certificate(pem).fingerprint256),
    drop: (identity) => proxy.drop(identity),
    connectionsOf: (identity) => proxy.accepted.get(identity) ?? 0,
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      proxy.closeAll();
      await closed;
    },
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });
}

class Proxy {
  readonly stats: ProxyStats = {
    connections: 0,
    refused: 0,
    delayed: 0,
    duplicated: 0,
    queueDelivered: 0,
    queueDiscarded: 0,
    sessionsTerminated: 0,
  };
  readonly revoked = new Set<string>();
  readonly accepted = new Map<string, number>();
  chaos: DeliveryChaos | undefined;
  readonly #sessions = new Set<Session>();
  readonly #upstreamCreds = new Map<string, Promise<BrokerCredentials>>();
  /** Queues of offline sessions taken over by a new connection, delivered after its SUBACK. */
  readonly #backlog = new Map<string, Buffer[]>();
  #cut: Set<string> | "all" = new Set();
  readonly #broker: BrokerInfo;
  readonly #dir: string;
  readonly #caPem: Buffer;

  constructor(broker: BrokerInfo, dir: string, caPem: Buffer) {
    this.#broker = broker;
    this.#dir = dir;
    this.#caPem = caPem;
  }

  #isCut(identity: string): boolean {
    return this.#cut === "all" || this.#cut.has(identity);
  }

  async accept(down: TLSSocket): Promise<void> {
    down.on("error", () => undefined);
    const cert = down.getPeerCertificate();
    const identity = typeof cert.subject?.CN === "string" ? cert.subject.CN : "";
    if (!identity || this.revoked.has(cert.fingerprint256) || this.#isCut(identity)) {
      this.stats.refused++;
      down.destroy();
      return;
    }
    const creds = await this.#credentials(identity);
    const up = connect({
      host: this.#broker.host,
      port: this.#broker.port,
      ca: this.#caPem,
      cert: await readFile(creds.certPath),
      key: await readFile(creds.keyPath),
    });
    up.on("error", () => undefined);
    const session: Session = { identity, down, up };
    this.#sessions.add(session);
    this.stats.connections++;
    this.accepted.set(identity, (this.accepted.get(identity) ?? 0) + 1);
    this.#wire(session);
  }

  #credentials(identity: string): Promise<BrokerCredentials> {
    let creds = this.#upstreamCreds.get(identity);
    if (!creds) {
      creds = issueBrokerCredentials(this.#broker, join(this.#dir, "upstream"), identity);
      this.#upstreamCreds.set(identity, creds);
    }
    return creds;
  }

  #wire(session: Session): void {
    const { down, up } = session;
    const fromClient = new PacketReader();
    const fromBroker = new PacketReader();
    down.on("data", (chunk: Buffer) => {
      for (const p of fromClient.push(chunk)) this.#forward(p, up);
    });
    up.on("data", (chunk: Buffer) => {
      for (const p of fromBroker.push(chunk)) this.#fromBroker(session, p);
    });
    down.on("close", () => {
      if (!session.held) up.destroy();
    });
    up.on("close", () => {
      down.destroy();
      this.#end(session);
    });
  }

  #fromBroker(session: Session, p: Buffer): void {
    if (session.held) return this.#hold(session, p);
    this.#forward(p, session.down);
    if (packetType(p) !== SUBACK) return;
    // A new connection of an identity whose offline session was taken over: its queue follows.
    const backlog = this.#takeBacklog(session.identity);
    for (const q of backlog) session.down.write(asQos0(q));
    this.stats.queueDelivered += backlog.length;
  }

  /** The offline queue of an identity: of a session already closed, or one still closing. */
  #takeBacklog(identity: string): Buffer[] {
    const backlog = this.#backlog.get(identity) ?? [];
    this.#backlog.delete(identity);
    for (const s of this.#sessions) {
      if (s.identity !== identity || !s.held) continue;
      backlog.push(...s.held.queue);
      s.held.queue = [];
    }
    return backlog;
  }

  /** What a cut-off identity's session receives: acknowledged, and queued within Event Grid's limits. */
  #hold(session: Session, p: Buffer): void {
    const held = session.held;
    if (!held || packetType(p) === PINGRESP || packetType(p) !== PUBLISH) return;
    const ack = pubackFor(p);
    if (ack) session.up.write(ack);
    if (overflowsOfflineQueue({ messages: held.queue.length, bytes: held.bytes }, p.length)) {
      this.stats.queueDiscarded += held.queue.length + 1;
      this.stats.sessionsTerminated++;
      held.queue = [];
      session.up.destroy();
      return;
    }
    held.queue.push(p);
    held.bytes += p.length;
  }

  /** Writes a packet on, late and twice when delivery chaos is on and it is a PUBLISH. */
  #forward(p: Buffer, to: TLSSocket): void {
    const chaos = this.chaos;
    if (!chaos || packetType(p) !== PUBLISH) {
      to.write(p);
      return;
    }
    const send = (packet: Buffer): void => {
      if (!to.destroyed) to.write(packet);
    };
    this.stats.delayed++;
    setTimeout(() => send(p), Math.random() * chaos.maxDelayMs);
    if (Math.random() >= chaos.duplicateRatio) return;
    this.stats.duplicated++;
    setTimeout(() => send(asQos0(p)), Math.random() * chaos.maxDuplicateDelayMs);
  }

  #end(session: Session): void {
    if (!this.#sessions.delete(session)) return;
    const held = session.held;
    if (!held) return;
    clearInterval(held.ping);
    // Taken over by a new connection of the same identity (or terminated: the queue is empty).
    if (held.queue.length > 0) this.#backlog.set(session.identity, held.queue);
  }

  cut(identities: string[] | "all"): void {
    this.#cut = identities === "all" ? "all" : new Set(identities);
    for (const s of this.#sessions) {
      if (!this.#isCut(s.identity) || s.held) continue;
      s.held = { queue: [], bytes: 0, ping: setInterval(() => s.up.write(PINGREQ), HELD_PING_MS) };
      s.down.destroy();
    }
  }

  heal(): void {
    this.#cut = new Set();
  }

  drop(identity: string): void {
    for (const s of this.#sessions) if (s.identity === identity) s.up.destroy();
  }

  closeAll(): void {
    for (const s of this.#sessions) {
      if (s.held) clearInterval(s.held.ping);
      s.up.destroy();
      s.down.destroy();
    }
  }
}
