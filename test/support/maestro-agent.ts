/**
 * maestro-agent's AgentWorkReconciler on fakes: a recording management cluster, a fake watch of
 * the applied objects, a recording status publisher and a clock the test moves. Shared by
 * operators/maestro-agent/reconcile*.test.ts.
 */
import { RecordingKube } from "./recording-kube.ts";
import type {
  DeleteOption,
  Manifest,
  ManifestConfigOption,
  ManifestWorkStatus,
  UpdateStrategy,
  WorkCondition,
} from "../../operators/api/work/v1.ts";
import type { AgentWork } from "../../operators/cloudevents/store/works.ts";
import { WorkStore } from "../../operators/cloudevents/store/works.ts";
import type { ReconcileContext, Result } from "../../operators/runtime/controller.ts";
import type { KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { silentLogger } from "../../operators/runtime/logger.ts";
import {
  DEFAULT_ALLOWED_KINDS,
  DEFAULT_FIELD_MANAGER,
  KindAllowList,
  type KindMapper,
} from "../../operators/maestro-agent/apply.ts";
import {
  AppliedManifestWorkResource,
  AppliedWorks,
  type AppliedManifestWork,
} from "../../operators/maestro-agent/appliedwork.ts";
import { AppliedObjects, type ObjectWatch } from "../../operators/maestro-agent/objects.ts";
import { AgentWorkReconciler, type StatusPublisher } from "../../operators/maestro-agent/reconcile.ts";
import { KindNotFoundError } from "../../operators/maestro-agent/restmapper.ts";

export const CONSUMER = "mgmt-1";
export const UID = "uid-1";
export const HUB = "hub";
export const AGENT_ID = `${CONSUMER}-work-agent`;
export const STATUS_SYNC_MS = 10_000;
export const REAPPLY_MS = 300_000;
export const T0 = Date.parse("2030-01-01T00:00:00Z");

export const types: Record<string, ResourceType> = {
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
export const configMapType = types["v1/ConfigMap"]!;

/** The discovery of a cluster serving the core kinds above and apps/v1 Deployments. */
export const mapper: KindMapper = {
  map(apiVersion, kind) {
    const type = types[`${apiVersion}/${kind}`];
    return type ? Promise.resolve(type) : Promise.reject(new KindNotFoundError(apiVersion, kind));
  },
};

export function configMap(name: string, data: Record<string, string> = { key: "value" }): Manifest {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" }, data };
}

export function strategyFor(name: string, updateStrategy: UpdateStrategy): ManifestConfigOption {
  return { resourceIdentifier: { resource: "configmaps", name, namespace: "ns" }, updateStrategy };
}

export interface WorkSpec {
  generation?: number;
  manifests?: Manifest[];
  manifestConfigs?: ManifestConfigOption[];
  deleteOption?: DeleteOption;
}

export function received(spec: WorkSpec, deletionTimestamp?: string) {
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

export class RecordingPublisher implements StatusPublisher {
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
export class FakeWatch implements ObjectWatch {
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

export function setup(
  spec: WorkSpec = {},
  allowed: readonly string[] = DEFAULT_ALLOWED_KINDS,
  watched: readonly string[] = [],
  {
    store = new WorkStore(),
    deletePollsPerSecond,
    firstStatusHoldMs,
    kube = new RecordingKube(),
  }: {
    store?: WorkStore;
    deletePollsPerSecond?: number;
    firstStatusHoldMs?: number;
    kube?: RecordingKube;
  } = {},
) {
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
  /** Works the reconciler queued (those it retired), and its spec resync requests. */
  const queued: string[] = [];
  const resyncs = { count: 0 };
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
    ...(firstStatusHoldMs === undefined ? {} : { firstStatusHoldMs }),
    enqueue: (uid) => queued.push(uid),
    resyncSpecs: () => resyncs.count++,
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
    queued,
    resyncs,
  };
}

export function condition(status: ManifestWorkStatus | undefined, type: string): WorkCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

export function manifestCondition(status: ManifestWorkStatus | undefined, ordinal: number, type: string) {
  const entry = status?.resourceStatus?.manifests?.find((m) => m.resourceMeta.ordinal === ordinal);
  return entry?.conditions?.find((c) => c.type === type);
}
