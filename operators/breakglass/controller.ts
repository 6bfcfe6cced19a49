/**
 * The breakglass controller: BreakglassCredentials of the service cluster, each carried by a
 * ManifestWork of its own (a CSR for the hosted cluster's customer break-glass signer and
 * HyperShift's approval of it) to the management cluster its HcpCluster is placed on. Wiring
 * only; see reconcile.ts.
 */
import {
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  type BreakglassRevocation,
  HcpClusterResource,
  ManagementClusterResource,
  type BreakglassCredential,
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
import { BreakglassReconciler } from "./reconcile.ts";
import { RevocationReconciler } from "./revocation.ts";
import { EXPIRED_RETENTION_MS } from "./expiry.ts";
import { BREAKGLASS_UID_INDEX } from "./scope.ts";

export const BREAKGLASS_CONTROLLER = "breakglass-controller";

/** One function, not a closure per controller: the shared informer refuses a second function under one index name. */
const byCredentialUid = (w: ManifestWorkObject): string[] => {
  const uid = w.metadata.labels?.[WORK_LABELS.breakglass];
  return uid ? [uid] : [];
};

export interface BreakglassControllerOptions {
  cluster: Cluster;
  region: RegionSettings;
  /** The operators' own namespace, where the service's keys wait for their kubeconfig. */
  namespace: string;
  /** How long an expired credential stays before it is deleted. Default a day (EXPIRED_RETENTION_MS). */
  expiredRetentionMs?: number;
  /** The clock. Default Date.now. */
  now?: () => number;
  /** Default 2: credentials are few. */
  workers?: number;
  log?: Logger;
}

export class BreakglassController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #revocationController: Controller;
  readonly #informers: Informer<KubeObject>[];

  constructor(opts: BreakglassControllerOptions) {
    const log = (opts.log ?? silentLogger).child({ component: BREAKGLASS_CONTROLLER });
    const { cluster } = opts;
    const credentials = cluster.informer<BreakglassCredential>(BreakglassCredentialResource);
    const revocations = cluster.informer<BreakglassRevocation>(BreakglassRevocationResource);
    const clusters = cluster.informer<HcpCluster>(HcpClusterResource);
    const managementClusters = cluster.informer<ManagementCluster>(ManagementClusterResource);
    const works = cluster.informer(ManifestWorkResource, {
      transform: summariseWorkSpec,
      indexers: { [BREAKGLASS_UID_INDEX]: byCredentialUid },
    });
    const deps = {
      credentials,
      revocations,
      clusters,
      managementClusters,
      works,
      region: opts.region,
      namespace: opts.namespace,
      expiredRetentionMs: opts.expiredRetentionMs ?? EXPIRED_RETENTION_MS,
      now: opts.now ?? Date.now,
      writer: new Applier(cluster.client, BREAKGLASS_CONTROLLER),
      client: cluster.client,
      events: new EventRecorder(cluster.client, BREAKGLASS_CONTROLLER, log),
    };
    this.#controller = new Controller({
      name: BREAKGLASS_CONTROLLER,
      maxConcurrentReconciles: opts.workers ?? 2,
      log,
      reconciler: new BreakglassReconciler(deps),
    });
    this.#revocationController = new Controller({
      name: `${BREAKGLASS_CONTROLLER}-revocation`,
      maxConcurrentReconciles: opts.workers ?? 2,
      log,
      reconciler: new RevocationReconciler(deps),
    });
    const toReq = (c: BreakglassCredential | BreakglassRevocation): Request => ({
      cluster: cluster.name,
      namespace: c.metadata.namespace ?? "",
      name: c.metadata.name ?? "",
    });
    const ofCluster = <T extends BreakglassCredential | BreakglassRevocation>(
      lister: { list(namespace?: string): T[] },
      namespace: string | undefined,
      name: string | undefined,
    ): Request[] =>
      lister
        .list(namespace)
        .filter((x) => x.spec.clusterRef.name === name)
        .map(toReq);
    enqueueForObject(credentials, this.#controller);
    enqueueForObject(revocations, this.#revocationController);
    // A cluster that becomes Ready, or goes, moves its credentials and revocations.
    enqueueMapped(clusters, this.#controller, (c) =>
      ofCluster(credentials, c.metadata.namespace, c.metadata.name),
    );
    enqueueMapped(clusters, this.#revocationController, (c) =>
      ofCluster(revocations, c.metadata.namespace, c.metadata.name),
    );
    // A revocation done revokes the credentials issued before it.
    enqueueMapped(revocations, this.#controller, (r) =>
      ofCluster(credentials, r.metadata.namespace, r.spec.clusterRef.name),
    );
    enqueueMapped(works, this.#controller, (w) => {
      const uid = w.metadata.labels?.[WORK_LABELS.breakglass];
      const namespace = w.metadata.labels?.[WORK_LABELS.clusterNamespace];
      if (!uid || !namespace) return [];
      return credentials
        .list(namespace)
        .filter((c) => c.metadata.uid === uid)
        .map(toReq);
    });
    enqueueMapped(works, this.#revocationController, (w) => {
      const uid = w.metadata.labels?.[WORK_LABELS.breakglass];
      const namespace = w.metadata.labels?.[WORK_LABELS.clusterNamespace];
      if (!uid || !namespace) return [];
      return revocations
        .list(namespace)
        .filter((r) => r.metadata.uid === uid)
        .map(toReq);
    });
    this.#informers = [
      credentials,
      revocations,
      clusters,
      managementClusters,
      works,
    ] as Informer<KubeObject>[];
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.waitForSync(signal)));
    await Promise.all([this.#controller.start(signal), this.#revocationController.start(signal)]);
  }
}
