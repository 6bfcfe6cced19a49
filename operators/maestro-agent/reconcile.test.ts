import { describe, expect, test } from "vitest";
import { RecordingKube } from "../../test/support/recording-kube.ts";
import type {
  DeleteOption,
  Manifest,
  ManifestConfigOption,
  ManifestWorkStatus,
  UpdateStrategy,
  WorkCondition,
} from "../api/work/v1.ts";
import { PublishRefusedError } from "../cloudevents/client/errors.ts";
import type { AgentWork } from "../cloudevents/store/works.ts";
import { WorkStore } from "../cloudevents/store/works.ts";
import type { ReconcileContext, Result } from "../runtime/controller.ts";
import { KubeApiError, type KubeObject, type ResourceType } from "../runtime/kube.ts";
import { silentLogger } from "../runtime/logger.ts";
import { DEFAULT_ALLOWED_KINDS, DEFAULT_FIELD_MANAGER, KindAllowList, type KindMapper } from "./apply.ts";
import { AppliedManifestWorkResource, AppliedWorks, type AppliedManifestWork } from "./appliedwork.ts";
import { AppliedObjects, type ObjectWatch } from "./objects.ts";
import { AgentWorkReconciler, type StatusPublisher } from "./reconcile.ts";
import { KindNotFoundError } from "./restmapper.ts";

const CONSUMER = "mgmt-1";
const UID = "uid-1";
const HUB = "hub";
const AGENT_ID = `${CONSUMER}-work-agent`;
const STATUS_SYNC_MS = 10_000;
const REAPPLY_MS = 300_000;
const T0 = Date.parse("2030-01-01T00:00:00Z");

const types: Record<string, ResourceType> = {
  "v1/ConfigMap": { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  "v1/Secret": { group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  "v1/Namespace": { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
  "apps/v1/Deployment": {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    namespaced: true,
  },
};
const configMapType = types["v1/ConfigMap"]!;

/** The discovery of a cluster serving the core kinds above and apps/v1 Deployments. */
const mapper: KindMapper = {
  map(apiVersion, kind) {
    const type = types[`${apiVersion}/${kind}`];
    return type ? Promise.resolve(type) : Promise.reject(new KindNotFoundError(apiVersion, kind));
  },
};

function configMap(name: string, data: Record<string, string> = { key: "value" }): Manifest {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" }, data };
}

function strategyFor(name: string, updateStrategy: UpdateStrategy): ManifestConfigOption {
  return { resourceIdentifier: { resource: "configmaps", name, namespace: "ns" }, updateStrategy };
}

interface WorkSpec {
  generation?: number;
  manifests?: Manifest[];
  manifestConfigs?: ManifestConfigOption[];
  deleteOption?: DeleteOption;
}

function received(spec: WorkSpec, deletionTimestamp?: string) {
  return {
    uid: UID,
    name: UID,
    consumer: CONSUMER,
    generation: spec.generation ?? 1,
    originalSource: "maestro",
    metadata: {},
    ...(deletionTimestamp ? { deletionTimestamp } : {}),
    spec: {
      workload: { manifests: spec.manifests ?? [configMap("cm-1")] },
      ...(spec.manifestConfigs ? { manifestConfigs: spec.manifestConfigs } : {}),
      ...(spec.deleteOption ? { deleteOption: spec.deleteOption } : {}),
    },
  };
}

class RecordingPublisher implements StatusPublisher {
  readonly published: ManifestWorkStatus[] = [];
  refusal: Error | undefined;

  publishStatus(_work: AgentWork, status: ManifestWorkStatus): Promise<string> {
    if (this.refusal) return Promise.reject(this.refusal);
    this.published.push(status);
    return Promise.resolve(`hash-${this.published.length}`);
  }

  get last(): ManifestWorkStatus | undefined {
    return this.published.at(-1);
  }
}

/** A watch whose cache and sync state the test sets, and whose events it sends. */
class FakeWatch implements ObjectWatch {
  readonly objects = new Map<string, KubeObject>();
  synced = false;
  readonly #handlers: Parameters<ObjectWatch["addEventHandler"]>[0][] = [];
  hasSynced(): boolean {
    return this.synced;
  }
  get(namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }
  list(): KubeObject[] {
    return [...this.objects.values()];
  }
  addEventHandler(h: Parameters<ObjectWatch["addEventHandler"]>[0]): void {
    this.#handlers.push(h);
  }
  run(): Promise<void> {
    return Promise.resolve();
  }
  /** The object's deletion, delivered as a delete event. */
  remove(namespace: string, name: string): void {
    const obj = this.objects.get(`${namespace}/${name}`);
    if (!obj) return;
    this.objects.delete(`${namespace}/${name}`);
    for (const h of this.#handlers) h.onDelete?.(obj);
  }

  /** The object as the apiserver now has it, delivered as an update. */
  update(obj: KubeObject): void {
    const key = `${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`;
    const old = this.objects.get(key) ?? obj;
    this.objects.set(key, obj);
    for (const h of this.#handlers) h.onUpdate?.(old, obj);
  }
}

function setup(
  spec: WorkSpec = {},
  allowed: readonly string[] = DEFAULT_ALLOWED_KINDS,
  watched: readonly string[] = [],
  {
    store = new WorkStore(),
    deletePollsPerSecond,
  }: { store?: WorkStore; deletePollsPerSecond?: number } = {},
) {
  const kube = new RecordingKube();
  store.upsert(received(spec));
  const publisher = new RecordingPublisher();
  const clock = { ms: T0 };
  const applied = new AppliedWorks({
    kube,
    applier: {
      apply: <T extends KubeObject>(t: ResourceType, obj: KubeObject) =>
        kube.apply<T>(t, obj, { fieldManager: DEFAULT_FIELD_MANAGER, force: true }),
      applyStatus: <T extends KubeObject>(t: ResourceType, current: KubeObject, status: unknown) => {
        const { name, namespace } = current.metadata;
        return kube.apply<T>(
          t,
          { metadata: { name, namespace }, status },
          { fieldManager: DEFAULT_FIELD_MANAGER, force: true, subresource: "status" },
        );
      },
    },
    hubHash: HUB,
    agentId: AGENT_ID,
  });
  const watches = new Map<string, FakeWatch>();
  const changed: string[] = [];
  const objects = new AppliedObjects({
    watch: (type) => {
      const w = new FakeWatch();
      watches.set(type.plural, w);
      return w;
    },
    watched,
    existenceTtlMs: REAPPLY_MS,
    onChange: (uid) => changed.push(uid),
    now: () => clock.ms,
  });
  const reconciler = new AgentWorkReconciler({
    consumer: CONSUMER,
    store,
    client: publisher,
    kube,
    mapper,
    allowed: new KindAllowList(allowed),
    applied,
    objects,
    statusSyncMs: STATUS_SYNC_MS,
    reapplyMs: REAPPLY_MS,
    ...(deletePollsPerSecond === undefined ? {} : { deletePollsPerSecond }),
    now: () => clock.ms,
  });
  const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
  const reconcileWork = (uid: string): Promise<Result> =>
    reconciler.reconcile(ctx, { cluster: CONSUMER, namespace: CONSUMER, name: uid });
  const reconcile = (): Promise<Result> => reconcileWork(UID);
  const record = () => kube.peek<AppliedManifestWork>(AppliedManifestWorkResource, `${HUB}-${UID}`);
  const recorded = () => (record()?.status?.appliedResources ?? []).map((r) => r.name);
  return {
    kube,
    store,
    publisher,
    clock,
    reconcile,
    reconcileWork,
    record,
    recorded,
    watches,
    changed,
    objects,
  };
}

function condition(status: ManifestWorkStatus | undefined, type: string): WorkCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

function manifestCondition(status: ManifestWorkStatus | undefined, ordinal: number, type: string) {
  const entry = status?.resourceStatus?.manifests?.find((m) => m.resourceMeta.ordinal === ordinal);
  return entry?.conditions?.find((c) => c.type === type);
}

describe("AgentWorkReconciler: apply by update strategy", () => {
  test.each([
    {
      name: "Update (no manifestConfig): a forced apply as work-agent",
      configs: undefined,
      existing: false,
      calls: ["apply ns/cm-1"],
      apply: { fieldManager: "work-agent", force: true },
      data: { key: "value" },
      recorded: ["cm-1"],
    },
    {
      name: "ServerSideApply with its own field manager and no force",
      configs: [
        strategyFor("cm-1", {
          type: "ServerSideApply",
          serverSideApply: { fieldManager: "work-agent-x", force: false },
        }),
      ],
      existing: false,
      calls: ["apply ns/cm-1"],
      apply: { fieldManager: "work-agent-x", force: false },
      data: { key: "value" },
      recorded: ["cm-1"],
    },
    {
      name: "ServerSideApply with defaults: work-agent, not forced",
      configs: [strategyFor("cm-1", { type: "ServerSideApply" })],
      existing: false,
      calls: ["apply ns/cm-1"],
      apply: { fieldManager: "work-agent", force: false },
      data: { key: "value" },
      recorded: ["cm-1"],
    },
    {
      name: "CreateOnly on a missing object: created",
      configs: [strategyFor("cm-1", { type: "CreateOnly" })],
      existing: false,
      calls: ["find ns/cm-1", "create ns/cm-1"],
      apply: undefined,
      data: { key: "value" },
      recorded: ["cm-1"],
    },
    {
      name: "CreateOnly on an existing object: left as it is",
      configs: [strategyFor("cm-1", { type: "CreateOnly" })],
      existing: true,
      calls: ["find ns/cm-1"],
      apply: undefined,
      data: { key: "theirs" },
      recorded: ["cm-1"],
    },
    {
      name: "ReadOnly on an existing object: only read, and not recorded (never deleted)",
      configs: [strategyFor("cm-1", { type: "ReadOnly" })],
      existing: true,
      calls: ["find ns/cm-1"],
      apply: undefined,
      data: { key: "theirs" },
      recorded: [],
    },
  ])("$name", async ({ configs, existing, calls, apply, data, recorded }) => {
    const t = setup(configs ? { manifestConfigs: configs } : {});
    if (existing) t.kube.seed(configMapType, configMap("cm-1", { key: "theirs" }) as KubeObject);
    // Nothing of the work needs polling: it is looked at again at the drift check.
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    expect(t.kube.callsOn("configmaps")).toEqual(calls);
    if (apply) expect(t.kube.calls.find((c) => c.resource === "configmaps")).toMatchObject(apply);
    expect(t.kube.peek(configMapType, "cm-1", "ns")?.["data"]).toEqual(data);
    expect(t.recorded()).toEqual(recorded);
    expect(condition(t.publisher.last, "Applied")).toMatchObject({ status: "True" });
    expect(condition(t.publisher.last, "Available")).toMatchObject({ status: "True" });
    expect(t.store.get(UID)).toMatchObject({ appliedGeneration: 1, appliedAtMs: T0 });
  });

  test("ReadOnly on a missing object: Available=False, nothing written", async () => {
    const t = setup({ manifestConfigs: [strategyFor("cm-1", { type: "ReadOnly" })] });
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["find ns/cm-1"]);
    expect(manifestCondition(t.publisher.last, 0, "Available")).toMatchObject({
      status: "False",
      reason: "ResourceNotAvailable",
    });
  });

  test("a conflict with another field manager fails the manifest with a hint, and is retried later", async () => {
    const t = setup({ manifestConfigs: [strategyFor("cm-1", { type: "ServerSideApply" })] });
    t.kube.failNext("apply", "cm-1", new KubeApiError(409, "Conflict", "Apply failed with 1 conflict", {}));
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    expect(manifestCondition(t.publisher.last, 0, "Applied")?.message).toMatch(/set serverSideApply.force/);
    expect(condition(t.publisher.last, "Degraded")).toMatchObject({ status: "True", reason: "ApplyFailed" });
    // Not recorded as applied: the next reconcile applies again.
    expect(t.store.get(UID)?.appliedGeneration).toBeUndefined();
  });

  test("the record lists an object before it is created (crash safety)", async () => {
    const t = setup();
    await t.reconcile();
    const record = `${AppliedManifestWorkResource.plural}.${AppliedManifestWorkResource.group}`;
    const order = t.kube.calls.map((c) => `${c.verb} ${c.resource}${c.subresource ? "/status" : ""}`);
    expect(order.indexOf(`apply ${record}/status`)).toBeGreaterThan(-1);
    expect(order.indexOf(`apply ${record}/status`)).toBeLessThan(order.indexOf("apply configmaps"));
  });
});

describe("AgentWorkReconciler: the allow-list", () => {
  test.each([
    { name: "a Secret outside [ConfigMap]", manifest: "v1/Secret", allowed: ["ConfigMap"], refused: true },
    {
      name: "a Deployment under *.apps",
      manifest: "apps/v1/Deployment",
      allowed: ["*.apps"],
      refused: false,
    },
    {
      name: "a Deployment outside [Deployment] (group missing)",
      manifest: "apps/v1/Deployment",
      allowed: ["Deployment"],
      refused: true,
    },
    { name: "a Namespace under *", manifest: "v1/Namespace", allowed: ["*"], refused: false },
  ])("$name: refused=$refused", async ({ manifest, allowed, refused }) => {
    const type = types[manifest]!;
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    const m: Manifest = {
      apiVersion,
      kind: type.kind,
      metadata: { name: "x", ...(type.namespaced ? { namespace: "ns" } : {}) },
    };
    const t = setup({ manifests: [m] }, allowed);
    await t.reconcile();
    const resource = type.group ? `${type.plural}.${type.group}` : type.plural;
    expect(t.kube.callsOn(resource)).toEqual(refused ? [] : [`apply ${type.namespaced ? "ns" : ""}/x`]);
    const applied = manifestCondition(t.publisher.last, 0, "Applied");
    if (refused) {
      expect(applied).toMatchObject({ status: "False", reason: "ManifestKindNotAllowed" });
      expect(applied?.message).toMatch(/not in this agent's allow-list/);
      expect(condition(t.publisher.last, "Degraded")).toMatchObject({
        status: "True",
        reason: "ManifestKindNotAllowed",
      });
    } else {
      expect(applied).toMatchObject({ status: "True" });
    }
  });

  test("a kind the cluster does not serve fails that manifest only", async () => {
    const t = setup(
      { manifests: [configMap("cm-1"), { apiVersion: "v1", kind: "Widget", metadata: { name: "w" } }] },
      ["*"],
    );
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1"]);
    expect(manifestCondition(t.publisher.last, 1, "Applied")).toMatchObject({
      status: "False",
      reason: "AppliedManifestFailed",
    });
    expect(manifestCondition(t.publisher.last, 1, "Available")).toMatchObject({
      status: "Unknown",
      reason: "IncompleteResourceMeta",
    });
  });
});

describe("AgentWorkReconciler: manifests a new generation no longer holds", () => {
  test.each([
    { name: "default deleteOption: deleted", deleteOption: undefined, deleted: true },
    {
      name: "Foreground: deleted",
      deleteOption: { propagationPolicy: "Foreground" as const },
      deleted: true,
    },
    { name: "Orphan: kept", deleteOption: { propagationPolicy: "Orphan" as const }, deleted: false },
    {
      name: "SelectivelyOrphan naming it: kept",
      deleteOption: {
        propagationPolicy: "SelectivelyOrphan" as const,
        selectivelyOrphans: { orphaningRules: [{ resource: "configmaps", name: "cm-2", namespace: "ns" }] },
      },
      deleted: false,
    },
    {
      name: "SelectivelyOrphan naming another: deleted",
      deleteOption: {
        propagationPolicy: "SelectivelyOrphan" as const,
        selectivelyOrphans: { orphaningRules: [{ resource: "configmaps", name: "cm-1", namespace: "ns" }] },
      },
      deleted: true,
    },
  ])("$name", async ({ deleteOption, deleted }) => {
    const spec = {
      manifests: [configMap("cm-1"), configMap("cm-2")],
      ...(deleteOption ? { deleteOption } : {}),
    };
    const t = setup(spec);
    await t.reconcile();
    expect(t.recorded()).toEqual(["cm-1", "cm-2"]);
    t.store.upsert(received({ ...spec, generation: 2, manifests: [configMap("cm-1")] }));
    await t.reconcile();
    expect(t.kube.callsOn("configmaps").includes("delete ns/cm-2")).toBe(deleted);
    expect(t.kube.peek(configMapType, "cm-2", "ns") === undefined).toBe(deleted);
    if (deleted)
      expect(t.kube.calls.find((c) => c.verb === "delete")).toMatchObject({
        propagationPolicy: "Background",
      });
    // An object still being deleted stays on the record until it is gone; an orphan leaves it.
    expect(t.recorded()).toEqual(deleted ? ["cm-1", "cm-2"] : ["cm-1"]);
    expect(t.store.get(UID)?.appliedGeneration).toBe(2);
  });

  test("an object someone re-created under the same name (another uid) is not deleted", async () => {
    const spec = { manifests: [configMap("cm-1"), configMap("cm-2")] };
    const t = setup(spec);
    await t.reconcile();
    t.kube.seed(configMapType, {
      ...(configMap("cm-2") as KubeObject),
      metadata: { name: "cm-2", namespace: "ns", uid: "theirs" },
    });
    t.store.upsert(received({ generation: 2, manifests: [configMap("cm-1")] }));
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).not.toContain("delete ns/cm-2");
  });
});

describe("AgentWorkReconciler: status sync and reapply", () => {
  test.each([
    // The drift check is due 1 ms later, but a requeue is never sooner than the status sync period.
    {
      name: "before reapplyMs: only read",
      advanceMs: REAPPLY_MS,
      changed: true,
      applies: 1,
      next: STATUS_SYNC_MS,
    },
    {
      name: "after reapplyMs, an object someone changed: applied again (drift repair)",
      advanceMs: REAPPLY_MS + 1,
      changed: true,
      applies: 2,
      next: REAPPLY_MS + 1,
    },
    {
      name: "after reapplyMs, an object nobody changed: only read",
      advanceMs: REAPPLY_MS + 1,
      changed: false,
      applies: 1,
      next: REAPPLY_MS + 1,
    },
  ])("$name", async ({ advanceMs, changed, applies, next }) => {
    const t = setup();
    const recordWrites = () =>
      t.kube.calls.filter((c) => c.resource.startsWith("appliedmanifestworks") && c.verb === "apply").length;
    await t.reconcile();
    const firstRecordWrites = recordWrites();
    if (changed)
      t.kube.seed(configMapType, { ...t.kube.peek(configMapType, "cm-1", "ns")!, data: { key: "edited" } });
    t.clock.ms += advanceMs;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: next });
    expect(t.kube.callsOn("configmaps").filter((c) => c.startsWith("apply"))).toHaveLength(applies);
    // The record of an unchanged work is already what the drift-repair apply would write.
    expect(recordWrites()).toBe(firstRecordWrites);
  });

  test("the record's spec is written once; each apply writes its status for the intent and the result", async () => {
    const t = setup({ manifests: [configMap("cm-1")] });
    const recordWrites = () =>
      t.kube.calls
        .filter((c) => c.resource.startsWith("appliedmanifestworks") && c.verb === "apply")
        .map((c) => c.subresource ?? "spec");
    await t.reconcile();
    expect(recordWrites()).toEqual(["spec", "status", "status"]);
    t.store.upsert(received({ generation: 2, manifests: [configMap("cm-1"), configMap("cm-2")] }));
    await t.reconcile();
    expect(recordWrites()).toEqual(["spec", "status", "status", "status", "status"]);
    expect(t.recorded()).toEqual(["cm-1", "cm-2"]);
  });

  test("an object whose status alone moved (same generation) is not taken for drift", async () => {
    const t = setup();
    t.kube.seed(configMapType, {
      ...configMap("cm-1", { key: "value" }),
      metadata: { name: "cm-1", namespace: "ns", generation: 1 },
    });
    await t.reconcile();
    const current = t.kube.peek(configMapType, "cm-1", "ns")!;
    t.kube.seed(configMapType, { ...current, status: { reported: "by its controller" } });
    t.clock.ms += REAPPLY_MS + 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps").filter((c) => c.startsWith("apply"))).toHaveLength(1);
    t.kube.seed(configMapType, { ...current, metadata: { ...current.metadata, generation: 2 } });
    t.clock.ms += REAPPLY_MS + 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps").filter((c) => c.startsWith("apply"))).toHaveLength(2);
  });

  test("an object left alone at one drift check is still repaired at the next once changed", async () => {
    const t = setup();
    await t.reconcile();
    t.clock.ms += REAPPLY_MS + 1;
    await t.reconcile();
    t.kube.seed(configMapType, { ...t.kube.peek(configMapType, "cm-1", "ns")!, data: { key: "edited" } });
    t.clock.ms += REAPPLY_MS + 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps").filter((c) => c.startsWith("apply"))).toHaveLength(2);
    expect(
      t.kube.peek<KubeObject & { data?: Record<string, string> }>(configMapType, "cm-1", "ns")?.data,
    ).toEqual({
      key: "value",
    });
  });

  test("an object that only has to exist, deleted behind the agent's back, is applied again at the drift check", async () => {
    const t = setup();
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    await t.kube.delete(configMapType, { name: "cm-1", namespace: "ns" });
    // A sync in between (a watched object's event) goes by what the last read found.
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "delete ns/cm-1"]);
    t.clock.ms += REAPPLY_MS - STATUS_SYNC_MS + 1;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    expect(t.kube.callsOn("configmaps")).toEqual([
      "apply ns/cm-1",
      "delete ns/cm-1",
      "find ns/cm-1",
      "apply ns/cm-1",
    ]);
    expect(t.kube.peek(configMapType, "cm-1", "ns")).toBeDefined();
  });

  test("existence stands for the reapply period, and the drift check reads it afresh", async () => {
    const t = setup();
    await t.reconcile();
    t.clock.ms += REAPPLY_MS - 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1"]);
    t.clock.ms += 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "find ns/cm-1"]);
    // Read 1 ms ago, but the drift check compares what is there now.
    t.clock.ms += 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "find ns/cm-1", "find ns/cm-1"]);
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toHaveLength(3);
  });

  test("an object whose status is asked back and that no watch covers is read at every status sync", async () => {
    const rules = [
      {
        resourceIdentifier: { resource: "configmaps", name: "cm-1", namespace: "ns" },
        feedbackRules: [{ type: "JSONPaths" as const, jsonPaths: [{ name: "v", path: ".data.key" }] }],
      },
    ];
    const t = setup({ manifestConfigs: rules });
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    t.kube.seed(configMapType, { ...t.kube.peek(configMapType, "cm-1", "ns")!, data: { key: "edited" } });
    t.clock.ms += STATUS_SYNC_MS;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "find ns/cm-1"]);
    const feedback = t.publisher.last?.resourceStatus?.manifests?.[0]?.statusFeedback?.values;
    expect(feedback).toEqual([{ name: "v", fieldValue: { type: "String", string: "edited" } }]);
  });

  test("a watched kind: read from the watch once synced, changes enqueue the work, no polling", async () => {
    const rules = [
      {
        resourceIdentifier: { resource: "configmaps", name: "cm-1", namespace: "ns" },
        feedbackRules: [
          { type: "JSONPaths" as const, jsonPaths: [{ name: "v", path: ".metadata.annotations.v" }] },
        ],
      },
    ];
    const t = setup({ manifestConfigs: rules }, DEFAULT_ALLOWED_KINDS, ["configmaps"]);
    // Until the watch has synced the work is polled like any other.
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    const watch = t.watches.get("configmaps")!;
    watch.synced = true;
    const fromWatch = configMap("cm-1") as KubeObject;
    fromWatch.metadata.annotations = { v: "from-watch" };
    watch.update(fromWatch);
    expect(t.changed).toEqual([UID]);
    // Synced: the status comes from the watch's cache and the next look is the drift-repair apply.
    t.clock.ms += 1000;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS - 1000 + 1 });
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1"]);
    const feedback = t.publisher.last?.resourceStatus?.manifests?.[0]?.statusFeedback?.values;
    expect(feedback).toEqual([{ name: "v", fieldValue: { type: "String", string: "from-watch" } }]);
  });

  test("a watched kind whose feedback reads past metadata and status: the watch keeps neither, so the apiserver is read at each sync", async () => {
    const rules = [
      {
        resourceIdentifier: { resource: "configmaps", name: "cm-1", namespace: "ns" },
        feedbackRules: [{ type: "JSONPaths" as const, jsonPaths: [{ name: "v", path: ".data.key" }] }],
      },
    ];
    const t = setup({ manifestConfigs: rules }, DEFAULT_ALLOWED_KINDS, ["configmaps"]);
    await t.reconcile();
    const watch = t.watches.get("configmaps")!;
    watch.synced = true;
    t.kube.seed(configMapType, { ...t.kube.peek(configMapType, "cm-1", "ns")!, data: { key: "live" } });
    t.clock.ms += STATUS_SYNC_MS;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "find ns/cm-1"]);
    const feedback = t.publisher.last?.resourceStatus?.manifests?.[0]?.statusFeedback?.values;
    expect(feedback).toEqual([{ name: "v", fieldValue: { type: "String", string: "live" } }]);
  });

  test("a change the apply sets off at once still finds the work (it is tracked before the apply)", async () => {
    const t = setup({}, DEFAULT_ALLOWED_KINDS, ["configmaps"]);
    // Another work's object started the watch of the kind, and it has synced.
    const other = { meta: { ordinal: 0, name: "other", namespace: "ns" }, strategy: "Update" as const };
    t.objects.track("uid-other", [{ ...other, type: configMapType }], true);
    const watch = t.watches.get("configmaps")!;
    watch.synced = true;
    // The controller owning the object reports before the agent's apply call has even returned.
    const apply = t.kube.apply.bind(t.kube);
    t.kube.apply = async (type, obj, opts) => {
      const written = await apply(type, obj, opts);
      watch.update({ ...written, data: { key: "reported" } });
      return written as never;
    };
    await t.reconcile();
    expect(t.changed).toEqual([UID]);
  });

  test("an unchanged status is published once", async () => {
    const t = setup();
    await t.reconcile();
    await t.reconcile();
    expect(t.publisher.published).toHaveLength(1);
  });

  test("without a broker the status is kept for the next resync and published once it is back", async () => {
    const t = setup();
    t.publisher.refusal = new PublishRefusedError("not-connected", "not connected");
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    expect(t.store.get(UID)).toMatchObject({ statusHash: undefined });
    expect(t.store.get(UID)?.status).toBeDefined();
    t.publisher.refusal = undefined;
    await t.reconcile();
    expect(t.publisher.published).toHaveLength(1);
    expect(t.store.get(UID)?.statusHash).toBeDefined();
  });

  test("any other publish error is thrown", async () => {
    const t = setup();
    t.publisher.refusal = new Error("boom");
    await expect(t.reconcile()).rejects.toThrow("boom");
  });
});

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
