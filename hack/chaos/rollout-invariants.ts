/**
 * What must hold of the fleet rollouts in a chaos run once it has converged, read from the world:
 * the Rollouts, their wave MaintenanceTasks, the MaintenanceRuns, and (for a key rotation) each
 * cluster's stored signing keyring. Pure, like invariants.ts's judge, which calls it:
 *
 *  - pending: a rollout not yet Succeeded (Paused and Aborted included: a crash must not stop it);
 *  - lost: a wave without a run for one of its clusters, a run of a Succeeded rollout that did not
 *    succeed, a rotated cluster whose keyring shows no rotation;
 *  - duplicated: two runs for one (wave task, cluster), one cluster's runs in two waves, a keyring
 *    rotated more than once;
 *  - orphaned: a wave task whose rollout is gone, a run whose task is gone.
 */
import {
  MAINTENANCE_LABELS,
  ROLLOUT_LABELS,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
  type Rollout,
} from "../../operators/api/v1alpha1/index.ts";

/** A cluster's keyring as its Secret stores it: key ids only. */
export interface StoredKeyring {
  activeKeyId: string;
  /** A rotation has begun and not switched. */
  next: boolean;
  /** One per rotation switched (a retired key stays for the longest token lifetime, a year). */
  retiredKeyIds: string[];
}

export interface RolloutWorld {
  rollouts: Rollout[];
  tasks: MaintenanceTask[];
  runs: MaintenanceRun[];
  /** By HcpCluster uid. */
  keyrings: Map<string, StoredKeyring>;
}

export interface RolloutFindings {
  pending: string[];
  lost: string[];
  duplicated: string[];
  orphaned: string[];
}

const ROTATION = "RotateServiceAccountSigningKey";

const runCluster = (r: MaintenanceRun): string => `${r.metadata.namespace ?? ""}/${r.spec.clusterRef.name}`;
const runName = (r: MaintenanceRun): string => `${r.metadata.namespace ?? ""}/${r.metadata.name ?? ""}`;

export function judgeRollouts(world: RolloutWorld, clusters: HcpCluster[]): RolloutFindings {
  const f: RolloutFindings = { pending: [], lost: [], duplicated: [], orphaned: [] };
  const byName = new Map(clusters.map((c) => [`${c.metadata.namespace ?? ""}/${c.metadata.name ?? ""}`, c]));
  for (const rollout of world.rollouts) checkRollout(f, world, rollout, byName);
  checkOrphans(f, world);
  return f;
}

function checkRollout(
  f: RolloutFindings,
  world: RolloutWorld,
  rollout: Rollout,
  clusters: Map<string, HcpCluster>,
): void {
  const name = rollout.metadata.name ?? "";
  const phase = rollout.status?.phase ?? "Pending";
  const succeeded = phase === "Succeeded";
  if (!succeeded) f.pending.push(`Rollout ${name} ${phase}`);
  const wavesOf = clusterWaves(f, world, name, succeeded);
  for (const [cluster, tasks] of wavesOf)
    if (tasks.length > 1) f.duplicated.push(`${cluster} in waves ${tasks.join(", ")} of Rollout ${name}`);
  if (succeeded && rollout.spec.task === ROTATION)
    for (const cluster of wavesOf.keys()) checkRotated(f, world, clusters.get(cluster), cluster);
}

/** Each wave checked; the waves each cluster had a run in. */
function clusterWaves(
  f: RolloutFindings,
  world: RolloutWorld,
  rollout: string,
  succeeded: boolean,
): Map<string, string[]> {
  const wavesOf = new Map<string, string[]>();
  for (const task of world.tasks.filter((t) => t.metadata.labels?.[ROLLOUT_LABELS.rollout] === rollout)) {
    for (const cluster of checkWave(f, world, task, succeeded))
      wavesOf.set(cluster, [...(wavesOf.get(cluster) ?? []), task.metadata.name ?? ""]);
  }
  return wavesOf;
}

/** One wave's runs: one per cluster it names, each Succeeded once the rollout is. Returns the clusters run. */
function checkWave(
  f: RolloutFindings,
  world: RolloutWorld,
  task: MaintenanceTask,
  succeeded: boolean,
): string[] {
  const taskName = task.metadata.name ?? "";
  const runs = world.runs.filter((r) => r.metadata.labels?.[MAINTENANCE_LABELS.task] === taskName);
  const perCluster = countBy(runs.map(runCluster));
  for (const [cluster, count] of perCluster)
    if (count > 1) f.duplicated.push(`MaintenanceRun of ${taskName} for ${cluster} ×${count}`);
  for (const cluster of task.spec.clusters.names ?? [])
    if (!perCluster.has(cluster)) f.lost.push(`MaintenanceRun of ${taskName} for ${cluster}`);
  if (succeeded)
    for (const run of runs.filter((r) => r.status?.phase !== "Succeeded"))
      f.lost.push(`MaintenanceRun ${runName(run)} ${run.status?.phase ?? "Pending"}`);
  return [...perCluster.keys()];
}

/** Rotated once: one retired key, no rotation left begun, the new key active and applied. */
function checkRotated(
  f: RolloutFindings,
  world: RolloutWorld,
  cluster: HcpCluster | undefined,
  name: string,
): void {
  if (!cluster) return; // a cluster deleted since is the workload's business, judged there
  const ring = world.keyrings.get(cluster.metadata.uid ?? "");
  if (!ring) {
    f.lost.push(`signing keyring of ${name}`);
    return;
  }
  const rotations = ring.retiredKeyIds.length;
  if (rotations === 0) f.lost.push(`signing key rotation of ${name}`);
  if (rotations > 1) f.duplicated.push(`signing key rotation of ${name} ×${rotations}`);
  if (ring.next) f.duplicated.push(`signing key rotation of ${name} begun again`);
  const status = cluster.status?.serviceAccountSigningKey;
  if (status?.activeKeyId !== ring.activeKeyId || status.appliedKeyId !== ring.activeKeyId)
    f.pending.push(`${name} signing key ${ring.activeKeyId} not active and applied`);
}

function checkOrphans(f: RolloutFindings, world: RolloutWorld): void {
  const rollouts = new Set(world.rollouts.map((r) => r.metadata.name ?? ""));
  const tasks = new Set(world.tasks.map((t) => t.metadata.name ?? ""));
  for (const task of world.tasks) {
    const owner = task.metadata.labels?.[ROLLOUT_LABELS.rollout];
    if (owner !== undefined && !rollouts.has(owner))
      f.orphaned.push(`MaintenanceTask ${task.metadata.name ?? ""} of deleted Rollout ${owner}`);
  }
  for (const run of world.runs)
    if (!tasks.has(run.spec.task))
      f.orphaned.push(`MaintenanceRun ${runName(run)} of deleted MaintenanceTask ${run.spec.task}`);
}

function countBy(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}
