/**
 * Fuzz targets of the resync payloads, through the protocol clients that answer them: a spec
 * resync request (agent → maestro-server) listing any IDs at any versions, and a status resync
 * request (maestro-server → agent) listing any hashes. Whatever the list, the answer is bounded:
 * at most one event per work the asking consumer has plus the capped deletions, every event for
 * that consumer only; a malformed request is dropped with a DecodeError.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { summariseWorkSpec, type ManifestWork } from "../../operators/api/work/v1.ts";
import { SourceClient, type SourceConnection } from "../../operators/cloudevents/client/source.ts";
import { AgentClient, type AgentConnection } from "../../operators/cloudevents/client/agent.ts";
import {
  encodeSpecResyncRequest,
  encodeStatusResyncRequests,
} from "../../operators/cloudevents/codec/resync.ts";
import { WorkStore } from "../../operators/cloudevents/store/works.ts";
import {
  DecodeError,
  Ext,
  parseEventType,
  topics,
  type CloudEvent,
} from "../../operators/cloudevents/types.ts";
import type { Logger, LogValues } from "../../operators/runtime/logger.ts";
import { hostileString, mutated, type Json } from "./arbitraries.ts";
import { CONSUMER, asTransported, eventJson } from "./events.ts";
import { fuzzTarget } from "./fuzz.ts";

/** Deletions one spec resync answer may carry (SourceClient's default maxDeletes). */
const MAX_DELETES = 500;
const RESOURCE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Records what a client publishes and drops; `settled` resolves at the first evidence that it is done. */
class Recorder implements SourceConnection, AgentConnection {
  readonly published: CloudEvent[] = [];
  readonly dropped: Array<{ reason: string; err: unknown }> = [];
  #handler: (event: CloudEvent, topic: string) => void = () => undefined;
  #done: () => void = () => undefined;
  readonly settled = new Promise<void>((resolve) => (this.#done = resolve));

  onEvent(handler: (event: CloudEvent, topic: string) => void): void {
    this.#handler = handler;
  }
  onSubscribed(): void {}
  publish(event: CloudEvent): Promise<void> {
    this.published.push(event);
    return Promise.resolve();
  }
  drop(reason: string, err: unknown): void {
    this.dropped.push({ reason, err });
    // Counted on the way to an answer; not the end of one.
    if (!reason.startsWith("resync-")) this.done();
  }
  deliver(event: CloudEvent, topic: string): void {
    this.#handler(event, topic);
  }
  done(): void {
    this.#done();
  }
  /** The decode failures are DecodeErrors; nothing else is refused as invalid. */
  expectTypedDrops(): void {
    for (const d of this.dropped)
      if (d.reason === "invalid") expect(d.err, String(d.err)).toBeInstanceOf(DecodeError);
  }
}

/** A logger that ends the recorder's wait when a client says it answered (or failed to). */
function answerLog(rec: Recorder): Logger {
  const log: Logger = {
    info: (msg: string, _values?: LogValues) => {
      if (msg.startsWith("Answered")) rec.done();
    },
    debug: () => undefined,
    error: () => rec.done(),
    child: () => log,
  };
  return log;
}

interface HeldWork {
  uid: string;
  generation: number;
  deleting: boolean;
}

interface SpecResyncInput {
  works: HeldWork[];
  /** The request as JSON, possibly mutated. */
  request: Json;
  /** The consumer whose topic it arrives on. */
  topicConsumer: string;
}

const heldWorks = fc.array(
  fc.record({
    uid: fc.uuid({ version: 4 }),
    generation: fc.integer({ min: 1, max: 100 }),
    deleting: fc.boolean(),
  }),
  { maxLength: 12 },
);

/** What an agent may list: its works at any version, unknown IDs, made-up ones, each possibly many times. */
function listed(works: HeldWork[]): fc.Arbitrary<Array<{ resourceID: string; resourceVersion: number }>> {
  const id = fc.oneof(
    ...(works.length > 0 ? [fc.constantFrom(...works.map((w) => w.uid))] : []),
    fc.uuid({ version: 4 }),
    hostileString,
  );
  const entry = fc.record({ resourceID: id, resourceVersion: fc.integer({ min: -5, max: 200 }) });
  return fc.oneof(
    fc.array(entry, { maxLength: 20 }),
    fc.tuple(entry, fc.integer({ min: 1, max: 3000 })).map(([e, n]) => Array<typeof e>(n).fill(e)),
    fc
      .array(fc.uuid({ version: 4 }), { minLength: 400, maxLength: 1500 })
      .map((ids) => ids.map((resourceID) => ({ resourceID, resourceVersion: 1 }))),
  );
}

const specResyncInput: fc.Arbitrary<SpecResyncInput> = heldWorks.chain((works) =>
  fc.record({
    works: fc.constant(works),
    request: mutated(
      listed(works).map((versions) =>
        eventJson(encodeSpecResyncRequest(`${CONSUMER}-work-agent`, CONSUMER, versions)),
      ),
      2,
    ),
    topicConsumer: fc.constantFrom(CONSUMER, "mgmt-2"),
  }),
);

function manifestWork(w: HeldWork, namespace: string): ManifestWork {
  return {
    metadata: {
      name: w.uid,
      namespace,
      uid: w.uid,
      generation: w.generation,
      ...(w.deleting ? { deletionTimestamp: "2030-01-01T00:00:00Z" } : {}),
    },
    spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } }] } },
  };
}

fuzzTarget<SpecResyncInput>({
  name: "spec-resync",
  arbitrary: specResyncInput,
  runs: 400,
  async property({ works, request, topicConsumer }) {
    // The works of the asking consumer, and as many of another's that it must never be sent.
    const all = [
      ...works.map((w) => manifestWork(w, CONSUMER)),
      ...works.map((w) => manifestWork({ ...w, uid: crypto.randomUUID() }, "mgmt-2")),
    ];
    const rec = new Recorder();
    const client = new SourceClient(
      rec,
      {
        consumers: () => [CONSUMER, "mgmt-2"],
        worksOf: (c) => all.filter((w) => w.metadata.namespace === c).map(summariseWorkSpec),
        fetch: (cached) => Promise.resolve(all.find((w) => w.metadata.uid === cached.metadata.uid)),
        statusHash: () => undefined,
      },
      answerLog(rec),
    );
    client.onStatus(() => rec.done());
    rec.deliver(asTransported(request), topics.agentEvents(topicConsumer));
    await rec.settled;
    rec.expectTypedDrops();
    const own = all.filter((w) => w.metadata.namespace === topicConsumer);
    const ownIds = new Set(own.map((w) => w.metadata.uid));
    // After its answer, the source asks the same agent for the statuses of its own works, once.
    const isStatusRequest = (e: CloudEvent) => parseEventType(e.type).subResource === "status";
    const statusRequests = rec.published.filter(isStatusRequest);
    expect(statusRequests.length).toBeLessThanOrEqual(1);
    for (const e of statusRequests) {
      expect(e.extensions[Ext.clusterName]).toBe(topicConsumer);
      const listed = (e.data as { statusHashes: Array<{ resourceID: string }> }).statusHashes;
      expect(
        listed.every((h) => ownIds.has(h.resourceID)),
        "status asked of another's work",
      ).toBe(true);
    }
    const answers = rec.published.filter((e) => !isStatusRequest(e));
    expect(answers.length).toBeLessThanOrEqual(own.length + MAX_DELETES);
    for (const e of answers) {
      expect(e.extensions[Ext.clusterName]).toBe(topicConsumer);
      const id = e.extensions[Ext.resourceId] ?? "";
      const known = ownIds.has(id);
      expect(known || RESOURCE_ID.test(id), `published for ${id}`).toBe(true);
    }
  },
});

interface StatusResyncInput {
  held: Array<HeldWork & { hash: string; reconciled: boolean }>;
  request: Json;
}

const statusResyncInput: fc.Arbitrary<StatusResyncInput> = fc
  .array(
    fc.record({
      uid: fc.uuid({ version: 4 }),
      generation: fc.integer({ min: 1, max: 100 }),
      deleting: fc.constant(false),
      hash: fc.constantFrom("a", "b", ""),
      reconciled: fc.boolean(),
    }),
    { maxLength: 12 },
  )
  .chain((held) => {
    const id = fc.oneof(
      ...(held.length > 0 ? [fc.constantFrom(...held.map((w) => w.uid))] : []),
      fc.uuid({ version: 4 }),
      hostileString,
    );
    const entry = fc.record({ resourceID: id, statusHash: fc.constantFrom("a", "b", "", "zz") });
    const hashes = fc.oneof(
      fc.array(entry, { maxLength: 20 }),
      fc.tuple(entry, fc.integer({ min: 1, max: 1000 })).map(([e, n]) => Array<typeof e>(n).fill(e)),
    );
    return fc.record({
      held: fc.constant(held),
      request: mutated(
        // Built around the encoder, which refuses a batch over the packet limit that a hostile
        // list (long made-up IDs) would exceed.
        hashes.map((h) =>
          eventJson({ ...encodeStatusResyncRequests(CONSUMER, [])[0]!, data: { statusHashes: h } }),
        ),
        2,
      ),
    });
  });

fuzzTarget<StatusResyncInput>({
  name: "status-resync",
  arbitrary: statusResyncInput,
  runs: 400,
  async property({ held, request }) {
    const store = new WorkStore();
    for (const w of held) {
      store.upsert({
        uid: w.uid,
        name: w.uid,
        consumer: CONSUMER,
        generation: w.generation,
        originalSource: "maestro",
        metadata: {},
        spec: {
          workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } }] },
        },
      });
      if (w.reconciled) store.update(w.uid, { status: { conditions: [] }, statusHash: w.hash });
    }
    const rec = new Recorder();
    const client = new AgentClient(rec, {
      consumer: CONSUMER,
      agentId: `${CONSUMER}-work-agent`,
      store,
      log: answerLog(rec),
    });
    client.onChange(() => rec.done());
    rec.deliver(asTransported(request), topics.sourceEvents(CONSUMER));
    await rec.settled;
    rec.expectTypedDrops();
    const statuses = rec.published.filter((e) => parseEventType(e.type).subResource === "status");
    const ids = statuses.map((e) => e.extensions[Ext.resourceId]);
    expect(new Set(ids).size, "each work answered once").toBe(ids.length);
    expect(ids.length).toBeLessThanOrEqual(held.filter((w) => w.reconciled).length);
    for (const id of ids) expect(held.some((w) => w.uid === id && w.reconciled)).toBe(true);
  },
});
