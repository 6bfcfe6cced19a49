import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { summariseWorkSpec, type ManifestWork } from "../../api/work/v1.ts";
import type { Logger, LogValues } from "../../runtime/logger.ts";
import {
  decodeBrokerCertificateAnswer,
  encodeBrokerCertificateRequest,
  type BrokerCertificateRequest,
} from "../codec/broker-certificate.ts";
import { encodeHeartbeat, type Heartbeat } from "../codec/heartbeat.ts";
import { encodeSpecResyncRequest, type ResourceVersion } from "../codec/resync.ts";
import { Ext, SOURCE_ID, parseEventType, topics, type CloudEvent } from "../types.ts";
import { SourceClient, type SourceConnection, type SpecResyncLimits } from "./source.ts";

/** A connection that records what is published and dropped, and delivers what the test sends. */
class FakeConnection implements SourceConnection {
  readonly published: CloudEvent[] = [];
  readonly dropped: string[] = [];
  #handler: (event: CloudEvent, topic: string) => void = () => undefined;
  onEvent(handler: (event: CloudEvent, topic: string) => void): void {
    this.#handler = handler;
  }
  publish(event: CloudEvent): Promise<void> {
    this.published.push(event);
    return Promise.resolve();
  }
  drop(reason: string): void {
    this.dropped.push(reason);
  }
  deliverEvent(event: CloudEvent, topic: string): void {
    this.#handler(event, topic);
  }
  deliver(consumer: string, versions: ResourceVersion[]): void {
    this.#handler(
      encodeSpecResyncRequest(`${consumer}-work-agent`, consumer, versions),
      topics.agentEvents(consumer),
    );
  }
}

/** Resolves the waiters of "Answered spec resync" lines: the evidence that an answer is complete. */
class AnswerLog implements Logger {
  readonly answers: LogValues[] = [];
  #waiters: Array<() => void> = [];
  info(msg: string, values?: LogValues): void {
    if (msg !== "Answered spec resync") return;
    this.answers.push(values ?? {});
    for (const w of this.#waiters.splice(0)) w();
  }
  debug(): void {}
  error(): void {}
  child(): Logger {
    return this;
  }
  async answered(count: number): Promise<void> {
    while (this.answers.length < count) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}

const work = (consumer: string, generation: number): ManifestWork => ({
  metadata: { name: randomUUID(), namespace: consumer, uid: randomUUID(), generation },
  spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } }] } },
});

function setup(works: ManifestWork[], limits: SpecResyncLimits = {}, deleted = new Set<string>()) {
  const conn = new FakeConnection();
  const log = new AnswerLog();
  const unclaimed: Array<{ consumer: string; ids: string[] }> = [];
  const client = new SourceClient(
    conn,
    {
      consumers: () => [...new Set(works.map((w) => w.metadata.namespace ?? ""))],
      // As maestro-server's cache gives them: without manifests, which fetch reads.
      worksOf: (consumer) => works.filter((w) => w.metadata.namespace === consumer).map(summariseWorkSpec),
      fetch: (cached) => Promise.resolve(works.find((w) => w.metadata.uid === cached.metadata.uid)),
      statusHash: () => undefined,
      deleted: (consumer, uid) => deleted.has(`${consumer}/${uid}`),
    },
    log,
    limits,
  );
  client.onUnclaimed((consumer, ids) => unclaimed.push({ consumer, ids }));
  /** What answered the spec resync requests: specs and deletions, not the status requests after them. */
  const specs = () => conn.published.filter((e) => parseEventType(e.type).subResource === "spec");
  const statusRequests = () => conn.published.filter((e) => parseEventType(e.type).subResource === "status");
  const actions = () => specs().map((e) => (e.extensions[Ext.deletionTimestamp] ? "delete" : "spec"));
  const typesOf = () => conn.published.map((e) => parseEventType(e.type).action);
  return { conn, log, actions, typesOf, specs, statusRequests, unclaimed };
}

describe("spec resync answers are bounded", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  test("6,000 made-up resource IDs cause no publish, and are counted", async () => {
    const t = setup([]);
    t.conn.deliver(
      "mgmt-1",
      Array.from({ length: 6000 }, (_, i) => ({ resourceID: `made-up-${i}`, resourceVersion: 1 })),
    );
    await t.log.answered(1);
    expect(t.conn.published).toEqual([]);
    expect(t.conn.dropped).toEqual(["resync-bad-id"]);
  });

  test("deletions for IDs the source deleted are capped per answer, and the rest counted", async () => {
    const ids = Array.from({ length: 6000 }, () => randomUUID());
    const t = setup([], { maxDeletes: 100 }, new Set(ids.map((id) => `mgmt-1/${id}`)));
    t.conn.deliver(
      "mgmt-1",
      ids.map((resourceID) => ({ resourceID, resourceVersion: 1 })),
    );
    await t.log.answered(1);
    expect(t.conn.published).toHaveLength(100);
    expect(t.conn.dropped).toEqual(["resync-deletes-capped"]);
  });

  test("only the asking consumer's works are answered, and an ID listed twice once", async () => {
    const mine = work("mgmt-1", 2);
    const theirs = work("mgmt-2", 2);
    const t = setup([mine, theirs]);
    const uid = mine.metadata.uid ?? "";
    t.conn.deliver("mgmt-1", [
      { resourceID: uid, resourceVersion: 1 },
      { resourceID: uid, resourceVersion: 1 },
    ]);
    await t.log.answered(1);
    expect(t.specs().map((e) => e.extensions[Ext.resourceId])).toEqual([uid]);
    expect(t.actions()).toEqual(["spec"]);
  });

  test("an agent that asked for specs is asked for the statuses this source lacks or holds otherwise", async () => {
    const mine = work("mgmt-1", 2);
    const t = setup([mine, work("mgmt-2", 2)]);
    t.conn.deliver("mgmt-1", [{ resourceID: mine.metadata.uid ?? "", resourceVersion: 2 }]);
    await t.log.answered(1);
    expect(t.specs()).toEqual([]);
    const [request, ...more] = t.statusRequests();
    expect(more).toEqual([]);
    expect(request?.data).toMatchObject({
      statusHashes: [{ resourceID: mine.metadata.uid, statusHash: "" }],
    });
    expect(t.log.answers[0]).toMatchObject({ consumer: "mgmt-1", statusesAsked: 1 });
  });

  test("after the burst, requests wait; the latest replaces the one waiting, which is counted", async () => {
    const t = setup([work("mgmt-1", 1)], { minIntervalMs: 10_000, burst: 2 });
    t.conn.deliver("mgmt-1", []);
    t.conn.deliver("mgmt-1", []);
    await t.log.answered(2);
    expect(t.specs()).toHaveLength(2);
    t.conn.deliver("mgmt-1", []);
    t.conn.deliver("mgmt-1", []);
    t.conn.deliver("mgmt-2", []);
    await t.log.answered(3);
    expect(t.conn.dropped).toEqual(["resync-rate-limited"]);
    expect(t.specs()).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(10_000);
    await t.log.answered(4);
    expect(t.log.answers.map((a) => a["consumer"])).toEqual(["mgmt-1", "mgmt-1", "mgmt-2", "mgmt-1"]);
    expect(t.specs()).toHaveLength(3);
    // Each answer to mgmt-1 asked for its statuses too (mgmt-2 has no works to ask about).
    expect(t.statusRequests()).toHaveLength(3);
  });
});

describe("a spec resync never deletes what the source does not know it deleted", () => {
  test("IDs neither held nor deleted are left to the agent and reported unclaimed; deleted ones are deleted", async () => {
    const mine = work("mgmt-1", 1);
    const [restored, gone, another] = [randomUUID(), randomUUID(), randomUUID()];
    // `another` was deleted by this source, but for another consumer: not this agent's to delete.
    const t = setup([mine], {}, new Set([`mgmt-1/${gone}`, `mgmt-2/${another}`]));
    t.conn.deliver("mgmt-1", [
      { resourceID: mine.metadata.uid ?? "", resourceVersion: 1 },
      { resourceID: restored, resourceVersion: 3 },
      { resourceID: gone, resourceVersion: 2 },
      { resourceID: another, resourceVersion: 1 },
    ]);
    await t.log.answered(1);
    expect(t.specs().map((e) => [e.extensions[Ext.resourceId], e.extensions[Ext.resourceVersion]])).toEqual([
      [gone, "2"],
    ]);
    expect(t.actions()).toEqual(["delete"]);
    expect(t.unclaimed).toEqual([{ consumer: "mgmt-1", ids: [restored, another] }]);
    expect(t.log.answers[0]).toMatchObject({ agentHolds: 4, sent: 1, unclaimed: 2 });
  });

  test("a source that knows of no deletion (a restored region) deletes nothing, and says so each answer", async () => {
    const t = setup([], { minIntervalMs: 1 });
    const held = [randomUUID(), randomUUID()].map((resourceID) => ({ resourceID, resourceVersion: 1 }));
    t.conn.deliver("mgmt-1", held);
    await t.log.answered(1);
    t.conn.deliver("mgmt-1", []);
    await t.log.answered(2);
    expect(t.specs()).toEqual([]);
    expect(t.unclaimed.map((u) => u.ids.length)).toEqual([2, 0]);
  });
});

describe("heartbeats", () => {
  function heartbeatSetup() {
    const conn = new FakeConnection();
    const client = new SourceClient(conn, {
      consumers: () => [],
      worksOf: () => [],
      fetch: () => Promise.resolve(undefined),
      statusHash: () => undefined,
    });
    const beats: Heartbeat[] = [];
    client.onHeartbeat((b) => beats.push(b));
    return { conn, beats };
  }

  test("are handed to the owner, not treated as statuses", () => {
    const { conn, beats } = heartbeatSetup();
    conn.deliverEvent(
      encodeHeartbeat("mgmt-1-work-agent", { consumer: "mgmt-1", intervalMs: 10_000 }),
      topics.agentEvents("mgmt-1"),
    );
    expect(beats).toEqual([{ consumer: "mgmt-1", intervalMs: 10_000 }]);
    expect(conn.dropped).toEqual([]);
  });

  test("naming another consumer than their topic are dropped", () => {
    const { conn, beats } = heartbeatSetup();
    conn.deliverEvent(
      encodeHeartbeat("mgmt-1-work-agent", { consumer: "mgmt-2", intervalMs: 10_000 }),
      topics.agentEvents("mgmt-1"),
    );
    expect(beats).toEqual([]);
    expect(conn.dropped).toEqual(["consumer-mismatch"]);
  });

  test("that do not decode are dropped as invalid", () => {
    const { conn, beats } = heartbeatSetup();
    const event = {
      ...encodeHeartbeat("a", { consumer: "mgmt-1", intervalMs: 1 }),
      data: { intervalSeconds: -1 },
    };
    conn.deliverEvent(event, topics.agentEvents("mgmt-1"));
    expect(beats).toEqual([]);
    expect(conn.dropped).toEqual(["invalid"]);
  });
});

describe("broker certificate requests", () => {
  function requestSetup() {
    const conn = new FakeConnection();
    const client = new SourceClient(conn, {
      consumers: () => [],
      worksOf: () => [],
      fetch: () => Promise.resolve(undefined),
      statusHash: () => undefined,
    });
    const requests: BrokerCertificateRequest[] = [];
    client.onBrokerCertificateRequest((r) => requests.push(r));
    return { conn, client, requests };
  }

  test("from the consumer's own topic are handed to the owner", () => {
    const { conn, requests } = requestSetup();
    const event = encodeBrokerCertificateRequest("mgmt-1-work-agent", "mgmt-1", "csr");
    conn.deliverEvent(event, topics.agentEvents("mgmt-1"));
    expect(requests).toEqual([{ consumer: "mgmt-1", requestId: event.id, certificateSigningRequest: "csr" }]);
    expect(conn.dropped).toEqual([]);
  });

  test("naming another consumer than their topic are dropped", () => {
    const { conn, requests } = requestSetup();
    conn.deliverEvent(
      encodeBrokerCertificateRequest("mgmt-1-work-agent", "mgmt-2", "csr"),
      topics.agentEvents("mgmt-1"),
    );
    expect(requests).toEqual([]);
    expect(conn.dropped).toEqual(["consumer-mismatch"]);
  });

  test("are answered to the consumer, as maestro", async () => {
    const { conn, client } = requestSetup();
    await client.answerBrokerCertificate({ consumer: "mgmt-1", requestId: "r-1", refused: "no" });
    const [event] = conn.published;
    expect(event?.source).toBe(SOURCE_ID);
    expect(event && decodeBrokerCertificateAnswer(event)).toEqual({
      consumer: "mgmt-1",
      requestId: "r-1",
      refused: "no",
    });
  });
});
