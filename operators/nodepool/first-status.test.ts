import { describe, expect, it } from "vitest";
import type { NodePool } from "../api/v1alpha1/index.ts";
import { firstStatusHoldMs } from "./phases.ts";

const created = Date.parse("2026-11-29T00:00:00Z");
const pool = (status?: NodePool["status"]): NodePool =>
  ({
    metadata: { name: "p", namespace: "ns", creationTimestamp: new Date(created).toISOString() },
    spec: { clusterRef: { name: "c" } },
    ...(status && { status }),
  }) as NodePool;
const next = (ready: { status: string; reason: string }, degraded = "False") => ({
  conditions: [
    { type: "Ready", ...ready },
    { type: "Degraded", status: degraded, reason: "x" },
  ],
});
const underWay = next({ status: "False", reason: "WaitingForNodes" });

describe("firstStatusHoldMs", () => {
  it("holds a new pool's first status while it only says the pool is on its way, within the window", () => {
    expect(firstStatusHoldMs(pool(), underWay, created + 10_000, 30_000)).toBe(20_000);
    expect(firstStatusHoldMs(pool(), underWay, created + 30_000, 30_000)).toBeUndefined();
  });

  it("writes at once what a user must know: Ready, a failure, Degraded", () => {
    expect(
      firstStatusHoldMs(pool(), next({ status: "True", reason: "AsExpected" }), created, 30_000),
    ).toBeUndefined();
    expect(
      firstStatusHoldMs(pool(), next({ status: "False", reason: "InvalidSubnet" }), created, 30_000),
    ).toBeUndefined();
    expect(
      firstStatusHoldMs(
        pool(),
        next({ status: "False", reason: "WaitingForNodes" }, "True"),
        created,
        30_000,
      ),
    ).toBeUndefined();
  });

  it("holds nothing once the pool has a status", () => {
    const told = pool({
      conditions: [{ type: "Ready", status: "False", reason: "WaitingForAgent", message: "" }],
    } as NodePool["status"]);
    expect(firstStatusHoldMs(told, underWay, created + 1_000, 30_000)).toBeUndefined();
  });
});
