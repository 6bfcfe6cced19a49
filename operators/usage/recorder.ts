/**
 * The usage recorder (issue 35): level-triggered from the process's shared HcpCluster and NodePool
 * informers, it writes what it sees into the usage ledger (operators/metering, decision 0013):
 *
 * - each cluster's billing record (ID = originalUid(), so a restored cluster keeps its record),
 *   when it first succeeded (Ready's lastTransitionTime the first time it is seen True) and when
 *   it was deleted (its deletionTimestamp; the ledger ends every open segment of it then);
 * - a control-plane segment at rate 1 from the first success until the deletion;
 * - per node pool a vCPU segment at nodes × vCPUs (facts.ts), changed when the nodes HyperShift
 *   reports or the size change, ended at the pool's deletionTimestamp.
 *
 * Every write is idempotent in the ledger, so a restart (an empty memory) observes everything once
 * more and writes nothing new. In memory it keeps only what it last wrote per live object, so it
 * writes nothing when nothing changed and its memory follows the objects, never the ledger.
 * Objects gone while the operators were down are found by comparing the ledger's open segments
 * with the cache (sweep), and ended at the time they were found gone.
 */
import type { Registry } from "prom-client";
import {
  HcpClusterResource,
  NodePoolResource,
  originalUid,
  type HcpCluster,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import {
  LedgerConflictError,
  LedgerInputError,
  type Dimension,
  type Ledger,
  type Observation,
  type OpenSegment,
} from "../metering/ledger.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { Controller, type Request, type Result } from "../runtime/controller.ts";
import { TerminalError } from "../runtime/errors.ts";
import type { Informer } from "../runtime/informer.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { sleep } from "../runtime/backoff.ts";
import { enqueueForObject, enqueueMapped } from "../runtime/source.ts";
import { clusterFacts, deletedAt, meteredCluster, meteredPool, poolRate, readySince } from "./facts.ts";
import { usageMetrics, type UsageMetrics } from "./metrics.ts";

export const USAGE_RECORDER = "usage-recorder";
/** How often the ledger's open segments are checked against the cache. */
export const DEFAULT_SWEEP_INTERVAL_MS = 10 * 60_000;

/** What the recorder needs of the ledger. */
export type RecorderLedger = Pick<
  Ledger,
  | "billingRecord"
  | "recordCluster"
  | "recordFirstSucceeded"
  | "recordDeleted"
  | "recordUndeleted"
  | "observe"
  | "openSegments"
>;

export interface UsageRecorderOptions {
  cluster: Cluster;
  ledger: RecorderLedger;
  /** The clock for observations the objects carry no time for. Default () => new Date(). */
  now?: () => Date;
  /** Watch one namespace only (tests); default all. */
  namespace?: string;
  sweepIntervalMs?: number;
  log?: Logger;
  registry?: Registry;
}

/** What was last written for one live cluster (and its pools): the recorder's whole memory of it. */
interface Seen {
  uid: string;
  resourceId: string;
  createdAt: Date;
  firstSucceededAt?: Date;
  deletedAt?: Date;
  /** Its latest undelete: nothing before it is counted again. */
  undeletedAt?: Date;
  controlPlane: boolean;
  /** Pool name → its uid and the rate last written. */
  pools: Map<string, { uid: string; resourceId: string; rate: number; deletedAt?: Date }>;
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;
const later = (a: Date, b: Date): Date => (a > b ? a : b);

export class UsageRecorder implements Runnable {
  readonly needLeaderElection = true;
  readonly #clusters: Informer<HcpCluster>;
  readonly #pools: Informer<NodePool>;
  readonly #controller: Controller;
  readonly #ledger: RecorderLedger;
  readonly #now: () => Date;
  readonly #log: Logger;
  readonly #metrics: UsageMetrics;
  readonly #sweepIntervalMs: number;
  readonly #seen = new Map<string, Seen>();

  constructor(opts: UsageRecorderOptions) {
    const { cluster } = opts;
    const scope = opts.namespace ? { namespace: opts.namespace } : {};
    this.#clusters = cluster.informer<HcpCluster>(HcpClusterResource, scope);
    this.#pools = cluster.informer<NodePool>(NodePoolResource, scope);
    this.#ledger = opts.ledger;
    this.#now = opts.now ?? (() => new Date());
    this.#log = (opts.log ?? silentLogger).child({ component: USAGE_RECORDER });
    this.#metrics = usageMetrics(opts.registry);
    this.#sweepIntervalMs = opts.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    this.#controller = new Controller({
      name: USAGE_RECORDER,
      log: this.#log,
      reconciler: { reconcile: (_ctx, req) => this.reconcile(req) },
    });
    enqueueForObject(this.#clusters, this.#controller);
    enqueueMapped(this.#pools, this.#controller, (p) => [
      { cluster: cluster.name, namespace: p.metadata.namespace ?? "", name: p.spec.clusterRef.name },
    ]);
  }

  async start(signal: AbortSignal): Promise<void> {
    const synced = await Promise.all([this.#clusters.waitForSync(signal), this.#pools.waitForSync(signal)]);
    if (!synced.every(Boolean)) return;
    const sweeping = this.#sweepLoop(signal);
    await this.#controller.start(signal);
    await sweeping;
  }

  async #sweepLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.sweep();
      } catch (err) {
        if (!signal.aborted) this.#log.error("Usage sweep failed", err);
      }
      await sleep(this.#sweepIntervalMs, signal);
    }
  }

  async reconcile(req: Request): Promise<Result> {
    const key = keyOf(req.namespace, req.name);
    const c = this.#clusters.get(req.namespace, req.name);
    const seen = this.#seen.get(key);
    if (seen && (!c || meteredCluster(c).uid !== seen.uid)) {
      // Gone (or replaced by a cluster of the same name): it ends at its deletion, or now if unseen.
      if (!seen.deletedAt) await this.#end(seen.uid, this.#now());
      this.#seen.delete(key);
    }
    if (!c) return {};
    try {
      await this.#record(key, c);
    } catch (err) {
      if (!(err instanceof LedgerInputError || err instanceof LedgerConflictError)) throw err;
      this.#metrics.recordErrors.inc({ kind: "HcpCluster" });
      // The same object gives the same refusal: retrying cannot help until the object changes.
      throw new TerminalError(`the usage ledger refused HcpCluster ${key}: ${err.message}`, { cause: err });
    }
    return {};
  }

  async #record(key: string, c: HcpCluster): Promise<void> {
    const seen = this.#seen.get(key) ?? (await this.#billingRecord(c));
    this.#seen.set(key, seen);
    const deleted = deletedAt("HcpCluster", c);
    if (deleted) {
      if (!seen.deletedAt) {
        const at = later(deleted, seen.createdAt);
        await this.#end(seen.uid, at);
        seen.deletedAt = at;
      }
      return;
    }
    if (!seen.firstSucceededAt) {
      const ready = readySince(c);
      if (ready) {
        // Not before its creation: a restored cluster's Ready can predate its record (clusterFacts).
        const at = later(ready, seen.createdAt);
        await this.#ledger.recordFirstSucceeded(seen.uid, at);
        seen.firstSucceededAt = at;
      }
    }
    if (seen.firstSucceededAt && !seen.controlPlane) {
      await this.#observe(
        usageOf(seen, seen, {
          dimension: "controlPlaneHours",
          rate: 1,
          at: seen.undeletedAt ? later(seen.firstSucceededAt, seen.undeletedAt) : seen.firstSucceededAt,
        }),
      );
      seen.controlPlane = true;
    }
    await this.#recordPools(c, seen);
  }

  /** The cluster's record from the ledger, written first when there is none. */
  async #billingRecord(c: HcpCluster): Promise<Seen> {
    const facts = clusterFacts(c);
    let record = await this.#ledger.billingRecord(facts.clusterId);
    if (!record) {
      await this.#ledger.recordCluster(facts);
      record = facts;
    }
    if (record.deletedAt && !c.metadata.deletionTimestamp) {
      // Made again under its cluster ID (hcpctl cluster undelete): it counts again from then.
      const undeletedAt = new Date(c.metadata.creationTimestamp ?? "");
      await this.#ledger.recordUndeleted(facts.clusterId, undeletedAt);
      this.#log.info("Cluster undeleted: its usage counts again", {
        clusterId: facts.clusterId,
        deletedAt: record.deletedAt.toISOString(),
        undeletedAt: undeletedAt.toISOString(),
      });
      record = { ...record, deletedAt: undefined, undeletedAt };
    }
    return {
      uid: facts.clusterId,
      resourceId: record.resourceId,
      createdAt: record.createdAt,
      ...(record.firstSucceededAt ? { firstSucceededAt: record.firstSucceededAt } : {}),
      ...(record.deletedAt ? { deletedAt: record.deletedAt } : {}),
      ...(record.undeletedAt ? { undeletedAt: record.undeletedAt } : {}),
      controlPlane: false,
      pools: new Map(),
    };
  }

  async #recordPools(c: HcpCluster, seen: Seen): Promise<void> {
    const namespace = c.metadata.namespace ?? "";
    const pools = this.#pools.list(namespace).filter((p) => p.spec.clusterRef.name === c.metadata.name);
    const present = new Set<string>();
    for (const p of pools) {
      const name = p.metadata.name ?? "";
      present.add(name);
      try {
        await this.#recordPool(c, seen, p);
      } catch (err) {
        if (!(err instanceof LedgerInputError || err instanceof LedgerConflictError)) throw err;
        this.#metrics.recordErrors.inc({ kind: "NodePool" });
        this.#log.error("The usage ledger refused a node pool; its usage is not recorded", err, {
          nodePool: keyOf(namespace, name),
        });
      }
    }
    for (const [name, was] of seen.pools) {
      if (present.has(name)) continue;
      // Gone from the cache: ended at its deletion if it was seen, else now.
      await this.#observe(
        usageOf(seen, was, { dimension: "vCPUHours", rate: 0, at: was.deletedAt ?? this.#now() }),
      );
      seen.pools.delete(name);
    }
  }

  async #recordPool(c: HcpCluster, seen: Seen, p: NodePool): Promise<void> {
    const name = p.metadata.name ?? "";
    const pool = meteredPool(p, c);
    const was = seen.pools.get(name);
    if (was && was.uid !== pool.uid) {
      await this.#observe(
        usageOf(seen, was, { dimension: "vCPUHours", rate: 0, at: was.deletedAt ?? this.#now() }),
      );
      seen.pools.delete(name);
    }
    const rate = poolRate(p);
    const deleted = deletedAt("NodePool", p);
    const current = seen.pools.get(name);
    if (current && current.rate === rate) return;
    const at = rate === 0 && deleted ? deleted : this.#now();
    await this.#observe(usageOf(seen, pool, { dimension: "vCPUHours", rate, at }));
    seen.pools.set(name, { ...pool, rate, ...(deleted ? { deletedAt: deleted } : {}) });
  }

  async #observe(o: Observation): Promise<void> {
    let { change, late } = await this.#ledger.observe(o);
    if (change === "stale" && Number(o.rate) === 0) {
      // A deletion time older than a later change the ledger holds: end it now instead.
      ({ change, late } = await this.#ledger.observe({ ...o, at: later(this.#now(), o.at) }));
    }
    const { dimension } = o;
    if (change !== "unchanged" && change !== "stale") this.#metrics.observations.inc({ dimension, change });
    if (late || change === "stale")
      this.#log.info("Usage observed after its hour was rolled up; that hour keeps what it had", {
        resource: o.resourceUid,
        dimension,
        at: o.at.toISOString(),
        change,
      });
  }

  async #end(clusterId: string, at: Date): Promise<void> {
    const written = await this.#ledger.recordDeleted(clusterId, at);
    if (written === "recorded")
      this.#log.info("Cluster deleted: its usage ends", { clusterId, at: at.toISOString() });
  }

  /**
   * Ends what the ledger holds open for objects the cache no longer has (deleted while the
   * operators were down): at the sweep's time, the only time known. Reads the ledger before the
   * cache, so a resource opened meanwhile is in the cache.
   */
  async sweep(): Promise<{ ended: number }> {
    if (!this.#clusters.hasSynced() || !this.#pools.hasSynced()) return { ended: 0 };
    const open = await this.#ledger.openSegments();
    const clusters = new Set(this.#clusters.list().map((c) => meteredCluster(c).uid));
    const pools = new Set(this.#pools.list().map((p) => originalUid(p)));
    let ended = 0;
    const now = this.#now();
    for (const s of open) if (await this.#endGone(s, { clusters, pools }, now)) ended++;
    if (ended > 0)
      this.#log.info("Ended the usage of resources found gone", { ended, at: now.toISOString() });
    return { ended };
  }

  /** Ends one open segment when its cluster or pool is not in the cache; true when it did. */
  async #endGone(
    s: OpenSegment,
    live: { clusters: Set<string>; pools: Set<string> },
    now: Date,
  ): Promise<boolean> {
    try {
      if (!live.clusters.has(s.clusterId))
        return (await this.#ledger.recordDeleted(s.clusterId, now)) === "recorded";
      if (s.dimension !== "vCPUHours" || live.pools.has(s.resourceUid)) return false;
      const { change } = await this.#ledger.observe({ ...s, resourceId: "-", rate: 0, at: now });
      return change === "closed";
    } catch (err) {
      this.#log.error("Could not end the usage of a resource that is gone", err, { ...s });
      return false;
    }
  }
}

/** An observation of one of `seen`'s resources (the cluster itself, or a pool). */
function usageOf(
  seen: Seen,
  resource: { uid: string; resourceId: string },
  what: { dimension: Dimension; rate: number; at: Date },
): Observation {
  return { clusterId: seen.uid, resourceUid: resource.uid, resourceId: resource.resourceId, ...what };
}
