/**
 * The management cluster controller: keeps each ManagementCluster's status showing its load (the
 * HcpClusters placed on it) against its capacity, whether placement may use it, and whether its
 * agent is Connected (connected.ts), from the liveness maestro-server keeps in memory when it runs
 * in this process. One status write per reconcile, only when something changed, and a load that
 * only moved at most every LOAD_WRITE_INTERVAL_MS; an event only when Connected changes, or when a
 * deletion starts to wait. Placement itself is the cluster controller's; this one reports, and
 * holds a ManagementCluster with its finalizer while any HcpCluster is placed on it: deleted, it
 * shows Deleting and goes once the last of them is gone (confirmed with the apiserver, not only
 * the cache, as letting it go cannot be undone).
 */
import { isDeepStrictEqual } from "node:util";
import {
  CONNECTED,
  HcpClusterResource,
  MANAGEMENT_CLUSTER_FINALIZER,
  ManagementClusterResource,
  PLACEMENT_FIELD,
  type AgentLivenessSource,
  type HcpCluster,
  type ManagementCluster,
  type ManagementClusterPhase,
  type ManagementClusterStatus,
} from "../api/v1alpha1/index.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../hcp/indexes.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { getCondition, setCondition, type Condition, type ConditionInput } from "../runtime/conditions.ts";
import {
  Controller,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from "../runtime/controller.ts";
import { EventRecorder, type EventSeverity } from "../runtime/events.ts";
import type { Informer, Lister } from "../runtime/informer.ts";
import type { KubeClient } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { enqueueForObject, enqueueMapped } from "../runtime/source.ts";
import { certificateEvent } from "./broker-certificate.ts";
import { connectedStatus, type ConnectedOutcome } from "./connected.ts";

export const MANAGEMENT_CLUSTER_CONTROLLER = "managementcluster-controller";

/**
 * A load that only moved (the same phase and conditions, another count) is written at most this
 * often per management cluster, as often as a node reports its status (decision record 0007).
 * Placement counts from the cache, not from this status, so a count a few seconds old misleads
 * no decision; a change of phase or condition is written at once.
 */
export const LOAD_WRITE_INTERVAL_MS = 10_000;

/** The reason of Deleting=True while HcpClusters placed on the ManagementCluster hold its deletion. */
export const HOSTED_CLUSTERS_PLACED = "HostedClustersPlaced";

function phaseOf(mc: ManagementCluster, placed: number): ManagementClusterPhase {
  if (mc.metadata.deletionTimestamp) return "Deleting";
  const max = mc.spec.capacity.maxHostedClusters;
  return mc.spec.schedulable === false ? "Unschedulable" : placed >= max ? "Full" : "Ready";
}

function schedulableCondition(mc: ManagementCluster, placed: number): ConditionInput {
  const max = mc.spec.capacity.maxHostedClusters;
  switch (phaseOf(mc, placed)) {
    case "Deleting":
      return {
        type: "Schedulable",
        status: "False",
        reason: "Deleting",
        message: "The ManagementCluster is being deleted: no new cluster is placed on it",
      };
    case "Ready":
      return {
        type: "Schedulable",
        status: "True",
        reason: "HasCapacity",
        message: `${placed} of ${max} hosted clusters placed`,
      };
    case "Full":
      return {
        type: "Schedulable",
        status: "False",
        reason: "Full",
        message: `${placed} of ${max} hosted clusters placed: no room`,
      };
    default:
      return {
        type: "Schedulable",
        status: "False",
        reason: "Cordoned",
        message: "spec.schedulable is false",
      };
  }
}

/** Deleting=True while `placed` HcpClusters hold the deletion (the controller lets it go at 0). */
export function deletingCondition(placed: number): ConditionInput {
  const clusters = placed === 1 ? "1 hosted cluster is" : `${placed} hosted clusters are`;
  return {
    type: "Deleting",
    status: "True",
    reason: HOSTED_CLUSTERS_PLACED,
    message: `${clusters} still placed on it; it is deleted once none is`,
  };
}

/**
 * The whole status: load, Schedulable, and (when given) Connected and what was heard of the
 * agent. A management cluster whose agent is not Connected (False) is Unavailable; one being
 * deleted is Deleting whatever else holds, and says what its deletion waits for.
 */
export function managementClusterStatus(
  mc: ManagementCluster,
  placed: number,
  connected?: ConnectedOutcome,
  now: Date = new Date(),
): ManagementClusterStatus {
  const phase = phaseOf(mc, placed);
  const stamp = { observedGeneration: mc.metadata.generation, now };
  let conditions = setCondition(mc.status?.conditions, schedulableCondition(mc, placed), stamp);
  if (connected) conditions = setCondition(conditions, connected.condition, stamp);
  if (phase === "Deleting") conditions = setCondition(conditions, deletingCondition(placed), stamp);
  const unavailable = phase !== "Deleting" && connected?.condition.status === "False";
  return {
    conditions,
    observedGeneration: mc.metadata.generation,
    hostedClusters: placed,
    phase: unavailable ? "Unavailable" : phase,
    ...(connected?.agent ? { agent: connected.agent } : {}),
  };
}

/** The event a change of Connected deserves: none for a first Unknown, a Warning for False. */
export function connectedEvent(
  before: Condition | undefined,
  after: ConditionInput,
): { type: EventSeverity; reason: string; message: string } | undefined {
  if (before?.status === after.status && before.reason === after.reason) return undefined;
  if (!before && after.status === "Unknown") return undefined;
  return {
    type: after.status === "False" ? "Warning" : "Normal",
    reason: after.reason,
    message: after.message,
  };
}

/**
 * The HcpClusters the apiserver shows placed on a ManagementCluster, read past the cache before
 * its finalizer goes: a placement just written may not be in the informer yet.
 */
export type PlacedLookup = (managementCluster: string, signal: AbortSignal) => Promise<number>;

/** The HcpClusters whose status.managementCluster names `managementCluster`, by field selector. */
export function placedLookup(client: Pick<KubeClient, "listAll">): PlacedLookup {
  return async (managementCluster, signal) => {
    const fieldSelector = `${PLACEMENT_FIELD}=${managementCluster}`;
    return (await client.listAll(HcpClusterResource, { fieldSelector, signal })).items.length;
  };
}

export interface LoadReconcilerDeps {
  managementClusters: Lister<ManagementCluster>;
  /** Indexed by MANAGEMENT_CLUSTER_INDEX. */
  clusters: Lister<HcpCluster>;
  /** Confirms with the apiserver that none is placed before a deleted ManagementCluster goes. */
  placedNow: PlacedLookup;
  applier: ManagementClusterWriter;
  /** Where Connected transitions and a deletion that waits are recorded. Default: none. */
  events?: Pick<EventRecorder, "record">;
  /** maestro-server's in-memory liveness; absent: Connected is Unknown (LivenessNotTracked). */
  agents?: AgentLivenessSource;
  /** Default connected.ts LAST_HEARD_REFRESH_MS. */
  lastHeardRefreshMs?: number;
  /** Default LOAD_WRITE_INTERVAL_MS. */
  loadWriteIntervalMs?: number;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
}

/** The writes this controller makes: a ManagementCluster's status, and its finalizer. */
export type ManagementClusterWriter = Pick<Applier, "applyStatus" | "addFinalizer" | "removeFinalizer">;

/**
 * The event of a deletion that starts to wait for the clusters placed on the ManagementCluster:
 * once, when Deleting first shows; the condition keeps the count up to date.
 */
function heldEvent(
  mc: ManagementCluster,
  placed: number,
): { type: EventSeverity; reason: string; message: string } | undefined {
  if (!mc.metadata.deletionTimestamp || getCondition(mc.status?.conditions, "Deleting")) return undefined;
  const { reason, message } = deletingCondition(placed);
  return { type: "Warning", reason, message: `Deletion waits: ${message}` };
}

/** When to look again: at Connected's recheck, or sooner when a load write waits. */
function recheck(connected: ConnectedOutcome, heldMs?: number): Result {
  const after = [connected.recheckAfterMs, heldMs].filter((ms): ms is number => ms !== undefined);
  return after.length === 0 ? {} : { requeueAfterMs: Math.min(...after) };
}

export class LoadReconciler implements Reconciler {
  readonly #d: LoadReconcilerDeps;
  /** When this reconciler last wrote each management cluster's status; in memory, so a start writes at once. */
  readonly #lastWrittenMs = new Map<string, number>();

  constructor(deps: LoadReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const mc = this.#d.managementClusters.get("", req.name);
    if (!mc) return {};
    const placed = await this.#holdWhilePlaced(ctx, mc);
    if (placed === undefined) return {};
    const now = (this.#d.now ?? Date.now)();
    const before = getCondition(mc.status?.conditions, CONNECTED);
    const connected = connectedStatus({
      now,
      liveness: this.#d.agents?.snapshot(mc.spec.consumerName),
      previous: { connected: before, agent: mc.status?.agent },
      lastHeardRefreshMs: this.#d.lastHeardRefreshMs,
    });
    const heldMs = this.#loadHeldMs(mc, placed, connected, now);
    if (heldMs > 0) return recheck(connected, heldMs);
    const status = managementClusterStatus(mc, placed, connected, new Date(now));
    const written = await this.#d.applier.applyStatus(ManagementClusterResource, mc, status, ctx);
    if (written) {
      this.#lastWrittenMs.set(req.name, now);
      await this.#recordChanges(ctx, mc, [
        connectedEvent(before, connected.condition),
        heldEvent(mc, placed),
        certificateEvent(mc.status?.agent?.brokerCertificate, connected.agent?.brokerCertificate),
      ]);
    }
    return recheck(connected);
  }

  /** The events a written status deserves (a change of Connected, a deletion that starts to wait). */
  async #recordChanges(
    ctx: ReconcileContext,
    mc: ManagementCluster,
    events: Array<ReturnType<typeof connectedEvent>>,
  ): Promise<void> {
    for (const event of events) if (event) await this.#d.events?.record(mc, { ...event, signal: ctx.signal });
  }

  /**
   * The finalizer while the ManagementCluster lives; once it is deleted, released when no HcpCluster
   * is placed on it (the cache and then the apiserver show none). Returns how many are placed, or
   * undefined when this reconcile has nothing more to do: the finalizer was just added (its watch
   * event brings the next reconcile, on the copy that has it), or released, or is not there (added
   * by no version of this controller before the deletion, or released already).
   */
  async #holdWhilePlaced(ctx: ReconcileContext, mc: ManagementCluster): Promise<number | undefined> {
    const name = mc.metadata.name ?? "";
    const placed = this.#d.clusters.countByIndex(MANAGEMENT_CLUSTER_INDEX, name);
    if (!mc.metadata.deletionTimestamp) {
      const added = await this.#d.applier.addFinalizer(
        ManagementClusterResource,
        mc,
        MANAGEMENT_CLUSTER_FINALIZER,
        ctx,
      );
      return added ? undefined : placed;
    }
    if (!mc.metadata.finalizers?.includes(MANAGEMENT_CLUSTER_FINALIZER)) return undefined;
    const held = placed > 0 ? placed : await this.#d.placedNow(name, ctx.signal);
    if (held > 0) return held;
    await this.#d.applier.removeFinalizer(ManagementClusterResource, mc, MANAGEMENT_CLUSTER_FINALIZER, ctx);
    this.#lastWrittenMs.delete(name);
    ctx.log.info("No hosted cluster is placed on the ManagementCluster any more; its deletion goes on");
    return undefined;
  }

  /**
   * How long the write waits: more than 0 only when the load alone moved (the phase stays, and the
   * status with the count it shows would be what it shows) within the interval since this
   * reconciler last wrote.
   */
  #loadHeldMs(mc: ManagementCluster, placed: number, connected: ConnectedOutcome, now: number): number {
    const shown = mc.status?.hostedClusters;
    if (shown === undefined || shown === placed || phaseOf(mc, shown) !== phaseOf(mc, placed)) return 0;
    const leftMs =
      (this.#d.loadWriteIntervalMs ?? LOAD_WRITE_INTERVAL_MS) -
      (now - (this.#lastWrittenMs.get(mc.metadata.name ?? "") ?? Number.NEGATIVE_INFINITY));
    if (leftMs <= 0) return 0;
    const unchangedButLoad = isDeepStrictEqual(
      managementClusterStatus(mc, shown, connected, new Date(now)),
      mc.status,
    );
    return unchangedButLoad ? leftMs : 0;
  }
}

export interface ManagementClusterControllerOptions {
  /** The service cluster. */
  cluster: Cluster;
  /**
   * maestro-server's agent liveness (MaestroServer.agents), when it runs in this process; without
   * it Connected is Unknown (LivenessNotTracked).
   */
  agents?: AgentLivenessSource;
  /** How often lastHeardTime is refreshed while Connected stands. Default 5 min. */
  lastHeardRefreshMs?: number;
  log?: Logger;
}

export class ManagementClusterController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #mcs: Informer<ManagementCluster>;
  readonly #clusters: Informer<HcpCluster>;

  constructor(opts: ManagementClusterControllerOptions) {
    const { cluster } = opts;
    const log = (opts.log ?? silentLogger).child({ component: MANAGEMENT_CLUSTER_CONTROLLER });
    this.#mcs = cluster.informer<ManagementCluster>(ManagementClusterResource);
    this.#clusters = cluster.informer<HcpCluster>(HcpClusterResource, {
      indexers: { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster },
    });
    this.#controller = new Controller({
      name: MANAGEMENT_CLUSTER_CONTROLLER,
      log,
      reconciler: new LoadReconciler({
        managementClusters: this.#mcs,
        clusters: this.#clusters,
        placedNow: placedLookup(cluster.client),
        applier: new Applier(cluster.client, MANAGEMENT_CLUSTER_CONTROLLER),
        events: new EventRecorder(cluster.client, MANAGEMENT_CLUSTER_CONTROLLER, log),
        agents: opts.agents,
        lastHeardRefreshMs: opts.lastHeardRefreshMs,
      }),
    });
    enqueueForObject(this.#mcs, this.#controller);
    // An agent heard again, or maestro-server connecting or not: the management clusters it concerns.
    opts.agents?.onChange((consumer) => {
      for (const mc of this.#mcs.list())
        if (consumer === undefined || mc.spec.consumerName === consumer)
          this.#controller.enqueue({ cluster: cluster.name, namespace: "", name: mc.metadata.name ?? "" });
    });
    // Only a placement changes a load: the many other cluster status changes wake nothing here.
    // A placed cluster that goes (its delete event) wakes its ManagementCluster, which a deletion
    // may be waiting on.
    enqueueMapped(
      this.#clusters,
      this.#controller,
      (c) =>
        c.status?.managementCluster
          ? [{ cluster: cluster.name, namespace: "", name: c.status.managementCluster }]
          : [],
      (before, after) => before.status?.managementCluster !== after.status?.managementCluster,
    );
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all([this.#mcs.waitForSync(signal), this.#clusters.waitForSync(signal)]);
    await this.#controller.start(signal);
  }
}
