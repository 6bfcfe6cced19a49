/**
 * The phases of a Rollout, in order: selectClusters (what spec.clusters names now); observeWaves
 * (the wave tasks in the cache and their runs); steer (the unfinished wave's task paused while
 * the rollout is, cancelled once it is aborted); advance (once every wave has finished within its
 * budget or with its failures accepted: the next wave, or done). Nothing here remembers anything
 * between reconciles: the wave tasks are the record, and re-creating one under its deterministic
 * name after a crash changes nothing.
 */
import { MaintenanceTaskResource, type MaintenanceTask, type Rollout } from "../api/v1alpha1/index.ts";
import type { Phase } from "../runtime/phases.ts";
import { namedClusters, nextWaveMembers } from "./plan.ts";
import { currentWave, type RolloutScope } from "./scope.ts";
import { RUNS_BY_TASK, TASKS_BY_ROLLOUT, desiredWaveTask, observeWave, waveIndexOf } from "./waves.ts";

/** The rollout stops here for good: aborted, or already succeeded (clusters matching later are not taken). */
export const finishedForGood = (rollout: Rollout): boolean =>
  rollout.spec.abort === true || rollout.status?.phase === "Succeeded";

/** A wave held over its failure budget, the SRE not having accepted its failures. */
export const halted = (scope: Pick<RolloutScope, "waves">): boolean =>
  scope.waves.some((w) => w.state === "FailureBudgetExceeded");

export const selectClusters: Phase<RolloutScope> = (_ctx, scope) => {
  const { candidates, missing } = namedClusters(scope.rollout.spec.clusters, scope.deps.clusters);
  scope.candidates = candidates;
  scope.missing = missing;
  return {};
};

export const observeWaves: Phase<RolloutScope> = (_ctx, scope) => {
  const { rollout, deps } = scope;
  const rules = {
    maxFailed: rollout.spec.failureBudget?.maxFailedPerWave ?? 0,
    proceedPastWave: rollout.spec.proceedPastWave ?? 0,
  };
  const waves = [];
  for (const task of deps.tasks.byIndex(TASKS_BY_ROLLOUT, rollout.metadata.name ?? "")) {
    // A task another rollout of the same name made (one deleted and made again) is not this one's.
    const owned = task.metadata.ownerReferences?.some((o) => o.uid === rollout.metadata.uid);
    const index = waveIndexOf(task);
    if (!owned || index === undefined) continue;
    waves.push(observeWave(task, index, deps.runs.byIndex(RUNS_BY_TASK, task.metadata.name ?? ""), rules));
  }
  scope.waves = waves.sort((a, b) => a.index - b.index);
  return {};
};

async function patchTask(
  scope: RolloutScope,
  task: MaintenanceTask,
  spec: { paused?: boolean; cancelled?: boolean },
  signal: AbortSignal,
): Promise<void> {
  scope.log.info("Steering wave task", { task: task.metadata.name, ...spec });
  await scope.deps.client.mergePatch(
    MaintenanceTaskResource,
    { name: task.metadata.name ?? "" },
    { spec },
    { signal },
  );
}

/** The unfinished wave's task: paused while the rollout is (by spec or by its budget), cancelled once aborted. */
export const steer: Phase<RolloutScope> = async (ctx, scope) => {
  const { rollout } = scope;
  for (const wave of scope.waves) {
    if (wave.finished) continue;
    const { task } = wave;
    if (rollout.spec.abort) {
      if (!task.spec.cancelled) await patchTask(scope, task, { cancelled: true }, ctx.signal);
      continue;
    }
    const paused = rollout.spec.paused === true || wave.state === "FailureBudgetExceeded";
    if ((task.spec.paused ?? false) !== paused) await patchTask(scope, task, { paused }, ctx.signal);
  }
  return {};
};

/** Once every wave has finished and none is held: the next wave on clusters no wave holds yet, or done. */
export const advance: Phase<RolloutScope> = async (ctx, scope) => {
  const { rollout, deps } = scope;
  if (finishedForGood(rollout) || rollout.spec.paused || halted(scope)) return {};
  if (scope.waves.some((w) => !w.finished)) return {};
  const earlier = new Set(scope.waves.flatMap((w) => w.members));
  const index = (currentWave(scope)?.index ?? 0) + 1;
  const members = nextWaveMembers(scope.candidates, earlier, scope.plan, index);
  if (members.length === 0) {
    scope.done = scope.waves.length > 0;
    return {};
  }
  const task = desiredWaveTask(rollout, index, members);
  // Already there: the cache has not shown it yet (its add event wakes this rollout again).
  if (!(await deps.client.createIfAbsent(MaintenanceTaskResource, task, { signal: ctx.signal }))) return {};
  scope.log.info("Began wave", { wave: index, task: task.metadata.name, clusters: members.length });
  scope.begun = { index, task: task.metadata.name ?? "", members };
  return {};
};

export const ROLLOUT_PHASES: readonly Phase<RolloutScope>[] = [selectClusters, observeWaves, steer, advance];

/** While a rollout is deleted: its unfinished wave is cancelled, so that nothing it began goes on unowned. */
export const cancelUnfinished: Phase<RolloutScope> = async (ctx, scope) => {
  for (const wave of scope.waves)
    if (!wave.finished && !wave.task.spec.cancelled)
      await patchTask(scope, wave.task, { cancelled: true }, ctx.signal);
  return {};
};

export const DELETION_PHASES: readonly Phase<RolloutScope>[] = [observeWaves, cancelUnfinished];
