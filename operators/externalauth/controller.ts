/**
 * The externalauth controller: ExternalAuths of the service cluster. The cluster controller
 * carries each into its HostedCluster; this one reports what came back and holds a deleted
 * ExternalAuth until the HostedCluster no longer carries it. Wiring only; see reconcile.ts.
 */
import {
  ExternalAuthResource,
  HcpClusterResource,
  type ExternalAuth,
  type HcpCluster,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, summariseWorkSpec } from "../api/work/v1.ts";
import { CLUSTER_UID_INDEX, byClusterUid } from "../hcp/indexes.ts";
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
import { ExternalAuthReconciler } from "./reconcile.ts";

export const EXTERNAL_AUTH_CONTROLLER = "externalauth-controller";

export interface ExternalAuthControllerOptions {
  cluster: Cluster;
  region: RegionSettings;
  /** Default 2: a cluster has at most one, and a reconcile only reads and writes status. */
  workers?: number;
  log?: Logger;
}

export class ExternalAuthController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #informers: Informer<KubeObject>[];

  constructor(opts: ExternalAuthControllerOptions) {
    const log = (opts.log ?? silentLogger).child({ component: EXTERNAL_AUTH_CONTROLLER });
    const { cluster } = opts;
    const externalAuths = cluster.informer<ExternalAuth>(ExternalAuthResource);
    const clusters = cluster.informer<HcpCluster>(HcpClusterResource);
    // The process's one ManifestWork informer, shared with the cluster controller and maestro-server.
    const works = cluster.informer(ManifestWorkResource, {
      transform: summariseWorkSpec,
      indexers: { [CLUSTER_UID_INDEX]: byClusterUid },
    });
    const client = cluster.client;
    this.#controller = new Controller({
      name: EXTERNAL_AUTH_CONTROLLER,
      maxConcurrentReconciles: opts.workers ?? 2,
      log,
      reconciler: new ExternalAuthReconciler({
        externalAuths,
        clusters,
        works,
        region: opts.region,
        writer: new Applier(client, EXTERNAL_AUTH_CONTROLLER),
        events: new EventRecorder(client, EXTERNAL_AUTH_CONTROLLER, log),
      }),
    });
    const toReq = (ea: ExternalAuth): Request => ({
      cluster: cluster.name,
      namespace: ea.metadata.namespace ?? "",
      name: ea.metadata.name ?? "",
    });
    const authsOf = (namespace: string | undefined, clusterName: string | undefined): Request[] =>
      externalAuths
        .list(namespace)
        .filter((ea) => ea.spec.clusterRef.name === clusterName)
        .map(toReq);
    enqueueForObject(externalAuths, this.#controller);
    // A sibling created or deleted may take or free the cluster's one provider place.
    enqueueMapped(externalAuths, this.#controller, (ea) =>
      authsOf(ea.metadata.namespace, ea.spec.clusterRef.name),
    );
    enqueueMapped(clusters, this.#controller, (c) => authsOf(c.metadata.namespace, c.metadata.name));
    enqueueMapped(works, this.#controller, (w) => {
      const labels = w.metadata.labels ?? {};
      if (labels[WORK_LABELS.nodePool]) return [];
      return authsOf(labels[WORK_LABELS.clusterNamespace], labels[WORK_LABELS.clusterName]);
    });
    this.#informers = [externalAuths, clusters, works] as Informer<KubeObject>[];
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.waitForSync(signal)));
    await this.#controller.start(signal);
  }
}
