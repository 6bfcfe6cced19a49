import { expect, test } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import type { StatusUpdate } from "../cloudevents/codec/manifestbundle.ts";
import { SnowflakeGenerator } from "../cloudevents/snowflake.ts";
import { StatusStore } from "../cloudevents/store/status.ts";
import { UID_INDEX, acceptStatus, uidIndexer } from "./accept.ts";

const work: ManifestWork = { metadata: { name: "w1", namespace: "mgmt-1", uid: "uid-1", generation: 2 } };
const ids = new SnowflakeGenerator(1, () => Date.parse("2030-01-01T00:00:00Z"));
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
    name: "a deletion confirmation, whatever its version",
    over: { deleted: true, resourceVersion: 0 },
    verdict: "accepted",
  },
  {
    name: "a deletion confirmation with an older sequence",
    over: { deleted: true, sequenceId: older },
    verdict: "accepted",
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
])("status update: $name → $verdict", ({ over, verdict }) => {
  const statuses = new StatusStore();
  statuses.offer(update({ sequenceId: accepted, statusHash: "before" }));
  const works = new FakeLister<ManifestWork>([work], { [UID_INDEX]: uidIndexer });
  const candidate = update({ ...over, statusHash: "candidate" });
  const decision = acceptStatus(candidate, works, statuses);
  if (verdict === "accepted") {
    expect(decision).toEqual({ verdict: "accepted", work });
    expect(statuses.get("uid-1")?.statusHash).toBe("candidate");
  } else {
    expect(decision).toMatchObject({ verdict: "dropped", reason: verdict });
    expect(statuses.get("uid-1")?.statusHash).toBe("before");
  }
});
