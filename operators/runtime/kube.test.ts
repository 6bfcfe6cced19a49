/**
 * Cancellation of KubeClient requests, against a local HTTP endpoint that holds every request
 * open until the client goes away: an abort must cancel the request in flight (the server sees
 * the connection close) and reject with the signal's reason, never with a KubeApiError.
 * (Everything else about the client is exercised against a real kube-apiserver in test/integration.)
 */
import { KubeConfig } from "@kubernetes/client-node";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Applier } from "./apply.ts";
import { EventRecorder } from "./events.ts";
import { silentLogger, type Logger } from "./logger.ts";
import { KubeApiError, KubeClient, type KubeObject, type ResourceType } from "./kube.ts";
import { rejection } from "../../test/support/rejection.ts";

const configMaps: ResourceType = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};

const configMap: KubeObject = { metadata: { name: "cm", namespace: "ns", uid: "u1", resourceVersion: "1" } };

/** A held request, as the server saw it. */
interface Held {
  req: IncomingMessage;
  /** Resolves when the client's side of the request closed. */
  closed: Promise<void>;
}

/** Answers nothing (a watch gets its headers and one event), and hands each request to the test. */
class HoldingServer {
  readonly server: Server;
  readonly #arrivals: Held[] = [];
  readonly #waiters: Array<(held: Held) => void> = [];
  url = "";

  constructor() {
    this.server = createServer((req, res) => {
      const closed = once(res, "close").then(() => undefined);
      if (new URL(req.url ?? "/", "http://x").searchParams.get("watch") === "true") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(JSON.stringify({ type: "ADDED", object: configMap }) + "\n");
      }
      const held = { req, closed };
      const waiter = this.#waiters.shift();
      if (waiter) waiter(held);
      else this.#arrivals.push(held);
    });
  }

  async start(): Promise<void> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  /** The next request to arrive (or the earliest one not taken yet). */
  next(): Promise<Held> {
    const arrived = this.#arrivals.shift();
    if (arrived) return Promise.resolve(arrived);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  get pending(): number {
    return this.#arrivals.length;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, "close");
  }
}

function clientFor(url: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: "held", server: url, skipTLSVerify: true }, { name: "anon" });
  return new KubeClient("held", kc);
}

describe("KubeClient cancellation", () => {
  let holding: HoldingServer;
  let client: KubeClient;
  beforeEach(async () => {
    holding = new HoldingServer();
    await holding.start();
    client = clientFor(holding.url);
  });
  afterEach(() => holding.stop());

  const requests: Array<[string, (c: KubeClient, signal: AbortSignal) => Promise<unknown>]> = [
    ["get", (c, signal) => c.get(configMaps, "cm", "ns", { signal })],
    ["find", (c, signal) => c.find(configMaps, "cm", "ns", { signal })],
    ["list", (c, signal) => c.list(configMaps, { namespace: "ns", signal })],
    ["listAll", (c, signal) => c.listAll(configMaps, { namespace: "ns", signal })],
    ["create", (c, signal) => c.create(configMaps, configMap, { signal })],
    ["createIfAbsent", (c, signal) => c.createIfAbsent(configMaps, configMap, { signal })],
    ["replace", (c, signal) => c.replace(configMaps, configMap, undefined, { signal })],
    ["apply", (c, signal) => c.apply(configMaps, configMap, { fieldManager: "test", signal })],
    ["mergePatch", (c, signal) => c.mergePatch(configMaps, { name: "cm" }, {}, { signal })],
    ["delete", (c, signal) => c.delete(configMaps, { name: "cm", namespace: "ns" }, { signal })],
    ["raw", (c, signal) => c.raw("/version", { signal })],
  ];

  it.each(requests)(
    "%s: an abort cancels the request in flight and rejects with the reason",
    async (_, send) => {
      const abort = new AbortController();
      const call = rejection(send(client, abort.signal));
      const held = await holding.next();
      const reason = new Error("reconcile cancelled");
      abort.abort(reason);
      expect(await call).toBe(reason);
      await held.closed;
    },
  );

  it("rejects with the standard AbortError when the aborter gives no reason", async () => {
    const abort = new AbortController();
    const call = rejection(client.list(configMaps, { signal: abort.signal }));
    await holding.next();
    abort.abort();
    const err = await call;
    expect(err).not.toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ name: "AbortError" });
  });

  it("sends nothing when the signal has already aborted", async () => {
    const reason = new Error("too late");
    expect(await rejection(client.get(configMaps, "cm", "ns", { signal: AbortSignal.abort(reason) }))).toBe(
      reason,
    );
    // A request sent after the first one would be taken first; the server saw only the second.
    const after = client.raw("/version");
    const held = await holding.next();
    expect(held.req.url).toBe("/version");
    expect(holding.pending).toBe(0);
    held.req.socket.destroy();
    await rejection(after);
  });

  it("a watch ends with the reason once its signal aborts, after the events it got", async () => {
    const abort = new AbortController();
    const events = client.watch(configMaps, { namespace: "ns", signal: abort.signal });
    const first = await events.next();
    expect(first.value).toMatchObject({ type: "ADDED", object: { metadata: { name: "cm" } } });
    const held = await holding.next();
    const reason = new Error("stopping");
    abort.abort(reason);
    expect(await rejection(events.next())).toBe(reason);
    await held.closed;
  });

  it("the Applier passes the signal on", async () => {
    const applier = new Applier(client, "test");
    const cases: Array<(signal: AbortSignal) => Promise<unknown>> = [
      (signal) => applier.apply(configMaps, configMap, { signal }),
      (signal) => applier.applyIfChanged(configMaps, configMap, undefined, { signal }),
      (signal) => applier.applyStatus(configMaps, configMap, { phase: "x" }, { signal }),
      (signal) => applier.addFinalizer(configMaps, configMap, "test/f", { signal }),
      (signal) =>
        applier.removeFinalizer(
          configMaps,
          { ...configMap, metadata: { ...configMap.metadata, finalizers: ["test/f"] } },
          "test/f",
          { signal },
        ),
    ];
    for (const send of cases) {
      const abort = new AbortController();
      const call = rejection(send(abort.signal));
      const held = await holding.next();
      const reason = new Error("cancelled");
      abort.abort(reason);
      expect(await call).toBe(reason);
      await held.closed;
    }
  });

  it("an event whose signal aborts is abandoned without an error", async () => {
    const errors: unknown[] = [];
    const log: Logger = { ...silentLogger, error: (_msg, err) => void errors.push(err) };
    const recorder = new EventRecorder(client, "test", log);
    const abort = new AbortController();
    const recorded = recorder.record(configMap, {
      type: "Normal",
      reason: "R",
      message: "m",
      signal: abort.signal,
    });
    const held = await holding.next();
    abort.abort();
    await recorded;
    await held.closed;
    expect(errors).toEqual([]);
  });
});

describe("KubeClient watch stream", () => {
  it("yields each event whole however the stream is cut: mid-line, mid-character, blank lines, CRLF", async () => {
    const named = (name: string) => ({ type: "ADDED", object: { metadata: { name } } });
    const bytes = Buffer.from(
      `${JSON.stringify(named("é-first"))}\r\n\n${JSON.stringify(named("second"))}\n${JSON.stringify(named("last"))}`,
    );
    const split = bytes.indexOf(Buffer.from("é")) + 1; // inside the two bytes of é
    const server = createServer((_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(bytes.subarray(0, split));
      setImmediate(() => {
        res.write(bytes.subarray(split, split + 40));
        res.end(bytes.subarray(split + 40));
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const seen: string[] = [];
      for await (const e of clientFor(`http://127.0.0.1:${port}`).watch(configMaps, { namespace: "ns" }))
        seen.push(e.object.metadata.name ?? "");
      expect(seen).toEqual(["é-first", "second", "last"]);
    } finally {
      server.close();
    }
  });
});
