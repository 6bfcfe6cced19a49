/** The reconciler deletes: publishes the deletion, waits for the agent's Deleted or the stale bound. */
import { describe, expect, test } from "vitest";
import type { WorkCondition } from "../api/work/v1.ts";
import { PublishRefusedError } from "../cloudevents/client/errors.ts";
import { SnowflakeGenerator } from "../cloudevents/codec/snowflake.ts";
import { Action } from "../cloudevents/types.ts";
import { acceptStatus } from "./accept.ts";
import {
  UID,
  HOUR_MS,
  manifestWork,
  deleting,
  appliedCondition,
  agentStatus,
  setup,
  published,
} from "../../test/support/maestro-server.ts";

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
