import { describe, expect, it } from "vitest";
import type { ReceivedWork } from "../codec/manifestbundle.ts";
import { MANIFEST_WORK_NAME_ANNOTATION } from "../codec/manifestbundle.ts";
import { WorkStore, manifestWorkName } from "./works.ts";

const received = (generation: number, extra: Partial<ReceivedWork> = {}): ReceivedWork => ({
  uid: "r1",
  name: "r1",
  consumer: "mgmt-1",
  generation,
  originalSource: "maestro",
  metadata: {},
  spec: {
    workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `g${generation}` } }] },
  },
  ...extra,
});

describe("WorkStore", () => {
  it("drops older versions, takes equal ones again and keeps computed status", () => {
    const store = new WorkStore();
    expect(store.upsert(received(2))).toBe("added");
    store.update("r1", { statusHash: "h", appliedGeneration: 2 });
    expect(store.upsert(received(1))).toBe("stale");
    expect(store.upsert(received(2))).toBe("updated");
    expect(store.upsert(received(3))).toBe("updated");
    expect(store.get("r1")).toMatchObject({ generation: 3, statusHash: "h", appliedGeneration: 2 });
    expect(store.versions()).toEqual([{ resourceID: "r1", resourceVersion: 3 }]);
  });

  it("makes a deletion final, even for a work it never saw", () => {
    const store = new WorkStore();
    expect(store.upsert(received(4, { deletionTimestamp: "t", spec: {} }))).toBe("deleting");
    expect(store.upsert(received(5))).toBe("stale");
    expect(store.get("r1")?.deletionTimestamp).toBe("t");
    store.remove("r1");
    expect(store.list()).toEqual([]);
  });

  it("drops an update for a work it removed (delivered late or twice), but takes its deletion again", () => {
    let now = 0;
    const store = new WorkStore({ tombstoneMs: 1000, now: () => now });
    expect(store.upsert(received(2))).toBe("added");
    expect(store.upsert(received(3, { deletionTimestamp: "t", spec: {} }))).toBe("deleting");
    store.remove("r1");
    expect(store.upsert(received(2))).toBe("removed");
    expect(store.list()).toEqual([]);
    // The source asks again (it never heard the confirmation): the agent must confirm again.
    expect(store.upsert(received(3, { deletionTimestamp: "t", spec: {} }))).toBe("deleting");
    store.remove("r1");
    now = 1001;
    expect(store.upsert(received(2))).toBe("added");
  });

  it("keeps at most maxTombstones, dropping the oldest", () => {
    const store = new WorkStore({ maxTombstones: 2 });
    for (const uid of ["a", "b", "c"]) {
      store.upsert(received(1, { uid, name: uid }));
      store.remove(uid);
    }
    expect(store.upsert(received(1, { uid: "a", name: "a" }))).toBe("added");
    expect(store.upsert(received(1, { uid: "c", name: "c" }))).toBe("removed");
  });
});

/** A copy of the ManifestWork mgmt-1/`name`, sent under resource ID `uid`, created at `created`. */
const copyOf = (name: string, uid: string, created: string): ReceivedWork =>
  received(1, {
    uid,
    name: uid,
    metadata: {
      name: uid,
      namespace: "mgmt-1",
      creationTimestamp: created,
      annotations: { [MANIFEST_WORK_NAME_ANNOTATION]: name },
    },
  });

describe("WorkStore: a newer work of the same ManifestWork name supersedes an older one", () => {
  it("finds the older copies of the same namespace and name, not newer ones, others or deleting ones", () => {
    const store = new WorkStore();
    const old = copyOf("hc", "old", "2026-01-01T00:00:00Z");
    const current = copyOf("hc", "new", "2026-02-01T00:00:00Z");
    store.upsert(old);
    store.upsert(current);
    store.upsert(copyOf("np", "other", "2026-01-01T00:00:00Z"));
    store.upsert({ ...copyOf("hc", "gone", "2026-01-01T00:00:00Z"), deletionTimestamp: "t", spec: {} });
    store.upsert(received(1, { uid: "unnamed", metadata: { namespace: "mgmt-1" } }));
    expect(manifestWorkName(store.get("new")!)).toBe("mgmt-1/hc");
    expect(store.supersededBy(store.get("new")!).map((w) => w.uid)).toEqual(["old"]);
    // The older copy never supersedes the newer, whichever is applied last.
    expect(store.supersededBy(store.get("old")!)).toEqual([]);
    // A work whose source did not say its name supersedes nothing and is never superseded.
    expect(store.supersededBy(store.get("unnamed")!)).toEqual([]);
  });

  it("retires a held work or one known only from the cluster's records, without confirming to the source", () => {
    const store = new WorkStore();
    store.upsert(copyOf("hc", "old", "2026-01-01T00:00:00Z"));
    store.retire("old", "mgmt-1", "2026-03-01T00:00:00Z");
    store.retire("recorded", "mgmt-1", "2026-03-01T00:00:00Z");
    expect(store.get("old")).toMatchObject({ retired: true, deletionTimestamp: "2026-03-01T00:00:00Z" });
    expect(store.get("recorded")).toMatchObject({ retired: true, name: "recorded", generation: 0 });
    // Retired works are no longer live: nothing supersedes them again, and an update is stale.
    expect(store.supersededBy(copyOf("hc", "newer", "2026-04-01T00:00:00Z"))).toEqual([]);
    expect(store.upsert(copyOf("hc", "old", "2026-01-01T00:00:00Z"))).toBe("stale");
    // The source asks for the deletion itself after all: it waits for the confirmation.
    expect(store.upsert(received(1, { uid: "old", deletionTimestamp: "t", spec: {} }))).toBe("deleting");
    expect(store.get("old")?.retired).toBe(false);
  });

  it("leaves a work the source is deleting to be confirmed as usual", () => {
    const store = new WorkStore();
    store.upsert({ ...copyOf("hc", "old", "2026-01-01T00:00:00Z"), deletionTimestamp: "t", spec: {} });
    store.retire("old", "mgmt-1", "2026-03-01T00:00:00Z");
    expect(store.get("old")).toMatchObject({ deletionTimestamp: "t" });
    expect(store.get("old")?.retired).toBeUndefined();
  });
});
