/**
 * maestro-server's ManifestWorkReconciler on fakes: the service cluster's works (whole, and cached
 * without manifests), a recording publisher, writer and event sink, and a clock the test moves.
 * Shared by operators/maestro-server/reconcile*.test.ts.
 */
import { FakeLister } from "./lister.ts";
import {
  MANIFEST_WORK_CLEANUP_FINALIZER,
  summariseWorkSpec,
  type CachedManifestWork,
  type ManifestWork,
  type ManifestWorkObject,
  type ManifestWorkStatus,
  type WorkCondition,
} from "../../operators/api/work/v1.ts";
import type { StatusUpdate } from "../../operators/cloudevents/codec/manifestbundle.ts";
import { StatusStore } from "../../operators/cloudevents/store/status.ts";
import { Action, type EventAction } from "../../operators/cloudevents/types.ts";
import type { ReconcileContext, Request, Result } from "../../operators/runtime/controller.ts";
import type { EventSeverity } from "../../operators/runtime/events.ts";
import type { KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { silentLogger } from "../../operators/runtime/logger.ts";
import {
  ManifestWorkReconciler,
  type EventSink,
  type ServerReconcilerDeps,
  type SpecPublisher,
  type WorkWriter,
} from "../../operators/maestro-server/reconcile.ts";
import { UID_INDEX, uidIndexer } from "../../operators/maestro-server/accept.ts";

export const CONSUMER = "mgmt-1";
export const UID = "uid-1";
export const HOUR_MS = 3_600_000;
export const REDELIVER_MS = 30_000;
export const STATUS_DELAY_MS = 2_000;
export const T0 = Date.parse("2030-01-01T00:00:00Z");

export const configMap = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
  data,
});

export function manifestWork(
  over: { generation?: number; finalizer?: boolean; manifests?: unknown[] } = {},
): ManifestWork {
  return {
    metadata: {
      name: "w1",
      namespace: CONSUMER,
      uid: UID,
      generation: over.generation ?? 1,
      resourceVersion: "7",
      ...(over.finalizer === false ? {} : { finalizers: [MANIFEST_WORK_CLEANUP_FINALIZER] }),
    },
    spec: { workload: { manifests: (over.manifests ?? [configMap("cm-1")]) as never } },
  };
}

export function deleting(work: ManifestWork, sinceMs: number): ManifestWork {
  return {
    ...work,
    metadata: { ...work.metadata, deletionTimestamp: new Date(T0 - sinceMs).toISOString() },
  };
}

export const appliedCondition: WorkCondition = {
  type: "Applied",
  status: "True",
  reason: "AppliedManifestWorkComplete",
  message: "Apply manifest work complete",
  lastTransitionTime: "2030-01-01T00:00:00Z",
};

export function agentStatus(over: Partial<StatusUpdate> = {}): StatusUpdate {
  return {
    resourceId: UID,
    resourceVersion: 1,
    consumer: CONSUMER,
    status: { conditions: [appliedCondition] },
    deleted: false,
    ...over,
  };
}

export class RecordingPublisher implements SpecPublisher {
  readonly sent: Array<{ uid: string; generation: number; action: EventAction }> = [];
  /** How many manifests each published spec carried. */
  readonly manifestsSent: number[] = [];
  /** The works whose status was asked for again, as "consumer/uid". */
  readonly statusRequests: string[] = [];
  refusal: Error | undefined;

  publishSpec(work: ManifestWork, action: EventAction): Promise<void> {
    this.manifestsSent.push(work.spec?.workload?.manifests?.length ?? 0);
    return this.#record(work, action);
  }

  publishDeletion(work: ManifestWorkObject, action: EventAction = Action.delete): Promise<void> {
    return this.#record(work, action);
  }

  requestStatus(consumer: string, resourceId: string): Promise<void> {
    this.statusRequests.push(`${consumer}/${resourceId}`);
    return Promise.resolve();
  }

  #record(work: ManifestWorkObject, action: EventAction): Promise<void> {
    if (this.refusal) return Promise.reject(this.refusal);
    const { uid = "", generation = 0 } = work.metadata;
    this.sent.push({ uid, generation, action });
    return Promise.resolve();
  }
}

/**
 * The apiserver's works, whole, and the informer's cache of them, without manifests (what
 * maestro-server is given): a reconcile must fetch a work to publish it.
 */
export class ServiceWorks {
  readonly cache = new FakeLister<CachedManifestWork>([], { [UID_INDEX]: uidIndexer });
  readonly #whole = new Map<string, ManifestWork>();
  fetches = 0;

  constructor(works: ManifestWork[]) {
    for (const work of works) this.set(work);
  }

  set(work: ManifestWork): void {
    this.#whole.set(work.metadata.uid ?? "", work);
    this.cache.set(summariseWorkSpec(work));
  }

  delete(namespace: string, name: string): void {
    const cached = this.cache.get(namespace, name);
    this.#whole.delete(cached?.metadata.uid ?? "");
    this.cache.delete(namespace, name);
  }

  readonly fetch = (work: ManifestWorkObject): Promise<ManifestWork | undefined> => {
    this.fetches++;
    return Promise.resolve(this.#whole.get(work.metadata.uid ?? ""));
  };

  deps(): Pick<ServerReconcilerDeps, "works" | "fetch"> {
    return { works: this.cache, fetch: this.fetch };
  }
}

export type Write =
  | { op: "addFinalizer" | "removeFinalizer"; finalizer: string }
  | { op: "applyStatus"; status: ManifestWorkStatus };

export class RecordingWriter implements WorkWriter {
  readonly writes: Write[] = [];

  addFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (obj.metadata.finalizers?.includes(finalizer)) return Promise.resolve(false);
    this.writes.push({ op: "addFinalizer", finalizer });
    return Promise.resolve(true);
  }

  removeFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (!obj.metadata.finalizers?.includes(finalizer)) return Promise.resolve(false);
    this.writes.push({ op: "removeFinalizer", finalizer });
    return Promise.resolve(true);
  }

  applyStatus<T extends KubeObject>(_type: ResourceType, _current: KubeObject, status: unknown) {
    this.writes.push({ op: "applyStatus", status: status as ManifestWorkStatus });
    return Promise.resolve<T | undefined>(undefined);
  }

  get statuses(): ManifestWorkStatus[] {
    return this.writes.flatMap((w) => (w.op === "applyStatus" ? [w.status] : []));
  }

  get ops(): string[] {
    return this.writes.map((w) => w.op);
  }
}

export class RecordingEvents implements EventSink {
  readonly events: Array<{ type: EventSeverity; reason: string; message: string }> = [];

  event(_obj: KubeObject, type: EventSeverity, reason: string, message: string): Promise<void> {
    this.events.push({ type, reason, message });
    return Promise.resolve();
  }

  get reasons(): string[] {
    return this.events.map((e) => `${e.type}/${e.reason}`);
  }
}

/** A reconciler on fakes, with a clock the test moves. */
export function setup(work: ManifestWork, reported?: StatusUpdate) {
  const works = new ServiceWorks([work]);
  const statuses = new StatusStore();
  if (reported) statuses.offer(reported);
  const publisher = new RecordingPublisher();
  const writer = new RecordingWriter();
  const events = new RecordingEvents();
  const clock = { ms: T0 };
  const reconciler = new ManifestWorkReconciler({
    ...works.deps(),
    client: publisher,
    statuses,
    applier: writer,
    events,
    staleDeleteMs: HOUR_MS,
    redeliverAfterMs: REDELIVER_MS,
    publishedStatusDelayMs: STATUS_DELAY_MS,
    now: () => clock.ms,
  });
  const ctx: ReconcileContext = { signal: new AbortController().signal, log: silentLogger };
  const reconcile = (): Promise<Result> =>
    reconciler.reconcile(ctx, { cluster: "service", namespace: CONSUMER, name: "w1" });
  const takeUnsent = (): Request[] => reconciler.takeUnsent();
  return { works, statuses, publisher, writer, events, clock, reconcile, takeUnsent };
}

export function published(status: ManifestWorkStatus | undefined): WorkCondition | undefined {
  return status?.conditions?.find((c) => c.type === "Published");
}
