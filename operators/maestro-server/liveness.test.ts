import { describe, expect, it } from "vitest";
import { AgentLiveness } from "./liveness.ts";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function tracked(start?: number) {
  const c = clock(start);
  const liveness = new AgentLiveness({ now: c.now });
  const changes: Array<string | undefined> = [];
  liveness.onChange((consumer) => changes.push(consumer));
  return { ...c, liveness, changes };
}

describe("AgentLiveness", () => {
  it("counts deafness from its start until maestro-server subscribes, then listening from the subscribe", () => {
    const t = tracked();
    t.advance(5_000);
    // Before the start (maestro-server still syncing its cache) no silence is anybody's.
    expect(t.liveness.snapshot("mgmt-1")).toEqual({});
    t.liveness.start();
    expect(t.liveness.snapshot("mgmt-1")).toEqual({ deafSinceMs: 1_005_000 });
    t.advance(2_000);
    t.liveness.listening(true);
    expect(t.liveness.snapshot("mgmt-1")).toEqual({ listeningSinceMs: 1_007_000 });
    t.advance(1_000);
    t.liveness.listening(false);
    expect(t.liveness.snapshot("mgmt-1")).toEqual({ deafSinceMs: 1_008_000 });
    expect(t.changes).toEqual([undefined, undefined, undefined]);
  });

  it("ignores a second disconnect", () => {
    const t = tracked();
    t.liveness.listening(true);
    t.liveness.listening(false);
    t.advance(1_000);
    t.liveness.listening(false);
    expect(t.liveness.snapshot("x").deafSinceMs).toBe(1_000_000);
    expect(t.changes).toHaveLength(2);
  });

  it("records every message by this clock, and announces only what may change the condition", () => {
    const t = tracked();
    t.liveness.listening(true);
    t.changes.length = 0;
    t.liveness.heard("mgmt-1"); // first message: news
    t.advance(1_000);
    t.liveness.heard("mgmt-1", 10_000); // first heartbeat: the interval is news
    t.advance(10_000);
    t.liveness.heard("mgmt-1", 10_000); // on time: nothing new
    t.advance(1_000);
    t.liveness.heard("mgmt-1"); // a status update keeps the announced interval
    expect(t.liveness.snapshot("mgmt-1").agent).toEqual({ lastHeardMs: 1_012_000, heartbeatMs: 10_000 });
    t.advance(30_000);
    t.liveness.heard("mgmt-1", 10_000); // back after a silence of the whole bound: news
    t.advance(1_000);
    t.liveness.heard("mgmt-1", 2_000); // a new interval: news
    expect(t.changes).toEqual(["mgmt-1", "mgmt-1", "mgmt-1", "mgmt-1"]);
  });

  it("holds the certificate the heartbeats report, and announces a switch to another", () => {
    const t = tracked();
    const first = {
      serialNumber: "1a",
      notBefore: "2026-01-01T00:00:00.000Z",
      notAfter: "2026-01-31T00:00:00.000Z",
    };
    const renewed = { ...first, serialNumber: "2b", notAfter: "2026-02-28T00:00:00.000Z" };
    t.liveness.heard("mgmt-1", 10_000, first);
    t.changes.length = 0;
    t.advance(1_000);
    t.liveness.heard("mgmt-1", 10_000, first); // the same certificate: nothing new
    t.liveness.heard("mgmt-1"); // a status: the certificate stays
    expect(t.liveness.snapshot("mgmt-1").agent?.brokerCertificate).toEqual(first);
    expect(t.changes).toEqual([]);
    t.liveness.heard("mgmt-1", 10_000, renewed);
    expect(t.changes).toEqual(["mgmt-1"]);
    expect(t.liveness.snapshot("mgmt-1").agent?.brokerCertificate).toEqual(renewed);
  });

  it("keeps consumers apart", () => {
    const t = tracked();
    t.liveness.heard("mgmt-1", 1_000);
    t.advance(500);
    t.liveness.heard("mgmt-2");
    expect(t.liveness.snapshot("mgmt-1").agent).toEqual({ lastHeardMs: 1_000_000, heartbeatMs: 1_000 });
    expect(t.liveness.snapshot("mgmt-2").agent).toEqual({ lastHeardMs: 1_000_500 });
    expect(t.liveness.snapshot("mgmt-3").agent).toBeUndefined();
  });

  it("forgets what an earlier run heard when maestro-server starts again", () => {
    const t = tracked();
    t.liveness.heard("mgmt-1", 1_000);
    t.advance(100);
    t.liveness.start();
    expect(t.liveness.snapshot("mgmt-1")).toEqual({ deafSinceMs: 1_000_100 });
  });
});

describe("AgentLiveness: works the agent holds that the region does not know", () => {
  it("keeps the count and the first 20 IDs sorted; a change is news, the same list again is not", () => {
    const t = tracked();
    const ids = Array.from({ length: 25 }, (_, i) => `id-${String(24 - i).padStart(2, "0")}`);
    t.liveness.unclaimed("mgmt-1", ids);
    const shown = t.liveness.snapshot("mgmt-1").unclaimedWorks;
    expect(shown?.count).toBe(25);
    expect(shown?.resourceIDs).toEqual([...ids].sort().slice(0, 20));
    t.liveness.unclaimed("mgmt-1", [...ids].reverse());
    expect(t.changes).toEqual(["mgmt-1"]);
    t.liveness.unclaimed("mgmt-1", []);
    expect(t.liveness.snapshot("mgmt-1").unclaimedWorks).toEqual({ count: 0, resourceIDs: [] });
    expect(t.changes).toEqual(["mgmt-1", "mgmt-1"]);
  });
});
