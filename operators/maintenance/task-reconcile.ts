/**
 * The task controller: one MaintenanceRun per HcpCluster a MaintenanceTask names, created with a
 * deterministic name so that a repeated reconcile (or a restart) never makes a second; the task's
 * status counts its runs by phase. No finalizer: the runs are owned by the task and go with it
 * (the garbage collector), and the actuator holds each run until it lets go of its admission.
 */
import {
  MAINTENANCE_RUN_PHASES,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceRunPhase,
  type MaintenanceTask,
  type MaintenanceTaskStatus,
} from "../api/v1alpha1/index.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import { isTrue, setCondition, type ConditionInput } from "../runtime/conditions.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { objectKey, type Lister } from "../runtime/informer.ts";
import type { KubeClient } from "../runtime/kube.ts";
import { RUNS_BY_TASK, clustersOf, desiredRun, isFinished } from "./runs.ts";
import type { TaskRegistry } from "./step.ts";

export const TASK_CONDITIONS = { Accepted: "Accepted", Complete: "Complete", Paused: "Paused" } as const;

export interface TaskReconcilerDeps {
  tasks: Lister<MaintenanceTask>;
  clusters: Lister<HcpCluster>;
  /** Indexed by RUN_INDEXERS (runs.ts). */
  runs: Lister<MaintenanceRun>;
  registry: TaskRegistry;
  client: Pick<KubeClient, "createIfAbsent">;
  writer: Pick<ObjectWriter, "applyStatus">;
  clock?: () => Date;
}

function describeClusters(task: MaintenanceTask): string {
  const { selector, names } = task.spec.clusters;
  if (names)
    return `spec.clusters.names matches no existing HcpCluster (${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""})`;
  return `spec.clusters.selector matches no HcpCluster (${JSON.stringify(selector)})`;
}

function accepted(task: MaintenanceTask, registry: TaskRegistry, runs: number): ConditionInput {
  const type = TASK_CONDITIONS.Accepted;
  if (!registry.has(task.spec.task))
    return {
      type,
      status: "False",
      reason: "UnknownTask",
      message: `spec.task: this version of the operators has no definition of ${task.spec.task}`,
    };
  if (runs === 0)
    return { type, status: "False", reason: "NoClustersMatch", message: describeClusters(task) };
  return {
    type,
    status: "True",
    reason: "ClustersMatched",
    message: `One run on each of ${runs} cluster(s)`,
  };
}

function completion(
  byPhase: Partial<Record<MaintenanceRunPhase, number>>,
  runs: MaintenanceRun[],
): ConditionInput {
  const type = TASK_CONDITIONS.Complete;
  const summary = MAINTENANCE_RUN_PHASES.filter((p) => byPhase[p])
    .map((p) => `${byPhase[p]} ${p}`)
    .join(", ");
  if (runs.length > 0 && runs.every(isFinished))
    return { type, status: "True", reason: "AllRunsFinished", message: summary };
  return {
    type,
    status: "False",
    reason: runs.length > 0 ? "RunsInProgress" : "NoRuns",
    message: summary || "No runs",
  };
}

function pausedCondition(task: MaintenanceTask, running: number): ConditionInput {
  const type = TASK_CONDITIONS.Paused;
  if (!task.spec.paused)
    return {
      type,
      status: "False",
      reason: "NotPaused",
      message: "Runs are admitted as their clusters allow",
    };
  return {
    type,
    status: "True",
    reason: "Paused",
    message:
      running > 0
        ? `spec.paused: no run is admitted; ${running} Running run(s) finish the step they are on, then wait`
        : "spec.paused: no run is admitted",
  };
}

export class MaintenanceTaskReconciler implements Reconciler {
  readonly #deps: TaskReconcilerDeps;

  constructor(deps: TaskReconcilerDeps) {
    this.#deps = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const task = this.#deps.tasks.get("", req.name);
    if (!task?.metadata.uid || task.metadata.deletionTimestamp) return {};
    const runKeys = await this.#createRuns(ctx, task);
    await this.#writeStatus(ctx, task, runKeys.size);
    return {};
  }

  /** The keys of the task's runs, creating one on each named cluster that has none. */
  async #createRuns(ctx: ReconcileContext, task: MaintenanceTask): Promise<Set<string>> {
    const deps = this.#deps;
    const runKeys = new Set(deps.runs.byIndex(RUNS_BY_TASK, task.metadata.name ?? "").map(objectKey));
    // A cluster that matches after every run finished gets none: the task is done.
    const done = isTrue(task.status?.conditions, TASK_CONDITIONS.Complete);
    // A cancelled task starts nothing: a run made now would only be cancelled.
    if (done || task.spec.cancelled || !deps.registry.has(task.spec.task)) return runKeys;
    for (const cluster of clustersOf(task, deps.clusters)) {
      const run = desiredRun(task, cluster);
      const key = objectKey(run);
      if (runKeys.has(key)) continue;
      if (await deps.client.createIfAbsent(MaintenanceRunResource, run, { signal: ctx.signal }))
        ctx.log.info("Created maintenance run", { run: key });
      runKeys.add(key);
    }
    return runKeys;
  }

  async #writeStatus(ctx: ReconcileContext, task: MaintenanceTask, clusters: number): Promise<void> {
    const deps = this.#deps;
    // Runs created just now are counted once the cache has them (their watch event brings it).
    const runs = deps.runs.byIndex(RUNS_BY_TASK, task.metadata.name ?? "");
    const byPhase: Partial<Record<MaintenanceRunPhase, number>> = {};
    for (const r of runs) {
      const phase = r.status?.phase ?? "Pending";
      byPhase[phase] = (byPhase[phase] ?? 0) + 1;
    }
    const generation = task.metadata.generation;
    const opts = { observedGeneration: generation, now: (deps.clock ?? (() => new Date()))() };
    let conditions = setCondition(task.status?.conditions, accepted(task, deps.registry, clusters), opts);
    conditions = setCondition(conditions, completion(byPhase, runs), opts);
    conditions = setCondition(conditions, pausedCondition(task, byPhase.Running ?? 0), opts);
    const status: MaintenanceTaskStatus = {
      conditions,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      clusters,
      runs: byPhase,
    };
    await deps.writer.applyStatus(MaintenanceTaskResource, task, status, { signal: ctx.signal });
  }
}
