/**
 * The purge of soft-deleted clusters (api/v1alpha1/deleted-cluster.ts): on the leader, each pass
 * reads the records and, when one is past its retention, the HcpClusters from the apiserver (never
 * a cache: a record past its retention whose ID a cluster has again was undeleted, and its
 * resources are that cluster's now)
 * and, for each record past purgeAfter, deletes what the cluster kept (Azure resources, OIDC issuer,
 * signing keys; through the cluster controller's clients, handed in by main.ts) and then the
 * record; an undeleted cluster's record only loses the record. A pass runs every interval, or
 * sooner when a record falls due.
 */
import type { Registry } from "prom-client";
import { ConfigMapResource } from "../api/core.ts";
import {
  DELETED_CLUSTER_LABEL,
  decodeDeletedCluster,
  deletedClusterRecordName,
  purgeDecision,
  type DeletedClusterRecord,
  type RecordConfigMap,
  type RetainedResources,
} from "../api/v1alpha1/deleted-cluster.ts";
import { HcpClusterResource, originalUid, type HcpCluster } from "../api/v1alpha1/index.ts";
import { sleep } from "../runtime/backoff.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { errorMessage } from "../runtime/errors.ts";
import type { KubeClient } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { counter, gauge, metricsRegistry } from "../runtime/metrics.ts";

const NONE_LIVE: ReadonlySet<string> = new Set();

/** How often records are looked at when none falls due sooner. */
export const DEFAULT_PURGE_INTERVAL_MS = 60_000;

export interface SoftDeletePurgeOptions {
  /** The service cluster: the records and the HcpClusters. */
  cluster: Cluster;
  /** The operators' namespace, where the records are. */
  namespace: string;
  retained: RetainedResources;
  /** Default DEFAULT_PURGE_INTERVAL_MS. */
  intervalMs?: number;
  now?: () => number;
  log?: Logger;
  registry?: Registry;
}

/** What one pass did, for tests and the log. */
export interface PurgePass {
  retained: number;
  purged: string[];
  undeleted: string[];
  /** Purges still under way (an Azure deletion polls) or failed, with why. */
  pending: Array<{ clusterID: string; message: string }>;
  broken: string[];
  /** When the next record falls due, if one does. */
  nextDueAt?: number;
}

type PurgeResult = "purged" | "undeleted" | "pending" | "failed";

export class SoftDeletePurge implements Runnable {
  readonly needLeaderElection = true;
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #retained: RetainedResources;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #records: ReturnType<typeof gauge<"state">>;
  readonly #purges: ReturnType<typeof counter<"result">>;

  constructor(opts: SoftDeletePurgeOptions) {
    this.#client = opts.cluster.client;
    this.#namespace = opts.namespace;
    this.#retained = opts.retained;
    this.#intervalMs = opts.intervalMs ?? DEFAULT_PURGE_INTERVAL_MS;
    this.#now = opts.now ?? Date.now;
    this.#log = (opts.log ?? silentLogger).child({ controller: "softdelete" });
    const registry = opts.registry ?? metricsRegistry;
    this.#records = gauge(registry, {
      name: "hcp_soft_deleted_clusters",
      help: "Soft-deleted clusters' records: retained (undeletable), due (past the retention, purge pending) or broken",
      labelNames: ["state"] as const,
    });
    this.#purges = counter(registry, {
      name: "hcp_soft_delete_purges_total",
      help: "Soft-deleted clusters' records handled past their retention: purged, undeleted (record only), pending or failed purge steps",
      labelNames: ["result"] as const,
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let wait = this.#intervalMs;
      try {
        const pass = await this.pass(signal);
        if (pass.nextDueAt !== undefined)
          wait = Math.min(wait, Math.max(0, pass.nextDueAt - this.#now()) + 100);
        if (pass.pending.length > 0) wait = Math.min(wait, 5_000);
      } catch (err) {
        if (!signal.aborted) this.#log.error("Soft-delete purge pass failed", err);
      }
      await sleep(wait, signal);
    }
  }

  /** One look at every record. */
  async pass(signal?: AbortSignal): Promise<PurgePass> {
    const { records, broken } = await this.#readRecords(signal);
    const now = this.#now();
    const liveIDs = records.some((r) => purgeDecision(r, now, NONE_LIVE).action !== "keep")
      ? await this.#liveClusterIDs(signal)
      : NONE_LIVE;
    const out: PurgePass = { retained: 0, purged: [], undeleted: [], pending: [], broken };
    for (const record of records) {
      const decision = purgeDecision(record, now, liveIDs);
      if (decision.action === "keep") {
        out.retained++;
        if (decision.until !== undefined) out.nextDueAt = Math.min(out.nextDueAt ?? Infinity, decision.until);
        continue;
      }
      const result = await this.#handle(record, decision.action, signal).catch((err: unknown) => {
        if (signal?.aborted) throw err;
        return { result: "failed" as const, message: errorMessage(err) };
      });
      this.#purges.inc({ result: result.result });
      if (result.result === "purged") out.purged.push(record.clusterID);
      else if (result.result === "undeleted") out.undeleted.push(record.clusterID);
      else out.pending.push({ clusterID: record.clusterID, message: result.message });
    }
    this.#records.set({ state: "retained" }, out.retained);
    this.#records.set({ state: "due" }, out.pending.length);
    this.#records.set({ state: "broken" }, broken.length);
    return out;
  }

  /**
   * The IDs of every HcpCluster, listed only when a record is due: the list is the region's every
   * cluster (20 pages at 10,000), and it was read at each pass whether or not any record needed it.
   */
  async #liveClusterIDs(signal?: AbortSignal): Promise<ReadonlySet<string>> {
    const clusters = await this.#client.listAll<HcpCluster>(HcpClusterResource, { signal });
    return new Set(clusters.items.map((c) => originalUid(c)));
  }

  async #handle(
    record: DeletedClusterRecord,
    action: "purge" | "dropRecord",
    signal?: AbortSignal,
  ): Promise<{ result: PurgeResult; message: string }> {
    const who = { clusterID: record.clusterID, cluster: `${record.namespace}/${record.cluster.name}` };
    if (action === "dropRecord") {
      await this.#deleteRecord(record, signal);
      this.#log.info(
        "Soft-deleted cluster was undeleted: its record is dropped, its resources are the cluster's",
        who,
      );
      return { result: "undeleted", message: "" };
    }
    const step = await this.#retained.purge(record, { signal });
    if (!step.done) {
      this.#log.info("Purging a soft-deleted cluster: not done yet", { ...who, message: step.message });
      return { result: "pending", message: step.message };
    }
    await this.#deleteRecord(record, signal);
    this.#log.info("Purged a soft-deleted cluster: its retention ended", {
      ...who,
      deletedAt: record.deletedAt,
      purgeAfter: record.purgeAfter,
      message: step.message,
    });
    return { result: "purged", message: step.message };
  }

  async #deleteRecord(record: DeletedClusterRecord, signal?: AbortSignal): Promise<void> {
    await this.#client.delete(
      ConfigMapResource,
      { name: deletedClusterRecordName(record.clusterID), namespace: this.#namespace },
      { signal },
    );
  }

  /** The records; one that cannot be read is kept (never purged: what it would remove is unknown) and logged. */
  async #readRecords(signal?: AbortSignal): Promise<{ records: DeletedClusterRecord[]; broken: string[] }> {
    const list = await this.#client.listAll<RecordConfigMap>(ConfigMapResource, {
      namespace: this.#namespace,
      labelSelector: DELETED_CLUSTER_LABEL,
      signal,
    });
    const records: DeletedClusterRecord[] = [];
    const broken: string[] = [];
    for (const cm of list.items) {
      try {
        records.push(decodeDeletedCluster(cm));
      } catch (err) {
        broken.push(cm.metadata.name ?? "");
        this.#log.error("A soft-deleted cluster's record cannot be read; it is never purged", err);
      }
    }
    return { records, broken };
  }
}
