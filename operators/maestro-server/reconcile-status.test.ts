/** The status the reconciler writes: an agent report the work cannot hold, a restart, its own writes. */
import { isDeepStrictEqual } from "node:util";
import { describe, expect, test } from "vitest";
import type { ManifestWorkStatus, WorkCondition } from "../api/work/v1.ts";
import { StatusStore } from "../cloudevents/store/status.ts";
import { Action } from "../cloudevents/types.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { KubeObject, ResourceType } from "../runtime/kube.ts";
import { silentLogger } from "../runtime/logger.ts";
import { KubeApiError } from "../runtime/kube.ts";
import { ManifestWorkReconciler, STATUS_INVALID } from "./reconcile.ts";
import { AGENT_STATUS_ACCEPTED } from "./status.ts";
import {
  CONSUMER,
  UID,
  HOUR_MS,
  REDELIVER_MS,
  STATUS_DELAY_MS,
  T0,
  manifestWork,
  appliedCondition,
  agentStatus,
  RecordingPublisher,
  ServiceWorks,
  RecordingWriter,
  RecordingEvents,
  setup,
} from "../../test/support/maestro-server.ts";

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
