/**
 * The multi-cluster registry: one client and one set of shared informers per cluster, added and
 * removed at run time (a management cluster joins or leaves the region). Controllers ask it for a
 * client by cluster name and subscribe to membership changes instead of retrying on a cluster that
 * is not there (ClusterNotConnectedError), as Cluster API's ClusterCache does.
 */
import { ClusterNotConnectedError } from "./errors.ts";
import { summariseManagedFields } from "./apply.ts";
import { Informer, type InformerOptions } from "./informer.ts";
import { KubeClient, type KubeObject, type ResourceType } from "./kube.ts";
import { loadClusterAccess, type ClusterAccess, type KubeConfigLike } from "./kubeconfig.ts";
import { silentLogger, type Logger } from "./logger.ts";

export type ClusterEvent = { type: "added" | "removed"; cluster: string };

/** One cluster: its client, its shared informers, and a signal that aborts when it is removed. */
export class Cluster {
  readonly name: string;
  readonly client: KubeClient;
  readonly #informers = new Map<string, { informer: Informer; transform: unknown }>();
  readonly #stop = new AbortController();
  readonly #log: Logger;

  constructor(name: string, access: ClusterAccess | KubeConfigLike, log: Logger) {
    this.name = name;
    this.client = new KubeClient(name, access);
    this.#log = log.child({ cluster: name });
  }

  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /**
   * The shared informer for a resource type (one per type and namespace scope), started on first
   * use and stopped with the cluster. Cached objects carry managedFields only as a summary
   * (summariseManagedFields), then pass through the caller's transform. Every caller of a type must
   * give the same transform (the cache has one shape; a different one throws here), and a later
   * caller's indexers are merged into it (a name taken by a different function throws here, not at
   * the first byIndex); its other options do not change it.
   */
  informer<T extends KubeObject, Raw extends KubeObject = T>(
    type: ResourceType,
    opts: Omit<InformerOptions<T, Raw>, "client" | "type" | "log"> = {},
  ): Informer<T, Raw> {
    const key = `${type.group}/${type.version}/${type.plural}/${opts.namespace ?? ""}/${opts.labelSelector ?? ""}`;
    const existing = this.#informers.get(key);
    if (existing) {
      if (existing.transform !== opts.transform)
        throw new Error(`the ${type.plural} informer is shared and was made with another transform`);
      const informer = existing.informer as unknown as Informer<T, Raw>;
      if (opts.indexers) informer.addIndexers(opts.indexers);
      return informer;
    }
    const { transform } = opts;
    const informer = new Informer<T, Raw>({
      ...opts,
      transform: transform
        ? (obj) => transform(summariseManagedFields(obj))
        : (obj) => summariseManagedFields(obj) as unknown as T,
      client: this.client,
      type,
      log: this.#log,
    });
    this.#informers.set(key, { informer: informer as unknown as Informer, transform });
    void informer.run(this.#stop.signal);
    return informer;
  }

  /** True once every informer started so far has listed. */
  hasSynced(): boolean {
    return [...this.#informers.values()].every(({ informer }) => informer.hasSynced());
  }

  stop(): void {
    this.#stop.abort();
  }
}

export class ClusterRegistry {
  readonly #clusters = new Map<string, Cluster>();
  readonly #listeners = new Set<(e: ClusterEvent) => void>();
  readonly #log: Logger;

  constructor(log: Logger = silentLogger) {
    this.#log = log;
  }

  /** Adds (or replaces) a cluster from its access, a kubeconfig object, file path or YAML string. */
  add(name: string, source: ClusterAccess | KubeConfigLike | { path: string } | { yaml: string }): Cluster {
    const access = "path" in source || "yaml" in source ? loadClusterAccess(source) : source;
    this.#clusters.get(name)?.stop();
    const cluster = new Cluster(name, access, this.#log);
    this.#clusters.set(name, cluster);
    this.#log.info("Cluster added", { cluster: name, server: cluster.client.server });
    this.#notify({ type: "added", cluster: name });
    return cluster;
  }

  remove(name: string): boolean {
    const cluster = this.#clusters.get(name);
    if (!cluster) return false;
    cluster.stop();
    this.#clusters.delete(name);
    this.#log.info("Cluster removed", { cluster: name });
    this.#notify({ type: "removed", cluster: name });
    return true;
  }

  /** The cluster, or ClusterNotConnectedError. */
  get(name: string): Cluster {
    const cluster = this.#clusters.get(name);
    if (!cluster) throw new ClusterNotConnectedError(name);
    return cluster;
  }

  has(name: string): boolean {
    return this.#clusters.has(name);
  }

  names(): string[] {
    return [...this.#clusters.keys()];
  }

  /** Subscribes to membership changes; returns an unsubscribe function. */
  subscribe(listener: (e: ClusterEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  hasSynced(): boolean {
    return [...this.#clusters.values()].every((c) => c.hasSynced());
  }

  stopAll(): void {
    for (const name of [...this.#clusters.keys()]) this.remove(name);
  }

  #notify(e: ClusterEvent): void {
    for (const l of this.#listeners) l(e);
  }
}
