/**
 * The informer's inactivity watchdog against a half-open watch: a local HTTP endpoint that lists
 * fine and then accepts watches without ever sending a byte, as a dead load balancer would; and
 * indexers added after the cache is filled. (Everything else about the informer is tested against
 * a real kube-apiserver in test/integration.)
 */
import { KubeConfig } from "@kubernetes/client-node";
import { createServer, type Server } from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Informer } from "./informer.ts";
import { KubeClient, type KubeObject, type ResourceType, type WatchEvent } from "./kube.ts";

const configMaps: ResourceType = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};

interface Stalling {
  server: Server;
  url: string;
  watches: number;
  /** Bookmarks written on the first watch. */
  bookmarks: number;
}

const BOOKMARK_EVERY_MS = 50;
const INACTIVITY_TIMEOUT_MS = 200;

/** Lists `items`, then sends `events` on the first watch and stays silent (or sends bookmarks). */
async function stallingServer(
  sendBookmarks: boolean,
  content: { items?: KubeObject[]; events?: WatchEvent[] } = {},
): Promise<Stalling> {
  const state = { watches: 0, bookmarks: 0 } as Stalling;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.searchParams.get("watch") !== "true") {
      // Pages as the apiserver serves them: `limit` items, and a continue token while more remain.
      const all = content.items ?? [];
      const from = Number(url.searchParams.get("continue") ?? 0);
      const to = from + Number(url.searchParams.get("limit") ?? all.length);
      const metadata = { resourceVersion: "10", ...(to < all.length ? { continue: String(to) } : {}) };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ metadata, items: all.slice(from, to) }));
      return;
    }
    state.watches++;
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    if (state.watches === 1)
      for (const event of content.events ?? []) res.write(JSON.stringify(event) + "\n");
    if (!sendBookmarks) return; // headers, then silence: a half-open connection
    const first = state.watches === 1;
    const timer = setInterval(() => {
      if (first) state.bookmarks++;
      res.write(JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "11" } } }) + "\n");
    }, BOOKMARK_EVERY_MS);
    res.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  state.server = server;
  state.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return state;
}

function clientFor(url: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: "stall", server: url, skipTLSVerify: true }, { name: "anon" });
  return new KubeClient("stall", kc);
}

describe("informer inactivity watchdog", () => {
  let stop = new AbortController();
  let stalling: Stalling | undefined;
  beforeEach(() => {
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    stalling?.server.closeAllConnections();
    await new Promise((r) => stalling?.server.close(r));
  });

  it("abandons a watch that sends nothing and watches again", async () => {
    stalling = await stallingServer(false);
    const informer = new Informer({
      client: clientFor(stalling.url),
      type: configMaps,
      inactivityTimeoutMs: INACTIVITY_TIMEOUT_MS,
      backoff: { initialMs: 10, maxMs: 20 },
    });
    void informer.run(stop.signal);
    const server = stalling;
    await vi.waitFor(() => expect(server.watches).toBeGreaterThanOrEqual(3), {
      timeout: 5_000,
      interval: 50,
    });
    expect(informer.hasSynced()).toBe(true);
    expect(informer.watchCount).toBeGreaterThanOrEqual(3);
  });

  it("keeps a quiet watch that still sends bookmarks", async () => {
    stalling = await stallingServer(true);
    const informer = new Informer({
      client: clientFor(stalling.url),
      type: configMaps,
      inactivityTimeoutMs: INACTIVITY_TIMEOUT_MS,
    });
    void informer.run(stop.signal);
    // Timers never fire early, so this many bookmarks on the first watch mean it has stayed open
    // for five inactivity timeouts (unless a second watch shows it was abandoned).
    const server = stalling;
    const outlived = (5 * INACTIVITY_TIMEOUT_MS) / BOOKMARK_EVERY_MS;
    await vi.waitFor(() => expect(server.bookmarks >= outlived || server.watches > 1).toBe(true), {
      timeout: 10_000,
      interval: 50,
    });
    expect(stalling.watches).toBe(1);
    expect(informer.resourceVersion).toBe("11");
  });
});

function configMap(name: string, team: string, resourceVersion = "5"): KubeObject {
  return { metadata: { namespace: "ns", name, resourceVersion }, data: { team } };
}

const byTeam = (o: KubeObject): string[] => [(o.data as { team?: string } | undefined)?.team ?? ""];
const byName = (o: KubeObject): string[] => [o.metadata.name ?? ""];
const names = (objs: KubeObject[]): string[] => objs.map((o) => o.metadata.name ?? "").sort();

describe("informer indexers added later (client-go's AddIndexers)", () => {
  const stop = new AbortController();
  let server: Stalling | undefined;
  afterEach(async () => {
    stop.abort();
    const running = server?.server;
    server = undefined;
    if (!running) return;
    running.closeAllConnections();
    await new Promise((r) => running.close(r));
  });

  it("indexes the objects already cached and those that arrive afterwards", async () => {
    const events: WatchEvent[] = [{ type: "ADDED", object: configMap("c", "blue", "12") }];
    server = await stallingServer(false, { items: [configMap("a", "red"), configMap("b", "blue")], events });
    const informer = new Informer({
      client: clientFor(server.url),
      type: configMaps,
      indexers: { name: byName },
    });
    const synced = informer.waitForSync();
    void informer.run(stop.signal);
    await synced;

    informer.addIndexers({ team: byTeam });
    expect(names(informer.byIndex("team", "red"))).toEqual(["a"]);
    await vi.waitFor(() => expect(informer.resourceVersion).toBe("12"), { timeout: 5_000, interval: 20 });
    expect(names(informer.byIndex("team", "blue"))).toEqual(["b", "c"]);
    expect(names(informer.byIndex("name", "c"))).toEqual(["c"]);
    expect([informer.countByIndex("team", "blue"), informer.countByIndex("team", "green")]).toEqual([2, 0]);
  });

  it("accepts the same function under the same name again", () => {
    const informer = new Informer({
      client: clientFor("http://127.0.0.1:1"),
      type: configMaps,
      indexers: { team: byTeam },
    });
    expect(() => informer.addIndexers({ team: byTeam })).not.toThrow();
  });

  it("refuses a name taken by a different function and adds none of that call's indexers", () => {
    const informer = new Informer({
      client: clientFor("http://127.0.0.1:1"),
      type: configMaps,
      indexers: { team: byTeam },
    });
    expect(() => informer.addIndexers({ name: byName, team: byName })).toThrow(
      "informer configmaps already has an index team with a different function",
    );
    expect(() => informer.byIndex("name", "a")).toThrow("has no index name");
    expect(() => informer.countByIndex("name", "a")).toThrow("has no index name");
  });
});

describe("informer cache shape", () => {
  let stop = new AbortController();
  let server: Stalling | undefined;
  beforeEach(() => {
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    const running = server?.server;
    server = undefined;
    if (!running) return;
    running.closeAllConnections();
    await new Promise((r) => running.close(r));
  });

  it("lists one namespace from its index, following adds and deletes, and trims with the transform", async () => {
    const other = {
      ...configMap("x", "red"),
      metadata: { namespace: "other", name: "x", resourceVersion: "6" },
    };
    const withFields = {
      ...configMap("b", "blue"),
      metadata: { ...configMap("b", "blue").metadata, managedFields: [{ manager: "m" }] },
    };
    const events: WatchEvent[] = [
      { type: "ADDED", object: configMap("c", "blue", "12") },
      { type: "DELETED", object: configMap("a", "red", "13") },
    ];
    server = await stallingServer(false, { items: [configMap("a", "red"), withFields, other], events });
    const informer = new Informer({
      client: clientFor(server.url),
      type: configMaps,
      transform: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }),
    });
    void informer.run(stop.signal);
    await vi.waitFor(() => expect(informer.resourceVersion).toBe("13"), { timeout: 5_000, interval: 20 });
    expect(names(informer.list("ns"))).toEqual(["b", "c"]);
    expect(names(informer.list("other"))).toEqual(["x"]);
    expect(informer.list("none")).toEqual([]);
    expect(names(informer.list())).toEqual(["b", "c", "x"]);
    expect(informer.get("ns", "b")?.metadata.managedFields).toBeUndefined();
  });

  it("trims each page of a list before it asks for the next", async () => {
    server = await stallingServer(false, {
      items: [configMap("a", "red"), configMap("b", "blue"), configMap("c", "green")],
    });
    const client = clientFor(server.url);
    const order: string[] = [];
    const list = client.list.bind(client);
    vi.spyOn(client, "list").mockImplementation((type, opts) => {
      order.push(`list ${opts?.continue ?? "first"}`);
      return list(type, opts);
    });
    const informer = new Informer({
      client,
      type: configMaps,
      pageSize: 2,
      transform: (o) => {
        order.push(`trim ${o.metadata.name ?? ""}`);
        return o;
      },
    });
    void informer.run(stop.signal);
    await vi.waitFor(() => expect(informer.hasSynced()).toBe(true), { timeout: 5_000, interval: 20 });
    expect(names(informer.list())).toEqual(["a", "b", "c"]);
    // The raw objects of a page are dropped before the next page is read, not held to the end.
    expect(order).toEqual(["list first", "trim a", "trim b", "list 2", "trim c"]);
  });
});
