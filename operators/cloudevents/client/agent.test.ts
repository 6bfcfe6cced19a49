import { expect, test, vi } from "vitest";
import type { Logger, LogValues } from "../../runtime/logger.ts";
import { encodeStatusResyncRequests } from "../codec/resync.ts";
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

/** Resolves once the client logs that it answered: the evidence that every publish is done. */
function answerLog(): Logger & { answered: Promise<LogValues> } {
  let resolve: (values: LogValues) => void = () => undefined;
  const answered = new Promise<LogValues>((r) => (resolve = r));
  const log: Logger & { answered: Promise<LogValues> } = {
    answered,
    info: (msg, values) => {
      if (msg === "Answered status resync") resolve(values ?? {});
    },
    debug: () => undefined,
    error: () => undefined,
    child: () => log,
  };
  return log;
}

test("a status resync request naming one work a thousand times, and works the agent lacks, is answered once", async () => {
  const store = new WorkStore();
  store.upsert({
    uid: "r1",
    name: "r1",
    consumer: "mgmt-1",
    generation: 1,
    originalSource: "maestro",
    metadata: {},
    spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } }] } },
  });
  store.update("r1", { status: { conditions: [] }, statusHash: "current" });
  const conn = new FakeConnection();
  const log = answerLog();
  new AgentClient(conn, { consumer: "mgmt-1", agentId: "mgmt-1-work-agent", store, log });
  const hashes = Array.from({ length: 1000 }, (_, i) => ({
    resourceID: i % 2 === 0 ? "r1" : `unknown-${i}`,
    statusHash: "old",
  }));
  const [request] = encodeStatusResyncRequests("mgmt-1", hashes);
  conn.deliver(request!);
  expect(await log.answered).toMatchObject({ sent: 1 });
  expect(conn.published).toHaveLength(1);
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
