import { describe, expect, it } from "vitest";
import { MANIFEST_WORK_NAME_ANNOTATION, type ReceivedWork } from "../cloudevents/codec/manifestbundle.ts";
import { WorkStore } from "../cloudevents/store/works.ts";
import { metricsRegistry } from "../runtime/metrics.ts";
import {
  CONSUMER,
  HUB,
  UID,
  condition,
  configMap,
  configMapType,
  received,
  setup,
  strategyFor,
  type WorkSpec,
} from "../../test/support/maestro-agent.ts";
import { ADOPTED_METRIC } from "./adopt.ts";
import { AppliedManifestWorkResource, type AppliedManifestWork } from "./appliedwork.ts";
import { manifestHolds } from "./drift.ts";

const NEWER = "uid-2";
const SPEC: WorkSpec = { manifests: [configMap("cm-1"), configMap("cm-2", { other: "x" })] };

/** The same ManifestWork (mgmt-1/hc) written again under a new resource ID, as a restored region does. */
function newerCopy(spec: WorkSpec = SPEC): ReceivedWork {
  return {
    ...received(spec),
    uid: NEWER,
    name: NEWER,
    metadata: {
      name: NEWER,
      namespace: CONSUMER,
      creationTimestamp: "2030-02-01T00:00:00Z",
      annotations: { [MANIFEST_WORK_NAME_ANNOTATION]: "hc" },
    },
  };
}

const olderMetadata = {
  name: UID,
  namespace: CONSUMER,
  creationTimestamp: "2030-01-01T00:00:00Z",
  annotations: { [MANIFEST_WORK_NAME_ANNOTATION]: "hc" },
};

async function adoptedCount(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(ADOPTED_METRIC)?.get();
  return metric?.values.find((v) => v.labels["consumer"] === CONSUMER)?.value ?? 0;
}

/** The older copy, uid-1, applied (unless told otherwise) on a fresh fake cluster. */
async function withOlderApplied(spec: WorkSpec = SPEC, apply = true, opts: Parameters<typeof setup>[3] = {}) {
  const t = setup(spec, undefined, undefined, opts);
  t.store.get(UID)!.metadata = olderMetadata;
  if (apply) await t.reconcile();
  return t;
}

const recordOf = (t: ReturnType<typeof setup>, uid: string) =>
  t.kube.peek<AppliedManifestWork>(AppliedManifestWorkResource, `${HUB}-${uid}`);

/** What the reconcile sent for the work's objects, but reads. */
const objectWrites = (t: ReturnType<typeof setup>) =>
  t.kube.callsOn("configmaps").filter((c) => !c.startsWith("find "));

describe("a newer copy of a work adopts what the older applied", () => {
  it("takes over the objects without a write to them, then retires the older copy, which deletes nothing", async () => {
    const t = await withOlderApplied();
    const before = ["cm-1", "cm-2"].map((n) => t.kube.peek(configMapType, n, "ns")?.metadata);
    const olderVersions = t.store.get(UID)?.appliedVersions;
    const adopted = await adoptedCount();
    t.kube.calls.length = 0;

    t.store.upsert(newerCopy());
    await t.reconcileWork(NEWER);
    // Read, never written.
    expect(t.kube.callsOn("configmaps")).toEqual(["find ns/cm-1", "find ns/cm-2"]);
    expect(t.store.get(NEWER)).toMatchObject({ appliedGeneration: 1, appliedVersions: olderVersions });
    expect(recordOf(t, NEWER)?.status?.appliedResources).toEqual(recordOf(t, UID)?.status?.appliedResources);
    expect(recordOf(t, NEWER)?.metadata.annotations?.["hcp.aro.dev/manifestwork"]).toBe(`${CONSUMER}/hc`);
    expect(condition(t.publisher.last, "Applied")).toMatchObject({ status: "True", observedGeneration: 1 });
    expect(condition(t.publisher.last, "Available")).toMatchObject({ status: "True" });
    expect(await adoptedCount()).toBe(adopted + 1);
    expect(t.queued).toEqual([UID]);

    // The older copy's deletion: every object is the newer's too, so only its record goes.
    await t.reconcileWork(UID);
    expect(objectWrites(t)).toEqual([]);
    expect(recordOf(t, UID)).toBeUndefined();
    expect(t.store.get(UID)).toBeUndefined();
    expect(["cm-1", "cm-2"].map((n) => t.kube.peek(configMapType, n, "ns")?.metadata)).toEqual(before);

    // The newer work owns them now: at its drift check, nothing changed, nothing is applied.
    t.clock.ms += 300_001;
    await t.reconcileWork(NEWER);
    expect(objectWrites(t)).toEqual([]);
  });

  it("adopts an object someone else changed beside the manifest's fields (a reporter's annotation): they still hold", async () => {
    const t = await withOlderApplied();
    const reported = { name: "cm-2", namespace: "ns", annotations: { "backups.example/last": "ok" } };
    await t.kube.apply(configMapType, { metadata: reported }, { fieldManager: "reporter" });
    const now = t.kube.peek(configMapType, "cm-2", "ns")!;
    t.kube.calls.length = 0;
    t.store.upsert(newerCopy());
    await t.reconcileWork(NEWER);
    // The moved object is read again from the apiserver for its fields; nothing is written.
    expect(t.kube.callsOn("configmaps")).toEqual(["find ns/cm-1", "find ns/cm-2", "find ns/cm-2"]);
    // Its change mark is the object as it is now, as after an apply that changed nothing.
    expect(t.store.get(NEWER)?.appliedVersions?.[1]).toBe(now.metadata.resourceVersion);
    expect(t.kube.peek(configMapType, "cm-2", "ns")).toEqual(now);
  });

  it("adopts under another deleteOption (it changes no object), which the newer record carries", async () => {
    const t = await withOlderApplied();
    t.kube.calls.length = 0;
    t.store.upsert(newerCopy({ ...SPEC, deleteOption: { propagationPolicy: "Orphan" } }));
    await t.reconcileWork(NEWER);
    expect(objectWrites(t)).toEqual([]);
    expect(recordOf(t, NEWER)?.metadata.annotations?.["hcp.aro.dev/delete-option"]).toBe(
      JSON.stringify({ propagationPolicy: "Orphan" }),
    );
  });

  it.each([
    {
      name: "a manifest differs",
      newer: { manifests: [configMap("cm-1"), configMap("cm-2", { other: "y" })] },
    },
    {
      name: "a manifest is added",
      newer: { manifests: [...SPEC.manifests!, configMap("cm-3")] },
    },
    {
      name: "the manifests' configs differ (another update strategy)",
      newer: { ...SPEC, manifestConfigs: [strategyFor("cm-1", { type: "ServerSideApply" })] },
    },
  ])("applies in full when $name", async ({ newer }) => {
    const t = await withOlderApplied();
    t.kube.calls.length = 0;
    t.store.upsert(newerCopy(newer));
    await t.reconcileWork(NEWER);
    expect(objectWrites(t)).toContain("apply ns/cm-1");
    expect(t.store.get(NEWER)?.appliedGeneration).toBe(1);
    expect(t.queued).toEqual([UID]);
  });

  it.each([
    {
      name: "a field the manifest sets changed since the older copy's apply",
      change: async (t: ReturnType<typeof setup>) => {
        const cm = t.kube.peek(configMapType, "cm-2", "ns")!;
        await t.kube.apply(configMapType, { ...cm, data: { other: "z" } }, { fieldManager: "someone" });
      },
    },
    {
      name: "an object is missing",
      change: async (t: ReturnType<typeof setup>) => {
        await t.kube.delete(configMapType, { name: "cm-2", namespace: "ns" });
      },
    },
    {
      name: "the older record lists another uid for an object (it was recreated)",
      change: async (t: ReturnType<typeof setup>) => {
        const record = recordOf(t, UID)!;
        const resources = record.status!.appliedResources!.map((r) => ({ ...r, uid: `old-${r.uid}` }));
        await t.kube.apply(
          AppliedManifestWorkResource,
          { ...record, status: { appliedResources: resources } },
          {
            fieldManager: "someone",
            subresource: "status",
          },
        );
      },
    },
  ])("applies in full when $name", async ({ change }) => {
    const t = await withOlderApplied();
    await change(t);
    const adopted = await adoptedCount();
    t.kube.calls.length = 0;
    t.store.upsert(newerCopy());
    await t.reconcileWork(NEWER);
    expect(objectWrites(t)).toEqual(["apply ns/cm-1", "apply ns/cm-2"]);
    expect(t.kube.peek(configMapType, "cm-2", "ns")?.["data"]).toEqual({ other: "x" });
    expect(await adoptedCount()).toBe(adopted);
  });

  it("applies in full when the older copy was never applied, and nothing reads its objects first", async () => {
    const t = await withOlderApplied(SPEC, false);
    t.store.upsert(newerCopy());
    await t.reconcileWork(NEWER);
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "apply ns/cm-2"]);
  });

  it("applies in full when the older copy is known only from its record (the agent restarted: no change marks)", async () => {
    const older = await withOlderApplied();
    const store = new WorkStore();
    const t = setup(SPEC, undefined, undefined, { store, kube: older.kube });
    t.store.remove(UID);
    t.kube.calls.length = 0;
    t.store.upsert(newerCopy());
    await t.reconcileWork(NEWER);
    expect(objectWrites(t)).toEqual(["apply ns/cm-1", "apply ns/cm-2"]);
    expect(t.queued).toEqual([UID]);
  });

  it("recovers from a crash after the newer record is written and before the older copy is retired", async () => {
    const first = await withOlderApplied();
    const uids = ["cm-1", "cm-2"].map((n) => first.kube.peek(configMapType, n, "ns")?.metadata.uid);
    first.kube.calls.length = 0;
    first.store.upsert(newerCopy());
    await first.reconcileWork(NEWER);
    expect(objectWrites(first)).toEqual([]);
    expect(recordOf(first, NEWER)).toBeDefined();
    // The crash: the older copy's retirement lived in memory only; both records are on the cluster.
    expect(recordOf(first, UID)).toBeDefined();

    // The restarted agent holds what the source sends again: the newer copy alone, never applied.
    const t = setup(SPEC, undefined, undefined, { store: new WorkStore(), kube: first.kube });
    t.store.remove(UID);
    t.store.upsert(newerCopy());
    await t.reconcileWork(NEWER);
    expect(t.store.get(NEWER)?.appliedGeneration).toBe(1);
    expect(condition(t.publisher.last, "Applied")).toMatchObject({ status: "True", observedGeneration: 1 });
    expect(t.queued).toEqual([UID]);
    await t.reconcileWork(UID);
    expect(recordOf(t, UID)).toBeUndefined();
    expect(recordOf(t, NEWER)?.status?.appliedResources?.map((r) => r.uid)).toEqual(uids);
    expect(["cm-1", "cm-2"].map((n) => t.kube.peek(configMapType, n, "ns")?.metadata.uid)).toEqual(uids);
    expect(t.store.get(UID)).toBeUndefined();
  });
});

describe("manifestHolds: an apply of the manifest would change nothing on the live object", () => {
  const manifest = { kind: "Schedule", metadata: { name: "s" }, spec: { ttl: "1h", hooks: [{ name: "a" }] } };
  it.each([
    { name: "the same fields", live: manifest, holds: true },
    {
      name: "others' fields beside them (status, annotations, defaults)",
      live: {
        ...manifest,
        metadata: { name: "s", annotations: { x: "y" }, generation: 3 },
        spec: { ...manifest.spec, paused: false },
        status: { phase: "Enabled" },
      },
      holds: true,
    },
    {
      name: "a field it sets changed",
      live: { ...manifest, spec: { ...manifest.spec, ttl: "2h" } },
      holds: false,
    },
    {
      name: "a field it sets missing",
      live: { ...manifest, spec: { hooks: [{ name: "a" }] } },
      holds: false,
    },
    {
      name: "a list with an item more",
      live: { ...manifest, spec: { ...manifest.spec, hooks: [{ name: "a" }, { name: "b" }] } },
      holds: false,
    },
    { name: "a scalar where it sets an object", live: { ...manifest, spec: "x" }, holds: false },
  ])("$name: $holds", ({ live, holds }) => {
    expect(manifestHolds(manifest, live)).toBe(holds);
  });
});
