/**
 * Watches for `describe --watch` and `wait`: the runtime's informers (list, then watch from that
 * resourceVersion, bookmarks, relist on 410, reconnect with backoff), so a change arrives as an
 * event and nothing polls. A lost connection is said on stderr and retried.
 */
import type { KubeObject, ResourceType } from "../api/meta/v1.ts";
import {
  ExternalAuthResource,
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  type ExternalAuth,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import { Informer } from "../runtime/informer.ts";
import type { Logger } from "../runtime/logger.ts";
import type { Connection } from "./kube.ts";
import type { ClusterSnapshot } from "./model.ts";
import { assemble, workSelector } from "./snapshot.ts";

/** Informer failures as one warning line each; everything else is dropped. */
export function warningLogger(write: (line: string) => void): Logger {
  const logger: Logger = {
    info: () => undefined,
    debug: () => undefined,
    error: (msg, err) => write(`warning: ${msg}: ${err instanceof Error ? err.message : String(err)}\n`),
    child: () => logger,
  };
  return logger;
}

interface WatchQuery {
  type: ResourceType;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Starts an informer that calls `changed` on every add, update and delete. */
export function startInformer<T extends KubeObject>(
  conn: Connection,
  q: WatchQuery,
  changed: () => void,
  ctx: { signal: AbortSignal; log: Logger },
): Informer<T> {
  const informer = new Informer<T>({ client: conn.client, log: ctx.log, ...q });
  informer.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
  void informer.run(ctx.signal);
  return informer;
}

export interface ClusterWatch {
  /** Resolves once every informer has listed (false if the signal aborted first). */
  synced(): Promise<boolean>;
  /** The cluster's objects as the informers hold them; undefined once the cluster is gone. */
  snapshot(): ClusterSnapshot | undefined;
}

/** Informers over everything describe reads about one cluster. */
export function watchCluster(
  conn: Connection,
  target: { name: string; namespace: string },
  changed: () => void,
  ctx: { signal: AbortSignal; log: Logger },
): ClusterWatch {
  const { name, namespace } = target;
  const clusters = startInformer<HcpCluster>(
    conn,
    { type: HcpClusterResource, namespace, fieldSelector: `metadata.name=${name}` },
    changed,
    ctx,
  );
  const pools = startInformer<NodePool>(conn, { type: NodePoolResource, namespace }, changed, ctx);
  const auths = startInformer<ExternalAuth>(conn, { type: ExternalAuthResource, namespace }, changed, ctx);
  const mcs = startInformer<ManagementCluster>(conn, { type: ManagementClusterResource }, changed, ctx);
  const works = startInformer<ManifestWork>(
    conn,
    { type: ManifestWorkResource, labelSelector: workSelector(name, namespace) },
    changed,
    ctx,
  );
  const all: Informer<never>[] = [clusters, pools, auths, mcs, works] as unknown as Informer<never>[];
  return {
    synced: async () => (await Promise.all(all.map((i) => i.waitForSync(ctx.signal)))).every(Boolean),
    snapshot() {
      const cluster = clusters.get(namespace, name);
      if (!cluster) return undefined;
      const placed = cluster.status?.managementCluster;
      return assemble({
        cluster,
        pools: pools.list(namespace),
        externalAuths: auths.list(namespace),
        managementCluster: placed ? mcs.get("", placed) : undefined,
        works: works.list(),
      });
    },
  };
}
