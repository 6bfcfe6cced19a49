import { describe, expect, it } from "vitest";
import {
  CONSUMER,
  HOUR_MS,
  REDELIVER_MS,
  RecordingEvents,
  RecordingPublisher,
  RecordingWriter,
  STATUS_DELAY_MS,
  ServiceWorks,
  T0,
  UID,
  deleting,
  manifestWork,
} from "../../test/support/maestro-server.ts";
import { StatusStore } from "../cloudevents/store/status.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { silentLogger } from "../runtime/logger.ts";
import { ManifestWorkReconciler } from "./reconcile.ts";
import { DELETED_WORKS_CONFIGMAP, DeletedWorks, type DeletedWorksClient } from "./deleted-works.ts";

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** ConfigMaps held in memory; each apply is counted and may be held until released. */
class FakeConfigMaps implements DeletedWorksClient {
  readonly stored = new Map<string, ConfigMap>();
  writes = 0;
  #held: Array<() => void> | undefined;

  hold(): void {
    this.#held = [];
  }
  release(): void {
    for (const r of this.#held?.splice(0) ?? []) r();
    this.#held = undefined;
  }
  ids(namespace: string): string[] {
    const data = this.stored.get(namespace)?.data?.["deleted.json"];
    return Object.keys(JSON.parse(data ?? "{}") as object);
  }
  listAll<T extends KubeObject>(): Promise<{ items: T[]; metadata: object }> {
    return Promise.resolve({ items: [...this.stored.values()] as T[], metadata: {} });
  }
  async apply<T extends KubeObject>(_t: unknown, obj: KubeObject): Promise<T> {
    this.writes++;
    if (this.#held) await new Promise<void>((resolve) => this.#held!.push(resolve));
    this.stored.set(obj.metadata.namespace ?? "", obj);
    return obj as T;
  }
}

const uid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

describe("DeletedWorks", () => {
  it("persists each unconfirmed deletion per consumer and reads it back after a restart", async () => {
    const client = new FakeConfigMaps();
    const first = new DeletedWorks({ client });
    await first.record("mgmt-1", uid(1));
    await first.record("mgmt-2", uid(2));
    expect(client.stored.get("mgmt-1")?.metadata.name).toBe(DELETED_WORKS_CONFIGMAP);

    const restarted = new DeletedWorks({ client });
    expect(restarted.has("mgmt-1", uid(1))).toBe(false);
    await restarted.load();
    expect(restarted.has("mgmt-1", uid(1))).toBe(true);
    expect(restarted.has("mgmt-2", uid(1))).toBe(false);
    await restarted.forget("mgmt-1", uid(1));
    expect(client.ids("mgmt-1")).toEqual([]);
  });

  it("is bounded by age and count, the oldest first", async () => {
    let now = 0;
    const client = new FakeConfigMaps();
    const deleted = new DeletedWorks({ client, maxAgeMs: 1000, maxPerConsumer: 2, now: () => now });
    for (const n of [1, 2, 3]) {
      now = n * 100;
      await deleted.record("mgmt-1", uid(n));
    }
    expect(client.ids("mgmt-1")).toEqual([uid(2), uid(3)]);
    now = 1250;
    expect(deleted.has("mgmt-1", uid(2))).toBe(false);
    expect(deleted.has("mgmt-1", uid(3))).toBe(true);
  });

  it("writes what is recorded while a write is in flight in one more write, and resolves only once it is written", async () => {
    const client = new FakeConfigMaps();
    const deleted = new DeletedWorks({ client });
    client.hold();
    const first = deleted.record("mgmt-1", uid(1));
    const later = [2, 3, 4].map((n) => deleted.record("mgmt-1", uid(n)));
    let settled = false;
    void Promise.all(later).then(() => (settled = true));
    client.release();
    await first;
    await Promise.all(later);
    expect(settled).toBe(true);
    expect(client.writes).toBe(2);
    expect(client.ids("mgmt-1")).toEqual([1, 2, 3, 4].map(uid));
  });

  it("reads a broken record as far as it makes sense", async () => {
    const client = new FakeConfigMaps();
    client.stored.set("mgmt-1", {
      metadata: { name: DELETED_WORKS_CONFIGMAP, namespace: "mgmt-1" },
      data: { "deleted.json": JSON.stringify({ [uid(1)]: "2030-01-01T00:00:00Z", [uid(2)]: 5 }) },
    });
    client.stored.set("mgmt-2", {
      metadata: { name: DELETED_WORKS_CONFIGMAP, namespace: "mgmt-2" },
      data: { "deleted.json": "not json" },
    });
    const deleted = new DeletedWorks({ client, now: () => Date.parse("2030-01-02T00:00:00Z") });
    await deleted.load();
    expect(deleted.has("mgmt-1", uid(1))).toBe(true);
    expect(deleted.has("mgmt-1", uid(2))).toBe(false);
    expect(deleted.count("mgmt-2")).toBe(0);
  });
});

describe("ManifestWorkReconciler: a deletion given up on is remembered first", () => {
  const reconcilerWith = (deletedWorks: Pick<DeletedWorks, "record">, writer: RecordingWriter) => {
    const works = new ServiceWorks([deleting(manifestWork(), 0)]);
    const clock = { ms: T0 };
    const reconciler = new ManifestWorkReconciler({
      ...works.deps(),
      client: new RecordingPublisher(),
      statuses: new StatusStore(),
      applier: writer,
      events: new RecordingEvents(),
      staleDeleteMs: HOUR_MS,
      redeliverAfterMs: REDELIVER_MS,
      publishedStatusDelayMs: STATUS_DELAY_MS,
      deletedWorks,
      now: () => clock.ms,
    });
    const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
    return {
      clock,
      reconcile: () => reconciler.reconcile(ctx, { cluster: "service", namespace: CONSUMER, name: "w1" }),
    };
  };

  it("records the ID before the finalizer goes, and keeps the finalizer while it cannot", async () => {
    const recorded: string[] = [];
    let failing = true;
    const writer = new RecordingWriter();
    const t = reconcilerWith(
      {
        record: (consumer, id) => {
          if (failing) return Promise.reject(new Error("apiserver away"));
          recorded.push(`${consumer}/${id}`);
          return Promise.resolve();
        },
      },
      writer,
    );
    await t.reconcile();
    expect(recorded).toEqual([]);
    t.clock.ms += HOUR_MS + 1;
    await expect(t.reconcile()).rejects.toThrow("apiserver away");
    expect(writer.ops).not.toContain("removeFinalizer");
    failing = false;
    await t.reconcile();
    expect(recorded).toEqual([`${CONSUMER}/${UID}`]);
    expect(writer.ops).toContain("removeFinalizer");
  });
});
