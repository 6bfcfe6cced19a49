/**
 * The breakglass controller: BreakglassCredentials of the service cluster, each carried by a
 * ManifestWork of its own (a CSR for the hosted cluster's customer break-glass signer and
 * HyperShift's approval of it) to the management cluster its HcpCluster is placed on. Wiring
 * only; see reconcile.ts.
 */
import {
  BreakglassCredentialResource,
  HcpClusterResource,
  ManagementClusterResource,
  type BreakglassCredential,
  type HcpCluster,
  type ManagementCluster,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, summariseWorkSpec, type ManifestWorkObject } from "../api/work/v1.ts";
import { LABELS, type RegionSettings } from "../hcp/names.ts";
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
import { BREAKGLASS_UID_INDEX } from "./scope.ts";

export const BREAKGLASS_CONTROLLER = "breakglass-controller";

/** One function, not a closure per controller: the shared informer refuses a second function under one index name. */
const byCredentialUid = (w: ManifestWorkObject): string[] => {
  const uid = w.metadata.labels?.[LABELS.breakglass];
  return uid ? [uid] : [];
};

export interface BreakglassControllerOptions {
  cluster: Cluster;
  region: RegionSettings;
  /** Default 2: credentials are few. */
  workers?: number;
  log?: Logger;
}

export class BreakglassController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #informers: Informer<KubeObject>[];

  constructor(opts: BreakglassControllerOptions) {
    const log = (opts.log ?? silentLogger).child({ component: BREAKGLASS_CONTROLLER });
    const { cluster } = opts;
    const credentials = cluster.informer<BreakglassCredential>(BreakglassCredentialResource);
    const clusters = cluster.informer<HcpCluster>(HcpClusterResource);
    const managementClusters = cluster.informer<ManagementCluster>(ManagementClusterResource);
    const works = cluster.informer(ManifestWorkResource, {
      transform: summariseWorkSpec,
      indexers: { [BREAKGLASS_UID_INDEX]: byCredentialUid },
    });
    this.#controller = new Controller({
      name: BREAKGLASS_CONTROLLER,
      maxConcurrentReconciles: opts.workers ?? 2,
      log,
      reconciler: new BreakglassReconciler({
        credentials,
        clusters,
        managementClusters,
        works,
        region: opts.region,
        writer: new Applier(cluster.client, BREAKGLASS_CONTROLLER),
        client: cluster.client,
        events: new EventRecorder(cluster.client, BREAKGLASS_CONTROLLER, log),
      }),
    });
    const toReq = (c: BreakglassCredential): Request => ({
      cluster: cluster.name,
      namespace: c.metadata.namespace ?? "",
      name: c.metadata.name ?? "",
    });
    enqueueForObject(credentials, this.#controller);
    // A cluster that becomes Ready, or goes, moves its credentials.
    enqueueMapped(clusters, this.#controller, (c) =>
      credentials
        .list(c.metadata.namespace)
        .filter((x) => x.spec.clusterRef.name === c.metadata.name)
        .map(toReq),
    );
    enqueueMapped(works, this.#controller, (w) => {
      const uid = w.metadata.labels?.[LABELS.breakglass];
      const namespace = w.metadata.labels?.[LABELS.clusterNamespace];
      if (!uid || !namespace) return [];
      return credentials
        .list(namespace)
        .filter((c) => c.metadata.uid === uid)
        .map(toReq);
    });
    this.#informers = [credentials, clusters, managementClusters, works] as Informer<KubeObject>[];
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.waitForSync(signal)));
    await this.#controller.start(signal);
  }
}
