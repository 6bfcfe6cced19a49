/**
 * Valid events for the CloudEvents fuzz targets, made by the codec itself from generated works and
 * statuses, and the checks every target shares: what a decoder may throw (only DecodeError) and
 * what its result must look like (the declared type, field by field).
 */
import fc from "fast-check";
import { expect } from "vitest";
import type { ManifestWork, ManifestWorkStatus } from "../../operators/api/work/v1.ts";
import {
  encodeSpecEvent,
  encodeStatusEvent,
  type ReceivedWork,
  type StatusUpdate,
} from "../../operators/cloudevents/codec/manifestbundle.ts";
import {
  encodeSpecResyncRequest,
  encodeStatusResyncRequests,
} from "../../operators/cloudevents/codec/resync.ts";
import { SnowflakeGenerator } from "../../operators/cloudevents/codec/snowflake.ts";
import { statusHash } from "../../operators/cloudevents/codec/statushash.ts";
import { Action, DecodeError, type CloudEvent, type EventAction } from "../../operators/cloudevents/types.ts";
import type { Json } from "./arbitraries.ts";

export const CONSUMER = "mgmt-1";
/** The longest refusal message a decoder may give. */
const MAX_REFUSAL = 1024;
const T0 = Date.parse("2030-01-01T00:00:00Z");

const dnsLabel = fc.stringMatching(/^[a-z]([-a-z0-9]{0,14}[a-z0-9])?$/);
const labels = fc.dictionary(dnsLabel, fc.string({ maxLength: 10 }), { maxKeys: 3 });

const manifest = fc.record({
  apiVersion: fc.constantFrom("v1", "apps/v1", "hypershift.openshift.io/v1beta1"),
  kind: fc.constantFrom("ConfigMap", "Namespace", "Secret", "HostedCluster"),
  metadata: fc.record({ name: dnsLabel, namespace: dnsLabel, labels }, { requiredKeys: ["name"] }),
  data: fc.dictionary(dnsLabel, fc.string({ unit: "grapheme", maxLength: 30 }), { maxKeys: 3 }),
});

/** A ManifestWork of the service cluster as maestro-server sends it. */
export const validWork: fc.Arbitrary<ManifestWork> = fc
  .record({
    name: dnsLabel,
    uid: fc.uuid({ version: 4 }),
    generation: fc.integer({ min: 1, max: 1_000_000 }),
    labels,
    manifests: fc.array(manifest, { minLength: 1, maxLength: 3 }),
    propagationPolicy: fc.option(fc.constantFrom("Foreground" as const, "Orphan" as const), {
      nil: undefined,
    }),
    deleting: fc.boolean(),
  })
  .map((w) => ({
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: {
      name: w.name,
      namespace: CONSUMER,
      uid: w.uid,
      generation: w.generation,
      labels: w.labels,
      ...(w.deleting ? { deletionTimestamp: "2030-01-01T00:00:00Z" } : {}),
    },
    spec: {
      workload: { manifests: w.manifests },
      ...(w.propagationPolicy ? { deleteOption: { propagationPolicy: w.propagationPolicy } } : {}),
    },
  }));

const condition = fc.record({
  type: fc.constantFrom("Applied", "Available", "Degraded", "Deleted"),
  status: fc.constantFrom("True" as const, "False" as const, "Unknown" as const),
  reason: fc.constantFrom("AppliedManifestWorkComplete", "ResourcesAvailable", "ManifestsDeleted"),
  message: fc.string({ unit: "grapheme", maxLength: 40 }),
  lastTransitionTime: fc.constant("2030-01-01T00:00:00Z"),
});

/** A status as the agent computes it. */
export const validStatus: fc.Arbitrary<ManifestWorkStatus> = fc
  .record({
    conditions: fc.uniqueArray(condition, { selector: (c) => c.type, maxLength: 4 }),
    manifests: fc.array(
      fc.record({
        resourceMeta: fc.record({ ordinal: fc.nat(3), kind: fc.constant("ConfigMap"), name: dnsLabel }),
        conditions: fc.uniqueArray(condition, { selector: (c) => c.type, maxLength: 2 }),
        statusFeedback: fc.record({
          values: fc.array(
            fc.record({
              name: dnsLabel,
              fieldValue: fc.oneof(
                fc.record({ type: fc.constant("Integer" as const), integer: fc.integer() }),
                fc.record({ type: fc.constant("String" as const), string: fc.string({ maxLength: 10 }) }),
              ),
            }),
            { maxLength: 2 },
          ),
        }),
      }),
      { maxLength: 3 },
    ),
  })
  .map(({ conditions, manifests }) => ({
    conditions,
    ...(manifests.length > 0 ? { resourceStatus: { manifests } } : {}),
  }));

const sequence = new SnowflakeGenerator(1, () => T0);

export const specAction: fc.Arbitrary<EventAction> = fc.constantFrom(
  Action.create,
  Action.update,
  Action.delete,
);

/** The event a work becomes, as plain JSON (the shape decoders see after the transport). */
const validSpecEvent: fc.Arbitrary<CloudEvent> = fc
  .tuple(validWork, specAction)
  .map(([w, action]) => encodeSpecEvent(w, action));

const validStatusEvent: fc.Arbitrary<CloudEvent> = fc
  .tuple(fc.uuid({ version: 4 }), fc.integer({ min: 1, max: 1_000_000 }), validStatus)
  .map(([uid, generation, status]) =>
    encodeStatusEvent(
      { uid, generation, consumer: CONSUMER, originalSource: "maestro", metadata: { name: uid } },
      status,
      {
        agentId: `${CONSUMER}-work-agent`,
        sequenceId: sequence.next(),
        statusHash: statusHash(status),
        action: Action.update,
      },
    ),
  );

export const validSpecResync: fc.Arbitrary<CloudEvent> = fc
  .array(fc.record({ resourceID: fc.uuid({ version: 4 }), resourceVersion: fc.nat() }), { maxLength: 5 })
  .map((versions) => encodeSpecResyncRequest(`${CONSUMER}-work-agent`, CONSUMER, versions));

export const validStatusResync: fc.Arbitrary<CloudEvent> = fc
  .array(
    fc.record({
      resourceID: fc.uuid({ version: 4 }),
      statusHash: fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), maxLength: 64 }),
    }),
    {
      maxLength: 5,
    },
  )
  .map((hashes) => encodeStatusResyncRequests(CONSUMER, hashes)[0]!);

/** Any of the four kinds of valid event. */
export const validEvent: fc.Arbitrary<CloudEvent> = fc.oneof(
  validSpecEvent,
  validStatusEvent,
  validSpecResync,
  validStatusResync,
);

/** An event as JSON, for mutation (a CloudEvent is JSON apart from its optional fields). */
export function eventJson(event: CloudEvent): Json {
  return JSON.parse(JSON.stringify(event)) as Json;
}

/**
 * A mutated event back in the CloudEvent shape the transport guarantees (string attributes,
 * string extension values), so that a decoder is tested on what it can really be given.
 */
export function asTransported(v: Json): CloudEvent {
  const o = typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
  const str = (x: Json | undefined): string =>
    typeof x === "string" ? x : x === undefined ? "" : JSON.stringify(x);
  const ext = o["extensions"];
  const extensions: Record<string, string> = {};
  if (typeof ext === "object" && ext !== null && !Array.isArray(ext))
    for (const [k, x] of Object.entries(ext))
      Object.defineProperty(extensions, k, {
        value: str(x),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  return {
    specversion: str(o["specversion"]),
    id: str(o["id"]),
    source: str(o["source"]),
    type: str(o["type"]),
    ...(o["time"] === undefined ? {} : { time: str(o["time"]) }),
    ...(o["datacontenttype"] === undefined ? {} : { datacontenttype: str(o["datacontenttype"]) }),
    extensions,
    ...(o["data"] === undefined ? {} : { data: o["data"] }),
  };
}

/** Runs a decoder: its result, or undefined when it refused the input with a DecodeError. */
export function decoded<T>(decode: () => T): T | undefined {
  try {
    return decode();
  } catch (err) {
    if (err instanceof DecodeError) {
      expect(err.field, err.message.slice(0, 200)).toMatch(/^[a-zA-Z]/);
      // The refusal is logged for every dropped event: it quotes the input only in part.
      expect(err.message.length, `a refusal of ${err.message.length} characters`).toBeLessThanOrEqual(
        MAX_REFUSAL,
      );
      return undefined;
    }
    throw new Error(`a decoder threw ${err instanceof Error ? err.name : typeof err}, not a DecodeError`, {
      cause: err,
    });
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function expectStringMap(v: unknown, what: string): void {
  if (v === undefined) return;
  expect(isRecord(v), `${what} is an object`).toBe(true);
  for (const [k, x] of Object.entries(v as object))
    expect(typeof x, `${what}.${k} is a string`).toBe("string");
}

function expectWorkMetadata(w: ReceivedWork): void {
  expect(isRecord(w.metadata), "metadata is an object").toBe(true);
  for (const f of ["name", "namespace", "uid", "deletionTimestamp", "creationTimestamp"] as const)
    expect(["string", "undefined"], `metadata.${f}`).toContain(typeof w.metadata[f]);
  expectStringMap(w.metadata.labels, "metadata.labels");
  expectStringMap(w.metadata.annotations, "metadata.annotations");
}

/** A decoded work has the types ReceivedWork declares. */
export function expectReceivedWork(w: ReceivedWork): void {
  expect(typeof w.uid === "string" && w.uid !== "", "uid").toBe(true);
  expect(typeof w.name, "name").toBe("string");
  expect(Number.isSafeInteger(w.generation) && w.generation >= 0, "generation").toBe(true);
  expect(typeof w.originalSource, "originalSource").toBe("string");
  expectWorkMetadata(w);
  expect(["string", "undefined"], "deletionTimestamp").toContain(typeof w.deletionTimestamp);
  expect(isRecord(w.spec), "spec").toBe(true);
  if (!w.deletionTimestamp) expectWorkSpec(w);
}

function expectWorkSpec(w: ReceivedWork): void {
  const manifests = w.spec.workload?.manifests;
  expect(Array.isArray(manifests) && manifests.length > 0, "manifests").toBe(true);
  for (const m of manifests ?? []) {
    expect(isRecord(m) && typeof m.apiVersion === "string" && typeof m.kind === "string", "manifest").toBe(
      true,
    );
    expect(typeof m.metadata?.name, "manifest metadata.name").toBe("string");
  }
  for (const f of ["deleteOption", "executor"] as const)
    if (w.spec[f] !== undefined) expect(isRecord(w.spec[f]), `spec.${f} is an object`).toBe(true);
  if (w.spec.manifestConfigs !== undefined)
    expect(Array.isArray(w.spec.manifestConfigs), "spec.manifestConfigs is a list").toBe(true);
}

/** A decoded status has the types StatusUpdate declares. */
export function expectStatusUpdate(u: StatusUpdate): void {
  expect(typeof u.resourceId === "string" && u.resourceId !== "", "resourceId").toBe(true);
  expect(Number.isSafeInteger(u.resourceVersion) && u.resourceVersion >= 0, "resourceVersion").toBe(true);
  expect(typeof u.consumer === "string" && u.consumer !== "", "consumer").toBe(true);
  expect(["string", "undefined"], "sequenceId").toContain(typeof u.sequenceId);
  expect(["string", "undefined"], "statusHash").toContain(typeof u.statusHash);
  expect(Array.isArray(u.status.conditions), "status.conditions").toBe(true);
  const manifests = u.status.resourceStatus?.manifests;
  if (manifests !== undefined) expect(Array.isArray(manifests), "status.resourceStatus.manifests").toBe(true);
  expect(typeof u.deleted, "deleted").toBe("boolean");
}
