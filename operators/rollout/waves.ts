/**
 * A rollout's waves as MaintenanceTasks: the wave task's deterministic name and body, the index
 * the controller finds a rollout's tasks by, and what a wave task and its runs say of the wave.
 */
import {
  API_VERSION,
  FINISHED_RUN_PHASES,
  MAINTENANCE_TASK_KIND,
  MAX_LISTED_FAILURES,
  ROLLOUT_KIND,
  ROLLOUT_LABELS,
  type MaintenanceRun,
  type MaintenanceRunPhase,
  type MaintenanceTask,
  type Rollout,
  type RolloutWaveState,
} from "../api/v1alpha1/index.ts";
import { getCondition, isTrue } from "../runtime/conditions.ts";
import type { IndexFunc } from "../runtime/informer.ts";

/** Wave tasks by the name of the Rollout that controls them. */
export const TASKS_BY_ROLLOUT = "rollout-tasks-by-rollout";
/** Runs by their MaintenanceTask's name. */
export const RUNS_BY_TASK = "rollout-runs-by-task";

/** The MaintenanceTask condition that says every run of the task finished. */
const TASK_COMPLETE = "Complete";
/** The MaintenanceTask condition that says which clusters it matched. */
const TASK_ACCEPTED = "Accepted";

/** The task controller found none of the task's clusters (for the task's current generation). */
function noneLeft(task: MaintenanceTask): boolean {
  const accepted = getCondition(task.status?.conditions, TASK_ACCEPTED);
  return (
    accepted?.reason === "NoClustersMatch" &&
    task.status?.observedGeneration !== undefined &&
    task.status.observedGeneration === task.metadata.generation
  );
}

const rolloutOwner = (t: MaintenanceTask): string | undefined =>
  t.metadata.ownerReferences?.find((o) => o.kind === ROLLOUT_KIND && o.controller)?.name;

export const TASK_INDEXERS: Record<string, IndexFunc<MaintenanceTask>> = {
  [TASKS_BY_ROLLOUT]: (t) => {
    const owner = rolloutOwner(t);
    return owner ? [owner] : [];
  },
};

export const RUN_INDEXERS: Record<string, IndexFunc<MaintenanceRun>> = {
  [RUNS_BY_TASK]: (r) => [r.spec.task],
};

/** `<rollout>-wave-<index>`: the CRD keeps rollout names to 63 characters, so this is a valid name. */
export const waveTaskName = (rollout: string, index: number): string => `${rollout}-wave-${index}`;

/** The wave number a task of the rollout carries; undefined when the label is not one. */
export function waveIndexOf(task: MaintenanceTask): number | undefined {
  const text = task.metadata.labels?.[ROLLOUT_LABELS.wave] ?? "";
  const index = /^[1-9][0-9]{0,5}$/.test(text) ? Number(text) : undefined;
  return index !== undefined &&
    task.metadata.name === waveTaskName(task.metadata.labels?.[ROLLOUT_LABELS.rollout] ?? "", index)
    ? index
    : undefined;
}

/** Wave `index` of `rollout` on `members`, owned by the rollout (it goes with it). */
export function desiredWaveTask(rollout: Rollout, index: number, members: string[]): MaintenanceTask {
  const name = rollout.metadata.name ?? "";
  const { release, task, urgency, maxConcurrentPerManagementCluster } = rollout.spec;
  return {
    apiVersion: API_VERSION,
    kind: MAINTENANCE_TASK_KIND,
    metadata: {
      name: waveTaskName(name, index),
      labels: { [ROLLOUT_LABELS.rollout]: name, [ROLLOUT_LABELS.wave]: String(index) },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: ROLLOUT_KIND,
          name,
          uid: rollout.metadata.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      task: release ? "UpgradeControlPlane" : (task ?? "UpgradeControlPlane"),
      ...(release ? { release: { version: release.version } } : {}),
      clusters: { names: members },
      ...(urgency === undefined ? {} : { urgency }),
      ...(maxConcurrentPerManagementCluster === undefined ? {} : { maxConcurrentPerManagementCluster }),
    },
  };
}

/** What one wave's task and runs say, and what the rollout makes of it. */
export interface Wave {
  index: number;
  task: MaintenanceTask;
  /** "namespace/name" of the clusters the wave holds (its task's spec.clusters.names). */
  members: string[];
  runs: Partial<Record<MaintenanceRunPhase, number>>;
  /** "namespace/name" of the clusters whose run Failed or TimedOut, sorted. */
  failed: string[];
  /** The task is Complete and the cache shows every one of its runs finished. */
  finished: boolean;
  state: RolloutWaveState;
}

const FAILED: readonly MaintenanceRunPhase[] = ["Failed", "TimedOut"];

export interface WaveRules {
  maxFailed: number;
  proceedPastWave: number;
}

function stateOf(
  w: Pick<Wave, "index" | "failed" | "finished" | "task" | "runs">,
  rules: WaveRules,
): RolloutWaveState {
  if (w.task.spec.cancelled && (!w.finished || (w.runs.Cancelled ?? 0) > 0)) return "Aborted";
  if (w.failed.length > rules.maxFailed) {
    if (rules.proceedPastWave < w.index) return "FailureBudgetExceeded";
    return w.finished ? "FailuresAccepted" : "Progressing";
  }
  return w.finished ? "Succeeded" : "Progressing";
}

/** The wave `task` stands for, from its runs in the cache. */
export function observeWave(
  task: MaintenanceTask,
  index: number,
  runs: readonly MaintenanceRun[],
  rules: WaveRules,
): Wave {
  const byPhase: Partial<Record<MaintenanceRunPhase, number>> = {};
  const failed: string[] = [];
  for (const r of runs) {
    const phase = r.status?.phase ?? "Pending";
    byPhase[phase] = (byPhase[phase] ?? 0) + 1;
    if (FAILED.includes(phase)) failed.push(`${r.metadata.namespace ?? ""}/${r.spec.clusterRef.name}`);
  }
  failed.sort();
  const allFinished = runs.every((r) => FINISHED_RUN_PHASES.includes(r.status?.phase ?? "Pending"));
  // Complete is the task controller's word that no run is still to be made; the cache's runs must
  // agree. A task whose clusters were all deleted before it made a run never completes: it is over.
  const finished =
    (isTrue(task.status?.conditions, TASK_COMPLETE) && allFinished) || (runs.length === 0 && noneLeft(task));
  const wave = { index, task, members: task.spec.clusters.names ?? [], runs: byPhase, failed, finished };
  return { ...wave, state: stateOf(wave, rules) };
}

/** The failed clusters a status names: the first MAX_LISTED_FAILURES. */
export const listedFailures = (w: Wave): string[] => w.failed.slice(0, MAX_LISTED_FAILURES);
