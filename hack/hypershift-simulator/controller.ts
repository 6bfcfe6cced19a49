/**
 * hypershift-simulator: a test double for the HyperShift operator on one management cluster. It
 * reconciles the real HostedCluster and NodePool CRs with two controllers (hostedcluster.ts,
 * nodepool.ts) and reports status the way HyperShift does, after configurable delays and without
 * running any control plane. Failures are injected per object with the annotation
 * `hypershift-simulator.hcp.aro.dev/fail: "<Reason>: <message>"` (release.ts).
 *
 * Watches: HostedClusters (→ themselves and their NodePools), NodePools (→ themselves and their
 * HostedCluster, which waits for them when deleting), control-plane namespaces (→ their
 * HostedCluster, which waits for them when deleting). The break-glass signer (breakglass.ts)
 * watches CSRs, their approvals and revocation requests. Velero's part (velero.ts) watches the
 * Schedules in the `velero` namespace, and its restores (velero-restore.ts) the Restores there.
 * Secrets (secret-cache.ts), BackupStorageLocations and Backups are watched for their readers.
 */
import {
  HostedClusterResource,
  NodePoolResource,
  type HostedCluster,
  type NodePool,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { Applier } from "../../operators/runtime/apply.ts";
import type { Cluster } from "../../operators/runtime/clusters.ts";
import { Controller, type Request } from "../../operators/runtime/controller.ts";
import { EventRecorder } from "../../operators/runtime/events.ts";
import type { Informer } from "../../operators/runtime/informer.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { silentLogger, type Logger } from "../../operators/runtime/logger.ts";
import type { Runnable } from "../../operators/runtime/manager.ts";
import { enqueueForObject, enqueueMapped } from "../../operators/runtime/source.ts";
import {
  CLUSTER_ANNOTATION,
  CONTROL_PLANE_LABEL,
  HostedClusterReconciler,
  namespaceType,
  nodePoolsOf,
} from "./hostedcluster.ts";
import { BreakglassSigner } from "./breakglass.ts";
import { simulatorMetrics } from "./metrics.ts";
import { NodePoolReconciler } from "./nodepool.ts";
import {
  BACKUPS_BY_SCHEDULE,
  cachedBackup,
  scheduleOfBackup,
  VeleroScheduleReconciler,
  VeleroStorage,
  type CachedBackup,
} from "./velero.ts";
import { secretInformer, type CachedSecret } from "./secret-cache.ts";
import { VeleroRestoreReconciler } from "./velero-restore.ts";
import {
  BackupResource,
  BackupStorageLocationResource,
  RestoreResource,
  ScheduleResource,
  VELERO_NAMESPACE,
  type Backup,
  type BackupStorageLocation,
  type Restore,
  type Schedule,
} from "../../operators/api/velero/v1/index.ts";

/** Field manager of every write, and the component of its Events. */
export const SIMULATOR_NAME = "hypershift-simulator";

export interface HyperShiftSimulatorOptions {
  /** The management cluster whose HostedClusters and NodePools are served. Required. */
  cluster: Cluster;
  /** How long a rollout (creation, upgrade) or a scale takes. Default 2000 ms. */
  provisionDelayMs?: number;
  /** How long a deletion holds the finalizer (per NodePool, then per HostedCluster). Default 1000 ms. */
  deleteDelayMs?: number;
  /** Workers per controller. Default 2. */
  workers?: number;
  log?: Logger;
}

const DEFAULT_PROVISION_DELAY_MS = 2_000;
const DEFAULT_DELETE_DELAY_MS = 1_000;

function checkDelay(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new Error(`hypershift-simulator: ${name} must be ≥ 0 ms`);
  return value;
}

export class HyperShiftSimulator implements Runnable {
  /** One per management cluster, like the agent; it needs no lease. */
  readonly needLeaderElection = false;
  readonly #hostedClusters: Informer<HostedCluster>;
  readonly #nodePools: Informer<NodePool>;
  readonly #namespaces: Informer;
  readonly #secrets: Informer<CachedSecret>;
  readonly #locations: Informer<BackupStorageLocation>;
  readonly #backups: Informer<CachedBackup, Backup>;
  readonly #hcController: Controller;
  readonly #npController: Controller;
  readonly #signer: BreakglassSigner;
  readonly #schedules: Informer<Schedule>;
  readonly #veleroController: Controller;
  readonly #restores: Informer<Restore>;
  readonly #restoreController: Controller;

  constructor(opts: HyperShiftSimulatorOptions) {
    const { cluster } = opts;
    const provisionDelayMs = checkDelay(
      "provisionDelayMs",
      opts.provisionDelayMs ?? DEFAULT_PROVISION_DELAY_MS,
    );
    const deleteDelayMs = checkDelay("deleteDelayMs", opts.deleteDelayMs ?? DEFAULT_DELETE_DELAY_MS);
    const log = (opts.log ?? silentLogger).child({ component: SIMULATOR_NAME, cluster: cluster.name });
    this.#hostedClusters = cluster.informer<HostedCluster>(HostedClusterResource);
    this.#nodePools = cluster.informer<NodePool>(NodePoolResource);
    this.#namespaces = cluster.informer(namespaceType, { labelSelector: `${CONTROL_PLANE_LABEL}=true` });
    // HyperShift and Velero read Secrets, locations and Backups from their managers' caches.
    this.#secrets = secretInformer(cluster);
    this.#locations = cluster.informer<BackupStorageLocation>(BackupStorageLocationResource, {
      namespace: VELERO_NAMESPACE,
    });
    this.#backups = cluster.informer<CachedBackup, Backup>(BackupResource, {
      namespace: VELERO_NAMESPACE,
      transform: cachedBackup,
      indexers: { [BACKUPS_BY_SCHEDULE]: scheduleOfBackup },
    });
    const shared = {
      cluster: cluster.name,
      hostedClusters: this.#hostedClusters,
      nodePools: this.#nodePools,
      applier: new Applier(cluster.client, SIMULATOR_NAME),
      events: new EventRecorder(cluster.client, SIMULATOR_NAME, log),
      metrics: simulatorMetrics(),
      provisionDelayMs,
      deleteDelayMs,
    };
    const workers = opts.workers ?? 2;
    this.#hcController = new Controller({
      name: `${SIMULATOR_NAME}-hostedcluster-${cluster.name}`,
      maxConcurrentReconciles: workers,
      log,
      reconciler: new HostedClusterReconciler({
        ...shared,
        namespaces: this.#namespaces,
        secrets: this.#secrets,
      }),
    });
    this.#npController = new Controller({
      name: `${SIMULATOR_NAME}-nodepool-${cluster.name}`,
      maxConcurrentReconciles: workers,
      log,
      reconciler: new NodePoolReconciler(shared),
    });
    this.#signer = new BreakglassSigner({
      cluster,
      namespaces: this.#namespaces,
      secrets: this.#secrets,
      log,
      workers,
    });
    const storage = new VeleroStorage(cluster.client, {
      locations: this.#locations,
      secrets: this.#secrets,
    });
    this.#schedules = cluster.informer<Schedule>(ScheduleResource, { namespace: VELERO_NAMESPACE });
    this.#veleroController = new Controller({
      name: `${SIMULATOR_NAME}-velero-${cluster.name}`,
      maxConcurrentReconciles: workers,
      log,
      reconciler: new VeleroScheduleReconciler({
        client: cluster.client,
        schedules: this.#schedules,
        backups: this.#backups,
        storage,
        applier: shared.applier,
      }),
    });
    this.#restores = cluster.informer<Restore>(RestoreResource, { namespace: VELERO_NAMESPACE });
    this.#restoreController = new Controller({
      name: `${SIMULATOR_NAME}-velero-restore-${cluster.name}`,
      maxConcurrentReconciles: workers,
      log,
      reconciler: new VeleroRestoreReconciler({
        client: cluster.client,
        restores: this.#restores,
        storage,
        applier: shared.applier,
      }),
    });
    this.#watch(cluster.name);
  }

  #watch(cluster: string): void {
    const request = (namespace: string | undefined, name: string): Request => ({
      cluster,
      namespace: namespace ?? "",
      name,
    });
    enqueueForObject(this.#hostedClusters, this.#hcController);
    enqueueForObject(this.#nodePools, this.#npController);
    enqueueForObject(this.#schedules, this.#veleroController);
    enqueueForObject(this.#restores, this.#restoreController);
    // A NodePool waits for its HostedCluster to be Available.
    enqueueMapped(this.#hostedClusters, this.#npController, (hc) =>
      nodePoolsOf(this.#nodePools, hc).map((np) => request(np.metadata.namespace, np.metadata.name ?? "")),
    );
    // A deleting HostedCluster waits for its NodePools and its control-plane namespace to go.
    enqueueMapped(this.#nodePools, this.#hcController, (np) =>
      np.spec.clusterName ? [request(np.metadata.namespace, np.spec.clusterName)] : [],
    );
    enqueueMapped(this.#namespaces, this.#hcController, (ns: KubeObject) => {
      const [namespace, name] = (ns.metadata.annotations?.[CLUSTER_ANNOTATION] ?? "").split("/");
      return namespace && name ? [request(namespace, name)] : [];
    });
  }

  #informers(): Informer<KubeObject>[] {
    return [
      this.#hostedClusters,
      this.#nodePools,
      this.#namespaces,
      this.#schedules,
      this.#restores,
      this.#secrets,
      this.#locations,
      this.#backups,
      ...this.#signer.informers,
    ] as Informer<KubeObject>[];
  }

  /** True once every informer (HostedClusters, NodePools, namespaces, Secrets, Velero's, the signer's) has listed. */
  hasSynced(): boolean {
    return this.#informers().every((i) => i.hasSynced());
  }

  async start(signal: AbortSignal): Promise<void> {
    for (const informer of this.#informers()) {
      if (!(await informer.waitForSync(signal))) return;
    }
    await Promise.all([
      this.#hcController.start(signal),
      this.#npController.start(signal),
      this.#signer.start(signal),
      this.#veleroController.start(signal),
      this.#restoreController.start(signal),
    ]);
  }
}
