import { describe, expect, test } from "vitest";
import type { ManifestWork } from "../api/work/v1.ts";
import { PublishRefusedError } from "../cloudevents/client/errors.ts";
import type { StatusUpdate } from "../cloudevents/codec/manifestbundle.ts";
import { StatusStore } from "../cloudevents/store/status.ts";
import { Action } from "../cloudevents/types.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { silentLogger } from "../runtime/logger.ts";
import { KubeApiError } from "../runtime/kube.ts";
import { ManifestWorkReconciler } from "./reconcile.ts";
import {
  CONSUMER,
  UID,
  HOUR_MS,
  REDELIVER_MS,
  STATUS_DELAY_MS,
  T0,
  configMap,
  manifestWork,
  agentStatus,
  RecordingPublisher,
  ServiceWorks,
  RecordingWriter,
  RecordingEvents,
  setup,
  published,
} from "../../test/support/maestro-server.ts";

describe("ManifestWorkReconciler: finalizer, publish, status write", () => {
  /** Publishes, then runs the reconcile the agent's report or the delay brings; returns both results. */
  async function publishThenReport(work: ManifestWork, report: StatusUpdate | undefined, afterMs: number) {
    const t = setup(work);
    const first = await t.reconcile();
    const opsAfterPublish = [...t.writer.ops];
    if (report) t.statuses.offer(report);
    t.clock.ms += afterMs;
    const second = await t.reconcile();
    return { t, first, opsAfterPublish, second };
  }

  test("a new generation is published; the status waits for the agent's report, and one write carries both", async () => {
    const { t, first, opsAfterPublish, second } = await publishThenReport(
      manifestWork({ generation: 3 }),
      agentStatus({ resourceVersion: 3 }),
      100,
    );
    expect(first).toEqual({ requeueAfterMs: STATUS_DELAY_MS });
    expect(opsAfterPublish).toEqual([]);
    expect(t.publisher.sent).toEqual([{ uid: UID, generation: 3, action: Action.update }]);
    // The cache holds no manifests: the work was read whole to be sent.
    expect(t.works.fetches).toBe(1);
    expect(t.publisher.manifestsSent).toEqual([1]);
    // The Published condition tells of it; no event on the normal path.
    expect(t.events.reasons).toEqual([]);
    expect(second).toEqual({});
    expect(t.writer.ops).toEqual(["applyStatus"]);
    const status = t.writer.statuses[0];
    expect(published(status)).toMatchObject({ status: "True", reason: "Published", observedGeneration: 3 });
    expect(status?.conditions?.map((c) => c.type)).toEqual(["Applied", "Published"]);
  });

  test("without a report within the delay, Published=True is written alone; it looks again at redelivery time", async () => {
    const { t, second } = await publishThenReport(
      manifestWork({ generation: 3 }),
      undefined,
      STATUS_DELAY_MS,
    );
    expect(t.publisher.sent).toHaveLength(1);
    expect(t.writer.ops).toEqual(["applyStatus"]);
    expect(published(t.writer.statuses[0])).toMatchObject({ status: "True", observedGeneration: 3 });
    expect(t.writer.statuses[0]?.conditions?.map((c) => c.type)).toEqual(["Published"]);
    expect(second).toEqual({ requeueAfterMs: REDELIVER_MS });
  });

  test("another reconcile within the delay (the finalizer's watch event) writes nothing and keeps the deadline", async () => {
    const t = setup(manifestWork({ generation: 3 }));
    await t.reconcile();
    t.clock.ms += 500;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_DELAY_MS - 500 });
    expect(t.writer.ops).toEqual([]);
    expect(t.publisher.sent).toHaveLength(1);
  });

  test("a report of this generation already held is written with Published on top at once; no requeue", async () => {
    const t = setup(manifestWork({ generation: 1 }), agentStatus({ resourceVersion: 1 }));
    expect(await t.reconcile()).toEqual({});
    expect(t.publisher.sent).toEqual([{ uid: UID, generation: 1, action: Action.update }]);
    expect(t.writer.ops).toEqual(["applyStatus"]);
    expect(published(t.writer.statuses[0])).toMatchObject({ status: "True", observedGeneration: 1 });
    expect(t.writer.statuses[0]?.conditions?.map((c) => c.type)).toEqual(["Applied", "Published"]);
  });

  test("a report of an older generation is shown until the new one arrives", async () => {
    const t = setup(manifestWork({ generation: 2 }), agentStatus({ resourceVersion: 1 }));
    await t.reconcile();
    t.clock.ms += STATUS_DELAY_MS;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REDELIVER_MS });
    expect(t.publisher.sent).toEqual([{ uid: UID, generation: 2, action: Action.update }]);
    expect(t.writer.statuses[0]?.conditions?.map((c) => c.type)).toEqual(["Applied", "Published"]);
    expect(published(t.writer.statuses[0])).toMatchObject({ status: "True", observedGeneration: 2 });
  });

  test("a work without the finalizer gets it before it is published, in the same reconcile", async () => {
    const t = setup(manifestWork({ finalizer: false }));
    const opsAtSend: string[][] = [];
    const publish = t.publisher.publishSpec.bind(t.publisher);
    t.publisher.publishSpec = (work, action) => {
      opsAtSend.push([...t.writer.ops]);
      return publish(work, action);
    };
    await t.reconcile();
    expect(opsAtSend).toEqual([["addFinalizer"]]);
    expect(t.writer.ops[0]).toBe("addFinalizer");
    expect(t.publisher.sent).toEqual([{ uid: UID, generation: 1, action: Action.update }]);
  });

  test("a cached copy the watch has not brought the finalizer to yet is not given it again", async () => {
    const t = setup(manifestWork({ finalizer: false }));
    await t.reconcile();
    t.statuses.offer(agentStatus({ resourceVersion: 1 }));
    await t.reconcile();
    expect(t.writer.ops).toEqual(["addFinalizer", "applyStatus"]);
  });

  test("a newer copy without the finalizer (someone removed it) gets it again", async () => {
    const work = manifestWork({ finalizer: false });
    const t = setup(work);
    await t.reconcile();
    t.works.set({ ...work, metadata: { ...work.metadata, resourceVersion: "8" } });
    await t.reconcile();
    expect(t.writer.ops.filter((op) => op === "addFinalizer")).toHaveLength(2);
  });

  test("a failed finalizer write publishes nothing", async () => {
    const t = setup(manifestWork({ finalizer: false }));
    t.writer.addFinalizer = () =>
      Promise.reject(new KubeApiError(409, "Conflict", "the object was changed", undefined));
    await expect(t.reconcile()).rejects.toThrow(/changed/);
    expect(t.publisher.sent).toEqual([]);
  });

  test.each([
    { name: "within the redelivery period: not sent again", advanceMs: REDELIVER_MS - 1, sentTimes: 1 },
    {
      name: "after the redelivery period without a report: sent again",
      advanceMs: REDELIVER_MS,
      sentTimes: 2,
    },
  ])("$name", async ({ advanceMs, sentTimes }) => {
    const t = setup(manifestWork());
    await t.reconcile();
    t.clock.ms += advanceMs;
    await t.reconcile();
    expect(t.publisher.sent).toHaveLength(sentTimes);
    expect(t.events.reasons).toEqual([]);
  });

  test("a generation the agent reported on is not sent again, however long ago it was published", async () => {
    const t = setup(manifestWork());
    await t.reconcile();
    t.statuses.offer(agentStatus({ resourceVersion: 1 }));
    t.clock.ms += 10 * REDELIVER_MS;
    expect(await t.reconcile()).toEqual({});
    expect(t.publisher.sent).toHaveLength(1);
  });

  test("forgetPublished makes the next reconcile send the work again", async () => {
    const work = manifestWork();
    const works = new ServiceWorks([work]);
    const publisher = new RecordingPublisher();
    const reconciler = new ManifestWorkReconciler({
      ...works.deps(),
      client: publisher,
      statuses: new StatusStore(),
      applier: new RecordingWriter(),
      events: new RecordingEvents(),
      staleDeleteMs: HOUR_MS,
      redeliverAfterMs: REDELIVER_MS,
      publishedStatusDelayMs: STATUS_DELAY_MS,
      now: () => T0,
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    const req = { cluster: "service", namespace: CONSUMER, name: "w1" };
    await reconciler.reconcile(ctx, req);
    await reconciler.reconcile(ctx, req);
    reconciler.forgetPublished();
    await reconciler.reconcile(ctx, req);
    expect(publisher.sent).toHaveLength(2);
  });

  test("a work the lister does not hold (or without uid) is left alone", async () => {
    const t = setup(manifestWork());
    t.works.delete(CONSUMER, "w1");
    expect(await t.reconcile()).toEqual({});
    expect(t.writer.writes).toEqual([]);
  });
});

describe("ManifestWorkReconciler: why a work is not published", () => {
  test.each([
    {
      name: "manifests over 500 KiB: BundleTooLarge, nothing sent",
      manifests: [configMap("cm-big", { big: "x".repeat(520 * 1024) })],
      refusal: undefined,
      condition: { status: "False", reason: "BundleTooLarge" },
      message: /over the 512000-byte limit/,
      events: ["Warning/NotPublished"],
    },
    {
      name: "a manifest without a name: InvalidManifests",
      manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: {} }],
      refusal: undefined,
      condition: { status: "False", reason: "InvalidManifests" },
      message: /metadata\.name is required/,
      events: ["Warning/NotPublished"],
    },
    {
      name: "no manifests: InvalidManifests",
      manifests: [],
      refusal: undefined,
      condition: { status: "False", reason: "InvalidManifests" },
      message: /no manifests/,
      events: ["Warning/NotPublished"],
    },
    {
      name: "the broker's packet limit refuses the event: BundleTooLarge",
      manifests: undefined,
      refusal: new PublishRefusedError("too-large", "event of 600000 bytes exceeds the broker's maximum"),
      condition: { status: "False", reason: "BundleTooLarge" },
      message: /event of 600000 bytes/,
      events: [],
    },
    {
      name: "no broker connection: BrokerNotConnected, Unknown",
      manifests: undefined,
      refusal: new PublishRefusedError("not-connected", "maestro-server is not connected to the broker"),
      condition: { status: "Unknown", reason: "BrokerNotConnected" },
      message: /not connected to the broker/,
      events: [],
    },
  ])("$name", async ({ manifests, refusal, condition, message, events }) => {
    const t = setup(manifestWork(manifests ? { manifests } : {}));
    t.publisher.refusal = refusal;
    expect(await t.reconcile()).toEqual({});
    expect(t.publisher.sent).toEqual([]);
    expect(t.events.reasons).toEqual(events);
    const cond = published(t.writer.statuses[0]);
    expect(cond).toMatchObject(condition);
    expect(cond?.message).toMatch(message);
  });

  test("an invalid generation is reported by one event, not one per reconcile", async () => {
    const t = setup(manifestWork({ manifests: [] }));
    await t.reconcile();
    await t.reconcile();
    expect(t.events.reasons).toEqual(["Warning/NotPublished"]);
  });

  test("any other publish error is thrown (the queue retries) after the status write", async () => {
    const t = setup(manifestWork());
    t.publisher.refusal = new Error("boom");
    await expect(t.reconcile()).rejects.toThrow("boom");
    expect(t.writer.ops).toEqual(["applyStatus"]);
  });

  test("a (re)connect is told of each work that found no connection, once, and of none sent since", async () => {
    const work = manifestWork();
    const t = setup(work);
    t.publisher.refusal = new PublishRefusedError("not-connected", "not connected");
    await t.reconcile();
    expect(t.takeUnsent()).toEqual([{ cluster: "service", namespace: CONSUMER, name: "w1" }]);
    expect(t.takeUnsent()).toEqual([]);

    await t.reconcile();
    t.works.set({ ...work, status: t.writer.statuses[0] });
    t.publisher.refusal = undefined;
    await t.reconcile();
    expect(t.publisher.sent).toHaveLength(1);
    expect(t.takeUnsent()).toEqual([]);
  });

  test("once the broker is back the work is published, Published turns True, and that is an event", async () => {
    const work = manifestWork();
    const t = setup(work);
    t.publisher.refusal = new PublishRefusedError("not-connected", "not connected");
    await t.reconcile();
    t.works.set({ ...work, status: t.writer.statuses[0] });
    t.publisher.refusal = undefined;
    await t.reconcile();
    expect(t.publisher.sent).toHaveLength(1);
    t.clock.ms += STATUS_DELAY_MS;
    await t.reconcile();
    expect(t.writer.statuses.map((s) => published(s)?.reason)).toEqual(["BrokerNotConnected", "Published"]);
    expect(t.events.reasons).toEqual(["Normal/Published"]);
  });

  test("a generation that fixes an invalid bundle is published, and that is an event", async () => {
    const t = setup(manifestWork({ manifests: [] }));
    await t.reconcile();
    t.works.set({ ...manifestWork({ generation: 2 }), status: t.writer.statuses[0] });
    await t.reconcile();
    expect(t.publisher.sent).toEqual([{ uid: UID, generation: 2, action: Action.update }]);
    expect(t.events.reasons).toEqual(["Warning/NotPublished", "Normal/Published"]);
  });
});
