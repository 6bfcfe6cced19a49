import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectionClientId, mqttTransportFactory, receivedEvent, toBinaryMessage } from "./mqtt.ts";
import { RetainedMessageError } from "./transport.ts";

const event = {
  specversion: "1.0",
  id: "e-1",
  source: "maestro",
  type: "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.create_request",
  extensions: {},
  data: { a: 1 },
};

describe("receivedEvent", () => {
  it("refuses a retained message before decoding it", () => {
    const { payload, options } = toBinaryMessage(event);
    const packet = { payload, properties: options.properties, retain: true };
    expect(() => receivedEvent("sources/maestro/consumers/mgmt-1/sourceevents", packet)).toThrow(
      RetainedMessageError,
    );
    expect(() => receivedEvent("t", packet)).toThrow(/retained message on t ignored/);
  });

  it("decodes a live message", () => {
    const { payload, options } = toBinaryMessage(event);
    expect(receivedEvent("t", { payload, properties: options.properties, retain: false }).id).toBe("e-1");
  });
});

describe("client IDs", () => {
  let dir = "";
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("carry 64 random bits after the readable prefix", () => {
    const ids = new Set(Array.from({ length: 100 }, () => connectionClientId("maestro")));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^maestro-[0-9a-f]{16}$/);
  });

  it("differ on every connection attempt, so a known prefix names no session", async () => {
    dir = await mkdtemp(join(tmpdir(), "mqtt-client-id-"));
    const files = { caFile: join(dir, "ca"), certFile: join(dir, "cert"), keyFile: join(dir, "key") };
    await Promise.all(Object.values(files).map((f) => writeFile(f, "pem")));
    const next = mqttTransportFactory(
      { url: "mqtts://127.0.0.1:1", clientId: "maestro-server-0", ...files },
      { subscriptions: [], publishTopic: () => "t" },
    );
    const [first, second] = [next().clientId, next().clientId];
    expect(first).toMatch(/^maestro-server-0-[0-9a-f]{16}$/);
    expect(second).not.toBe(first);
  });
});
