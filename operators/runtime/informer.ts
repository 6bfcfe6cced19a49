/**
 * An informer per (cluster, resource type), modelled on client-go's reflector and indexer:
 * paginated LIST, WATCH with bookmarks and a randomized server timeout, relist on 410 Gone,
 * restart with jittered backoff on any other error, an inactivity watchdog for half-open
 * connections, hasSynced, and indexers. Handlers are synchronous and should only enqueue keys.
 */
import { Backoff, sleep, type BackoffOptions } from "./backoff.ts";
import { errorMessage } from "./errors.ts";
import { cachedStrings } from "./intern.ts";
import {
  KubeApiError,
  apiVersionOf,
  type KubeClient,
  type KubeObject,
  type ResourceType,
  type WatchEvent,
} from "./kube.ts";
import { silentLogger, type Logger } from "./logger.ts";

export interface EventHandlers<T extends KubeObject> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export type IndexFunc<T> = (obj: T) => string[];

/**
 * The read side of an informer's cache: what a reconciler needs, and all a test fake has to give
 * (client-go's Lister plus its indexer lookup).
 */
export interface Lister<T extends KubeObject> {
  get(namespace: string, name: string): T | undefined;
  list(namespace?: string): T[];
  byIndex(indexName: string, value: string): T[];
  /** How many objects byIndex would give, without making the list. */
  countByIndex(indexName: string, value: string): number;
}

/** Options of an informer that caches T, made by `transform` from the Raw objects the apiserver sends. */
export interface InformerOptions<T extends KubeObject, Raw extends KubeObject = T> {
  client: KubeClient;
  type: ResourceType;
  /** Watch one namespace only; all namespaces when unset. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  indexers?: Record<string, IndexFunc<T>>;
  log?: Logger;
  /** Server-side watch timeout is random in [min, 2·min] seconds. Default 300 (client-go's 5–10 min). */
  minWatchTimeoutSeconds?: number;
  /** No event, not even a bookmark, for this long means a dead connection. Default 180 000 ms. */
  inactivityTimeoutMs?: number;
  /** Re-delivers every cached object as an update this often (0 = never, the default). */
  resyncPeriodMs?: number;
  backoff?: BackoffOptions;
  /** Items per LIST page. Default 500. */
  pageSize?: number;
  /**
   * Trims each object before it is cached (client-go's SetTransform): drop what no reader needs,
   * such as managedFields, so the cache holds less. Runs once per listed or watched object.
   * Required in effect when Raw is not T: without it the object is cached as sent.
   */
  transform?: (obj: Raw) => T;
}

/** Gone (410): the resourceVersion we resume from is compacted away; relist. */
class ResourceExpiredError extends Error {}

/** The watchdog fired: no bytes for too long. */
class InactivityError extends Error {}

export function objectKey(obj: { metadata: { namespace?: string; name?: string } }): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name ?? ""}` : (name ?? "");
}

export class Informer<T extends KubeObject = KubeObject, Raw extends KubeObject = T> implements Lister<T> {
  readonly #opts: InformerOptions<T, Raw>;
  readonly #log: Logger;
  readonly #store = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  readonly #indices = new Map<string, Map<string, Set<string>>>();
  /** Keys by namespace: list(namespace) must not walk every object of the type. */
  readonly #byNamespace = new Map<string, Set<string>>();
  readonly #handlers: EventHandlers<T>[] = [];
  readonly #syncWaiters: Array<() => void> = [];
  #resourceVersion = "";
  #synced = false;
  #relists = 0;
  #watchesStarted = 0;

  constructor(opts: InformerOptions<T, Raw>) {
    this.#opts = opts;
    this.#log = (opts.log ?? silentLogger).child({
      cluster: opts.client.cluster,
      resource: opts.type.plural,
    });
    this.addIndexers(opts.indexers ?? {});
  }

  /**
   * Adds indexes at any time, like client-go's AddIndexers: objects already cached are indexed at
   * once. A name already registered with the same function is a no-op; with a different function
   * it throws, before any of the given indexers is added, so a caller never gets an index that
   * answers for someone else's function.
   */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    const fresh = Object.entries(indexers).filter(([name, fn]) => this.#isNewIndexer(name, fn));
    for (const [name, fn] of fresh) {
      this.#indexers.set(name, fn);
      this.#indices.set(name, new Map());
      for (const [key, obj] of this.#store) this.#addToIndex(name, fn(obj), key);
    }
  }

  #isNewIndexer(name: string, fn: IndexFunc<T>): boolean {
    const existing = this.#indexers.get(name);
    if (existing === undefined) return true;
    if (existing === fn) return false;
    throw new Error(
      `informer ${this.#opts.type.plural} already has an index ${name} with a different function`,
    );
  }

  get type(): ResourceType {
    return this.#opts.type;
  }

  get cluster(): string {
    return this.#opts.client.cluster;
  }

  /** The resourceVersion the next watch resumes from ("" before the first list). */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** How many full LISTs have run (the first one included); relists follow 410s. */
  get relistCount(): number {
    return this.#relists;
  }

  get watchCount(): number {
    return this.#watchesStarted;
  }

  addEventHandler(handlers: EventHandlers<T>): void {
    this.#handlers.push(handlers);
    // A late handler sees the current state as adds, like client-go's AddEventHandler.
    if (this.#synced) for (const obj of this.#store.values()) this.#emit("add", obj);
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#syncWaiters.push(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      });
    });
  }

  get(namespace: string, name: string): T | undefined {
    return this.#store.get(objectKey({ metadata: { namespace, name } }));
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.#store.values()];
    const keys = this.#byNamespace.get(namespace) ?? [];
    return [...keys].map((k) => this.#store.get(k)).filter((o): o is T => o !== undefined);
  }

  byIndex(indexName: string, value: string): T[] {
    const keys = this.#indexed(indexName, value);
    return [...keys].map((k) => this.#store.get(k)).filter((o): o is T => o !== undefined);
  }

  countByIndex(indexName: string, value: string): number {
    return this.#indexed(indexName, value).size;
  }

  #indexed(indexName: string, value: string): ReadonlySet<string> {
    const index = this.#indices.get(indexName);
    if (!index) throw new Error(`informer ${this.#opts.type.plural} has no index ${indexName}`);
    return index.get(value) ?? new Set<string>();
  }

  /** Runs list+watch until the signal aborts. Never throws: every failure is retried. */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.#opts.backoff);
    const resync = this.#startResync(signal);
    try {
      while (!signal.aborted) {
        const failure = await this.#listAndWatch(signal).then(
          () => undefined,
          (err: unknown) => err,
        );
        if (failure !== undefined && !signal.aborted) await this.#recover(failure, backoff, signal);
      }
    } finally {
      if (resync) clearInterval(resync);
    }
  }

  async #listAndWatch(signal: AbortSignal): Promise<void> {
    if (!this.#resourceVersion) await this.#relist(signal);
    await this.#watch(signal);
  }

  /** 410 Gone relists at once; anything else waits out a jittered backoff first. */
  async #recover(err: unknown, backoff: Backoff, signal: AbortSignal): Promise<void> {
    if (err instanceof ResourceExpiredError) {
      this.#log.info("Relisting after resource version expired", { resourceVersion: this.#resourceVersion });
      this.#resourceVersion = "";
      return;
    }
    const delay = backoff.next();
    this.#log.error("Watch failed; restarting after backoff", err, { delayMs: Math.round(delay) });
    await sleep(delay, signal);
  }

  #startResync(signal: AbortSignal): NodeJS.Timeout | undefined {
    const period = this.#opts.resyncPeriodMs ?? 0;
    if (period <= 0) return undefined;
    const timer = setInterval(() => {
      if (signal.aborted || !this.#synced) return;
      for (const obj of this.#store.values()) this.#emit("update", obj, obj);
    }, period);
    timer.unref();
    return timer;
  }

  async #relist(signal: AbortSignal): Promise<void> {
    const { client, type, namespace, labelSelector, fieldSelector } = this.#opts;
    this.#relists++;
    // Trimmed page by page: a page's raw objects (managedFields, a work's manifests) are garbage
    // before the next arrives; holding every raw object until the end would peak at several times
    // the cache (docs/decisions/0008).
    const fresh = new Map<string, T>();
    let cont: string | undefined;
    let resourceVersion: string | undefined;
    do {
      if (signal.aborted) return;
      const page = await client.list<Raw>(type, {
        namespace,
        labelSelector,
        fieldSelector,
        limit: this.#opts.pageSize ?? 500,
        continue: cont,
        signal,
      });
      for (const item of page.items) {
        // List items carry no apiVersion/kind; handlers and caches want them.
        item.apiVersion ??= apiVersionOf(type);
        item.kind ??= type.kind;
        fresh.set(objectKey(item), this.#trim(item));
      }
      cont = page.metadata.continue;
      resourceVersion = page.metadata.resourceVersion;
    } while (cont);
    this.#replace(fresh);
    this.#resourceVersion = resourceVersion ?? "";
    this.#markSynced();
  }

  #replace(fresh: Map<string, T>): void {
    for (const [key, old] of this.#store) if (!fresh.has(key)) this.#apply("DELETED", old);
    for (const item of fresh.values()) this.#apply("MODIFIED", item);
  }

  #trim(obj: Raw): T {
    // Without a transform Raw is T (the default type argument): the object is cached as sent.
    const cached = this.#opts.transform ? this.#opts.transform(obj) : (obj as unknown as T);
    return cachedStrings.internAll(cached);
  }

  #markSynced(): void {
    if (this.#synced) return;
    this.#synced = true;
    for (const waiter of this.#syncWaiters.splice(0)) waiter();
  }

  async #watch(signal: AbortSignal): Promise<void> {
    const { client, type, namespace, labelSelector, fieldSelector } = this.#opts;
    const min = this.#opts.minWatchTimeoutSeconds ?? 300;
    const watchAbort = new AbortController();
    const onOuterAbort = (): void => watchAbort.abort();
    signal.addEventListener("abort", onOuterAbort, { once: true });
    const inactivity = this.#opts.inactivityTimeoutMs ?? 180_000;
    let idle = false;
    let timer = setTimeout(() => ((idle = true), watchAbort.abort()), inactivity);
    const touch = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => ((idle = true), watchAbort.abort()), inactivity);
    };
    this.#watchesStarted++;
    try {
      const stream = client.watch<Raw>(type, {
        namespace,
        labelSelector,
        fieldSelector,
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.floor(min * (1 + Math.random())),
        signal: watchAbort.signal,
      });
      for await (const event of stream) {
        touch();
        this.#handleWatchEvent(event);
      }
    } catch (err) {
      if (idle) throw new InactivityError(`no watch event for ${inactivity} ms`);
      if (err instanceof KubeApiError && err.code === 410) throw new ResourceExpiredError(err.message);
      throw err;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onOuterAbort);
    }
    if (idle) throw new InactivityError(`no watch event for ${inactivity} ms`);
  }

  #handleWatchEvent(event: WatchEvent<Raw>): void {
    if (event.type === "ERROR") {
      const status = event.object as unknown as { code?: number; message?: string };
      if (status.code === 410) throw new ResourceExpiredError(status.message ?? "resource version expired");
      throw new Error(`watch error ${status.code ?? "?"}: ${status.message ?? "unknown"}`);
    }
    const rv = event.object.metadata?.resourceVersion;
    if (event.type !== "BOOKMARK") this.#apply(event.type, this.#trim(event.object));
    if (rv) this.#resourceVersion = rv;
  }

  #apply(type: "ADDED" | "MODIFIED" | "DELETED", obj: T): void {
    const key = objectKey(obj);
    const old = this.#store.get(key);
    if (type === "DELETED") {
      if (!old) return;
      this.#store.delete(key);
      this.#unindex(key, old);
      this.#emit("delete", obj);
      return;
    }
    if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
    if (old) this.#unindex(key, old);
    this.#store.set(key, obj);
    this.#index(key, obj);
    if (old) this.#emit("update", obj, old);
    else this.#emit("add", obj);
  }

  #index(key: string, obj: T): void {
    for (const [name, fn] of this.#indexers) this.#addToIndex(name, fn(obj), key);
    const namespace = obj.metadata.namespace ?? "";
    let keys = this.#byNamespace.get(namespace);
    if (!keys) this.#byNamespace.set(namespace, (keys = new Set()));
    keys.add(key);
  }

  #addToIndex(name: string, values: string[], key: string): void {
    const index = this.#indices.get(name);
    if (!index) return;
    for (const value of values) {
      const keys = index.get(value) ?? new Set<string>();
      keys.add(key);
      index.set(value, keys);
    }
  }

  #unindex(key: string, obj: T): void {
    const namespace = obj.metadata.namespace ?? "";
    const inNamespace = this.#byNamespace.get(namespace);
    inNamespace?.delete(key);
    if (inNamespace?.size === 0) this.#byNamespace.delete(namespace);
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name);
      for (const value of fn(obj)) {
        const keys = index?.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index?.delete(value);
      }
    }
  }

  #emit(kind: "add" | "update" | "delete", obj: T, old?: T): void {
    for (const h of this.#handlers) {
      try {
        if (kind === "add") h.onAdd?.(obj);
        else if (kind === "update") h.onUpdate?.(old ?? obj, obj);
        else h.onDelete?.(obj);
      } catch (err) {
        this.#log.error("Event handler failed", err, {
          event: kind,
          key: objectKey(obj),
          detail: errorMessage(err),
        });
      }
    }
  }
}
