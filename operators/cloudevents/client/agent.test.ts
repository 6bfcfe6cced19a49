import { expect, test, vi } from "vitest";
import type { Logger, LogValues } from "../../runtime/logger.ts";
import { decodeSpecResyncRequest, encodeStatusResyncRequests } from "../codec/resync.ts";
import { WorkStore } from "../store/works.ts";
import { topics, type CloudEvent } from "../types.ts";
import { AgentClient, type AgentConnection } from "./agent.ts";

class FakeConnection implements AgentConnection {
  readonly published: CloudEvent[] = [];
  #handler: (event: CloudEvent, topic: string) => void = () => undefined;
  onEvent(handler: (event: CloudEvent, topic: string) => void): void {
    this.#handler = handler;
  }
  onSubscribed(_handler: () => void): void {}
  publish(event: CloudEvent): Promise<void> {
    this.published.push(event);
    return Promise.resolve();
  }
  drop(): void {}
  deliver(event: CloudEvent): void {
    this.#handler(event, topics.sourceEvents("mgmt-1"));
  }
}

/**
 * Resolves once the client logs that it answered (the evidence that every status publish is
 * done), and once it logs the spec resync it asked for.
 */
function answerLog(): Logger & { answered: Promise<LogValues>; specsRequested: Promise<LogValues> } {
  let resolve: (values: LogValues) => void = () => undefined;
  let resolveSpecs: (values: LogValues) => void = () => undefined;
  const answered = new Promise<LogValues>((r) => (resolve = r));
  const specsRequested = new Promise<LogValues>((r) => (resolveSpecs = r));
  const log: Logger & { answered: Promise<LogValues>; specsRequested: Promise<LogValues> } = {
    answered,
    specsRequested,
    info: (msg, values) => {
      if (msg === "Answered status resync") resolve(values ?? {});
      if (msg === "Requested spec resync") resolveSpecs(values ?? {});
    },
    debug: () => undefined,
    error: () => undefined,
    child: () => log,
  };
  return log;
}

/** A store holding one work, r1, whose status was sent with hash "current". */
function storeWithOneWork(): WorkStore {
  const store = new WorkStore();
  store.upsert({
    uid: "r1",
    name: "r1",
    consumer: "mgmt-1",
    generation: 3,
    originalSource: "maestro",
    metadata: {},
    spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } }] } },
  });
  store.update("r1", { status: { conditions: [] }, statusHash: "current" });
  return store;
}

test("a status resync request naming one work a thousand times, and works the agent lacks, is answered once", async () => {
  const store = storeWithOneWork();
  const conn = new FakeConnection();
  const log = answerLog();
  new AgentClient(conn, { consumer: "mgmt-1", agentId: "mgmt-1-work-agent", store, log });
  const hashes = Array.from({ length: 1000 }, (_, i) => ({
    resourceID: i % 2 === 0 ? "r1" : `unknown-${i}`,
    statusHash: "old",
  }));
  const [request] = encodeStatusResyncRequests("mgmt-1", hashes);
  conn.deliver(request!);
  expect(await log.answered).toMatchObject({ sent: 1, missing: 500 });
  expect(conn.published.filter((e) => e.type.includes(".status."))).toHaveLength(1);
});

test("a status resync listing a work the agent lacks is followed by a spec resync request of what it holds", async () => {
  const conn = new FakeConnection();
  const log = answerLog();
  new AgentClient(conn, { consumer: "mgmt-1", agentId: "mgmt-1-work-agent", store: storeWithOneWork(), log });
  const [request] = encodeStatusResyncRequests("mgmt-1", [
    { resourceID: "r1", statusHash: "current" },
    { resourceID: "missed", statusHash: "h" },
  ]);
  conn.deliver(request!);
  expect(await log.answered).toEqual({ asked: 2, sent: 0, missing: 1 });
  await log.specsRequested;
  expect(conn.published).toHaveLength(1);
  const specResync = decodeSpecResyncRequest(conn.published[0]!);
  expect(specResync.versions).toEqual([{ resourceID: "r1", resourceVersion: 3 }]);
});

test("a status resync listing only works the agent holds asks for no specs", async () => {
  const conn = new FakeConnection();
  const log = answerLog();
  new AgentClient(conn, { consumer: "mgmt-1", agentId: "mgmt-1-work-agent", store: storeWithOneWork(), log });
  const [request] = encodeStatusResyncRequests("mgmt-1", [{ resourceID: "r1", statusHash: "old" }]);
  conn.deliver(request!);
  expect(await log.answered).toEqual({ asked: 1, sent: 1, missing: 0 });
  expect(conn.published.map((e) => e.type)).toEqual([
    "io.open-cluster-management.works.v1alpha1.manifestbundles.status.resync_response",
  ]);
});

test("a work removed while a status resync is being answered is not reported again with its earlier status", async () => {
  /** Publishes wait for the broker's ack, which comes when the test says and at once after that. */
  class AckingConnection extends FakeConnection {
    readonly #acks: Array<() => void> = [];
    #acking = false;
    override publish(event: CloudEvent): Promise<void> {
      this.published.push(event);
      return this.#acking ? Promise.resolve() : new Promise((resolve) => this.#acks.push(resolve));
    }
    ackFromNowOn(): void {
      this.#acking = true;
      for (const ack of this.#acks.splice(0)) ack();
    }
  }
  const store = new WorkStore();
  for (const uid of ["r1", "r2"]) {
    store.upsert({
      uid,
      name: uid,
      consumer: "mgmt-1",
      generation: 1,
      originalSource: "maestro",
      metadata: {},
      spec: { workload: { manifests: [] } },
    });
    store.update(uid, { status: { conditions: [] }, statusHash: "applied" });
  }
  const conn = new AckingConnection();
  const log = answerLog();
  new AgentClient(conn, { consumer: "mgmt-1", agentId: "mgmt-1-work-agent", store, log });
  const [request] = encodeStatusResyncRequests("mgmt-1", [
    { resourceID: "r1", statusHash: "" },
    { resourceID: "r2", statusHash: "" },
  ]);
  conn.deliver(request!);
  await vi.waitFor(() => expect(conn.published).toHaveLength(1));
  // While r1's answer waits for its ack, r2's deletion is confirmed and r2 removed.
  store.remove("r2");
  conn.ackFromNowOn();
  expect(await log.answered).toMatchObject({ asked: 2, sent: 1 });
  expect(conn.published.map((e) => e.extensions["resourceid"])).toEqual(["r1"]);
});

test("beats after each subscribe and then at the interval, and not at all with heartbeats off", async () => {
  class SubscribingConnection extends FakeConnection {
    #subscribed: Array<() => void> = [];
    override onSubscribed(handler: () => void): void {
      this.#subscribed.push(handler);
    }
    subscribe(): void {
      for (const h of this.#subscribed) h();
    }
  }
  const heartbeats = (conn: FakeConnection) => conn.published.filter((e) => e.type.includes(".heartbeats."));
  const conn = new SubscribingConnection();
  const client = new AgentClient(conn, {
    consumer: "mgmt-1",
    agentId: "mgmt-1-work-agent",
    store: new WorkStore(),
    heartbeatMs: 20,
  });
  conn.subscribe();
  expect(heartbeats(conn)).toHaveLength(1);
  const stop = new AbortController();
  const running = client.runHeartbeats(stop.signal);
  await vi.waitFor(() => expect(heartbeats(conn).length).toBeGreaterThanOrEqual(3));
  stop.abort();
  await running;
  expect(heartbeats(conn)[0]?.data).toEqual({ intervalSeconds: 0.02 });

  const quiet = new SubscribingConnection();
  const off = new AgentClient(quiet, { consumer: "mgmt-1", agentId: "a", store: new WorkStore() });
  quiet.subscribe();
  await off.runHeartbeats(new AbortController().signal);
  expect(heartbeats(quiet)).toEqual([]);
});
