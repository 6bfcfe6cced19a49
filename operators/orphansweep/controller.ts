/**
 * The Azure orphan sweep: on start and then every interval, list what the operators made in Azure
 * (inventory.ts), and for each resource whose owner tag names no HcpCluster in the synced cache,
 * mark it orphaned on the resource, then delete it once the grace period has passed since the mark
 * (decide.ts), reporting each (report.ts). It runs on the leader only, one sweep at a time.
 *
 * What keeps it from deleting a live cluster's resource: no decision before the cache has synced;
 * the cache is read after Azure was listed (this process's cluster controller only creates
 * resources for clusters already in that shared cache, so every resource listed has its owner in
 * the cache unless the owner is gone); a cluster being deleted counts as live, and so does a
 * soft-deleted one until its purge (its record, api/v1alpha1/deleted-cluster.ts, read from the
 * apiserver after the cache: a cluster's record is written before its finalizer goes); a grace
 * period; and just before a delete, the owner (or its record) is read from the apiserver.
 */
import { sleep } from "../runtime/backoff.ts";
import type { Registry } from "prom-client";
import { ConfigMapResource } from "../api/core.ts";
import { DELETED_CLUSTER_LABEL, deletedClusterRecordName } from "../api/v1alpha1/deleted-cluster.ts";
import { HcpClusterResource, originalUid, type HcpCluster } from "../api/v1alpha1/index.ts";
import type { AzureClients } from "../azure/index.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { EventRecorder } from "../runtime/events.ts";
import type { Informer } from "../runtime/informer.ts";
import type { KubeClient } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { metricsRegistry } from "../runtime/metrics.ts";
import { deleteOwnedResource, withMark, writeTags } from "./actions.ts";
import { decide } from "./decide.ts";
import {
  DELETION_ORDER,
  groupHoldsRegionZone,
  listOwned,
  regionOwners,
  type OwnedResource,
  type ParentZoneRef,
} from "./inventory.ts";
import { SweepReport, sweepMetrics, type ReportEntry, type SweepMetrics } from "./report.ts";

/** How long a resource stays marked before it is deleted: a day for a human to notice. */
export const DEFAULT_GRACE_MS = 24 * 60 * 60 * 1000;
/** How often the region is swept. */
export const DEFAULT_INTERVAL_MS = 10 * 60 * 1000;

export interface OrphanSweepOptions {
  /** The service cluster: its HcpClusters are the live owners; the report lives there. */
  cluster: Cluster;
  azure: AzureClients;
  /** The region's parent zone (its NS delegations are swept; its subscription too). */
  parentZone: ParentZoneRef;
  /** Where the report ConfigMap lives (the operators' namespace). */
  namespace: string;
  /** Default DEFAULT_GRACE_MS. */
  graceMs?: number;
  /** Default DEFAULT_INTERVAL_MS. */
  intervalMs?: number;
  /** Subscriptions to sweep besides the parent zone's and those the cached clusters name. Default none. */
  subscriptions?: readonly string[];
  /** Default () => new Date(). */
  now?: () => Date;
  log?: Logger;
  /** Default the process's metrics registry. */
  registry?: Registry;
}

export type SweepResult =
  | { decided: false; reason: string }
  | { decided: true; orphans: ReportEntry[]; marked: number; unmarked: number; deleted: number };

/** The grace period from its flag's value in seconds; throws naming the flag. */
export function graceFromFlag(flag: string, seconds: string): number {
  const n = Number(seconds);
  if (seconds.trim() === "" || !Number.isFinite(n) || n < 0)
    throw new Error(`${flag} must be a number of seconds, 0 or more; got "${seconds}"`);
  return n * 1000;
}

interface Tally {
  marked: number;
  unmarked: number;
  deleted: number;
}

/** What one sweep knows while it goes through the resources. */
interface SweepState {
  live: ReadonlySet<string>;
  /** Owners shown to be this region's clusters (regionOwners, and groups found holding their zone). */
  ours: Set<string>;
  /** Owners with a deletion that failed or is still running: their other resources wait a sweep. */
  blocked: Set<string>;
  now: Date;
  tally: Tally;
}

export class OrphanSweep implements Runnable {
  readonly needLeaderElection = true;
  readonly #clusters: Informer<HcpCluster>;
  readonly #client: KubeClient;
  /** The operators' namespace: the report and the soft-deleted clusters' records. */
  readonly #namespace: string;
  readonly #azure: AzureClients;
  readonly #parentZone: ParentZoneRef;
  readonly #graceMs: number;
  readonly #intervalMs: number;
  /** Every subscription seen in this process's life: a subscription whose last cluster went is still swept. */
  readonly #subscriptions = new Set<string>();
  readonly #now: () => Date;
  readonly #log: Logger;
  readonly #report: SweepReport;
  readonly #metrics: SweepMetrics;

  constructor(opts: OrphanSweepOptions) {
    this.#clusters = opts.cluster.informer<HcpCluster>(HcpClusterResource);
    this.#client = opts.cluster.client;
    this.#namespace = opts.namespace;
    this.#azure = opts.azure;
    this.#parentZone = opts.parentZone;
    this.#graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
    this.#intervalMs = opts.intervalMs ?? DEFAULT_INTERVAL_MS;
    for (const s of [opts.parentZone.subscriptionId, ...(opts.subscriptions ?? [])])
      this.#subscriptions.add(s.toLowerCase());
    this.#now = opts.now ?? (() => new Date());
    this.#log = (opts.log ?? silentLogger).child({ controller: "orphansweep" });
    const events = new EventRecorder(this.#client, "hcp-orphan-sweep", this.#log);
    this.#report = new SweepReport(this.#client, opts.namespace, events);
    this.#metrics = sweepMetrics(opts.registry ?? metricsRegistry);
  }

  async start(signal: AbortSignal): Promise<void> {
    if (!(await this.#clusters.waitForSync(signal))) return;
    while (!signal.aborted) {
      try {
        await this.sweep(signal);
      } catch (err) {
        if (!signal.aborted) this.#log.error("Orphan sweep failed", err);
      }
      await sleep(this.#intervalMs, signal);
    }
  }

  /** One sweep; decides nothing unless the cluster cache has synced. */
  async sweep(signal?: AbortSignal): Promise<SweepResult> {
    if (!this.#clusters.hasSynced()) {
      const reason = "the HcpCluster cache has not synced";
      this.#log.info("Orphan sweep skipped: no decision without a synced cache", { reason });
      return { decided: false, reason };
    }
    for (const c of this.#clusters.list())
      this.#subscriptions.add(c.spec.platform.azure.subscriptionId.toLowerCase());
    const where = { subscriptions: [...this.#subscriptions].sort(), parentZone: this.#parentZone };
    this.#log.info("Sweeping Azure for orphaned resources", { subscriptions: where.subscriptions.length });
    const inventory = await listOwned(this.#azure, where, signal);
    for (const { where: place, error } of inventory.failures)
      this.#log.error("Could not list Azure resources; nothing there is decided this sweep", error, {
        place,
      });
    // The cache is read after Azure was listed: see the file's comment.
    const live = new Set(this.#clusters.list().map((c) => originalUid(c)));
    for (const id of await this.#softDeleted(signal)) live.add(id);
    await this.#report.ensure(signal);
    const now = this.#now();
    const tally: Tally = { marked: 0, unmarked: 0, deleted: 0 };
    const ours = regionOwners(inventory.found, this.#parentZone);
    const state: SweepState = { live, ours, blocked: new Set(), now, tally };
    const orphans: ReportEntry[] = [];
    for (const r of byDeletionOrder(inventory.found)) {
      try {
        const entry = await this.#handle(r, state, signal);
        if (entry) orphans.push(entry);
      } catch (err) {
        if (signal?.aborted) throw err;
        this.#log.error("Could not handle a possibly orphaned Azure resource", err, { resource: r.id });
      }
    }
    await this.#report.write(orphans, signal);
    this.#metrics.setOrphans(orphans);
    this.#metrics.completed(now);
    this.#log.info("Orphan sweep done", { orphans: orphans.length, ...tally });
    return { decided: true, orphans, ...tally };
  }

  async #handle(r: OwnedResource, at: SweepState, signal?: AbortSignal): Promise<ReportEntry | undefined> {
    const { now, tally } = at;
    const verdict = decide(r, at.live, now, this.#graceMs);
    if (verdict.action !== "keep" && verdict.action !== "unmark" && !(await this.#ours(r, at, signal))) {
      this.#log.debug("Leaving a resource of an unknown cluster alone: no sign it is this region's", {
        resource: r.id,
        owner: r.owner.id,
      });
      return undefined;
    }
    switch (verdict.action) {
      case "keep":
        return undefined;
      case "unmark":
        await this.#unmark(r, signal);
        tally.unmarked++;
        return undefined;
      case "mark": {
        const deleteAfter = new Date(now.getTime() + this.#graceMs);
        this.#log.info("Marking an orphaned Azure resource", { resource: r.id, owner: r.owner.id });
        await writeTags(this.#azure, r, withMark(r.tags, now), signal);
        tally.marked++;
        const message = `${describe(r)}: HcpCluster ${ownerName(r)} no longer exists; marked orphaned, deleted after ${deleteAfter.toISOString()} unless it returns`;
        await this.#report.event("Warning", "OrphanFound", message, signal);
        return { resource: r, state: "marked", since: now, deleteAfter };
      }
      case "wait":
        return { resource: r, state: "marked", since: verdict.since, deleteAfter: verdict.deleteAfter };
      case "delete":
        return this.#delete(r, { ...at, since: verdict.since }, signal);
    }
  }

  /**
   * Whether the owner is one of this region's clusters: its delegation is in the parent zone or its
   * zone is under it; for a group, a zone under the parent zone in it. A cluster of another region
   * sharing the subscription is in no cache here, and is never this sweep's to touch.
   */
  async #ours(r: OwnedResource, at: SweepState, signal?: AbortSignal): Promise<boolean> {
    if (at.ours.has(r.owner.id)) return true;
    if (r.kind !== "ResourceGroup" || !(await groupHoldsRegionZone(this.#azure, r, this.#parentZone, signal)))
      return false;
    at.ours.add(r.owner.id);
    return true;
  }

  async #unmark(r: OwnedResource, signal?: AbortSignal): Promise<void> {
    this.#log.info("Removing the orphan mark: its cluster exists", { resource: r.id, owner: r.owner.id });
    await writeTags(this.#azure, r, withMark(r.tags, undefined), signal);
    const message = `${describe(r)} belongs to HcpCluster ${ownerName(r)}, which exists; the orphan mark is removed`;
    await this.#report.event("Normal", "OrphanOwnerFound", message, signal);
  }

  async #delete(
    r: OwnedResource,
    at: SweepState & { since: Date },
    signal?: AbortSignal,
  ): Promise<ReportEntry | undefined> {
    const entry = (problem: string): ReportEntry => {
      // What comes after it (its IP, its zone: the sign it is this region's) waits for the next sweep.
      at.blocked.add(r.owner.id);
      return {
        resource: r,
        state: "deleting",
        since: at.since,
        deleteAfter: new Date(at.since.getTime() + this.#graceMs),
        problem,
      };
    };
    if (at.blocked.has(r.owner.id))
      return entry("waits for another resource of the same cluster to be deleted first");
    const owner = await this.#ownerExists(r, signal);
    if (owner === undefined) return entry("its cluster tag names no HcpCluster to check; not deleted");
    if (owner) {
      await this.#unmark(r, signal);
      at.tally.unmarked++;
      return undefined;
    }
    this.#log.info("Deleting an orphaned Azure resource", { resource: r.id, owner: r.owner.id });
    let outcome;
    try {
      outcome = await deleteOwnedResource(this.#azure, r, signal);
    } catch (err) {
      if (signal?.aborted) throw err;
      const why = err instanceof Error ? err.message : String(err);
      await this.#report.event("Warning", "OrphanDeleteFailed", `${describe(r)}: ${why}`, signal);
      return entry(why);
    }
    if (!outcome.done) return entry(outcome.reason);
    if (outcome.value !== "deleted") {
      // Gone already, or its owner tag changed since the listing: nothing of ours to delete.
      this.#log.info("Orphan not deleted: it is gone or no longer this owner's", {
        resource: r.id,
        found: outcome.value,
      });
      return undefined;
    }
    at.tally.deleted++;
    this.#metrics.deleted(r.kind);
    const message = `Deleted ${describe(r)} of HcpCluster ${ownerName(r)}, orphaned since ${at.since.toISOString()}`;
    await this.#report.event("Normal", "OrphanDeleted", message, signal);
    return undefined;
  }

  /** The IDs of soft-deleted clusters not purged yet (by label: a record that cannot be read still counts). */
  async #softDeleted(signal?: AbortSignal): Promise<string[]> {
    const records = await this.#client.listAll(ConfigMapResource, {
      namespace: this.#namespace,
      labelSelector: DELETED_CLUSTER_LABEL,
      signal,
    });
    return records.items.map((cm) => cm.metadata.labels?.[DELETED_CLUSTER_LABEL] ?? "").filter(Boolean);
  }

  /**
   * Whether the owner exists, read from the apiserver (not the cache) by the namespace/name in the
   * cluster tag, or is soft-deleted and not purged yet; undefined when the tag names none, which
   * leaves the resource alone.
   */
  async #ownerExists(r: OwnedResource, signal?: AbortSignal): Promise<boolean | undefined> {
    const [namespace, name, ...rest] = r.owner.cluster.split("/");
    if (!namespace || !name || rest.length > 0) return undefined;
    const record = deletedClusterRecordName(r.owner.id);
    if (await this.#client.find(ConfigMapResource, record, this.#namespace, { signal })) return true;
    const found = await this.#client.find<HcpCluster>(HcpClusterResource, name, namespace, { signal });
    return found !== undefined && originalUid(found) === r.owner.id;
  }
}

function byDeletionOrder(found: readonly OwnedResource[]): OwnedResource[] {
  return [...found].sort((a, b) => DELETION_ORDER.indexOf(a.kind) - DELETION_ORDER.indexOf(b.kind));
}

function describe(r: OwnedResource): string {
  return `Azure ${r.kind} ${r.id}`;
}

function ownerName(r: OwnedResource): string {
  return `${r.owner.cluster || "(unnamed)"} (uid ${r.owner.id})`;
}
