import { describe, expect, it } from "vitest";
import { allFaults, BROKER_CUT_MS } from "./faults.ts";
import { EVENT_GRID_QUEUE, overflowsOfflineQueue } from "./mqtt-proxy.ts";
import { parseChaosArgs } from "./options.ts";

// The figures the chaos table is specified with (issue 12): N = 50, the broker unreachable for
// 60 s with Event Grid's offline queue of 100 messages or 1 MB, a management apiserver gone for
// 10 minutes.
describe("npm run chaos without flags runs the specified faults", () => {
  it("50 clusters per run and a 10-minute management apiserver outage", () => {
    expect(parseChaosArgs([])).toMatchObject({ n: 50, managementOutageMs: 600_000, runs: 1 });
  });

  it("the broker cut off for 60 s, queueing like Event Grid's offline sessions", () => {
    expect(BROKER_CUT_MS).toBe(60_000);
    expect(EVENT_GRID_QUEUE).toEqual({ messages: 100, bytes: 1_000_000 });
    expect(allFaults().find((f) => f.name === "broker-unreachable")?.what).toContain(
      "60 s while N more clusters are created; their sessions kept with Event Grid's offline queue (100 messages or 1 MB",
    );
    expect(allFaults().find((f) => f.name === "management-apiserver-outage")?.what).toContain("10 min");
  });
});

describe("an offline queue", () => {
  it("holds 100 messages, not 101", () => {
    expect(overflowsOfflineQueue({ messages: 99, bytes: 99 }, 1)).toBe(false);
    expect(overflowsOfflineQueue({ messages: 100, bytes: 100 }, 1)).toBe(true);
  });

  it("holds 1 MB, not a byte more", () => {
    expect(overflowsOfflineQueue({ messages: 1, bytes: 900_000 }, 100_000)).toBe(false);
    expect(overflowsOfflineQueue({ messages: 1, bytes: 900_000 }, 100_001)).toBe(true);
  });
});

describe("flags", () => {
  it("shorten the outage and size the run", () => {
    const o = parseChaosArgs([
      "--management-outage-s",
      "120",
      "--n",
      "20",
      "--fault",
      "broker-kill, etcd-pause",
    ]);
    expect(o).toMatchObject({ n: 20, managementOutageMs: 120_000, faults: ["broker-kill", "etcd-pause"] });
  });

  it.each([
    ["--n", "0"],
    ["--n", "many"],
    ["--management-outage-s", "-1"],
    ["--runs", ""],
  ])("refuse %s %j, naming the flag", (flag, value) => {
    expect(() => parseChaosArgs([`${flag}=${value}`])).toThrow(`${flag} must be a positive number`);
  });

  it("refuse an unknown flag (--full-outage is now the default)", () => {
    expect(() => parseChaosArgs(["--full-outage"])).toThrow(/full-outage/);
  });
});
