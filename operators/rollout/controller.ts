/**
 * The rollout controller: wiring only. It reads Rollouts, their wave MaintenanceTasks, those
 * tasks' MaintenanceRuns and the HcpClusters, and writes wave tasks (create; spec.paused and
 * spec.cancelled) and the Rollout's status and finalizer. The maintenance controller runs the
 * waves' runs; the two share nothing but the API.
 */
import { isDeepStrictEqual } from "node:util";
import {
  HcpClusterResource,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  RolloutResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
  type Rollout,
} from "../api/v1alpha1/index.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { Controller, type Request } from "../runtime/controller.ts";
import { EventRecorder } from "../runtime/events.ts";
import type { Informer } from "../runtime/informer.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { enqueueForObject, enqueueMapped } from "../runtime/source.ts";
import { registerRolloutGauges } from "./metrics.ts";
import { finishedForGood } from "./phases.ts";
import { RolloutReconciler } from "./reconcile.ts";
import { RUN_INDEXERS, TASK_INDEXERS } from "./waves.ts";

export const ROLLOUT_CONTROLLER = "rollout-controller";

export interface RolloutControllerOptions {
  cluster: Cluster;
  log?: Logger;
}

export class RolloutController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #informers: Informer<KubeObject>[];

  constructor(opts: RolloutControllerOptions) {
    const log = (opts.log ?? silentLogger).child({ component: ROLLOUT_CONTROLLER });
    const { cluster } = opts;
    const rollouts = cluster.informer<Rollout>(RolloutResource);
    const tasks = cluster.informer<MaintenanceTask>(MaintenanceTaskResource, { indexers: TASK_INDEXERS });
    const runs = cluster.informer<MaintenanceRun>(MaintenanceRunResource, { indexers: RUN_INDEXERS });
    const clusters = cluster.informer<HcpCluster>(HcpClusterResource);
    const client = cluster.client;
    // One worker: rollouts are few, and one at a time keeps two of them from racing for nothing.
    this.#controller = new Controller({
      name: ROLLOUT_CONTROLLER,
      maxConcurrentReconciles: 1,
      log,
      reconciler: new RolloutReconciler({
        rollouts,
        tasks,
        runs,
        clusters,
        client,
        writer: new Applier(client, ROLLOUT_CONTROLLER),
        events: new EventRecorder(client, ROLLOUT_CONTROLLER, log),
      }),
    });
    const rolloutReq = (name: string): Request => ({ cluster: cluster.name, namespace: "", name });
    const ownerOf = (task: MaintenanceTask | undefined): Request[] =>
      (task?.metadata.ownerReferences ?? [])
        .filter((o) => o.kind === RolloutResource.kind && o.controller)
        .map((o) => rolloutReq(o.name));
    enqueueForObject(rollouts, this.#controller);
    // A wave task made, steered or completed; a run of one moving on (the wave's counts, its failures).
    enqueueMapped(
      tasks,
      this.#controller,
      ownerOf,
      (a, b) => !isDeepStrictEqual([a.spec, a.status], [b.spec, b.status]),
    );
    enqueueMapped(
      runs,
      this.#controller,
      (r) => ownerOf(tasks.get("", r.spec.task)),
      (a, b) => a.status?.phase !== b.status?.phase,
    );
    // A cluster made, relabelled or deleted may change what a rollout still to finish names.
    enqueueMapped(
      clusters,
      this.#controller,
      () =>
        rollouts
          .list()
          .filter((r) => !finishedForGood(r))
          .map((r) => rolloutReq(r.metadata.name ?? "")),
      (a, b) =>
        !isDeepStrictEqual(a.metadata.labels, b.metadata.labels) ||
        a.metadata.deletionTimestamp !== b.metadata.deletionTimestamp,
    );
    registerRolloutGauges(rollouts);
    this.#informers = [rollouts, tasks, runs, clusters] as unknown as Informer<KubeObject>[];
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.waitForSync(signal)));
    await this.#controller.start(signal);
  }
}
