/**
 * The maintenance controller: the task controller (MaintenanceTask → one MaintenanceRun per
 * cluster, task-reconcile.ts) and the actuator (each run's steps, run-reconcile.ts), with the
 * caches and watches they share. Wiring only.
 */
import { isDeepStrictEqual } from "node:util";
import {
  HcpClusterResource,
  MAINTENANCE_CONCURRENCY,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
} from "../api/v1alpha1/index.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { getCondition } from "../runtime/conditions.ts";
import { Controller, type Request } from "../runtime/controller.ts";
import { EventRecorder } from "../runtime/events.ts";
import type { Informer, Lister } from "../runtime/informer.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { enqueueForObject, enqueueMapped } from "../runtime/source.ts";
import { Admissions } from "./admission.ts";
import { registerMaintenanceGauges } from "./metrics.ts";
import { MaintenanceRunReconciler } from "./run-reconcile.ts";
import { RUN_CONDITIONS } from "./run-status.ts";
import { RUNS_BY_CLUSTER, RUNS_BY_TASK, RUN_INDEXERS, clusterKey, isFinished } from "./runs.ts";
import type { TaskRegistry } from "./step.ts";
import { MaintenanceTaskReconciler } from "./task-reconcile.ts";

export const MAINTENANCE_TASK_CONTROLLER = "maintenancetask-controller";
export const MAINTENANCE_RUN_CONTROLLER = "maintenancerun-controller";

export interface MaintenanceControllerOptions {
  cluster: Cluster;
  /** The task types this process runs (tasks.ts taskRegistry). */
  tasks: TaskRegistry;
  /** Default 4: a step waits on Azure or the apiserver. */
  workers?: number;
  log?: Logger;
}

const phaseMoved = (a: MaintenanceRun, b: MaintenanceRun): boolean => a.status?.phase !== b.status?.phase;

const availableOf = (c: HcpCluster): string | undefined =>
  getCondition(c.status?.conditions, "HostedClusterAvailable")?.status;

/**
 * What the signing-key rotation's steps wait on (tasks.ts): the key IDs published and applied on
 * the management cluster, and whether the HostedCluster is Available.
 */
function signingKeyMoved(a: HcpCluster, b: HcpCluster): boolean {
  return (
    !isDeepStrictEqual(a.status?.serviceAccountSigningKey, b.status?.serviceAccountSigningKey) ||
    availableOf(a) !== availableOf(b)
  );
}

/** What UpgradeControlPlane's steps wait on (upgrade-task.ts): the version asked, run and judged. */
function versionMoved(a: HcpCluster, b: HcpCluster): boolean {
  const valid = (c: HcpCluster) => getCondition(c.status?.conditions, "ValidVersion");
  return (
    a.spec.version.id !== b.spec.version.id ||
    a.status?.version !== b.status?.version ||
    !isDeepStrictEqual(valid(a), valid(b))
  );
}

const busyReason = (r: MaintenanceRun): string | undefined =>
  getCondition(r.status?.conditions, RUN_CONDITIONS.Progressing)?.reason;

/**
 * A run that leaves Running frees a slot of its task on its management cluster: the oldest runs of
 * that task waiting there are looked at now rather than at their admission retry. As many as the
 * task allows at once there, so a wave of a thousand is not woken whole for one slot.
 */
function nextInLine(
  finished: MaintenanceRun,
  runs: Lister<MaintenanceRun>,
  clusters: Lister<HcpCluster>,
): MaintenanceRun[] {
  const where = finished.status?.managementCluster;
  if (!where || !isFinished(finished)) return [];
  const slots = finished.spec.maxConcurrentPerManagementCluster ?? MAINTENANCE_CONCURRENCY.default;
  return runs
    .byIndex(RUNS_BY_TASK, finished.spec.task)
    .filter(
      (r) =>
        !isFinished(r) &&
        r.status?.phase !== "Running" &&
        busyReason(r) === "ManagementClusterBusy" &&
        clusters.get(r.metadata.namespace ?? "", r.spec.clusterRef.name)?.status?.managementCluster === where,
    )
    .sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""))
    .slice(0, slots);
}

export class MaintenanceController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controllers: Controller[];
  readonly #informers: Informer<KubeObject>[];

  constructor(opts: MaintenanceControllerOptions) {
    const log = (opts.log ?? silentLogger).child({ component: MAINTENANCE_RUN_CONTROLLER });
    const { cluster } = opts;
    const tasks = cluster.informer<MaintenanceTask>(MaintenanceTaskResource);
    const runs = cluster.informer<MaintenanceRun>(MaintenanceRunResource, { indexers: RUN_INDEXERS });
    const clusters = cluster.informer<HcpCluster>(HcpClusterResource);
    const client = cluster.client;
    const taskController = new Controller({
      name: MAINTENANCE_TASK_CONTROLLER,
      maxConcurrentReconciles: 1,
      log,
      reconciler: new MaintenanceTaskReconciler({
        tasks,
        clusters,
        runs,
        registry: opts.tasks,
        client,
        writer: new Applier(client, MAINTENANCE_TASK_CONTROLLER),
      }),
    });
    const runController = new Controller({
      name: MAINTENANCE_RUN_CONTROLLER,
      maxConcurrentReconciles: opts.workers ?? 4,
      log,
      reconciler: new MaintenanceRunReconciler({
        runs,
        clusters,
        maintenanceTasks: tasks,
        tasks: opts.tasks,
        admissions: new Admissions(runs),
        writer: new Applier(client, MAINTENANCE_RUN_CONTROLLER),
        events: new EventRecorder(client, MAINTENANCE_RUN_CONTROLLER, log),
      }),
    });
    const toReq = (o: KubeObject): Request => ({
      cluster: cluster.name,
      namespace: o.metadata.namespace ?? "",
      name: o.metadata.name ?? "",
    });
    const runsOfCluster = (namespace: string, name: string): Request[] =>
      runs
        .byIndex(RUNS_BY_CLUSTER, clusterKey(namespace, name))
        .filter((r) => !isFinished(r))
        .map(toReq);
    enqueueForObject(tasks, taskController);
    // A run made or moved changes its task's counts; a cluster made or relabelled may match a task.
    enqueueMapped(
      runs,
      taskController,
      (r) => [{ cluster: cluster.name, namespace: "", name: r.spec.task }],
      phaseMoved,
    );
    enqueueMapped(
      clusters,
      taskController,
      () => tasks.list().map(toReq),
      (a, b) => !isDeepStrictEqual(a.metadata.labels, b.metadata.labels),
    );
    enqueueForObject(runs, runController);
    // Pausing, resuming or cancelling a task moves its unfinished runs.
    enqueueMapped(
      tasks,
      runController,
      (t) =>
        runs
          .byIndex(RUNS_BY_TASK, t.metadata.name ?? "")
          .filter((r) => !isFinished(r))
          .map(toReq),
      (a, b) => a.spec.paused !== b.spec.paused || a.spec.cancelled !== b.spec.cancelled,
    );
    // A run that finishes frees its cluster for the next; a cluster's window, placement or
    // deletion moves its runs, and so does what a step waits on (signingKeyMoved, versionMoved, the work's template revision).
    enqueueMapped(
      runs,
      runController,
      (r) => [
        ...runsOfCluster(r.metadata.namespace ?? "", r.spec.clusterRef.name),
        ...nextInLine(r, runs, clusters).map(toReq),
      ],
      phaseMoved,
    );
    enqueueMapped(
      clusters,
      runController,
      (c) => runsOfCluster(c.metadata.namespace ?? "", c.metadata.name ?? ""),
      (a, b) =>
        a.metadata.deletionTimestamp !== b.metadata.deletionTimestamp ||
        a.status?.managementCluster !== b.status?.managementCluster ||
        !isDeepStrictEqual(a.spec.maintenance, b.spec.maintenance) ||
        signingKeyMoved(a, b) ||
        versionMoved(a, b) ||
        !isDeepStrictEqual(a.status?.workTemplate, b.status?.workTemplate),
    );
    registerMaintenanceGauges(runs);
    this.#controllers = [taskController, runController];
    this.#informers = [tasks, runs, clusters] as unknown as Informer<KubeObject>[];
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.waitForSync(signal)));
    await Promise.all(this.#controllers.map((c) => c.start(signal)));
  }
}
