/**
 * The informer's inactivity watchdog against a half-open watch: a local HTTP endpoint that lists
 * fine and then accepts watches without ever sending a byte, as a dead load balancer would.
 * (Everything else about the informer is tested against a real kube-apiserver in test/integration.)
 */
import { KubeConfig } from "@kubernetes/client-node";
import { createServer, type Server } from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Informer } from "./informer.ts";
import { KubeClient, type ResourceType } from "./kube.ts";

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

async function stallingServer(sendBookmarks: boolean): Promise<Stalling> {
  const state = { watches: 0, bookmarks: 0 } as Stalling;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.searchParams.get("watch") !== "true") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ metadata: { resourceVersion: "10" }, items: [] }));
      return;
    }
    state.watches++;
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
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
