import { describe, expect, it } from "vitest";
import {
  MAINTENANCE_LABELS,
  ROLLOUT_LABELS,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceRunPhase,
  type MaintenanceTask,
  type Rollout,
  type RolloutPhase,
} from "../../operators/api/v1alpha1/index.ts";
import { judgeRollouts, type RolloutWorld, type StoredKeyring } from "./rollout-invariants.ts";

const ROLLOUT = "chaos-rotate";

function cluster(name: string): HcpCluster {
  return {
    metadata: { name, namespace: "chaos-0", uid: `uid-${name}` },
    spec: {},
    status: { serviceAccountSigningKey: { activeKeyId: `new-${name}`, appliedKeyId: `new-${name}` } },
  } as unknown as HcpCluster;
}

function rollout(phase: RolloutPhase = "Succeeded"): Rollout {
  return {
    metadata: { name: ROLLOUT },
    spec: { task: "RotateServiceAccountSigningKey", clusters: { names: [] } },
    status: { phase },
  };
}

function wave(index: number, clusters: string[]): MaintenanceTask {
  return {
    metadata: { name: `${ROLLOUT}-wave-${index}`, labels: { [ROLLOUT_LABELS.rollout]: ROLLOUT } },
    spec: {
      task: "RotateServiceAccountSigningKey",
      clusters: { names: clusters.map((c) => `chaos-0/${c}`) },
    },
  };
}

function run(
  index: number,
  clusterName: string,
  phase: MaintenanceRunPhase = "Succeeded",
  suffix = "",
): MaintenanceRun {
  const task = `${ROLLOUT}-wave-${index}`;
  return {
    metadata: {
      name: `${task}-${clusterName}${suffix}`,
      namespace: "chaos-0",
      labels: { [MAINTENANCE_LABELS.task]: task },
    },
    spec: { task, taskType: "RotateServiceAccountSigningKey", clusterRef: { name: clusterName } },
    status: { phase },
  };
}

const rotatedOnce = (name: string): StoredKeyring => ({
  activeKeyId: `new-${name}`,
  next: false,
  retiredKeyIds: [`old-${name}`],
});

/** A rollout of two waves (a; b, c) finished as it should. */
function world(): { world: RolloutWorld; clusters: HcpCluster[] } {
  const names = ["a", "b", "c"];
  return {
    clusters: names.map(cluster),
    world: {
      rollouts: [rollout()],
      tasks: [wave(1, ["a"]), wave(2, ["b", "c"])],
      runs: [run(1, "a"), run(2, "b"), run(2, "c")],
      keyrings: new Map(names.map((n) => [`uid-${n}`, rotatedOnce(n)])),
    },
  };
}

const clean = { pending: [], lost: [], duplicated: [], orphaned: [] };

describe("judgeRollouts", () => {
  it("finds nothing wrong with a rollout that succeeded, one run per cluster, each key rotated once", () => {
    const w = world();
    expect(judgeRollouts(w.world, w.clusters)).toEqual(clean);
  });

  it("holds a rollout that has not succeeded as pending, naming its phase", () => {
    const w = world();
    w.world.rollouts = [rollout("Paused")];
    expect(judgeRollouts(w.world, w.clusters).pending).toEqual([`Rollout ${ROLLOUT} Paused`]);
  });

  it("counts a second run for one wave and cluster, and one cluster run in two waves, as duplicated", () => {
    const w = world();
    w.world.runs.push(run(2, "b", "Succeeded", "-again"), run(2, "a"));
    w.world.tasks[1] = wave(2, ["b", "c", "a"]);
    expect(judgeRollouts(w.world, w.clusters).duplicated).toEqual([
      `MaintenanceRun of ${ROLLOUT}-wave-2 for chaos-0/b ×2`,
      `chaos-0/a in waves ${ROLLOUT}-wave-1, ${ROLLOUT}-wave-2 of Rollout ${ROLLOUT}`,
    ]);
  });

  it("counts a wave's cluster without a run, and a run of a Succeeded rollout that failed, as lost", () => {
    const w = world();
    w.world.runs = [run(1, "a", "Failed"), run(2, "b")];
    const found = judgeRollouts(w.world, w.clusters);
    expect(found.lost).toEqual([
      `MaintenanceRun chaos-0/${ROLLOUT}-wave-1-a Failed`,
      `MaintenanceRun of ${ROLLOUT}-wave-2 for chaos-0/c`,
    ]);
  });

  it("counts a keyring rotated twice as duplicated and one never rotated as lost", () => {
    const w = world();
    w.world.keyrings.set("uid-b", { ...rotatedOnce("b"), retiredKeyIds: ["old-b", "older-b"] });
    w.world.keyrings.set("uid-c", { ...rotatedOnce("c"), retiredKeyIds: [] });
    const found = judgeRollouts(w.world, w.clusters);
    expect(found.duplicated).toEqual(["signing key rotation of chaos-0/b ×2"]);
    expect(found.lost).toEqual(["signing key rotation of chaos-0/c"]);
  });

  it("holds a new key not yet applied on the management cluster as pending", () => {
    const w = world();
    w.clusters[0]!.status!.serviceAccountSigningKey!.appliedKeyId = "old-a";
    expect(judgeRollouts(w.world, w.clusters).pending).toEqual([
      "chaos-0/a signing key new-a not active and applied",
    ]);
  });

  it("counts a wave task of a deleted rollout and a run of a deleted task as orphaned", () => {
    const w = world();
    w.world.rollouts = [];
    w.world.tasks = [wave(1, ["a"])];
    expect(judgeRollouts(w.world, w.clusters).orphaned).toEqual([
      `MaintenanceTask ${ROLLOUT}-wave-1 of deleted Rollout ${ROLLOUT}`,
      `MaintenanceRun chaos-0/${ROLLOUT}-wave-2-b of deleted MaintenanceTask ${ROLLOUT}-wave-2`,
      `MaintenanceRun chaos-0/${ROLLOUT}-wave-2-c of deleted MaintenanceTask ${ROLLOUT}-wave-2`,
    ]);
  });
});
