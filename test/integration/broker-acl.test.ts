/**
 * The region's mosquitto enforces what Maestro relies on: TLS client certificates as identities,
 * each consumer confined to its own topics, the maestro source reaching all of them, MQTT 5
 * properties passed through and the 512 KiB packet limit. Every refusal is checked next to a
 * delivery that does happen, so a missing ACL fails the test instead of passing silently. That
 * delivery is published after the refused message, and mosquitto handles one connection's packets
 * in order and queues each subscriber's messages first in, first out: once it has arrived, a leak
 * would have arrived before it, so no waiting for "nothing more" is needed.
 */
import { readFile } from "node:fs/promises";
import {
  connect,
  connectAsync,
  type IClientOptions,
  type IConnackPacket,
  type IPublishPacket,
  type MqttClient,
} from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_PACKET_SIZE,
  issueBrokerCredentials,
  SOURCE_IDENTITY,
  startBroker,
  type BrokerCredentials,
} from "../../hack/harness/broker.ts";
import { createCA, issueCert } from "../../hack/harness/certs.ts";
import { brokerConnection } from "../../operators/cloudevents/client/broker.ts";
import { toBinaryMessage } from "../../operators/cloudevents/transport/mqtt.ts";
import {
  formatEventType,
  MANIFEST_BUNDLE_DATA_TYPE,
  type CloudEvent,
} from "../../operators/cloudevents/types.ts";
import { metricsRegistry } from "../../operators/runtime/metrics.ts";
import { eventually, scratchDir } from "../support/fixtures.ts";
import { brokerCredentials, region } from "../support/region.ts";

const consumers = "sources/maestro/consumers";
const sourceEvents = (consumer: string): string => `${consumers}/${consumer}/sourceevents`;
const agentEvents = (consumer: string): string => `${consumers}/${consumer}/agentevents`;
/** MQTT 5 reason codes as mosquitto 2.0.11 sends them. */
const NOT_AUTHORIZED = 0x87;
const PACKET_TOO_LARGE = 0x95;
const RETAIN_NOT_SUPPORTED = 0x9a;

const clients: MqttClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
});

async function tlsOptions(creds: Partial<BrokerCredentials> & { caPath: string }): Promise<IClientOptions> {
  const read = (path?: string) => (path ? readFile(path) : Promise.resolve(undefined));
  const [ca, cert, key] = await Promise.all([read(creds.caPath), read(creds.certPath), read(creds.keyPath)]);
  return { protocolVersion: 5, ca, cert, key, reconnectPeriod: 0, connectTimeout: 5_000 };
}

async function connectWith(
  creds: Partial<BrokerCredentials> & { caPath: string },
  url = region().broker.url,
  clientId?: string,
) {
  const client = await connectAsync(url, { ...(await tlsOptions(creds)), ...(clientId ? { clientId } : {}) });
  clients.push(client);
  return client;
}

async function connectAs(identity: string): Promise<MqttClient> {
  return connectWith(await brokerCredentials(identity));
}

/** Every message the client receives from now on. */
function inbox(client: MqttClient): IPublishPacket[] {
  const received: IPublishPacket[] = [];
  client.on("message", (_topic, _payload, packet) => received.push(packet));
  return received;
}

const topicsOf = (packets: IPublishPacket[]) => packets.map((p) => p.topic);

describe("MQTT broker of the local region", () => {
  it("delivers the source's events to the consumer with MQTT 5 properties intact", async () => {
    const [maestro, consumerA] = await Promise.all([connectAs(SOURCE_IDENTITY), connectAs("consumer-a")]);
    const received = inbox(consumerA);
    await consumerA.subscribeAsync(sourceEvents("consumer-a"), { qos: 1 });

    await maestro.publishAsync(sourceEvents("consumer-a"), '{"spec":{}}', {
      qos: 1,
      properties: {
        contentType: "application/json",
        userProperties: { "ce-specversion": "1.0", "ce-type": "io.open-cluster-management.works.v1alpha1" },
      },
    });

    await eventually("consumer-a receives the event", () => received.length === 1, 5_000);
    const [event] = received;
    expect(event!.topic).toBe(sourceEvents("consumer-a"));
    expect(event!.payload.toString()).toBe('{"spec":{}}');
    expect(event!.properties?.contentType).toBe("application/json");
    expect(event!.properties?.userProperties).toEqual({
      "ce-specversion": "1.0",
      "ce-type": "io.open-cluster-management.works.v1alpha1",
    });
  });

  it("never delivers another consumer's events, although mosquitto 2.0 grants the SUBSCRIBE", async () => {
    const [maestro, consumerA, consumerB] = await Promise.all([
      connectAs(SOURCE_IDENTITY),
      connectAs("consumer-a"),
      connectAs("consumer-b"),
    ]);
    const [toA, toB] = [inbox(consumerA), inbox(consumerB)];
    // mosquitto 2.0's acl_file does not check SUBSCRIBE: both filters come back granted at QoS 1
    // (not 0x87). The ACL applies per message at delivery, which is what this test pins down.
    const granted = await consumerA.subscribeAsync([sourceEvents("consumer-b"), sourceEvents("+")], {
      qos: 1,
    });
    expect(granted.map((g) => g.qos)).toEqual([1, 1]);
    await consumerB.subscribeAsync(sourceEvents("consumer-b"), { qos: 1 });

    await maestro.publishAsync(sourceEvents("consumer-b"), "for b", { qos: 1 });
    await maestro.publishAsync(sourceEvents("consumer-a"), "for a", { qos: 1 });

    await eventually("consumer-b receives its event", () => toB.length > 0, 5_000);
    // The same wildcard subscription that carries A's own event carries nothing of B's.
    await eventually("consumer-a receives its event", () => toA.length > 0, 5_000);
    expect(topicsOf(toA)).toEqual([sourceEvents("consumer-a")]);
    expect(topicsOf(toB)).toEqual([sourceEvents("consumer-b")]);
  });

  it("refuses a consumer's publish on another consumer's topics with PUBACK 0x87", async () => {
    const [maestro, consumerA] = await Promise.all([connectAs(SOURCE_IDENTITY), connectAs("consumer-a")]);
    const toMaestro = inbox(maestro);
    await maestro.subscribeAsync(agentEvents("+"), { qos: 1 });

    const forged = consumerA.publishAsync(agentEvents("consumer-b"), "status of b", { qos: 1 });
    await expect(forged).rejects.toMatchObject({ code: NOT_AUTHORIZED });
    // Only the source sends source events, also to consumer-a itself.
    const selfSent = consumerA.publishAsync(sourceEvents("consumer-a"), "spec", { qos: 1 });
    await expect(selfSent).rejects.toMatchObject({ code: NOT_AUTHORIZED });
    await consumerA.publishAsync(agentEvents("consumer-a"), "status of a", { qos: 1 });

    await eventually("maestro receives consumer-a's status", () => toMaestro.length > 0, 5_000);
    expect(topicsOf(toMaestro)).toEqual([agentEvents("consumer-a")]);
    expect(consumerA.connected).toBe(true); // a refused publish does not cost the connection
  });

  it("delivers agent events to a shared subscription of the source", async () => {
    const [maestro, consumerA] = await Promise.all([connectAs(SOURCE_IDENTITY), connectAs("consumer-a")]);
    const toMaestro = inbox(maestro);
    await maestro.subscribeAsync(`$share/maestro/${agentEvents("+")}`, { qos: 1 });
    await consumerA.publishAsync(agentEvents("consumer-a"), "status", { qos: 1 });
    await eventually("maestro receives through $share", () => toMaestro.length === 1, 5_000);
  });

  it("binds the client ID to the certificate: mgmt-2's certificate cannot take over mgmt-1's session", async () => {
    const agentClientId = "mgmt-1-work-agent-client";
    const [maestro, mgmt1] = await Promise.all([
      connectAs(SOURCE_IDENTITY),
      connectWith(await brokerCredentials("mgmt-1"), undefined, agentClientId),
    ]);
    const toMgmt1 = inbox(mgmt1);
    const closes: string[] = [];
    mgmt1.on("close", () => closes.push("closed"));
    await mgmt1.subscribeAsync(sourceEvents("mgmt-1"), { qos: 1 });
    const impostorCreds = await brokerCredentials("mgmt-2");
    // Each impostor CONNACK comes after mosquitto settled whose session the client ID names; an
    // event the source sends after it reaches mgmt-1 only if mgmt-1's session survived.
    for (let attempt = 1; attempt <= 5; attempt++) {
      const impostor = await connectWith(impostorCreds, undefined, agentClientId);
      await maestro.publishAsync(sourceEvents("mgmt-1"), `after impostor ${attempt}`, { qos: 1 });
      await eventually(
        `mgmt-1 receives the event sent after impostor ${attempt}`,
        () => toMgmt1.length === attempt,
        5_000,
      );
      await impostor.endAsync(true);
    }
    expect(closes).toEqual([]);
    expect(mgmt1.connected).toBe(true);
  });

  it("refuses retained messages: the publisher is disconnected, a later subscriber gets only live events", async () => {
    const consumerA = await connectAs("consumer-a");
    const disconnected = new Promise<string>((resolve) =>
      consumerA.once("disconnect", (packet) => resolve(`disconnected ${packet.reasonCode ?? 0}`)),
    );
    const acknowledged = consumerA
      .publishAsync(agentEvents("consumer-a"), "retained status", { qos: 1, retain: true })
      .then(
        () => "acknowledged",
        () => "never acknowledged",
      );
    try {
      expect(await Promise.race([disconnected, acknowledged])).toBe(`disconnected ${RETAIN_NOT_SUPPORTED}`);

      const maestro = await connectAs(SOURCE_IDENTITY);
      const toMaestro = inbox(maestro);
      await maestro.subscribeAsync(agentEvents("consumer-a"), { qos: 1 });
      const again = await connectAs("consumer-a");
      await again.publishAsync(agentEvents("consumer-a"), "live status", { qos: 1 });
      await eventually("maestro receives the live status", () => toMaestro.length > 0, 5_000);
      expect(toMaestro.map((p) => p.payload.toString())).toEqual(["live status"]);
    } finally {
      // Were it stored, clear it: the region's broker outlives this file.
      consumerA.publish(agentEvents("consumer-a"), "", { qos: 0, retain: true });
    }
  });

  it("a consumer ignores a retained event even from a broker that keeps them", async () => {
    const dir = await scratchDir("broker-retain");
    const broker = await startBroker({ workDir: dir.path, retainAvailable: true });
    const stop = new AbortController();
    try {
      const maestro = await connectWith(await broker.credentials(SOURCE_IDENTITY), broker.url);
      const specEvent = (id: string): CloudEvent => ({
        specversion: "1.0",
        id,
        source: "maestro",
        type: formatEventType({
          dataType: MANIFEST_BUNDLE_DATA_TYPE,
          subResource: "spec",
          action: "create_request",
        }),
        extensions: {},
        data: {},
      });
      const old = toBinaryMessage(specEvent("retained-replay"));
      await maestro.publishAsync(sourceEvents("consumer-a"), old.payload, { ...old.options, retain: true });

      const creds = await broker.credentials("consumer-a");
      const name = "retain-probe-consumer-a";
      const consumer = brokerConnection(
        name,
        {
          url: broker.url,
          caFile: creds.caPath,
          certFile: creds.certPath,
          keyFile: creds.keyPath,
          clientId: name,
        },
        { subscriptions: [sourceEvents("consumer-a")], publishTopic: () => agentEvents("consumer-a") },
      );
      const received: string[] = [];
      consumer.onEvent((event) => received.push(event.id));
      void consumer.run(stop.signal);
      await eventually("the consumer subscribed", () => consumer.isConnected(), 5_000);
      const live = toBinaryMessage(specEvent("live"));
      await maestro.publishAsync(sourceEvents("consumer-a"), live.payload, live.options);

      await eventually("the live event arrives", () => received.length > 0, 5_000);
      expect(received).toEqual(["live"]);
      const dropped = await metricsRegistry.getSingleMetric("maestro_cloudevents_dropped_total")?.get();
      expect(
        dropped?.values.find((v) => v.labels["client"] === name && v.labels["reason"] === "retained")?.value,
      ).toBe(1);
    } finally {
      stop.abort();
      await broker.stop();
      await dir.remove();
    }
  });

  it("accepts only clients with a certificate from the broker CA", async () => {
    const { caPath } = region().broker;
    const other = await scratchDir("other-ca");
    try {
      const otherCA = await createCA(other.path, "other");
      const impostor = await issueCert(otherCA, other.path, {
        name: "consumer-a",
        commonName: "consumer-a",
        usage: "client",
      });
      await expect(connectWith({ caPath })).rejects.toMatchObject({
        code: "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED",
      });
      await expect(connectWith({ caPath, ...impostor })).rejects.toMatchObject({
        code: "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA",
      });
      expect((await connectAs("consumer-a")).connected).toBe(true);
    } finally {
      await other.remove();
    }
  });

  it("enforces the 512 KiB packet limit: DISCONNECT 0x95 above it", async () => {
    const consumerA = connect(region().broker.url, await tlsOptions(await brokerCredentials("consumer-a")));
    clients.push(consumerA);
    const connack = await new Promise<IConnackPacket>((resolve, reject) => {
      consumerA.once("connect", resolve);
      consumerA.once("error", reject);
    });
    // The broker announces its limit, so a client can split before it sends.
    expect(connack.properties?.maximumPacketSize).toBe(DEFAULT_MAX_PACKET_SIZE);
    await consumerA.publishAsync(agentEvents("consumer-a"), Buffer.alloc(500 * 1024), { qos: 1 });

    const disconnected = new Promise<number | undefined>((resolve) =>
      consumerA.once("disconnect", (packet) => resolve(packet.reasonCode)),
    );
    consumerA.publish(agentEvents("consumer-a"), Buffer.alloc(DEFAULT_MAX_PACKET_SIZE + 1), { qos: 1 });
    expect(await disconnected).toBe(PACKET_TOO_LARGE);
  });

  it("accepts only consumer names as identities", async () => {
    const dir = await scratchDir("bad-identity");
    try {
      await expect(issueBrokerCredentials(region().broker, dir.path, "Consumer_A")).rejects.toThrow(
        /must match \^\[a-z0-9-\]\+\$/,
      );
    } finally {
      await dir.remove();
    }
  });

  it("restarts on the same port with the same certificates", async () => {
    const dir = await scratchDir("broker-restart");
    const broker = await startBroker({ workDir: dir.path });
    try {
      const creds = await broker.credentials("consumer-a");
      const before = await connectWith(creds, broker.url);
      const closed = new Promise<void>((resolve) => before.once("close", () => resolve()));
      await broker.restart();
      await closed;
      expect((await connectWith(creds, broker.url)).connected).toBe(true);
    } finally {
      await broker.stop();
      await dir.remove();
    }
  });
});
