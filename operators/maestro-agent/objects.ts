/**
 * Where the agent's status syncs read the objects its works applied, so that the status of
 * thousands of works costs the management cluster's apiserver little:
 *  - kinds whose status the source asks back and whose changes matter at once (HostedClusters,
 *    NodePools, Velero Schedules) are watched: a change enqueues the works that hold the object,
 *    and a sync reads the watch's cache (without managedFields) instead of the apiserver;
 *  - any other object only has to exist for its status (Applied, Available); its existence is read
 *    at the drift check (every reapply period), which reads it anyway, and remembered as metadata
 *    only in between. Reading it at every status sync was most of a management apiserver's
 *    requests at rest (92% with 2,000 clusters: 61 Secret and 31 Namespace GETs/s); the price is
 *    that a Secret deleted behind the agent's back shows, and is applied again, at the next drift
 *    check instead of the next status sync (OCM's agent re-applies on a similar resync).
 *  - an unwatched object whose feedback reads only its metadata (the signing key's Secret, its key
 *    ID annotation) is answered from that remembered metadata, as read at its last apply or drift
 *    check; Secrets are never watched (a cluster-wide Secret watch would let the agent enumerate
 *    them, and hold them all). The price: an annotation changed behind the agent's back is seen
 *    (and, being the manifest's, put back) at the next drift check, not the next sync. A key
 *    rotation is a new generation of the work, applied in full, and reported at once from what
 *    that apply returned.
 * An object with any other feedback of a kind not watched is read on every sync, as OCM's agent
 * does. Until a watch has synced, and for kinds it may not watch (RBAC), reads go to the apiserver.
 * A watch caches an object's metadata and status, what feedback reads (our works read conditions,
 * versions and the endpoint from status, and the generation), and the few spec fields our feedback
 * reads of that kind (WATCHED_SPEC_FIELDS); a HostedCluster's spec is most of the object. A rule
 * that reads anything else reads the object from the apiserver at each sync; an object whose rules
 * read part of its spec is read from the apiserver at the drift check (feedbackReadsSpec).
 */
import { Informer } from "../runtime/informer.ts";
import type { KubeClient, KubeObject, ResourceType } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { ManifestClient, ManifestOutcome } from "./apply.ts";
import type { AppliedResource, LiveReader } from "./appliedwork.ts";

/** The kinds the agent's ClusterRole lets it list and watch (config/bases/agent/rbac), as `plural.group`. */
export const DEFAULT_WATCHED_RESOURCES = [
  "hostedclusters.hypershift.openshift.io",
  "nodepools.hypershift.openshift.io",
  // A cluster's backup Schedule: its status (each backup's phase) is fed back.
  "schedules.velero.io",
] as const;

/**
 * The spec fields, per watched kind, that our works' feedback reads: a watch keeps them beside the
 * metadata and status, and feedback reading them is answered from its cache. Only these: a watch
 * keeping whole specs would hold most of every HostedCluster.
 */
export const WATCHED_SPEC_FIELDS: Readonly<Record<string, readonly string[]>> = {
  // The customer-managed etcd keys (api/v1alpha1/feedback.ts HOSTED_CLUSTER_FEEDBACK_PATHS).
  "hostedclusters.hypershift.openshift.io": ["secretEncryption"],
  // Whether backups are paused (cluster/backup.ts BACKUP_FEEDBACK_PATHS).
  "schedules.velero.io": ["paused"],
};

/** What the agent needs of a watch (an Informer; a test gives a fake). */
export type ObjectWatch = Pick<Informer, "hasSynced" | "get" | "list" | "addEventHandler" | "run">;

/** A watch of one kind on the management cluster, caching each object's statusView. */
export function informerWatch(kube: KubeClient, log: Logger): (type: ResourceType) => ObjectWatch {
  return (type) => new Informer({ client: kube, type, log, transform: watchTransform(type) });
}

/** What a watch of that kind keeps of each object (statusView with the kind's spec fields). */
export function watchTransform(
  type: Pick<ResourceType, "plural" | "group">,
): (obj: KubeObject) => KubeObject {
  const specFields = specFieldsOf(type);
  return (obj) => statusView(obj, specFields);
}

export interface AppliedObjectsOptions {
  /** Starts a watch of one kind (informerWatch). */
  watch: (type: ResourceType) => ObjectWatch;
  /** `plural.group` (or `plural` for the core group) of the kinds to watch. */
  watched: readonly string[];
  /**
   * How long a read of an unwatched object's existence stands unless a drift check reads it
   * afresh: the reapply period.
   */
  existenceTtlMs: number;
  /** Called with a work's UID when an object it holds changes. */
  onChange: (workUid: string) => void;
  now?: () => number;
  log?: Logger;
}

interface Existence {
  object: KubeObject | undefined;
  readAtMs: number;
}

const resourceName = (t: Pick<ResourceType, "plural" | "group">): string =>
  t.group ? `${t.plural}.${t.group}` : t.plural;

const specFieldsOf = (t: Pick<ResourceType, "plural" | "group">): readonly string[] =>
  WATCHED_SPEC_FIELDS[resourceName(t)] ?? [];

const objectId = (t: ResourceType, namespace: string | undefined, name: string): string =>
  `${resourceName(t)}/${namespace ?? ""}/${name}`;

/**
 * What is remembered of an unwatched object: for a status without feedback, that it exists and
 * which one (uid); for feedback reading the metadata, all of it but managedFields. Never the data.
 */
function remembered(obj: KubeObject | undefined, wholeMetadata: boolean): KubeObject | undefined {
  if (!obj) return undefined;
  const { name, namespace, uid, resourceVersion } = obj.metadata;
  const metadata = wholeMetadata ? { ...obj.metadata } : { name, namespace, uid, resourceVersion };
  delete metadata.managedFields;
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata };
}

/**
 * What a watch keeps of an object: its metadata without managedFields, its status, and those of
 * `specFields` its spec has.
 */
export function statusView(obj: KubeObject, specFields: readonly string[] = []): KubeObject {
  const metadata = { ...obj.metadata };
  delete metadata.managedFields;
  const { status, spec } = obj as { status?: unknown; spec?: Record<string, unknown> };
  const kept = Object.entries(spec ?? {}).filter(([field]) => specFields.includes(field));
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata,
    ...(kept.length > 0 && { spec: Object.fromEntries(kept) }),
    ...(status !== undefined && { status }),
  };
}

/** A kubectl-style path that starts in the metadata. */
const readsMetadata = (path: string): boolean => /^\.?metadata(?:$|[.[])/.test(path.trim());

/**
 * A kubectl-style path that starts in what statusView keeps: the metadata, the status
 * (`.status.x`, `metadata.generation`) or one of `specFields` (`.spec.paused`).
 */
export function readsStatusView(path: string, specFields: readonly string[] = []): boolean {
  const p = path.trim();
  if (/^\.?(status|metadata)(?:$|[.[])/.test(p)) return true;
  const field = /^\.?spec\.([A-Za-z0-9_-]+)(?:$|[.[])/.exec(p)?.[1];
  return field !== undefined && specFields.includes(field);
}

const hasFeedback = (o: ManifestOutcome): boolean => (o.config?.feedbackRules?.length ?? 0) > 0;

/**
 * Every feedback rule of the outcome reads only what a watch of its kind keeps (well-known fields
 * are all in status).
 */
function feedbackInStatusView(o: ManifestOutcome, type: ResourceType): boolean {
  const specFields = specFieldsOf(type);
  return (o.config?.feedbackRules ?? []).every(
    (rule) =>
      rule.type === "WellKnownStatus" ||
      (rule.jsonPaths ?? []).every((p) => readsStatusView(p.path, specFields)),
  );
}

/**
 * Some feedback rule of the outcome reads the object's spec. A drift check reads such an object
 * from the apiserver, as every sync did before its watch kept that part: the check compares the
 * whole spec with the manifest as soon as any object of the work changed (Velero's status writes
 * move a Schedule's generation at each backup), and the watch keeps only what feedback reads.
 */
const feedbackReadsSpec = (o: ManifestOutcome): boolean =>
  (o.config?.feedbackRules ?? []).some((rule) =>
    (rule.jsonPaths ?? []).some((p) => /^\.?spec(?:$|[.[])/.test(p.path.trim())),
  );

function cachedFind(informer: ObjectWatch): ManifestClient["find"] {
  return <T extends KubeObject>(_t: ResourceType, name: string, ns?: string) =>
    Promise.resolve(informer.get(ns ?? "", name) as T | undefined);
}

/** Every feedback rule of the outcome reads only the object's metadata. */
const feedbackInMetadata = (o: ManifestOutcome): boolean =>
  (o.config?.feedbackRules ?? []).every(
    (rule) => rule.type === "JSONPaths" && (rule.jsonPaths ?? []).every((p) => readsMetadata(p.path)),
  );

export class AppliedObjects {
  readonly #o: AppliedObjectsOptions;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #watched: Set<string>;
  readonly #informers = new Map<string, ObjectWatch>();
  /** Object ID → UIDs of the works that hold it. */
  readonly #holders = new Map<string, Set<string>>();
  /** Work UID → the object IDs it holds. */
  readonly #held = new Map<string, Set<string>>();
  readonly #existence = new Map<string, Existence>();
  #signal: AbortSignal | undefined;
  readonly #running: Promise<void>[] = [];

  constructor(opts: AppliedObjectsOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log ?? silentLogger;
    this.#watched = new Set(opts.watched);
  }

  /** Runs the watches started so far and those started later, until the signal aborts. */
  async start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    for (const informer of this.#informers.values()) this.#running.push(informer.run(signal));
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await Promise.all(this.#running);
  }

  /**
   * Records which objects a work holds after an apply (`applied`: what it found is fresh) or a
   * sync; starts the watches they need.
   */
  track(workUid: string, outcomes: readonly ManifestOutcome[], applied: boolean): void {
    const ids = new Set<string>();
    for (const o of outcomes) {
      if (!o.type) continue;
      const id = objectId(o.type, o.meta.namespace, o.meta.name ?? "");
      ids.add(id);
      if (this.#isWatched(o.type)) this.#informerFor(o.type);
      else if (applied && !o.failure)
        this.#existence.set(id, {
          object: remembered(o.object, this.#rememberedFeedback(o)),
          readAtMs: this.#now(),
        });
    }
    this.#setHeld(workUid, ids);
  }

  /**
   * A deletion's reader: an object a synced watch shows deleting, with the uid the agent applied,
   * is still there without a request. Anything else is read from the apiserver, so an object the
   * watch has not seen yet is never taken for gone.
   */
  deletionReader(fallback: ManifestClient["find"]): LiveReader {
    return async (r, type) => {
      const cached = this.#syncedInformer(type)?.get(r.namespace, r.name);
      if (cached?.metadata.deletionTimestamp && r.uid && cached.metadata.uid === r.uid) return cached;
      return fallback(type, r.name, r.namespace || undefined);
    };
  }

  /**
   * Makes a deleting work wait for its remaining objects' events. True when every one of them is
   * in a synced watch's cache, with its uid, now: its disappearance will enqueue the work. Checked
   * after the work holds them, in one turn, so a deletion that came before is not missed.
   */
  awaitDeletion(workUid: string, remaining: readonly AppliedResource[]): boolean {
    const ids = new Set<string>();
    const types = remaining.map((r) => ({
      r,
      type: {
        group: r.group,
        version: r.version,
        kind: "",
        plural: r.resource,
        namespaced: r.namespace !== "",
      },
    }));
    for (const { r, type } of types) ids.add(objectId(type, r.namespace, r.name));
    this.#setHeld(workUid, ids);
    return types.every(({ r, type }) => {
      const cached = this.#syncedInformer(type)?.get(r.namespace, r.name);
      return cached !== undefined && r.uid !== undefined && cached.metadata.uid === r.uid;
    });
  }

  /** Forgets a work once it is deleted. */
  forget(workUid: string): void {
    this.#setHeld(workUid, new Set());
  }

  /**
   * Whether a work's status needs the apiserver read at every status sync: one of its objects
   * failed, or its status is asked back (feedback rules) and neither a synced watch nor the
   * remembered metadata answers it. Otherwise watches report its changes as events, and existence
   * and remembered metadata are read at the drift check.
   */
  needsStatusPolling(outcomes: readonly ManifestOutcome[]): boolean {
    return outcomes.some(
      (o) =>
        !o.type ||
        o.failure !== undefined ||
        (hasFeedback(o) && !this.#cachedFeedback(o) && !this.#rememberedFeedback(o)),
    );
  }

  /**
   * A read-only client for one outcome's status sync (see the file comment for the rules);
   * `fresh` for a drift check, which reads existence from the apiserver whatever is remembered.
   */
  readerFor(outcome: ManifestOutcome, fallback: ManifestClient, fresh: boolean): ManifestClient {
    const type = outcome.type;
    const informer = type && this.#syncedInformer(type);
    if (type && informer && feedbackInStatusView(outcome, type) && !(fresh && feedbackReadsSpec(outcome)))
      return { ...fallback, find: cachedFind(informer) };
    const feedback = hasFeedback(outcome);
    if (!type || (feedback && !this.#rememberedFeedback(outcome))) return fallback;
    return { ...fallback, find: this.#rememberedFind(fallback, fresh, feedback) };
  }

  #rememberedFind(fallback: ManifestClient, fresh: boolean, wholeMetadata: boolean): ManifestClient["find"] {
    return async <T extends KubeObject>(t: ResourceType, name: string, ns?: string) => {
      const id = objectId(t, ns, name);
      const known = this.#existence.get(id);
      if (!fresh && known && this.#now() - known.readAtMs < this.#o.existenceTtlMs)
        return known.object as T | undefined;
      const object = await fallback.find<T>(t, name, ns);
      this.#existence.set(id, { object: remembered(object, wholeMetadata), readAtMs: this.#now() });
      return object;
    };
  }

  /** How many objects are cached by watches, for metrics and tests. */
  watchedObjectCount(): number {
    let n = 0;
    for (const informer of this.#informers.values()) n += informer.list().length;
    return n;
  }

  /** The outcome's feedback can be read from a synced watch's cache. */
  #cachedFeedback(o: ManifestOutcome): boolean {
    return !!o.type && !!this.#syncedInformer(o.type) && feedbackInStatusView(o, o.type);
  }

  /** The outcome's feedback can be read from what is remembered of an unwatched object. */
  #rememberedFeedback(o: ManifestOutcome): boolean {
    return !!o.type && !this.#isWatched(o.type) && feedbackInMetadata(o);
  }

  #isWatched(t: ResourceType): boolean {
    return this.#watched.has(resourceName(t));
  }

  #syncedInformer(t: ResourceType): ObjectWatch | undefined {
    const informer = this.#informers.get(resourceName(t));
    return informer?.hasSynced() ? informer : undefined;
  }

  #informerFor(t: ResourceType): void {
    const key = resourceName(t);
    if (this.#informers.has(key)) return;
    const informer = this.#o.watch(t);
    const changed = (obj: KubeObject): void => {
      const id = objectId(t, obj.metadata.namespace, obj.metadata.name ?? "");
      for (const uid of this.#holders.get(id) ?? []) this.#o.onChange(uid);
    };
    informer.addEventHandler({ onAdd: changed, onUpdate: (_old, obj) => changed(obj), onDelete: changed });
    this.#informers.set(key, informer);
    this.#log.info("Watching applied objects", { resource: key });
    if (this.#signal) this.#running.push(informer.run(this.#signal));
  }

  #setHeld(workUid: string, ids: Set<string>): void {
    const before = this.#held.get(workUid) ?? new Set<string>();
    for (const id of before) {
      if (ids.has(id)) continue;
      const holders = this.#holders.get(id);
      holders?.delete(workUid);
      if (holders?.size === 0) {
        this.#holders.delete(id);
        this.#existence.delete(id);
      }
    }
    for (const id of ids) {
      let holders = this.#holders.get(id);
      if (!holders) this.#holders.set(id, (holders = new Set()));
      holders.add(workUid);
    }
    if (ids.size > 0) this.#held.set(workUid, ids);
    else this.#held.delete(workUid);
  }
}
