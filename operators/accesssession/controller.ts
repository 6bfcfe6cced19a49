/**
 * The access session controller: AccessSessions of the service cluster, each carried, once
 * approved, by a ManifestWork of its own (a CSR for the hosted cluster's SRE break-glass signer
 * and HyperShift's approval of it) to the management cluster its HcpCluster is placed on; the
 * key and kubeconfig stay in the operators' namespace for the session gate. Wiring only; see
 * reconcile.ts.
 */
import { AccessSessionResource, type AccessSession } from "../api/v1alpha1/accesssession.ts";
import {
  HcpClusterResource,
  ManagementClusterResource,
  type HcpCluster,
  type ManagementCluster,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, summariseWorkSpec, type ManifestWorkObject } from "../api/work/v1.ts";
import type { RegionSettings } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { Controller, type Request } from "../runtime/controller.ts";
import { EventRecorder } from "../runtime/events.ts";
import type { Informer } from "../runtime/informer.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { enqueueForObject, enqueueMapped } from "../runtime/source.ts";
import { registerSessionGauge } from "./audit.ts";
import { SessionReconciler } from "./reconcile.ts";
import { ACCESS_SESSION_UID_INDEX, DEFAULT_SESSION_POLICY, type SessionPolicy } from "./scope.ts";

export const ACCESS_SESSION_CONTROLLER = "accesssession-controller";

/** One function, not a closure per controller: the shared informer refuses a second function under one index name. */
const bySessionUid = (w: ManifestWorkObject): string[] => {
  const uid = w.metadata.labels?.[WORK_LABELS.accessSession];
  return uid ? [uid] : [];
};

export interface AccessSessionControllerOptions {
  cluster: Cluster;
  region: RegionSettings;
  /** The operators' own namespace, where the sessions' keys and kubeconfigs are kept. */
  namespace: string;
  policy?: Partial<SessionPolicy>;
  now?: () => number;
  /** Default 2: sessions are few. */
  workers?: number;
  log?: Logger;
}

export class AccessSessionController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #informers: Informer<KubeObject>[];

  constructor(opts: AccessSessionControllerOptions) {
    const log = (opts.log ?? silentLogger).child({ component: ACCESS_SESSION_CONTROLLER });
    const { cluster } = opts;
    const sessions = cluster.informer<AccessSession>(AccessSessionResource);
    const clusters = cluster.informer<HcpCluster>(HcpClusterResource);
    const managementClusters = cluster.informer<ManagementCluster>(ManagementClusterResource);
    const works = cluster.informer(ManifestWorkResource, {
      transform: summariseWorkSpec,
      indexers: { [ACCESS_SESSION_UID_INDEX]: bySessionUid },
    });
    this.#controller = new Controller({
      name: ACCESS_SESSION_CONTROLLER,
      maxConcurrentReconciles: opts.workers ?? 2,
      log,
      reconciler: new SessionReconciler({
        sessions,
        clusters,
        managementClusters,
        works,
        region: opts.region,
        namespace: opts.namespace,
        policy: { ...DEFAULT_SESSION_POLICY, ...opts.policy },
        writer: new Applier(cluster.client, ACCESS_SESSION_CONTROLLER),
        client: cluster.client,
        events: new EventRecorder(cluster.client, ACCESS_SESSION_CONTROLLER, log),
        now: opts.now ?? Date.now,
      }),
    });
    const toReq = (s: AccessSession): Request => ({
      cluster: cluster.name,
      namespace: "",
      name: s.metadata.name ?? "",
    });
    enqueueForObject(sessions, this.#controller);
    // A cluster that becomes Ready, or goes, moves its sessions.
    enqueueMapped(clusters, this.#controller, (c) =>
      sessions
        .list()
        .filter(
          (s) =>
            s.spec.clusterRef.namespace === c.metadata.namespace &&
            s.spec.clusterRef.name === c.metadata.name,
        )
        .map(toReq),
    );
    enqueueMapped(works, this.#controller, (w) => {
      const uid = w.metadata.labels?.[WORK_LABELS.accessSession];
      return uid
        ? sessions
            .list()
            .filter((s) => s.metadata.uid === uid)
            .map(toReq)
        : [];
    });
    registerSessionGauge(sessions);
    this.#informers = [sessions, clusters, managementClusters, works] as Informer<KubeObject>[];
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.waitForSync(signal)));
    await this.#controller.start(signal);
  }
}
