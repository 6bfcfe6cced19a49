import { describe, expect, test } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import {
  summariseWorkSpec,
  type ManifestWork,
  type ManifestWorkStatus,
  type WorkCondition,
} from "../api/work/v1.ts";
import type { StatusUpdate } from "../cloudevents/codec/manifestbundle.ts";
import { SnowflakeGenerator } from "../cloudevents/codec/snowflake.ts";
import { StatusStore } from "../cloudevents/store/status.ts";
import { STATUS_TOO_LARGE, UID_INDEX, acceptStatus, uidIndexer } from "./accept.ts";
import { MAX_CONDITION_MESSAGE_CHARS, MAX_STATUS_BYTES } from "./bounds.ts";

const work: ManifestWork = { metadata: { name: "w1", namespace: "mgmt-1", uid: "uid-1", generation: 2 } };
/** The same work once deleted on the service cluster: the server publishes its deletion. */
const deleting: ManifestWork = { metadata: { ...work.metadata, deletionTimestamp: "2030-01-01T00:00:00Z" } };
const T0 = Date.parse("2030-01-01T00:00:00Z");
const ids = new SnowflakeGenerator(1, () => T0);
const older = ids.next();
const accepted = ids.next();
const newer = ids.next();

function update(over: Partial<StatusUpdate>): StatusUpdate {
  return {
    resourceId: "uid-1",
    resourceVersion: 2,
    consumer: "mgmt-1",
    sequenceId: newer,
    status: { conditions: [] },
    deleted: false,
    ...over,
  };
}

test.each([
  { name: "the owner's status of the current generation, newer sequence", over: {}, verdict: "accepted" },
  {
    name: "a deletion confirmation of a work being deleted, whatever its version",
    over: { deleted: true, resourceVersion: 0 },
    of: deleting,
    verdict: "accepted",
  },
  {
    name: "a deletion confirmation of a work being deleted, with an older sequence",
    over: { deleted: true, sequenceId: older },
    of: deleting,
    verdict: "accepted",
  },
  {
    name: "a deletion confirmation of a work whose deletion was never published",
    over: { deleted: true },
    verdict: "delete-not-requested",
  },
  {
    name: "a deletion confirmation of a work never deleted, of another version",
    over: { deleted: true, resourceVersion: 0 },
    verdict: "delete-not-requested",
  },
  { name: "an unknown resource", over: { resourceId: "uid-9" }, verdict: "unknown-resource" },
  { name: "another consumer than the work's", over: { consumer: "mgmt-2" }, verdict: "not-owner" },
  { name: "an older version of the work", over: { resourceVersion: 1 }, verdict: "stale-version" },
  { name: "a newer version than the work's", over: { resourceVersion: 3 }, verdict: "stale-version" },
  {
    name: "an older sequence ID than the accepted one",
    over: { sequenceId: older },
    verdict: "stale-sequence",
  },
  { name: "the sequence ID already accepted", over: { sequenceId: accepted }, verdict: "stale-sequence" },
])("status update: $name → $verdict", ({ over, of = work, verdict }) => {
  const statuses = new StatusStore({ now: () => T0 });
  statuses.offer(update({ sequenceId: accepted, statusHash: "before" }));
  const works = new FakeLister([of].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
  const candidate = update({ ...over, statusHash: "candidate" });
  const decision = acceptStatus(candidate, works, statuses);
  if (verdict === "accepted") {
    expect(decision).toEqual({ verdict: "accepted", work: of, trimmed: [], unordered: false });
    expect(statuses.get("uid-1")?.statusHash).toBe("candidate");
  } else {
    expect(decision).toMatchObject({ verdict: "dropped", reason: verdict });
    expect(statuses.get("uid-1")?.statusHash).toBe("before");
  }
});

describe("a report seeded from what the work shows (after a restart)", () => {
  const works = new FakeLister([work].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
  const seed = { resourceId: "uid-1", consumer: "mgmt-1", resourceVersion: 2, statusHash: "shown" };

  test("gives the resync its hash, and the agent's next report is accepted whatever its sequence", () => {
    const statuses = new StatusStore({ now: () => T0 });
    statuses.seed(seed);
    expect(statuses.statusHash("uid-1")).toBe("shown");
    expect(statuses.get("uid-1")).toMatchObject({ resourceVersion: 2, deleted: false });
    expect(acceptStatus(update({ sequenceId: older, statusHash: "reported" }), works, statuses).verdict).toBe(
      "accepted",
    );
    expect(statuses.statusHash("uid-1")).toBe("reported");
  });

  test("does not replace a report already held: that one is newer than the work shows", () => {
    const statuses = new StatusStore({ now: () => T0 });
    acceptStatus(update({ sequenceId: accepted, statusHash: "reported" }), works, statuses);
    statuses.seed(seed);
    expect(statuses.get("uid-1")).toMatchObject({ statusHash: "reported", sequenceId: accepted });
  });
});

/** A sequence ID stamped at `ms` by an agent's clock. */
const idAt = (ms: number): string => new SnowflakeGenerator(1, () => ms).next();
const MINUTE = 60_000;

test("after the agent's Deleted, a status of the work with a later sequence ID is dropped: Deleted stays", () => {
  const statuses = new StatusStore({ now: () => T0 });
  const works = new FakeLister([deleting].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
  expect(acceptStatus(update({ deleted: true, sequenceId: accepted }), works, statuses).verdict).toBe(
    "accepted",
  );
  expect(acceptStatus(update({ sequenceId: newer }), works, statuses)).toMatchObject({
    verdict: "dropped",
    reason: "stale-sequence",
  });
  expect(statuses.get("uid-1")?.deleted).toBe(true);
});

describe("a Deleted the server did not ask for (a forged or mistaken report on a live work)", () => {
  const forged = (over: Partial<StatusUpdate> = {}): StatusUpdate =>
    update({
      deleted: true,
      status: {
        conditions: [
          {
            type: "Deleted",
            status: "True",
            reason: "ManifestsDeleted",
            message: "The manifests are deleted from the cluster mgmt-1",
            lastTransitionTime: "2030-01-01T00:00:00Z",
          },
        ],
      },
      statusHash: "forged",
      ...over,
    });

  test.each([
    { name: "newer than the last status", sequenceId: newer },
    { name: "far in the future", sequenceId: idAt(Date.parse("2100-01-01T00:00:00Z")) },
    { name: "without a sequence ID", sequenceId: undefined },
  ])("is refused, $name, and the work's later statuses are still taken", ({ sequenceId }) => {
    const statuses = new StatusStore({ now: () => T0 });
    const works = new FakeLister([work].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
    acceptStatus(update({ sequenceId: older, statusHash: "real-1" }), works, statuses);
    const refused = acceptStatus(forged({ sequenceId }), works, statuses);
    expect(refused).toMatchObject({ verdict: "dropped", reason: "delete-not-requested" });
    expect(refused.verdict === "dropped" && refused.why).toMatch(/uid-1.*not being deleted/);
    expect(statuses.get("uid-1")).toMatchObject({ statusHash: "real-1", deleted: false, sequenceId: older });
    const later = acceptStatus(update({ sequenceId: accepted, statusHash: "real-2" }), works, statuses);
    expect(later.verdict).toBe("accepted");
    expect(statuses.get("uid-1")).toMatchObject({ statusHash: "real-2", deleted: false });
  });

  test("is refused before any status of the work, which is then taken", () => {
    const statuses = new StatusStore({ now: () => T0 });
    const works = new FakeLister([work].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
    expect(acceptStatus(forged(), works, statuses)).toMatchObject({ reason: "delete-not-requested" });
    expect(statuses.get("uid-1")).toBeUndefined();
    expect(acceptStatus(update({ sequenceId: older }), works, statuses).verdict).toBe("accepted");
  });

  test("once the work is deleted, the same report confirms the deletion", () => {
    const statuses = new StatusStore({ now: () => T0 });
    const works = new FakeLister([deleting].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
    expect(acceptStatus(forged(), works, statuses).verdict).toBe("accepted");
    expect(statuses.get("uid-1")?.deleted).toBe(true);
  });
});

describe("sequence IDs are bounded by the server's clock and recover", () => {
  function offerAll(...updates: StatusUpdate[]) {
    const statuses = new StatusStore({ now: () => T0 });
    const works = new FakeLister(
      [{ ...work, metadata: { ...work.metadata, generation: 2 } }].map(summariseWorkSpec),
      {
        [UID_INDEX]: uidIndexer,
      },
    );
    const verdicts = updates.map((u) => {
      const d = acceptStatus(u, works, statuses);
      return d.verdict === "accepted" ? "accepted" : d.reason;
    });
    return { verdicts, statuses };
  }

  test("one status from the year 2100 does not order what follows: later real statuses still land", () => {
    const { verdicts, statuses } = offerAll(
      update({ sequenceId: idAt(T0 - 1000), statusHash: "real-1" }),
      update({ sequenceId: idAt(Date.parse("2100-01-01T00:00:00Z")), statusHash: "poison" }),
      update({ sequenceId: idAt(T0), statusHash: "real-2" }),
    );
    expect(verdicts).toEqual(["accepted", "accepted", "accepted"]);
    expect(statuses.get("uid-1")?.statusHash).toBe("real-2");
  });

  // The year-2100 case above also recovers through the set-back rule below; these pin the bound
  // itself, which keeps such an ID from ordering anything (and is counted as future-sequence).
  test.each([
    { name: "4 min ahead of the server: accepted with its ID", aheadMs: 4 * MINUTE, unordered: false },
    { name: "6 min ahead of the server: its content kept, its ID not", aheadMs: 6 * MINUTE, unordered: true },
  ])("an agent clock $name", ({ aheadMs, unordered }) => {
    const statuses = new StatusStore({ now: () => T0 });
    const works = new FakeLister([work].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
    const sequenceId = idAt(T0 + aheadMs);
    const decision = acceptStatus(update({ sequenceId, statusHash: "ahead" }), works, statuses);
    expect(decision).toMatchObject({ verdict: "accepted", unordered });
    expect(statuses.get("uid-1")).toMatchObject({ statusHash: "ahead" });
    expect(statuses.get("uid-1")?.sequenceId).toBe(unordered ? undefined : sequenceId);
  });

  test("an agent whose clock runs an hour ahead is still heard, status after status", () => {
    const { verdicts, statuses } = offerAll(
      update({ sequenceId: idAt(T0 + 60 * MINUTE), statusHash: "first" }),
      update({ sequenceId: idAt(T0 + 60 * MINUTE + 1000), statusHash: "second" }),
    );
    expect(verdicts).toEqual(["accepted", "accepted"]);
    expect(statuses.get("uid-1")?.statusHash).toBe("second");
  });

  test.each([
    {
      name: "1 s behind the accepted one (late delivery): dropped",
      behindMs: 1000,
      verdict: "stale-sequence",
    },
    { name: "4 min behind: still a late delivery, dropped", behindMs: 4 * MINUTE, verdict: "stale-sequence" },
    {
      name: "10 min behind (the agent's clock was set back): accepted",
      behindMs: 10 * MINUTE,
      verdict: "accepted",
    },
  ])("a status of the same generation $name", ({ behindMs, verdict }) => {
    const { verdicts } = offerAll(
      update({ sequenceId: idAt(T0 + 4 * MINUTE) }),
      update({ sequenceId: idAt(T0 + 4 * MINUTE - behindMs) }),
    );
    expect(verdicts).toEqual(["accepted", verdict]);
  });

  test("an ID of another snowflake node is kept unordered: neither node's next status is blocked", () => {
    const otherNode = new SnowflakeGenerator(7, () => T0 + 1000).next();
    const { verdicts, statuses } = offerAll(
      update({ sequenceId: idAt(T0 - 1000), statusHash: "node-1" }),
      update({ sequenceId: otherNode, statusHash: "node-7" }),
      update({ sequenceId: idAt(T0 - 500), statusHash: "node-1-again" }),
    );
    expect(verdicts).toEqual(["accepted", "accepted", "accepted"]);
    expect(statuses.get("uid-1")?.statusHash).toBe("node-1-again");
  });

  test("a status of a newer generation is accepted whatever the sequence of the older one", () => {
    const statuses = new StatusStore({ now: () => T0 });
    statuses.offer(update({ resourceVersion: 1, sequenceId: idAt(T0 + 4 * MINUTE) }));
    const works = new FakeLister([work].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
    const decision = acceptStatus(update({ resourceVersion: 2, sequenceId: idAt(T0) }), works, statuses);
    expect(decision.verdict).toBe("accepted");
    expect(statuses.get("uid-1")?.resourceVersion).toBe(2);
  });
});

const condition = (over: Partial<WorkCondition> = {}): WorkCondition => ({
  type: "Applied",
  status: "True",
  reason: "AppliedManifestWorkComplete",
  message: "ok",
  lastTransitionTime: "2030-01-01T00:00:00Z",
  ...over,
});

describe("a status is cut to the ManifestWork schema before it is stored", () => {
  const oneManifestWork: ManifestWork = {
    ...work,
    spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } }] } },
  };
  function accept(status: ManifestWorkStatus) {
    const statuses = new StatusStore({ now: () => T0 });
    const works = new FakeLister([oneManifestWork].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
    const decision = acceptStatus(update({ status }), works, statuses);
    return { decision, stored: statuses.get("uid-1") };
  }

  test("a 500 KiB message is cut to the CRD's 32768 characters", () => {
    const { decision, stored } = accept({ conditions: [condition({ message: "m".repeat(500 * 1024) })] });
    expect(decision).toMatchObject({ verdict: "accepted", trimmed: ["message-truncated"] });
    const message = stored?.status?.conditions?.[0]?.message ?? "";
    expect([...message]).toHaveLength(MAX_CONDITION_MESSAGE_CHARS);
    expect(message).toMatch(/\(truncated\)$/);
    expect(stored?.refusal).toBeUndefined();
  });

  test("conditions that break the schema, duplicates and statuses of manifests the work lacks are left out", () => {
    const manifest = (ordinal: number) => ({ resourceMeta: { ordinal }, conditions: [condition()] });
    const { decision, stored } = accept({
      conditions: [
        condition(),
        condition({ message: "again" }),
        condition({ type: "Bad Type" }),
        condition({ type: "Available", status: "Maybe" as never }),
        condition({ type: "Degraded", reason: "" }),
        condition({ type: "Complete", lastTransitionTime: "yesterday" }),
        { ...condition({ type: "Progressing" }), extra: "dropped" } as WorkCondition,
      ],
      resourceStatus: { manifests: [manifest(0), manifest(1)] },
    });
    expect(decision).toMatchObject({
      verdict: "accepted",
      trimmed: [
        "duplicate-condition",
        "invalid-condition",
        "invalid-condition",
        "invalid-condition",
        "invalid-condition",
        "excess-manifests",
      ],
    });
    expect(stored?.status?.conditions?.map((c) => c.type)).toEqual(["Applied", "Progressing"]);
    expect(stored?.status?.conditions?.[1]).not.toHaveProperty("extra");
    expect(stored?.status?.resourceStatus?.manifests).toHaveLength(1);
  });

  test("feedback values that break the schema are left out", () => {
    const { decision, stored } = accept({
      conditions: [],
      resourceStatus: {
        manifests: [
          {
            resourceMeta: { ordinal: 0 },
            conditions: [],
            statusFeedback: {
              values: [
                { name: "replicas", fieldValue: { type: "Integer", integer: 3 } },
                { name: "replicas", fieldValue: { type: "Integer", integer: 4 } },
                { name: "phase", fieldValue: { type: "String", string: 7 as never } },
                { name: "other", fieldValue: { type: "Float" as never } },
              ],
            },
          },
        ],
      },
    });
    expect(decision).toMatchObject({ trimmed: ["invalid-feedback", "invalid-feedback", "invalid-feedback"] });
    expect(stored?.status?.resourceStatus?.manifests?.[0]?.statusFeedback?.values).toEqual([
      { name: "replicas", fieldValue: { type: "Integer", integer: 3 } },
    ]);
  });

  test("a status over the size limit even when cut is kept as refused, with its sequence", () => {
    const { decision, stored } = accept({
      conditions: [condition()],
      resourceStatus: {
        manifests: [
          {
            resourceMeta: { ordinal: 0 },
            conditions: [],
            statusFeedback: {
              values: [
                {
                  name: "raw",
                  fieldValue: { type: "JsonRaw", jsonRaw: JSON.stringify("x".repeat(MAX_STATUS_BYTES)) },
                },
              ],
            },
          },
        ],
      },
    });
    expect(decision).toMatchObject({ verdict: "accepted", refusal: { reason: STATUS_TOO_LARGE } });
    expect(stored?.refusal?.message).toMatch(/over the 524288-byte limit/);
    expect(stored?.sequenceId).toBe(newer);
  });
});
