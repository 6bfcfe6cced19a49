import { describe, expect, it } from "vitest";
import type { ReceivedWork } from "../codec/manifestbundle.ts";
import { WorkStore } from "./works.ts";

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
