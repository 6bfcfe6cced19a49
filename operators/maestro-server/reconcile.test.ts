import { isDeepStrictEqual } from "node:util";
import { describe, expect, test } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import {
  MANIFEST_WORK_CLEANUP_FINALIZER,
  summariseWorkSpec,
  type CachedManifestWork,
  type ManifestWork,
  type ManifestWorkObject,
  type ManifestWorkStatus,
  type WorkCondition,
} from "../api/work/v1.ts";
import { PublishRefusedError } from "../cloudevents/client/errors.ts";
import type { StatusUpdate } from "../cloudevents/codec/manifestbundle.ts";
import { SnowflakeGenerator } from "../cloudevents/snowflake.ts";
import { StatusStore } from "../cloudevents/store/status.ts";
import { Action, type EventAction } from "../cloudevents/types.ts";
import type { ReconcileContext, Request, Result } from "../runtime/controller.ts";
import type { EventSeverity } from "../runtime/events.ts";
import type { KubeObject, ResourceType } from "../runtime/kube.ts";
import { silentLogger } from "../runtime/logger.ts";
import { KubeApiError } from "../runtime/kube.ts";
import {
  ManifestWorkReconciler,
  STATUS_INVALID,
  type EventSink,
  type ServerReconcilerDeps,
  type SpecPublisher,
  type WorkWriter,
} from "./reconcile.ts";
import { UID_INDEX, acceptStatus, uidIndexer } from "./accept.ts";
import { AGENT_STATUS_ACCEPTED } from "./status.ts";

const CONSUMER = "mgmt-1";
const UID = "uid-1";
const HOUR_MS = 3_600_000;
const REDELIVER_MS = 30_000;
const STATUS_DELAY_MS = 2_000;
const T0 = Date.parse("2030-01-01T00:00:00Z");

const configMap = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
  data,
});

function manifestWork(
  over: { generation?: number; finalizer?: boolean; manifests?: unknown[] } = {},
): ManifestWork {
  return {
    metadata: {
      name: "w1",
      namespace: CONSUMER,
      uid: UID,
      generation: over.generation ?? 1,
      resourceVersion: "7",
      ...(over.finalizer === false ? {} : { finalizers: [MANIFEST_WORK_CLEANUP_FINALIZER] }),
    },
    spec: { workload: { manifests: (over.manifests ?? [configMap("cm-1")]) as never } },
  };
}

function deleting(work: ManifestWork, sinceMs: number): ManifestWork {
  return {
    ...work,
    metadata: { ...work.metadata, deletionTimestamp: new Date(T0 - sinceMs).toISOString() },
  };
}

const appliedCondition: WorkCondition = {
  type: "Applied",
  status: "True",
  reason: "AppliedManifestWorkComplete",
  message: "Apply manifest work complete",
  lastTransitionTime: "2030-01-01T00:00:00Z",
};

function agentStatus(over: Partial<StatusUpdate> = {}): StatusUpdate {
  return {
    resourceId: UID,
    resourceVersion: 1,
    consumer: CONSUMER,
    status: { conditions: [appliedCondition] },
    deleted: false,
    ...over,
  };
}

class RecordingPublisher implements SpecPublisher {
  readonly sent: Array<{ uid: string; generation: number; action: EventAction }> = [];
  /** How many manifests each published spec carried. */
  readonly manifestsSent: number[] = [];
  /** The works whose status was asked for again, as "consumer/uid". */
  readonly statusRequests: string[] = [];
  refusal: Error | undefined;

  publishSpec(work: ManifestWork, action: EventAction): Promise<void> {
    this.manifestsSent.push(work.spec?.workload?.manifests?.length ?? 0);
    return this.#record(work, action);
  }

  publishDeletion(work: ManifestWorkObject, action: EventAction = Action.delete): Promise<void> {
    return this.#record(work, action);
  }

  requestStatus(consumer: string, resourceId: string): Promise<void> {
    this.statusRequests.push(`${consumer}/${resourceId}`);
    return Promise.resolve();
  }

  #record(work: ManifestWorkObject, action: EventAction): Promise<void> {
    if (this.refusal) return Promise.reject(this.refusal);
    const { uid = "", generation = 0 } = work.metadata;
    this.sent.push({ uid, generation, action });
    return Promise.resolve();
  }
}

/**
 * The apiserver's works, whole, and the informer's cache of them, without manifests (what
 * maestro-server is given): a reconcile must fetch a work to publish it.
 */
class ServiceWorks {
  readonly cache = new FakeLister<CachedManifestWork>([], { [UID_INDEX]: uidIndexer });
  readonly #whole = new Map<string, ManifestWork>();
  fetches = 0;

  constructor(works: ManifestWork[]) {
    for (const work of works) this.set(work);
  }

  set(work: ManifestWork): void {
    this.#whole.set(work.metadata.uid ?? "", work);
    this.cache.set(summariseWorkSpec(work));
  }

  delete(namespace: string, name: string): void {
    const cached = this.cache.get(namespace, name);
    this.#whole.delete(cached?.metadata.uid ?? "");
    this.cache.delete(namespace, name);
  }

  readonly fetch = (work: ManifestWorkObject): Promise<ManifestWork | undefined> => {
    this.fetches++;
    return Promise.resolve(this.#whole.get(work.metadata.uid ?? ""));
  };

  deps(): Pick<ServerReconcilerDeps, "works" | "fetch"> {
    return { works: this.cache, fetch: this.fetch };
  }
}

type Write =
  | { op: "addFinalizer" | "removeFinalizer"; finalizer: string }
  | { op: "applyStatus"; status: ManifestWorkStatus };

class RecordingWriter implements WorkWriter {
  readonly writes: Write[] = [];

  addFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (obj.metadata.finalizers?.includes(finalizer)) return Promise.resolve(false);
    this.writes.push({ op: "addFinalizer", finalizer });
    return Promise.resolve(true);
  }

  removeFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (!obj.metadata.finalizers?.includes(finalizer)) return Promise.resolve(false);
    this.writes.push({ op: "removeFinalizer", finalizer });
    return Promise.resolve(true);
  }

  applyStatus<T extends KubeObject>(_type: ResourceType, _current: KubeObject, status: unknown) {
    this.writes.push({ op: "applyStatus", status: status as ManifestWorkStatus });
    return Promise.resolve<T | undefined>(undefined);
  }

  get statuses(): ManifestWorkStatus[] {
    return this.writes.flatMap((w) => (w.op === "applyStatus" ? [w.status] : []));
  }

  get ops(): string[] {
    return this.writes.map((w) => w.op);
  }
}

class RecordingEvents implements EventSink {
  readonly events: Array<{ type: EventSeverity; reason: string; message: string }> = [];

  event(_obj: KubeObject, type: EventSeverity, reason: string, message: string): Promise<void> {
    this.events.push({ type, reason, message });
    return Promise.resolve();
  }

  get reasons(): string[] {
    return this.events.map((e) => `${e.type}/${e.reason}`);
  }
}

/** A reconciler on fakes, with a clock the test moves. */
function setup(work: ManifestWork, reported?: StatusUpdate) {
  const works = new ServiceWorks([work]);
  const statuses = new StatusStore();
  if (reported) statuses.offer(reported);
  const publisher = new RecordingPublisher();
  const writer = new RecordingWriter();
  const events = new RecordingEvents();
  const clock = { ms: T0 };
  const reconciler = new ManifestWorkReconciler({
    ...works.deps(),
    client: publisher,
    statuses,
    applier: writer,
    events,
    staleDeleteMs: HOUR_MS,
    redeliverAfterMs: REDELIVER_MS,
    publishedStatusDelayMs: STATUS_DELAY_MS,
    now: () => clock.ms,
  });
  const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
  const reconcile = (): Promise<Result> =>
    reconciler.reconcile(ctx, { cluster: "service", namespace: CONSUMER, name: "w1" });
  const takeUnsent = (): Request[] => reconciler.takeUnsent();
  return { works, statuses, publisher, writer, events, clock, reconcile, takeUnsent };
}

function published(status: ManifestWorkStatus | undefined): WorkCondition | undefined {
  return status?.conditions?.find((c) => c.type === "Published");
}

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

describe("ManifestWorkReconciler: deletion", () => {
  test.each([
    {
      name: "the deletion is published and the finalizer held until the agent confirms",
      work: deleting(manifestWork(), 0),
      reported: undefined,
      refusal: undefined,
      ops: ["applyStatus"],
      sent: [Action.delete],
      publishedReason: "DeletePublished",
      events: [],
      result: { requeueAfterMs: HOUR_MS },
    },
    {
      name: "a report that is not Deleted does not release the finalizer",
      work: deleting(manifestWork(), 10 * 60_000),
      reported: agentStatus(),
      refusal: undefined,
      ops: ["applyStatus"],
      sent: [Action.delete],
      publishedReason: "DeletePublished",
      events: [],
      result: { requeueAfterMs: 50 * 60_000 },
    },
    {
      name: "without a broker the finalizer is held and BrokerNotConnected shown",
      work: deleting(manifestWork(), 0),
      reported: undefined,
      refusal: new PublishRefusedError("not-connected", "not connected"),
      ops: ["applyStatus"],
      sent: [],
      publishedReason: "BrokerNotConnected",
      events: [],
      result: { requeueAfterMs: HOUR_MS },
    },
    {
      name: "a deletion the broker refuses as too large is not retried at once; the stale-delete wait bounds it",
      work: deleting(manifestWork(), 0),
      reported: undefined,
      refusal: new PublishRefusedError("too-large", "event of 600000 bytes exceeds the broker's maximum"),
      ops: ["applyStatus"],
      sent: [],
      publishedReason: "BundleTooLarge",
      events: [],
      result: { requeueAfterMs: HOUR_MS },
    },
    {
      name: "the agent's Deleted=True releases the finalizer",
      work: deleting(manifestWork(), 0),
      reported: agentStatus({ deleted: true, resourceVersion: 0 }),
      refusal: undefined,
      ops: ["removeFinalizer"],
      sent: [],
      publishedReason: undefined,
      events: ["Normal/Deleted"],
      result: {},
    },
    {
      name: "a deleting work without our finalizer is left alone",
      work: deleting(manifestWork({ finalizer: false }), 0),
      reported: undefined,
      refusal: undefined,
      ops: [],
      sent: [],
      publishedReason: undefined,
      events: [],
      result: {},
    },
  ])("$name", async ({ work, reported, refusal, ops, sent, publishedReason, events, result }) => {
    const t = setup(work, reported);
    t.publisher.refusal = refusal;
    expect(await t.reconcile()).toEqual(result);
    expect(t.writer.ops).toEqual(ops);
    expect(t.publisher.sent.map((s) => s.action)).toEqual(sent);
    expect(published(t.writer.statuses[0])?.reason).toBe(publishedReason);
    expect(t.events.reasons).toEqual(events);
  });

  test("the deletion is published once; later reconciles only wait", async () => {
    const t = setup(deleting(manifestWork(), 0));
    await t.reconcile();
    t.clock.ms += 60_000;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: HOUR_MS - 60_000 });
    expect(t.publisher.sent).toHaveLength(1);
    expect(t.writer.ops).toEqual(["applyStatus"]);
  });

  test("a confirmed deletion forgets the work's accepted status", async () => {
    const t = setup(deleting(manifestWork(), 0), agentStatus({ deleted: true }));
    await t.reconcile();
    expect(t.statuses.get(UID)).toBeUndefined();
  });

  test.each([
    { name: "59 min after the delete: still waiting", sinceMs: 59 * 60_000, released: false },
    { name: "exactly 1 h after the delete: still waiting", sinceMs: HOUR_MS, released: false },
    {
      name: "over 1 h after the delete: released as DeleteUnconfirmed",
      sinceMs: HOUR_MS + 1,
      released: true,
    },
  ])("stale delete, $name", async ({ sinceMs, released }) => {
    const t = setup(deleting(manifestWork(), 0));
    await t.reconcile();
    t.clock.ms += sinceMs;
    const result = await t.reconcile();
    expect(t.writer.ops.includes("removeFinalizer")).toBe(released);
    if (released) {
      expect(result).toEqual({});
      expect(t.events.events).toContainEqual(
        expect.objectContaining({ type: "Warning", reason: "DeleteUnconfirmed" }),
      );
    } else {
      expect(result).toEqual({ requeueAfterMs: Math.max(1000, HOUR_MS - sinceMs) });
    }
  });
});

describe("ManifestWorkReconciler: a Deleted the server did not ask for", () => {
  const deletedCondition: WorkCondition = {
    type: "Deleted",
    status: "True",
    reason: "ManifestsDeleted",
    message: "The manifests are deleted from the cluster mgmt-1",
    lastTransitionTime: "2030-01-01T00:00:00Z",
  };
  const availableCondition: WorkCondition = {
    ...appliedCondition,
    type: "Available",
    reason: "ResourcesAvailable",
    message: "All resources are available",
  };

  test("the work keeps the agent's real status, its finalizer and its publication; the next report is written", async () => {
    const ids = new SnowflakeGenerator(1);
    const t = setup(manifestWork(), agentStatus({ sequenceId: ids.next() }));
    await t.reconcile();
    const forged = agentStatus({
      sequenceId: ids.next(),
      deleted: true,
      status: { conditions: [deletedCondition] },
    });
    expect(acceptStatus(forged, t.works.cache, t.statuses)).toMatchObject({
      verdict: "dropped",
      reason: "delete-not-requested",
    });
    await t.reconcile();
    const later = agentStatus({
      sequenceId: ids.next(),
      status: { conditions: [appliedCondition, availableCondition] },
    });
    expect(acceptStatus(later, t.works.cache, t.statuses).verdict).toBe("accepted");
    await t.reconcile();
    const shown = t.writer.statuses.map((s) => s.conditions?.map((c) => c.type));
    expect(shown.at(-1)).toEqual(["Available", "Applied", "Published"]);
    expect(shown.flat()).not.toContain("Deleted");
    expect(t.writer.ops).not.toContain("removeFinalizer");
    expect(t.publisher.sent.map((s) => s.action)).toEqual([Action.update]);
  });
});

describe("ManifestWorkReconciler: an agent status the work cannot hold", () => {
  /** Refuses, as the apiserver does, any status write that carries the agent's report. */
  class RefusingWriter extends RecordingWriter {
    attempts = 0;
    override applyStatus<T extends KubeObject>(type: ResourceType, current: KubeObject, status: unknown) {
      this.attempts++;
      const s = status as ManifestWorkStatus;
      if (s.conditions?.some((c) => c.type === "Applied"))
        return Promise.reject(
          new KubeApiError(
            422,
            "Invalid",
            'ManifestWork.work.open-cluster-management.io "w1" is invalid',
            {},
          ),
        );
      return super.applyStatus<T>(type, current, status);
    }
  }

  test("a report the apiserver finds Invalid is written once, then the work says why; no retry loop", async () => {
    const work = manifestWork();
    const statuses = new StatusStore();
    statuses.offer(agentStatus());
    const writer = new RefusingWriter();
    const reconciler = new ManifestWorkReconciler({
      ...new ServiceWorks([work]).deps(),
      client: new RecordingPublisher(),
      statuses,
      applier: writer,
      events: new RecordingEvents(),
      staleDeleteMs: HOUR_MS,
      redeliverAfterMs: REDELIVER_MS,
      publishedStatusDelayMs: STATUS_DELAY_MS,
      now: () => T0,
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    const req = { cluster: "service", namespace: CONSUMER, name: "w1" };
    expect(await reconciler.reconcile(ctx, req)).toEqual({});
    expect(await reconciler.reconcile(ctx, req)).toEqual({});
    // One refused write with the report, then only writes without it.
    expect(writer.attempts).toBe(3);
    const refused = writer.statuses.at(-1)?.conditions?.find((c) => c.type === AGENT_STATUS_ACCEPTED);
    expect(refused).toMatchObject({ status: "False", reason: STATUS_INVALID });
    expect(refused?.message).toMatch(/refused the agent's status: .*is invalid/);
    expect(statuses.get(UID)?.refusal?.reason).toBe(STATUS_INVALID);
  });

  test("a report refused for its size shows what the work had, with AgentStatusAccepted=False", async () => {
    const work = { ...manifestWork(), status: { conditions: [appliedCondition] } };
    const t = setup(work);
    t.statuses.offer(agentStatus({ status: { conditions: [] } }), {
      reason: "AgentStatusTooLarge",
      message: "too large",
    });
    await t.reconcile();
    expect(t.writer.statuses[0]?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ["AgentStatusAccepted", "False"],
      ["Applied", "True"],
      ["Published", "True"],
    ]);
  });
});

describe("ManifestWorkReconciler after a restart", () => {
  const publishedAt = (generation: number): WorkCondition => ({
    type: "Published",
    status: "True",
    reason: "Published",
    message: `Generation ${generation} was published to consumer ${CONSUMER}`,
    observedGeneration: generation,
    lastTransitionTime: "2030-01-01T00:00:00Z",
  });

  test("a generation the work shows published and applied is not sent again, evented or written", async () => {
    const work = {
      ...manifestWork({ generation: 2 }),
      status: { conditions: [{ ...appliedCondition, observedGeneration: 2 }, publishedAt(2)] },
    };
    const t = setup(work);
    await t.reconcile();
    expect(t.publisher.sent).toEqual([]);
    expect(t.events.reasons).toEqual([]);
    // The fake records every status apply; the Applier skips one equal to what the work has.
    for (const status of t.writer.statuses) expect(status).toEqual(work.status);
  });

  test("a generation shown applied but never reported is asked for, not sent; sent only if asking brings nothing", async () => {
    // After a restart whose status resync lost this work's answer: the store holds no report.
    const work = {
      ...manifestWork({ generation: 2 }),
      status: { conditions: [{ ...appliedCondition, observedGeneration: 2 }, publishedAt(2)] },
    };
    const t = setup(work);
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REDELIVER_MS });
    t.clock.ms += REDELIVER_MS;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REDELIVER_MS });
    expect(t.publisher.statusRequests).toEqual([`${CONSUMER}/${UID}`]);
    expect(t.publisher.sent).toEqual([]);
    // Still nothing a period later: the agent may have lost the work, so the spec goes again.
    t.clock.ms += REDELIVER_MS;
    await t.reconcile();
    expect(t.publisher.sent).toEqual([{ uid: UID, generation: 2, action: Action.update }]);
    expect(t.publisher.statusRequests).toHaveLength(1);
    // The report arrives: nothing more is asked or sent, however long after.
    t.statuses.offer(agentStatus({ resourceVersion: 2 }));
    t.clock.ms += 10 * REDELIVER_MS;
    expect(await t.reconcile()).toEqual({});
    expect(t.publisher.sent).toHaveLength(1);
    expect(t.publisher.statusRequests).toHaveLength(1);
  });

  test("a generation applied only at an older one is sent", async () => {
    const work = {
      ...manifestWork({ generation: 3 }),
      status: { conditions: [{ ...appliedCondition, observedGeneration: 2 }, publishedAt(3)] },
    };
    const t = setup(work);
    await t.reconcile();
    expect(t.publisher.sent).toEqual([{ uid: UID, generation: 3, action: Action.update }]);
  });
});

describe("ManifestWorkReconciler: its own status write, before the watch brings it", () => {
  /** Writes as the Applier does: skips a status the given copy already has, else returns the new version. */
  class ServerLikeWriter extends RecordingWriter {
    #version = 100;
    override applyStatus<T extends KubeObject>(type: ResourceType, current: KubeObject, status: unknown) {
      if (isDeepStrictEqual(current["status"], status)) return Promise.resolve<T | undefined>(undefined);
      void super.applyStatus<T>(type, current, status);
      const metadata = { ...current.metadata, resourceVersion: String(++this.#version) };
      return Promise.resolve({ ...current, metadata, status } as unknown as T);
    }
  }

  function setupServerLike() {
    const work = manifestWork();
    const works = new ServiceWorks([work]);
    const statuses = new StatusStore();
    statuses.offer(agentStatus());
    const writer = new ServerLikeWriter();
    const clock = { ms: T0 };
    const publisher = new RecordingPublisher();
    const reconciler = new ManifestWorkReconciler({
      ...works.deps(),
      client: publisher,
      statuses,
      applier: writer,
      events: new RecordingEvents(),
      staleDeleteMs: HOUR_MS,
      redeliverAfterMs: REDELIVER_MS,
      publishedStatusDelayMs: STATUS_DELAY_MS,
      now: () => clock.ms,
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    const reconcile = () =>
      reconciler.reconcile(ctx, { cluster: "service", namespace: CONSUMER, name: "w1" });
    return { work, works, writer, statuses, publisher, clock, reconcile };
  }

  test("a reconcile on the stale cached copy writes nothing again (nor a new lastTransitionTime)", async () => {
    const t = setupServerLike();
    await t.reconcile();
    expect(t.writer.ops).toEqual(["applyStatus"]);
    t.clock.ms += 5_000;
    await t.reconcile();
    expect(t.writer.ops).toEqual(["applyStatus"]);
  });

  test("once the watch brings that version the cached copy is used again", async () => {
    const t = setupServerLike();
    await t.reconcile();
    const written = t.writer.statuses[0];
    t.works.set({ ...t.work, metadata: { ...t.work.metadata, resourceVersion: "101" }, status: written });
    await t.reconcile();
    expect(t.writer.ops).toEqual(["applyStatus"]);
    expect(t.publisher.statusRequests).toEqual([]);
  });

  test("a cached copy older than its write (a late watch event) does not lose the agent's report", async () => {
    const t = setupServerLike();
    await t.reconcile();
    const written = t.writer.statuses[0];
    expect(written?.conditions?.map((c) => c.type)).toEqual(["Applied", "Published"]);
    // The watch delivers a version between the copy written over and the write (the finalizer's).
    t.works.set({ ...t.work, metadata: { ...t.work.metadata, resourceVersion: "8" }, status: {} });
    await t.reconcile();
    expect(t.writer.statuses.at(-1)?.conditions?.map((c) => c.type)).toEqual(["Applied", "Published"]);
    // Still held until the cache shows a write that carries it.
    expect(t.statuses.get(UID)?.status).toBeDefined();
    t.works.set({ ...t.work, metadata: { ...t.work.metadata, resourceVersion: "102" }, status: written });
    await t.reconcile();
    expect(t.statuses.get(UID)?.status).toBeUndefined();
  });

  test("two reports written before the watch brings either: the first write's copy is not taken for a change", async () => {
    const t = setupServerLike();
    await t.reconcile();
    const available: WorkCondition = { ...appliedCondition, type: "Available", reason: "ResourcesAvailable" };
    t.statuses.offer(agentStatus({ status: { conditions: [appliedCondition, available] } }));
    await t.reconcile();
    expect(t.writer.ops).toEqual(["applyStatus", "applyStatus"]);
    const [first, second] = t.writer.statuses;
    // The watch brings the two writes in turn; neither is cause to write again.
    t.works.set({ ...t.work, metadata: { ...t.work.metadata, resourceVersion: "101" }, status: first });
    await t.reconcile();
    t.works.set({ ...t.work, metadata: { ...t.work.metadata, resourceVersion: "102" }, status: second });
    await t.reconcile();
    expect(t.writer.ops).toEqual(["applyStatus", "applyStatus"]);
    expect(t.publisher.statusRequests).toEqual([]);
    expect(t.statuses.get(UID)?.status).toBeUndefined();
  });

  test("a status someone else changed is put back: the agent is asked for its report again", async () => {
    const t = setupServerLike();
    await t.reconcile();
    const written = t.writer.statuses[0];
    t.works.set({ ...t.work, metadata: { ...t.work.metadata, resourceVersion: "101" }, status: written });
    // The watch brought the write: the report is on the work, so only its order and hash are held.
    await t.reconcile();
    expect(t.statuses.get(UID)?.status).toBeUndefined();
    t.works.set({ ...t.work, metadata: { ...t.work.metadata, resourceVersion: "102" }, status: {} });
    await t.reconcile();
    expect(t.publisher.statusRequests).toEqual([`${CONSUMER}/${UID}`]);
    // The agent answers with its report; it is written whole again.
    t.statuses.offer(agentStatus());
    await t.reconcile();
    expect(t.writer.statuses.at(-1)).toEqual(written);
    expect(t.publisher.statusRequests).toHaveLength(1);
  });
});
