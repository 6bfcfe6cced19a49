/**
 * Fuzz targets of the CloudEvents codec: MQTT messages (bytes, user properties, content type) into
 * events, and events into works, statuses and resync requests. Whatever comes in, a decoder
 * returns a value of its declared type or throws a DecodeError naming the field; an accepted
 * status goes through maestro-server's acceptance without an error; a valid event round-trips.
 */
import fc from "fast-check";
import { expect } from "vitest";
import {
  summariseWorkSpec,
  type ManifestWork,
  type ManifestWorkStatus,
} from "../../operators/api/work/v1.ts";
import {
  decodeSpecEvent,
  decodeStatusEvent,
  encodeSpecEvent,
  encodeStatusEvent,
  type StatusUpdate,
} from "../../operators/cloudevents/codec/manifestbundle.ts";
import {
  decodeSpecResyncRequest,
  decodeStatusResyncRequest,
} from "../../operators/cloudevents/codec/resync.ts";
import { SnowflakeGenerator } from "../../operators/cloudevents/codec/snowflake.ts";
import { StatusStore } from "../../operators/cloudevents/store/status.ts";
import { fromMessage, receivedEvent, toBinaryMessage } from "../../operators/cloudevents/transport/mqtt.ts";
import { RetainedMessageError } from "../../operators/cloudevents/transport/transport.ts";
import { Action, topics, type CloudEvent } from "../../operators/cloudevents/types.ts";
import { UID_INDEX, acceptStatus, uidIndexer } from "../../operators/maestro-server/accept.ts";
import { FakeLister } from "../support/lister.ts";
import { hostileJson, hostileString, mutated, type Json } from "./arbitraries.ts";
import {
  CONSUMER,
  asTransported,
  decoded,
  eventJson,
  expectReceivedWork,
  expectStatusUpdate,
  validEvent,
  validStatus,
  validWork,
} from "./events.ts";
import { fuzzTarget } from "./fuzz.ts";

/** An MQTT message as the transport receives it; the payload as text or, for raw bytes, base64. */
interface MessageInput {
  topic: string;
  retain: boolean;
  contentType: string | null;
  userProperties: Record<string, string | string[]>;
  payload: { text: string } | { base64: string };
}

const T0 = Date.parse("2030-01-01T00:00:00Z");

/** User properties as MQTT carries them: string values, a repeated key as a list. */
function userProperties(v: Json): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (typeof v !== "object" || v === null || Array.isArray(v)) return out;
  const str = (x: Json): string => (typeof x === "string" ? x : JSON.stringify(x));
  for (const [k, x] of Object.entries(v)) {
    const value = Array.isArray(x) ? x.map(str) : str(x);
    Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A binary-mode message from a (mutated) `{contentType, userProperties, data}`. */
function binaryInput(v: Json, retain: boolean): MessageInput {
  const o = typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
  const contentType = o["contentType"];
  return {
    topic: topics.agentEvents(CONSUMER),
    retain,
    contentType: typeof contentType === "string" ? contentType : null,
    userProperties: userProperties(o["userProperties"] ?? null),
    payload: { text: o["data"] === undefined ? "" : JSON.stringify(o["data"]) },
  };
}

const binaryMessage: fc.Arbitrary<MessageInput> = fc
  .tuple(
    mutated(
      validEvent.map((e) => {
        const { payload, options } = toBinaryMessage(e);
        const properties = options.properties ?? {};
        return {
          contentType: properties.contentType ?? null,
          userProperties: properties.userProperties ?? {},
          ...(payload.length > 0 ? { data: JSON.parse(payload.toString("utf8")) as Json } : {}),
        };
      }),
    ),
    fc.boolean(),
  )
  .map(([v, retain]) => binaryInput(v, retain));

/** Structured mode: the whole event as JSON, its data inline or as data_base64. */
const structuredMessage: fc.Arbitrary<MessageInput> = fc
  .tuple(
    mutated(
      fc.tuple(validEvent, fc.boolean()).map(([e, base64]) => {
        const { extensions, data, ...attrs } = e;
        const body: Record<string, Json> = { ...(eventJson(attrs as CloudEvent) as object), ...extensions };
        if (data !== undefined) {
          if (base64) body["data_base64"] = Buffer.from(JSON.stringify(data)).toString("base64");
          else body["data"] = data as Json;
        }
        return body;
      }),
    ),
    fc.constantFrom("application/cloudevents+json", "application/cloudevents+json; charset=utf-8"),
  )
  .map(([body, contentType]) => ({
    topic: topics.agentEvents(CONSUMER),
    retain: false,
    contentType,
    userProperties: {},
    payload: { text: JSON.stringify(body) },
  }));

/** A valid message's payload cut short or spliced with other text. */
const splicedMessage: fc.Arbitrary<MessageInput> = fc
  .tuple(binaryMessage, fc.nat(), hostileString)
  .map(([m, at, inserted]) => {
    const text = "text" in m.payload ? m.payload.text : "";
    const i = text.length === 0 ? 0 : at % text.length;
    return { ...m, payload: { text: text.slice(0, i) + inserted + text.slice(i + inserted.length) } };
  });

const rawMessage: fc.Arbitrary<MessageInput> = fc.record({
  topic: fc.oneof(fc.constant(topics.agentEvents(CONSUMER)), hostileString),
  retain: fc.boolean(),
  contentType: fc.option(fc.oneof(fc.constant("application/cloudevents+json"), hostileString), { nil: null }),
  userProperties: hostileJson(2).map(userProperties),
  payload: fc.oneof(
    fc.uint8Array({ maxLength: 512 }).map((b) => ({ base64: Buffer.from(b).toString("base64") })),
    hostileJson().map((j) => ({ text: JSON.stringify(j) })),
  ),
});

function packetOf(m: MessageInput) {
  const payload =
    "text" in m.payload ? Buffer.from(m.payload.text, "utf8") : Buffer.from(m.payload.base64, "base64");
  return {
    payload,
    retain: m.retain,
    properties: {
      userProperties: m.userProperties,
      ...(m.contentType === null ? {} : { contentType: m.contentType }),
    },
  };
}

/** An event has the shape CloudEvent declares: string attributes and string extension values. */
function expectEventShape(e: CloudEvent): void {
  for (const attr of ["specversion", "id", "source", "type"] as const)
    expect(typeof e[attr] === "string" && e[attr] !== "", attr).toBe(true);
  expect(["string", "undefined"], "time").toContain(typeof e.time);
  for (const [k, v] of Object.entries(e.extensions)) expect(typeof v, `extension ${k}`).toBe("string");
}

/**
 * maestro-server's acceptance of a decoded status: for a work it knows of that consumer and
 * generation, after an earlier status of the agent, it decides without an error.
 */
function expectAcceptable(u: StatusUpdate): void {
  const work: ManifestWork = {
    metadata: { name: "w", namespace: u.consumer, uid: u.resourceId, generation: u.resourceVersion },
    spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }] } },
  };
  const works = new FakeLister([work].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
  const statuses = new StatusStore({ now: () => T0 });
  const earlier = new SnowflakeGenerator(1, () => T0 - 1000).next();
  statuses.offer({ ...u, sequenceId: earlier, status: { conditions: [] }, deleted: false });
  const decision = acceptStatus(u, works, statuses);
  expect(["accepted", "dropped"]).toContain(decision.verdict);
}

/** Every decoder on one event: a typed result or a DecodeError. */
function decodeEvery(event: CloudEvent): void {
  const work = decoded(() => decodeSpecEvent(event, CONSUMER));
  if (work) expectReceivedWork(work);
  const update = decoded(() => decodeStatusEvent(event));
  if (update) {
    expectStatusUpdate(update);
    expectAcceptable(update);
  }
  const specResync = decoded(() => decodeSpecResyncRequest(event));
  for (const v of specResync?.versions ?? []) {
    expect(typeof v.resourceID).toBe("string");
    expect(Number.isSafeInteger(v.resourceVersion)).toBe(true);
  }
  const statusResync = decoded(() => decodeStatusResyncRequest(event));
  for (const h of statusResync?.hashes ?? [])
    expect([typeof h.resourceID, typeof h.statusHash]).toEqual(["string", "string"]);
}

fuzzTarget<MessageInput>({
  name: "cloudevents-message",
  arbitrary: fc.oneof(binaryMessage, structuredMessage, splicedMessage, rawMessage),
  runs: 3000,
  property(m) {
    const packet = packetOf(m);
    if (m.retain) expect(() => receivedEvent(m.topic, packet)).toThrow(RetainedMessageError);
    const event = decoded(() => fromMessage(packet));
    if (!event) return;
    expectEventShape(event);
    decodeEvery(event);
  },
});

fuzzTarget<Json>({
  name: "cloudevents-event",
  arbitrary: mutated(validEvent.map(eventJson), 6),
  runs: 3000,
  property(v) {
    decodeEvery(asTransported(v));
  },
});

fuzzTarget<ManifestWork>({
  name: "spec-roundtrip",
  arbitrary: validWork,
  runs: 500,
  property(work) {
    const { payload, options } = toBinaryMessage(encodeSpecEvent(work, Action.update));
    const back = decodeSpecEvent(fromMessage({ payload, properties: options.properties ?? {} }), CONSUMER);
    expect(back.uid).toBe(work.metadata.uid);
    expect(back.generation).toBe(work.metadata.generation);
    expect(back.consumer).toBe(work.metadata.namespace);
    expect(back.originalSource).toBe("maestro");
    expect(back.metadata.labels).toEqual(work.metadata.labels);
    expect(back.deletionTimestamp).toBe(work.metadata.deletionTimestamp);
    if (!work.metadata.deletionTimestamp) expect(back.spec).toEqual(work.spec);
  },
});

fuzzTarget<{ status: ManifestWorkStatus; generation: number; sequenceId: string }>({
  name: "status-roundtrip",
  arbitrary: fc.record({
    status: validStatus,
    generation: fc.integer({ min: 1, max: 2 ** 40 }),
    sequenceId: fc.constantFrom(...Array.from({ length: 8 }, () => new SnowflakeGenerator(1).next())),
  }),
  runs: 500,
  property({ status, generation, sequenceId }) {
    const work = {
      uid: "r1",
      generation,
      consumer: CONSUMER,
      originalSource: "maestro",
      metadata: { name: "r1" },
    };
    const event = encodeStatusEvent(work, status, {
      agentId: `${CONSUMER}-work-agent`,
      sequenceId,
      statusHash: "h",
      action: Action.update,
    });
    const { payload, options } = toBinaryMessage(event);
    const back = decodeStatusEvent(fromMessage({ payload, properties: options.properties ?? {} }));
    expect(back).toMatchObject({
      resourceId: "r1",
      resourceVersion: generation,
      consumer: CONSUMER,
      sequenceId,
    });
    expect(back.status).toEqual(status);
  },
});
