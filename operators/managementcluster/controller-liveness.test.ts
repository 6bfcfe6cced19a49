/** The LoadReconciler with agent liveness: Connected, lastHeardTime and their writes and events. */
import { describe, expect, test } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../hcp/indexes.ts";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { silentLogger } from "../runtime/logger.ts";
import { AgentLiveness } from "../maestro-server/liveness.ts";
import { LoadReconciler } from "./controller.ts";
import { managementCluster, noneLive, StoreWriter } from "../../test/support/managementcluster.ts";

describe("LoadReconciler with agent liveness", () => {
  function setup() {
    let t = Date.parse("2026-01-01T00:00:00Z");
    const now = () => t;
    const agents = new AgentLiveness({ now });
    const mcs = new FakeLister([managementCluster("mc-1", 3)]);
    const writer = new StoreWriter(mcs);
    const events: Array<{ type: string; reason: string }> = [];
    const reconciler = new LoadReconciler({
      managementClusters: mcs,
      clusters: new FakeLister<HcpCluster>([], { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster }),
      placedNow: noneLive,
      applier: writer,
      events: { record: (_obj, e) => Promise.resolve(void events.push({ type: e.type, reason: e.reason })) },
      agents,
      now,
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    const reconcile = () => reconciler.reconcile(ctx, { cluster: "service", namespace: "", name: "mc-1" });
    const status = () => mcs.get("", "mc-1")?.status;
    return { agents, writer, events, reconcile, status, advance: (ms: number) => (t += ms) };
  }

  test("one write per change of Connected, none per heartbeat, and an event per transition", async () => {
    const w = setup();
    w.agents.start();
    w.agents.listening(true);
    w.agents.heard("mc-1", 10_000);
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 30_000 });
    expect(w.status()).toMatchObject({ phase: "Ready", agent: { heartbeatSeconds: 10 } });
    expect(w.status()?.conditions?.find((c) => c.type === "Connected")).toMatchObject({
      status: "True",
      reason: "AgentConnected",
    });
    expect(w.writer.writes).toBe(1);

    for (let i = 0; i < 5; i++) {
      w.advance(10_000);
      w.agents.heard("mc-1", 10_000);
      await w.reconcile();
    }
    expect(w.writer.writes).toBe(1);

    w.advance(30_000);
    expect(await w.reconcile()).toEqual({});
    expect(w.status()).toMatchObject({ phase: "Unavailable" });
    expect(w.status()?.conditions?.find((c) => c.type === "Connected")).toMatchObject({
      status: "False",
      reason: "AgentNotHeard",
    });
    await w.reconcile();
    expect(w.writer.writes).toBe(2);

    w.advance(60_000);
    w.agents.heard("mc-1", 10_000);
    await w.reconcile();
    expect(w.status()).toMatchObject({ phase: "Ready" });
    expect(w.writer.writes).toBe(3);
    expect(w.events).toEqual([
      { type: "Normal", reason: "AgentConnected" },
      { type: "Warning", reason: "AgentNotHeard" },
      { type: "Normal", reason: "AgentConnected" },
    ]);
  });

  test("while Connected stands, lastHeardTime is written again once older than the refresh interval", async () => {
    const w = setup();
    w.agents.start();
    w.agents.listening(true);
    w.agents.heard("mc-1", 10_000);
    // As the queue would: a reconcile only when the last one asked for it (0 or none: no requeue);
    // heartbeats come between rechecks and wake nothing, as they are no news.
    const requeue = (r: { requeueAfterMs?: number }) => r.requeueAfterMs || undefined;
    let next = requeue(await w.reconcile());
    const first = w.status()?.agent?.lastHeardTime;
    for (let second = 1; second <= 12 * 60; second++) {
      w.advance(1_000);
      if (second % 10 === 3) w.agents.heard("mc-1", 10_000);
      if (next === undefined || (next -= 1_000) > 0) continue;
      next = requeue(await w.reconcile());
    }
    const written = Date.parse(w.status()?.agent?.lastHeardTime ?? "") - Date.parse(first ?? "");
    // Written at 5 and at 10 minutes, each time the last heartbeat heard (at 293 s, then 593 s).
    expect(w.writer.writes).toBe(3);
    expect(written).toBe(593_000);
    expect(next).toBeDefined();
  });

  test("a first Unknown is no event", async () => {
    const w = setup();
    w.agents.start();
    await w.reconcile();
    expect(w.status()?.conditions?.find((c) => c.type === "Connected")).toMatchObject({ status: "Unknown" });
    expect(w.events).toEqual([]);
  });
});
