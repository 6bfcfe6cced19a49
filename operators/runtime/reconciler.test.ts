import { describe, expect, it } from "vitest";
import { RecordingEvents, RecordingWriter } from "../../test/support/fakes.ts";
import type { Condition } from "./conditions.ts";
import type { ReconcileContext } from "./controller.ts";
import type { ResourceType } from "./kube.ts";
import { silentLogger } from "./logger.ts";
import type { Phase } from "./phases.ts";
import { PhasedReconciler, type ReconciledObject, type ReconcilerSpec } from "./reconciler.ts";

const WidgetResource = {
  group: "test.dev",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
} as const satisfies ResourceType;
const FINALIZER = "test.dev/widget";

type Widget = ReconciledObject & { status?: { conditions?: Condition[]; observedGeneration?: number } };

interface WidgetScope {
  widget: Widget;
  ran: string[];
  ready?: boolean;
  waitingFor?: string;
}

const ctx = (): ReconcileContext => ({ signal: new AbortController().signal, log: silentLogger });
const req = { cluster: "service", namespace: "ns", name: "w" };

function widget(overrides: Partial<Widget["metadata"]> = {}): Widget {
  return {
    metadata: { name: "w", namespace: "ns", uid: "u1", generation: 2, finalizers: [FINALIZER], ...overrides },
  };
}

const named =
  (
    name: string,
    body: (scope: WidgetScope) => { requeueAfterMs?: number } = () => ({}),
  ): Phase<WidgetScope> =>
  (_ctx, scope) => {
    scope.ran.push(name);
    return body(scope);
  };

/** A reconciler over one stored widget, with the phases and deletion phases a test gives. */
function harness(opts: {
  stored?: Widget;
  phases?: Phase<WidgetScope>[];
  deletePhases?: Phase<WidgetScope>[];
  guard?: ReconcilerSpec<Widget, WidgetScope>["guard"];
  reportsWaiting?: boolean;
}) {
  const writer = new RecordingWriter();
  const events = new RecordingEvents();
  const store = { widget: opts.stored };
  const scopes: WidgetScope[] = [];
  const released: string[] = [];
  const reconciler = new PhasedReconciler<Widget, WidgetScope>({
    resource: WidgetResource,
    finalizer: FINALIZER,
    get: (namespace, name) =>
      store.widget?.metadata.namespace === namespace && store.widget.metadata.name === name
        ? store.widget
        : undefined,
    writer,
    scope: (_ctx, w) => {
      const scope: WidgetScope = { widget: w, ran: [] };
      scopes.push(scope);
      return scope;
    },
    guard: opts.guard,
    phases: () => opts.phases ?? [named("one", (s) => ((s.ready = true), {}))],
    deletion: {
      phases: opts.deletePhases ?? [named("cleanup")],
      waiting: (s) => s.waitingFor !== undefined,
      reportsWaiting: opts.reportsWaiting ?? true,
      released: (_ctx, s) => Promise.resolve(void released.push(s.widget.metadata.uid ?? "")),
    },
    status: {
      compose: (s, succeeded) => ({
        conditions: [
          s.waitingFor
            ? {
                type: "Ready",
                status: "False",
                reason: "Deleting",
                message: s.waitingFor,
                lastTransitionTime: "",
              }
            : {
                type: "Ready",
                status: s.ready ? "True" : "False",
                reason: s.ready ? "AsExpected" : "Waiting",
                message: "",
                lastTransitionTime: "",
              },
        ],
        ...(succeeded ? { observedGeneration: s.widget.metadata.generation } : {}),
      }),
      events: { recorder: events, policy: { negative: [], quiet: [] }, failedSteps: () => new Set() },
    },
  });
  return { reconciler, writer, events, store, scopes, released };
}

describe("PhasedReconciler", () => {
  it("does nothing for an object that is gone", async () => {
    const h = harness({});
    expect(await h.reconciler.reconcile(ctx(), req)).toEqual({});
    expect(h.writer.writes).toEqual([]);
    expect(h.scopes).toEqual([]);
  });

  it("adds the finalizer first and once, running no phase in that reconcile", async () => {
    const h = harness({ stored: widget({ finalizers: [] }) });
    expect(await h.reconciler.reconcile(ctx(), req)).toEqual({});
    expect(h.writer.writes.map((w) => w.verb)).toEqual(["addFinalizer"]);
    expect(h.scopes[0]?.ran).toEqual([]);
    // The write comes back through the watch with the finalizer: the phases run, no second add.
    h.store.widget = widget();
    await h.reconciler.reconcile(ctx(), req);
    expect(h.writer.of("addFinalizer")).toHaveLength(1);
    expect(h.scopes[1]?.ran).toEqual(["one"]);
  });

  it("runs the phases in order and writes the status once, with its events", async () => {
    const h = harness({ stored: widget(), phases: [named("a"), named("b", (s) => ((s.ready = true), {}))] });
    await h.reconciler.reconcile(ctx(), req);
    expect(h.scopes[0]?.ran).toEqual(["a", "b"]);
    expect(h.writer.of("status")).toHaveLength(1);
    expect(h.writer.lastStatus()).toMatchObject({ observedGeneration: 2 });
    expect(h.events.reasons()).toEqual(["Ready"]);
  });

  it("skips the status write (and its events) when nothing changed", async () => {
    const h = harness({ stored: widget() });
    await h.reconciler.reconcile(ctx(), req);
    h.store.widget = { ...widget(), status: h.writer.lastStatus() };
    await h.reconciler.reconcile(ctx(), req);
    expect(h.writer.of("status")).toHaveLength(1);
    expect(h.events.events).toHaveLength(1);
  });

  it("returns the lowest requeue a phase asked for", async () => {
    const h = harness({
      stored: widget(),
      phases: [named("a", () => ({ requeueAfterMs: 5000 })), named("b", () => ({ requeueAfterMs: 300 }))],
    });
    expect(await h.reconciler.reconcile(ctx(), req)).toEqual({ requeueAfterMs: 300 });
  });

  it("a phase that throws: the phases after it run, status is written without observedGeneration, the error returns", async () => {
    const h = harness({
      stored: widget(),
      phases: [named("a", () => Promise.reject(new Error("boom")) as never), named("b")],
    });
    await expect(h.reconciler.reconcile(ctx(), req)).rejects.toThrow("boom");
    expect(h.scopes[0]?.ran).toEqual(["a", "b"]);
    expect(h.writer.of("status")).toHaveLength(1);
    expect(h.writer.lastStatus()).not.toHaveProperty("observedGeneration");
  });

  it("a phase whose input is not ready stops the ones that depend on it without failing", async () => {
    const h = harness({
      stored: widget(),
      phases: [named("find"), (_c, s) => (s.ready ? (s.ran.push("apply"), {}) : {})],
    });
    expect(await h.reconciler.reconcile(ctx(), req)).toEqual({});
    expect(h.scopes[0]?.ran).toEqual(["find"]);
    expect(h.writer.lastStatus()).toMatchObject({ observedGeneration: 2 });
  });

  it("a guard that deleted the object ends the reconcile before the finalizer", async () => {
    const h = harness({ stored: widget({ finalizers: [] }), guard: async () => Promise.resolve(true) });
    await h.reconciler.reconcile(ctx(), req);
    expect(h.writer.writes).toEqual([]);
    expect(h.scopes[0]?.ran).toEqual([]);
  });

  it("deletion runs the deletion phases and then removes the finalizer, writing no status", async () => {
    const h = harness({ stored: widget({ deletionTimestamp: "2026-01-01T00:00:00Z" }) });
    await h.reconciler.reconcile(ctx(), req);
    expect(h.scopes[0]?.ran).toEqual(["cleanup"]);
    expect(h.writer.writes.map((w) => w.verb)).toEqual(["removeFinalizer"]);
    expect(h.released).toEqual(["u1"]);
  });

  it("deletion that waits keeps the finalizer and says why in the status", async () => {
    const h = harness({
      stored: widget({ deletionTimestamp: "2026-01-01T00:00:00Z" }),
      deletePhases: [named("cleanup", (s) => ((s.waitingFor = "children"), { requeueAfterMs: 1000 }))],
    });
    expect(await h.reconciler.reconcile(ctx(), req)).toEqual({ requeueAfterMs: 1000 });
    expect(h.writer.of("removeFinalizer")).toEqual([]);
    expect(h.writer.lastStatus()).toMatchObject({
      conditions: [{ reason: "Deleting", message: "children" }],
    });
    expect(h.released).toEqual([]);
  });

  it("deletion that waits writes no status when the controller does not report it", async () => {
    const h = harness({
      stored: widget({ deletionTimestamp: "2026-01-01T00:00:00Z" }),
      deletePhases: [named("cleanup", (s) => ((s.waitingFor = "work"), {}))],
      reportsWaiting: false,
    });
    await h.reconciler.reconcile(ctx(), req);
    expect(h.writer.writes).toEqual([]);
  });

  it("a deletion phase that fails keeps the finalizer and returns the error", async () => {
    const h = harness({
      stored: widget({ deletionTimestamp: "2026-01-01T00:00:00Z" }),
      deletePhases: [() => Promise.reject(new Error("azure down"))],
    });
    await expect(h.reconciler.reconcile(ctx(), req)).rejects.toThrow("azure down");
    expect(h.writer.of("removeFinalizer")).toEqual([]);
  });

  it("a deleting object without the finalizer is left alone", async () => {
    const h = harness({ stored: widget({ deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [] }) });
    await h.reconciler.reconcile(ctx(), req);
    expect(h.scopes[0]?.ran).toEqual([]);
    expect(h.writer.writes).toEqual([]);
  });

  it("a crash before the status write is safe to redo: a restart converges on the same status", async () => {
    const dying = harness({ stored: widget(), phases: [named("apply", (s) => ((s.ready = true), {}))] });
    dying.writer.applyStatus = () => Promise.reject(new Error("killed"));
    await expect(dying.reconciler.reconcile(ctx(), req)).rejects.toThrow("killed");
    // A restarted controller (nothing remembered) reads the same object and does the whole level again.
    const restarted = harness({ stored: widget(), phases: [named("apply", (s) => ((s.ready = true), {}))] });
    await restarted.reconciler.reconcile(ctx(), req);
    restarted.store.widget = { ...widget(), status: restarted.writer.lastStatus() };
    await restarted.reconciler.reconcile(ctx(), req);
    expect(restarted.scopes.map((s) => s.ran)).toEqual([["apply"], ["apply"]]);
    expect(restarted.writer.of("status")).toHaveLength(1);
    expect(restarted.writer.of("addFinalizer")).toEqual([]);
  });

  it("a crash before the finalizer goes is safe to redo: deletion runs again and then lets go", async () => {
    const deleting = widget({ deletionTimestamp: "2026-01-01T00:00:00Z" });
    const dying = harness({ stored: deleting });
    dying.writer.removeFinalizer = () => Promise.reject(new Error("killed"));
    await expect(dying.reconciler.reconcile(ctx(), req)).rejects.toThrow("killed");
    expect(dying.released).toEqual([]);
    const restarted = harness({ stored: deleting });
    await restarted.reconciler.reconcile(ctx(), req);
    expect(restarted.scopes[0]?.ran).toEqual(["cleanup"]);
    expect(restarted.writer.of("removeFinalizer")).toHaveLength(1);
    expect(restarted.released).toEqual(["u1"]);
  });
});
