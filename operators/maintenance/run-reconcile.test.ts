import { beforeEach, describe, expect, it } from "vitest";
import { MaintenanceWorld } from "../../test/support/maintenance-world.ts";

const HOUR = 3_600_000;
let w: MaintenanceWorld;

beforeEach(() => {
  w = new MaintenanceWorld();
});

describe("scheduling a run", () => {
  it("waits for notBefore and looks again then, running nothing", async () => {
    const run = w.run("rotate", w.cluster("a"), { notBefore: "2026-06-03T10:30:00Z" });
    const result = await w.step(run);
    expect(w.phase(run)).toBe("Waiting");
    expect(w.condition(run, "Progressing")).toMatchObject({ status: "False", reason: "NotBefore" });
    expect(w.condition(run, "Progressing")?.message).toContain("2026-06-03T10:30:00Z");
    expect(result.requeueAfterMs).toBe(30 * 60_000);
    expect(w.executed).toEqual([]);
  });

  it("waits while the cluster's window is closed, saying why, and looks again by the time it opens", async () => {
    const windows = [{ days: ["Saturday" as const], start: "02:00", end: "06:00" }];
    const run = w.run("rotate", w.cluster("a", { maintenance: { windows } }));
    const result = await w.step(run);
    expect(w.phase(run)).toBe("Waiting");
    const progressing = w.condition(run, "Progressing");
    expect(progressing).toMatchObject({ reason: "OutsideMaintenanceWindow" });
    expect(progressing?.message).toContain("next window opens 2026-06-06T02:00:00Z");
    expect(result.requeueAfterMs).toBeLessThanOrEqual(HOUR);
    expect(w.executed).toEqual([]);
    expect(w.events.events).toEqual([]);

    w.now = new Date("2026-06-06T02:00:00Z");
    await w.step(run);
    expect(w.phase(run)).toBe("Running");
  });

  it("begins an urgent run outside the window and inside a freeze", async () => {
    const maintenance = {
      windows: [{ days: ["Saturday" as const], start: "02:00", end: "06:00" }],
      freezes: [{ start: "2026-06-01T00:00:00Z", end: "2026-06-10T00:00:00Z" }],
    };
    const run = w.run("rotate", w.cluster("a", { maintenance }), { urgency: "Urgent" });
    await w.step(run);
    expect(w.phase(run)).toBe("Running");
  });

  it("times out a run not begun by notAfter, saying what it last waited for", async () => {
    const windows = [{ days: ["Saturday" as const], start: "02:00", end: "06:00" }];
    const run = w.run("rotate", w.cluster("a", { maintenance: { windows } }), {
      notAfter: "2026-06-04T00:00:00Z",
    });
    const result = await w.step(run);
    // The window opens after notAfter: it looks again at notAfter at the latest (within the hour cap).
    expect(result.requeueAfterMs).toBeLessThanOrEqual(HOUR);
    w.now = new Date("2026-06-04T00:00:00Z");
    await w.step(run);
    expect(w.phase(run)).toBe("TimedOut");
    expect(w.condition(run, "Ready")?.message).toContain("outside the cluster's maintenance windows");
    expect(w.events.events).toEqual([expect.objectContaining({ type: "Warning", reason: "TimedOut" })]);
    expect(w.executed).toEqual([]);
  });

  it("cancels a run whose cluster is gone", async () => {
    const cluster = w.cluster("a");
    const run = w.run("rotate", cluster);
    await w.step(run);
    expect(w.phase(run)).toBe("Running");
    w.clusters.delete("ns", "a");
    await w.step(run);
    expect(w.phase(run)).toBe("Cancelled");
    expect(w.current(run).status?.completedAt).toBeDefined();
    expect(w.events.reasons()).toEqual(["Started", "Cancelled"]);
    expect(w.executed).toEqual([]);
  });
});

describe("admission", () => {
  it("runs one run at a time per cluster", async () => {
    const cluster = w.cluster("a");
    const first = w.run("rotate", cluster);
    const second = w.run("other", cluster);
    await w.step(first);
    await w.step(second);
    expect(w.phase(first)).toBe("Running");
    expect(w.phase(second)).toBe("Waiting");
    expect(w.condition(second, "Progressing")).toMatchObject({ reason: "ClusterBusy" });
    expect(w.condition(second, "Progressing")?.message).toContain(first.metadata.name);
  });

  it("admits one of two runs on one cluster reconciled at the same time", async () => {
    const cluster = w.cluster("a");
    const runs = [w.run("rotate", cluster), w.run("other", cluster)];
    let open!: () => void;
    w.writer.gate = new Promise((resolve) => (open = resolve));
    const both = Promise.all(runs.map((r) => w.reconcile(r)));
    await w.writer.held(2); // both runs decided, each status write held at the gate
    w.writer.gate = undefined;
    open();
    await both;
    w.sync();
    expect(runs.map((r) => w.phase(r)).sort()).toEqual(["Running", "Waiting"]);
  });

  it("runs at most maxConcurrentPerManagementCluster of a task on one management cluster, also at the same time", async () => {
    const runs = ["a", "b", "c"].map((name) =>
      w.run("rotate", w.cluster(name), { maxConcurrentPerManagementCluster: 2 }),
    );
    const elsewhere = w.run("rotate", w.cluster("d", { managementCluster: "mc-2" }), {
      maxConcurrentPerManagementCluster: 2,
    });
    let open!: () => void;
    w.writer.gate = new Promise((resolve) => (open = resolve));
    const all = Promise.all([...runs, elsewhere].map((r) => w.reconcile(r)));
    await w.writer.held(4); // every run's status write (admitted or waiting) is held at the gate
    w.writer.gate = undefined;
    open();
    await all;
    w.sync();
    expect(runs.map((r) => w.phase(r)).sort()).toEqual(["Running", "Running", "Waiting"]);
    expect(w.phase(elsewhere)).toBe("Running");
    const waiting = runs.find((r) => w.phase(r) === "Waiting")!;
    expect(w.condition(waiting, "Progressing")).toMatchObject({ reason: "ManagementClusterBusy" });
  });

  it("counts the cache's Running runs after a restart", async () => {
    const [a, b] = [w.run("rotate", w.cluster("a")), w.run("rotate", w.cluster("b"))];
    await w.step(a);
    w.restart();
    await w.step(b);
    expect(w.phase(a)).toBe("Running");
    expect(w.phase(b)).toBe("Waiting");
  });

  it("waits for a cluster not yet placed", async () => {
    const cluster = w.cluster("a");
    cluster.status = {};
    const run = w.run("rotate", cluster);
    await w.step(run);
    expect(w.condition(run, "Progressing")).toMatchObject({ reason: "NotPlaced" });
  });
});

describe("steps", () => {
  it("writes Running before any step executes, then one step per reconcile, with events for each transition", async () => {
    const run = w.run("rotate", w.cluster("a"));
    await w.step(run);
    expect(w.phase(run)).toBe("Running");
    expect(w.current(run).status?.managementCluster).toBe("mc-1");
    expect(w.executed).toEqual([]);
    await w.step(run);
    expect(w.executed).toEqual(["First"]);
    expect(w.current(run).status?.steps?.[0]).toMatchObject({ name: "First", state: "Succeeded" });
    expect(w.condition(run, "First")).toMatchObject({ status: "True", reason: "Succeeded" });
    expect(w.condition(run, "Second")).toMatchObject({ status: "False", reason: "Pending" });
    await w.step(run);
    expect(w.executed).toEqual(["First", "Second"]);
    expect(w.phase(run)).toBe("Succeeded");
    expect(w.condition(run, "Ready")).toMatchObject({ status: "True" });
    expect(w.events.reasons()).toEqual(["Started", "StepSucceeded", "StepSucceeded", "Succeeded"]);
    await w.step(run);
    expect(w.executed).toHaveLength(2);
  });

  it("looks again when a step waits, without an event", async () => {
    const run = w.run("rotate", w.cluster("a"));
    w.script["First"] = [{ kind: "waiting", message: "Waiting for the JWKS", requeueMs: 20_000 }];
    await w.step(run);
    const result = await w.step(run);
    expect(result.requeueAfterMs).toBe(20_000);
    expect(w.current(run).status?.steps?.[0]).toMatchObject({
      state: "Running",
      message: "Waiting for the JWKS",
    });
    expect(w.condition(run, "Progressing")?.message).toContain("Waiting for the JWKS");
    expect(w.events.reasons()).toEqual(["Started"]);
  });

  it("retries a transient failure with backoff, and fails the run after the bound", async () => {
    const run = w.run("rotate", w.cluster("a"));
    w.script["First"] = [new Error("ARM said 503"), new Error("ARM said 503"), new Error("ARM said 503")];
    await w.step(run);
    const first = await w.step(run);
    expect(w.current(run).status?.steps?.[0]).toMatchObject({ state: "Running", attempts: 1 });
    const second = await w.step(run);
    expect(second.requeueAfterMs).toBeGreaterThan(first.requeueAfterMs ?? 0);
    await w.step(run);
    expect(w.phase(run)).toBe("Failed");
    expect(w.current(run).status?.steps?.[0]).toMatchObject({ state: "Failed", attempts: 3 });
    expect(w.condition(run, "Ready")?.message).toContain("ARM said 503");
    expect(w.events.events.at(-1)).toMatchObject({ type: "Warning", reason: "Failed" });
    expect(w.executed).toEqual(["First", "First", "First"]);
  });

  it("fails the run at once on a terminal outcome", async () => {
    const run = w.run("rotate", w.cluster("a"));
    w.script["Second"] = [{ kind: "terminal", message: "the cluster has no signing key" }];
    for (let i = 0; i < 3; i++) await w.step(run);
    expect(w.phase(run)).toBe("Failed");
    expect(w.condition(run, "Second")).toMatchObject({ status: "False", reason: "Failed" });
    expect(w.events.reasons()).toEqual(["Started", "StepSucceeded", "Failed"]);
  });
});

describe("a crash", () => {
  it("after the Running write resumes the same step, without a second run or a second start", async () => {
    const cluster = w.cluster("a");
    const run = w.run("rotate", cluster);
    await w.step(run);
    w.restart();
    await w.step(run);
    expect(w.executed).toEqual(["First"]);
    expect(w.events.reasons()).toEqual(["Started", "StepSucceeded"]);
    expect(w.runs.list()).toHaveLength(1);
    const other = w.run("other", cluster);
    await w.step(other);
    expect(w.phase(other)).toBe("Waiting");
  });

  it("before a step's outcome is written runs that step again, never an earlier one", async () => {
    const run = w.run("rotate", w.cluster("a"));
    await w.step(run);
    await w.step(run);
    w.writer.failNext = true;
    await expect(w.step(run)).rejects.toThrow("apiserver unavailable");
    w.restart();
    await w.step(run);
    expect(w.executed).toEqual(["First", "Second", "Second"]);
    expect(w.phase(run)).toBe("Succeeded");
  });

  it("between the admission and its write admits the same run again, holding its place", async () => {
    const cluster = w.cluster("a");
    const run = w.run("rotate", cluster);
    const other = w.run("other", cluster);
    w.writer.failNext = true;
    await expect(w.step(run)).rejects.toThrow("apiserver unavailable");
    await w.step(other);
    expect(w.phase(other)).toBe("Waiting");
    await w.step(run);
    expect(w.phase(run)).toBe("Running");
  });
});

describe("a paused or cancelled task", () => {
  it("admits no run while paused, saying so on Progressing, and admits it once resumed", async () => {
    const run = w.run("rotate", w.cluster("a"));
    w.setTask("rotate", { paused: true });
    await w.step(run);
    expect(w.phase(run)).toBe("Waiting");
    expect(w.condition(run, "Progressing")).toMatchObject({ status: "False", reason: "TaskPaused" });
    expect(w.condition(run, "Progressing")?.message).toContain("spec.paused");
    expect(w.executed).toEqual([]);
    expect(w.events.events).toEqual([]);

    w.setTask("rotate", { paused: false });
    await w.step(run);
    expect(w.phase(run)).toBe("Running");
  });

  it("lets a Running run finish the step it is on, then begins no next step until resumed", async () => {
    const run = w.run("rotate", w.cluster("a"));
    w.script["First"] = [{ kind: "waiting", message: "under way", requeueMs: 5_000 }];
    await w.step(run); // admitted
    await w.step(run); // First begins and waits
    w.setTask("rotate", { paused: true });
    await w.step(run); // First goes on to its end
    expect(w.executed).toEqual(["First", "First"]);
    expect(w.current(run).status?.steps?.[0]?.state).toBe("Succeeded");
    await w.step(run);
    await w.step(run);
    expect(w.executed).toEqual(["First", "First"]);
    expect(w.phase(run)).toBe("Running");
    expect(w.condition(run, "Progressing")).toMatchObject({ status: "False", reason: "TaskPaused" });
    expect(w.condition(run, "Progressing")?.message).toContain("before step Second");

    w.setTask("rotate", { paused: false });
    await w.step(run);
    expect(w.executed).toEqual(["First", "First", "Second"]);
    expect(w.phase(run)).toBe("Succeeded");
  });

  it("cancels the runs not yet Running and lets a Running one finish its steps", async () => {
    const running = w.run("rotate", w.cluster("a"));
    const waiting = w.run(
      "rotate",
      w.cluster("b", { maintenance: { windows: [{ days: ["Saturday"], start: "02:00", end: "06:00" }] } }),
    );
    await w.step(running);
    await w.step(waiting);
    expect([w.phase(running), w.phase(waiting)]).toEqual(["Running", "Waiting"]);

    w.setTask("rotate", { cancelled: true });
    await w.step(waiting);
    expect(w.phase(waiting)).toBe("Cancelled");
    expect(w.condition(waiting, "Ready")?.message).toContain("spec.cancelled");
    expect(w.events.events.at(-1)).toMatchObject({ type: "Warning", reason: "Cancelled" });

    await w.step(running);
    await w.step(running);
    expect(w.phase(running)).toBe("Succeeded");
    expect(w.executed).toEqual(["First", "Second"]);
  });

  it("cancels before pausing: a paused and cancelled task's waiting runs end", async () => {
    const run = w.run("rotate", w.cluster("a"));
    w.setTask("rotate", { paused: true, cancelled: true });
    await w.step(run);
    expect(w.phase(run)).toBe("Cancelled");
    expect(w.executed).toEqual([]);
  });
});
