import { describe, expect, it } from "vitest";
import type { Condition } from "../runtime/conditions.ts";
import { connectedStatus, type ConnectedInput } from "./connected.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const s = (seconds: number): number => T0 + seconds * 1000;
const iso = (seconds: number): string => new Date(s(seconds)).toISOString().slice(0, 19) + "Z";

function was(status: Condition["status"], reason: string, message = "before"): Condition {
  return { type: "Connected", status, reason, message, lastTransitionTime: iso(-100) };
}

describe("connectedStatus", () => {
  it.each<{ name: string; input: ConnectedInput; status: string; reason: string; message?: RegExp }>([
    {
      name: "no maestro-server in this process",
      input: { now: s(0) },
      status: "Unknown",
      reason: "LivenessNotTracked",
    },
    {
      name: "a beating agent heard within three intervals",
      input: {
        now: s(25),
        liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(1), heartbeatMs: 10_000 } },
      },
      status: "True",
      reason: "AgentConnected",
      message: /^The agent sends a heartbeat every 10s$/,
    },
    {
      name: "a beating agent silent for three intervals",
      input: {
        now: s(31),
        liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(1), heartbeatMs: 10_000 } },
      },
      status: "False",
      reason: "AgentNotHeard",
      message:
        /^No heartbeat from the agent for more than 30s \(3 intervals of 10s\); last heard at 2026-01-01T00:00:01Z$/,
    },
    {
      name: "an agent that announced a short interval, silent for three of them",
      input: {
        now: s(4),
        liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(1), heartbeatMs: 1_000 } },
      },
      status: "False",
      reason: "AgentNotHeard",
      message: /more than 3s \(3 intervals of 1s\)/,
    },
    {
      name: "an agent without heartbeat, heard (a real Maestro agent)",
      input: { now: s(3600), liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(1) } } },
      status: "Unknown",
      reason: "NoHeartbeat",
    },
    {
      name: "an agent heard before its first heartbeat, within the bound after maestro-server connected",
      input: { now: s(12), liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(1) } } },
      status: "Unknown",
      reason: "WaitingForAgent",
    },
    {
      name: "nothing heard for the default bound after maestro-server connected",
      input: { now: s(30), liveness: { listeningSinceMs: s(0) } },
      status: "Unknown",
      reason: "WaitingForAgent",
      message: /since maestro-server connected at 2026-01-01T00:00:00Z$/,
    },
    {
      name: "an agent known to beat (status) unheard since maestro-server restarted",
      input: {
        now: s(40),
        liveness: { listeningSinceMs: s(5) },
        previous: {
          connected: was("True", "AgentConnected"),
          agent: { lastHeardTime: iso(-200), heartbeatSeconds: 10 },
        },
      },
      status: "False",
      reason: "AgentNotHeard",
      message: /last heard at 2025-12-31T23:56:40Z$/,
    },
    {
      name: "maestro-server off the broker for the bound",
      input: {
        now: s(30),
        liveness: { deafSinceMs: s(0), agent: { lastHeardMs: s(-1), heartbeatMs: 10_000 } },
      },
      status: "False",
      reason: "SourceDisconnected",
      message: /^maestro-server has not been connected to the broker since 2026-01-01T00:00:00Z/,
    },
  ])("$name: $status ($reason)", ({ input, status, reason, message }) => {
    const { condition } = connectedStatus(input);
    expect(condition).toMatchObject({ type: "Connected", status, reason });
    if (message) expect(condition.message).toMatch(message);
  });

  it.each<{ name: string; input: ConnectedInput; recheckAfterMs: number }>([
    {
      name: "maestro-server off the broker for less than the bound",
      input: { now: s(10), liveness: { deafSinceMs: s(0) } },
      recheckAfterMs: 20_000,
    },
    {
      name: "maestro-server not started yet (its cache still syncing), however long that takes",
      input: { now: s(100), liveness: {} },
      recheckAfterMs: 30_000,
    },
    {
      name: "just (re)connected, the agent not heard yet",
      input: {
        now: s(12),
        liveness: { listeningSinceMs: s(10) },
        previous: { agent: { heartbeatSeconds: 10 } },
      },
      recheckAfterMs: 28_000,
    },
    {
      name: "just connected, an agent of unknown kind not heard yet",
      input: { now: s(1), liveness: { listeningSinceMs: s(0) } },
      recheckAfterMs: 29_000,
    },
  ])(
    "keeps what the status said while $name, and looks again when the bound runs out",
    ({ input, recheckAfterMs }) => {
      const before = was("True", "AgentConnected", "The agent sends a heartbeat every 10s");
      const kept = connectedStatus({ ...input, previous: { ...input.previous, connected: before } });
      expect(kept.condition).toEqual({
        type: "Connected",
        status: "True",
        reason: "AgentConnected",
        message: "The agent sends a heartbeat every 10s",
      });
      expect(kept.recheckAfterMs).toBe(recheckAfterMs);
      const first = connectedStatus(input);
      expect(first.condition).toMatchObject({ status: "Unknown", reason: "WaitingForAgent" });
    },
  );

  it("looks again when a connected agent's bound runs out", () => {
    const out = connectedStatus({
      now: s(12),
      liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(10), heartbeatMs: 10_000 } },
    });
    expect(out.recheckAfterMs).toBe(28_000);
  });

  describe("status.agent", () => {
    const live = (heardAt: number) => ({
      listeningSinceMs: s(0),
      agent: { lastHeardMs: s(heardAt), heartbeatMs: 10_000 },
    });

    it("records the first heartbeat exactly, with the interval", () => {
      expect(connectedStatus({ now: s(2), liveness: live(1) }).agent).toEqual({
        lastHeardTime: iso(1),
        heartbeatSeconds: 10,
      });
    });

    it.each([
      { name: "not moved by each heartbeat", heardAt: 120, lastHeardTime: iso(1) },
      { name: "refreshed once older than the refresh interval", heardAt: 301, lastHeardTime: iso(301) },
    ])("while Connected stands: $name", ({ heardAt, lastHeardTime }) => {
      const out = connectedStatus({
        now: s(heardAt + 1),
        liveness: live(heardAt),
        previous: {
          connected: was("True", "AgentConnected"),
          agent: { lastHeardTime: iso(1), heartbeatSeconds: 10 },
        },
      });
      expect(out.condition.status).toBe("True");
      expect(out.agent).toEqual({ lastHeardTime, heartbeatSeconds: 10 });
    });

    it("is exact when Connected changes", () => {
      const out = connectedStatus({
        now: s(21),
        liveness: live(20),
        previous: {
          connected: was("False", "AgentNotHeard"),
          agent: { lastHeardTime: iso(1), heartbeatSeconds: 10 },
        },
      });
      expect(out.condition.status).toBe("True");
      expect(out.agent?.lastHeardTime).toBe(iso(20));
    });

    it("keeps what it had when this process has heard nothing newer", () => {
      const agent = { lastHeardTime: iso(50), heartbeatSeconds: 10 };
      expect(
        connectedStatus({ now: s(60), liveness: { listeningSinceMs: s(55) }, previous: { agent } }).agent,
      ).toEqual(agent);
      expect(connectedStatus({ now: s(60), previous: { agent } }).agent).toEqual(agent);
    });

    it("has no heartbeat interval for an agent that sends none", () => {
      expect(
        connectedStatus({ now: s(2), liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(1) } } })
          .agent,
      ).toEqual({ lastHeardTime: iso(1) });
    });

    it("of a talking agent without heartbeat is refreshed at the refresh interval, not at every message", () => {
      const previous = { connected: was("Unknown", "NoHeartbeat"), agent: { lastHeardTime: iso(0) } };
      const out = connectedStatus({
        now: s(61),
        liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(60) } },
        previous,
      });
      expect(out.agent).toEqual({ lastHeardTime: iso(0) });
      expect(out.recheckAfterMs).toBe(300_000 - 61_000);
    });
  });

  it("gives a message that does not change while the agent stays silent", () => {
    const input = (now: number): ConnectedInput => ({
      now: s(now),
      liveness: { listeningSinceMs: s(0), agent: { lastHeardMs: s(1), heartbeatMs: 10_000 } },
    });
    expect(connectedStatus(input(40)).condition).toEqual(connectedStatus(input(4000)).condition);
  });
});

describe("connectedStatus: status.agent.unclaimedWorks", () => {
  const live = { listeningSinceMs: s(0), agent: { lastHeardMs: s(1), heartbeatMs: 10_000 } };
  const unclaimedWorks = { count: 2, resourceIDs: ["a", "b"] };

  it("shows what the agent's last resync listed, keeps what was written before one, and drops it at 0", () => {
    expect(
      connectedStatus({ now: s(2), liveness: { ...live, unclaimedWorks } }).agent?.unclaimedWorks,
    ).toEqual(unclaimedWorks);
    const before = { agent: { unclaimedWorks } };
    expect(connectedStatus({ now: s(2), liveness: live, previous: before }).agent?.unclaimedWorks).toEqual(
      unclaimedWorks,
    );
    const none = { ...live, unclaimedWorks: { count: 0, resourceIDs: [] } };
    expect(
      connectedStatus({ now: s(2), liveness: none, previous: before }).agent?.unclaimedWorks,
    ).toBeUndefined();
  });
});
