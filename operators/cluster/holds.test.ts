import { describe, expect, it } from "vitest";
import { RecheckBudget, UserErrorHold, VerifiedSteps } from "./holds.ts";

describe("RecheckBudget", () => {
  it("gives a burst of slots at once, then one per spacing, in the order asked", () => {
    let now = 0;
    const budget = new RecheckBudget({ perSecond: 4, burst: 3 }, () => now);
    expect([1, 2, 3, 4, 5].map(() => budget.reserve("sub"))).toEqual([0, 0, 0, 250, 500]);
    expect(budget.backlogMs()).toBe(750);
    // Time passes: the slots already given stand; the next is after them.
    now = 600;
    expect(budget.reserve("sub")).toBe(150);
  });

  it("keeps each account's slots apart", () => {
    const budget = new RecheckBudget({ perSecond: 1, burst: 1 }, () => 0);
    expect(budget.reserve("a")).toBe(0);
    expect(budget.reserve("b")).toBe(0);
    expect(budget.reserve("a")).toBe(1_000);
  });

  it("refills while idle, up to the burst", () => {
    let now = 0;
    const budget = new RecheckBudget({ perSecond: 10, burst: 2 }, () => now);
    for (let i = 0; i < 5; i++) budget.reserve("sub");
    now = 60_000;
    expect([1, 2, 3].map(() => budget.reserve("sub"))).toEqual([0, 0, 100]);
    expect(budget.backlogMs()).toBe(200);
  });

  it("forgets accounts whose slots have passed without changing what the busy ones get", () => {
    let now = 0;
    const budget = new RecheckBudget({ perSecond: 1, burst: 1 }, () => now);
    for (let i = 0; i < 100; i++) budget.reserve("busy");
    for (let i = 0; i < 1_001; i++) budget.reserve(`idle-${i}`);
    // A minute on, the idle accounts' slots have passed and are pruned; busy's run to 100 s.
    now = 60_000;
    expect(budget.reserve("idle-0")).toBe(0);
    expect(budget.reserve("busy")).toBe(40_000);
    expect(budget.backlogMs()).toBe(41_000);
  });
});

describe("VerifiedSteps rechecks", () => {
  it("is due once trust lapses, is put off once, and is read when its slot comes", () => {
    let now = 0;
    const steps = new VerifiedSteps(1_000, () => now);
    expect(steps.recheckDue("uid", "Zone", 1)).toBe(false);
    steps.note("uid", "Zone", 1, { ready: true });
    now = 999;
    expect(steps.recheckDue("uid", "Zone", 1)).toBe(false);
    now = 1_000;
    expect(steps.verified("uid", "Zone", 1)).toBeUndefined();
    expect(steps.recheckDue("uid", "Zone", 2)).toBe(false);
    expect(steps.recheckDue("uid", "Zone", 1)).toBe(true);
    expect(steps.postpone("uid", "Zone", 300)).toEqual({ result: { ready: true }, recheckInMs: 300 });
    expect(steps.verified("uid", "Zone", 1)).toEqual({ result: { ready: true }, recheckInMs: 300 });
    now = 1_300;
    expect(steps.verified("uid", "Zone", 1)).toBeUndefined();
    expect(steps.recheckDue("uid", "Zone", 1)).toBe(false);
    // Read and found ready again: a fresh interval, and due again after it.
    steps.note("uid", "Zone", 1, { ready: true });
    now = 2_300;
    expect(steps.recheckDue("uid", "Zone", 1)).toBe(true);
  });

  it("has nothing to put off for a step found not ready", () => {
    const steps = new VerifiedSteps(1_000, () => 0);
    steps.drop("uid", "Zone");
    expect(steps.recheckDue("uid", "Zone", -1)).toBe(false);
    expect(steps.postpone("uid", "Zone", 300)).toBeUndefined();
  });
});

describe("UserErrorHold", () => {
  const quota = {
    state: "failed" as const,
    reason: "QuotaExceeded",
    message: "quota",
    userActionRequired: true,
  };

  it("holds a user's failure for its generation until the recheck, or until a new retry is asked", () => {
    let now = 0;
    const hold = new UserErrorHold(300_000, () => now);
    const asked = "2026-11-28T23:40:00Z by bob@example.com";
    hold.note("c1", "DnsZoneReady", { generation: 1, retry: "" }, quota);
    expect(hold.held("c1", "DnsZoneReady", { generation: 1, retry: "" })).toEqual(quota);
    expect(hold.held("c1", "DnsZoneReady", { generation: 2, retry: "" })).toBeUndefined();
    // An SRE fixed it and asks to retry: the hold lets go at once.
    expect(hold.held("c1", "DnsZoneReady", { generation: 1, retry: asked })).toBeUndefined();
    hold.note("c1", "DnsZoneReady", { generation: 1, retry: asked }, quota);
    expect(hold.held("c1", "DnsZoneReady", { generation: 1, retry: asked })).toEqual(quota);
    now = 300_000;
    expect(hold.held("c1", "DnsZoneReady", { generation: 1, retry: asked })).toBeUndefined();
  });
});
