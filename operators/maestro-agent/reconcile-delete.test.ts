/** The agent deletes a work's objects by its deleteOption. */
import { describe, expect, test } from "vitest";
import type { Manifest, ManifestWorkStatus } from "../api/work/v1.ts";
import { PublishRefusedError } from "../cloudevents/client/errors.ts";
import { WorkStore } from "../cloudevents/store/works.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { DEFAULT_ALLOWED_KINDS } from "./apply.ts";
import { AppliedManifestWorkResource, type AppliedManifestWork } from "./appliedwork.ts";
import {
  UID,
  HUB,
  configMapType,
  configMap,
  received,
  setup,
  condition,
} from "../../test/support/maestro-agent.ts";

describe("AgentWorkReconciler: deletion by deleteOption", () => {
  const twoMaps = [configMap("cm-1"), configMap("cm-2")];
  test.each([
    { name: "default (Foreground): every object deleted", deleteOption: undefined, kept: [] },
    {
      name: "Orphan: every object kept",
      deleteOption: { propagationPolicy: "Orphan" as const },
      kept: ["cm-1", "cm-2"],
    },
    {
      name: "SelectivelyOrphan: the named object kept",
      deleteOption: {
        propagationPolicy: "SelectivelyOrphan" as const,
        selectivelyOrphans: { orphaningRules: [{ resource: "configmaps", name: "cm-2", namespace: "ns" }] },
      },
      kept: ["cm-2"],
    },
  ])("$name", async ({ deleteOption, kept }) => {
    const spec = { manifests: twoMaps, ...(deleteOption ? { deleteOption } : {}) };
    const t = setup(spec);
    await t.reconcile();
    t.store.upsert(received(spec, "2030-01-01T00:00:00Z"));
    const deleting = kept.length < 2;
    // Deleting: the objects are asked to go, and the agent looks again until they are gone.
    if (deleting) {
      expect(await t.reconcile()).toEqual({ requeueAfterMs: 1000 });
      expect(condition(t.publisher.last, "Deleting")).toMatchObject({ status: "True" });
      expect(condition(t.publisher.last, "Deleted")).toBeUndefined();
    }
    expect(await t.reconcile()).toEqual({});
    expect(condition(t.publisher.last, "Deleted")).toMatchObject({
      status: "True",
      reason: "ManifestsDeleted",
    });
    const left = ["cm-1", "cm-2"].filter((n) => t.kube.peek(configMapType, n, "ns"));
    expect(left).toEqual(kept);
    expect(t.record()).toBeUndefined();
    expect(t.store.get(UID)).toBeUndefined();
  });

  test("a Namespace is deleted only once the work's other objects are gone", async () => {
    const namespace: Manifest = { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } };
    const spec = { manifests: [namespace, configMap("cm-1")] };
    const t = setup(spec);
    await t.reconcile();
    t.store.upsert(received(spec, "2030-01-01T00:00:00Z"));
    const deletes = () => t.kube.calls.filter((c) => c.verb === "delete").map((c) => c.resource);
    expect(await t.reconcile()).toEqual({ requeueAfterMs: 1000 });
    expect(deletes()).toEqual(["configmaps"]);
    expect(await t.reconcile()).toEqual({ requeueAfterMs: 1000 });
    expect(deletes()).toEqual(["configmaps", "namespaces"]);
    expect(await t.reconcile()).toEqual({});
    expect(condition(t.publisher.last, "Deleted")).toMatchObject({ status: "True" });
  });

  /** cm-2 held by a finalizer: the apiserver still has it, deleting, with the uid the agent applied. */
  const holdDeleting = (t: ReturnType<typeof setup>, name: string): KubeObject => {
    const applied = t.record()?.status?.appliedResources?.find((r) => r.name === name);
    return t.kube.seed(configMapType, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: "ns", uid: applied?.uid, deletionTimestamp: "2030-01-01T00:00:01Z" },
    });
  };

  test("reads its record once, never again reads what is gone, and backs off polling what a finalizer holds", async () => {
    const spec = { manifests: [configMap("cm-1"), configMap("cm-2")] };
    const t = setup(spec);
    await t.reconcile();
    t.store.upsert(received(spec, "2030-01-01T00:00:00Z"));
    const reads = (resource: string, name: string) =>
      t.kube.calls.filter((c) => c.verb === "find" && c.resource === resource && c.name === name).length;
    const recordReads = () => reads("appliedmanifestworks.work.open-cluster-management.io", `${HUB}-${UID}`);
    const before = recordReads();
    expect(await t.reconcile()).toEqual({ requeueAfterMs: 1000 });
    holdDeleting(t, "cm-2");
    // cm-1 is found gone; cm-2 stays, and each look that changes nothing waits twice as long, up to 4 s.
    const waits: Array<number | undefined> = [];
    for (let i = 0; i < 4; i++) waits.push((await t.reconcile()).requeueAfterMs);
    expect(waits).toEqual([1000, 2000, 4000, 4000]);
    expect(reads("configmaps", "cm-1")).toBe(2);
    expect(reads("configmaps", "cm-2")).toBe(5);
    await t.kube.delete(configMapType, { name: "cm-2", namespace: "ns" });
    expect(await t.reconcile()).toEqual({});
    expect(condition(t.publisher.last, "Deleted")).toMatchObject({ status: "True" });
    expect(recordReads() - before).toBe(1);
    expect(t.record()).toBeUndefined();
  });

  test("many deletions polling at once spread their polls within the budget", async () => {
    const t = setup({ manifests: [configMap("cm-1")] }, DEFAULT_ALLOWED_KINDS, [], {
      deletePollsPerSecond: 0.2,
    });
    const other = { ...received({ manifests: [configMap("cm-2")] }), uid: "uid-2", name: "uid-2" };
    t.store.upsert(other);
    await t.reconcile();
    await t.reconcileWork("uid-2");
    const otherRecord = t.kube.peek<AppliedManifestWork>(AppliedManifestWorkResource, `${HUB}-uid-2`);
    t.store.upsert(received({ manifests: [configMap("cm-1")] }, "2030-01-01T00:00:00Z"));
    t.store.upsert({ ...other, deletionTimestamp: "2030-01-01T00:00:00Z" });
    holdDeleting(t, "cm-1");
    const uid2 = otherRecord?.status?.appliedResources?.[0]?.uid;
    t.kube.seed(configMapType, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cm-2", namespace: "ns", uid: uid2, deletionTimestamp: "2030-01-01T00:00:01Z" },
    });
    // Alone, the first waits 1 / 0.2 = 5 s; once two deletions poll, each waits 2 / 0.2 = 10 s.
    expect(await t.reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(await t.reconcileWork("uid-2")).toEqual({ requeueAfterMs: 10_000 });
    expect(await t.reconcile()).toEqual({ requeueAfterMs: 10_000 });
  });

  test("an object a watch shows deleting costs no request, and its disappearance wakes the work", async () => {
    const spec = { manifests: [configMap("cm-1")] };
    const t = setup(spec, DEFAULT_ALLOWED_KINDS, ["configmaps"]);
    await t.reconcile();
    const watch = t.watches.get("configmaps")!;
    watch.synced = true;
    watch.update(t.kube.peek(configMapType, "cm-1", "ns")!);
    t.store.upsert(received(spec, "2030-01-01T00:00:00Z"));
    const requests = () => t.kube.calls.filter((c) => c.resource === "configmaps").length;
    // The first look asks the apiserver (the watch shows no deletion yet) and deletes.
    expect(await t.reconcile()).toEqual({ requeueAfterMs: 30_000 });
    watch.update(holdDeleting(t, "cm-1"));
    const asked = requests();
    expect(await t.reconcile()).toEqual({ requeueAfterMs: 30_000 });
    expect(requests()).toBe(asked);
    expect(condition(t.publisher.last, "Deleting")).toMatchObject({ status: "True" });
    // The finalizer goes: the watch's delete event enqueues the work, which confirms Deleted.
    await t.kube.delete(configMapType, { name: "cm-1", namespace: "ns" });
    t.changed.length = 0;
    watch.remove("ns", "cm-1");
    expect(t.changed).toEqual([UID]);
    expect(await t.reconcile()).toEqual({});
    expect(condition(t.publisher.last, "Deleted")).toMatchObject({ status: "True" });
  });

  test("a watched object the watch has not seen is read from the apiserver, never taken for gone", async () => {
    const spec = { manifests: [configMap("cm-1")] };
    const t = setup(spec, DEFAULT_ALLOWED_KINDS, ["configmaps"]);
    await t.reconcile();
    t.watches.get("configmaps")!.synced = true;
    t.store.upsert(received(spec, "2030-01-01T00:00:00Z"));
    expect(await t.reconcile()).toEqual({ requeueAfterMs: 1000 });
    expect(t.kube.callsOn("configmaps").slice(-2)).toEqual(["find ns/cm-1", "delete ns/cm-1"]);
    expect(await t.reconcile()).toEqual({});
    expect(condition(t.publisher.last, "Deleted")).toMatchObject({ status: "True" });
  });

  test("a deletion that arrives without the spec (after a restart) keeps the recorded deleteOption", async () => {
    // A restarted agent's store holds no tombstone of what the last process removed.
    const restarted = new WorkStore({ maxTombstones: 0 });
    const t = setup({ deleteOption: { propagationPolicy: "Orphan" } }, DEFAULT_ALLOWED_KINDS, [], {
      store: restarted,
    });
    await t.reconcile();
    t.store.remove(UID);
    t.store.upsert({ ...received({}, "2030-01-01T00:00:00Z"), spec: {} });
    expect(await t.reconcile()).toEqual({});
    expect(t.kube.peek(configMapType, "cm-1", "ns")).toBeDefined();
    expect(condition(t.publisher.last, "Deleted")).toMatchObject({ status: "True" });
  });

  test("Deleted must reach the source: without a broker the reconcile fails and the work stays", async () => {
    const t = setup();
    await t.reconcile();
    t.store.upsert(received({}, "2030-01-01T00:00:00Z"));
    await t.reconcile();
    t.publisher.refusal = new PublishRefusedError("not-connected", "not connected");
    await expect(t.reconcile()).rejects.toThrow(PublishRefusedError);
    expect(t.store.get(UID)).toBeDefined();
  });

  test("while Deleted is on its way, Deleted is the status a status resync would send", async () => {
    const t = setup();
    await t.reconcile();
    t.store.upsert(received({}, "2030-01-01T00:00:00Z"));
    await t.reconcile();
    // What the store says of the work at the moment Deleted is published: a resync answered
    // then reads it, and anything else, ordered after Deleted, would replace it at the source.
    const heldWhilePublishing: Array<ManifestWorkStatus | undefined> = [];
    const publish = t.publisher.publishStatus.bind(t.publisher);
    t.publisher.publishStatus = (work, status) => {
      heldWhilePublishing.push(t.store.get(UID)?.status);
      return publish(work, status);
    };
    expect(await t.reconcile()).toEqual({});
    expect(condition(t.publisher.last, "Deleted")).toMatchObject({ status: "True" });
    expect(heldWhilePublishing).toHaveLength(1);
    expect(condition(heldWhilePublishing[0], "Deleted")).toMatchObject({ status: "True" });
    expect(t.store.get(UID)).toBeUndefined();
  });

  test("a work the store no longer holds is left alone", async () => {
    const t = setup();
    t.store.remove(UID);
    expect(await t.reconcile()).toEqual({});
    expect(t.kube.calls).toEqual([]);
  });
});
