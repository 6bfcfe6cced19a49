/**
 * What one reconcile of a Rollout works with: the dependencies, and the facts the phases record
 * for the one status write (status.ts).
 */
import type {
  HcpCluster,
  MaintenanceRun,
  MaintenanceTask,
  Rollout,
  RolloutStatus,
} from "../api/v1alpha1/index.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import type { KubeClient } from "../runtime/kube.ts";
import type { Logger } from "../runtime/logger.ts";
import type { ResolvedWaves } from "./plan.ts";
import type { Wave } from "./waves.ts";

export interface RolloutReconcilerDeps {
  rollouts: Lister<Rollout>;
  /** Indexed by TASK_INDEXERS (waves.ts). */
  tasks: Lister<MaintenanceTask>;
  /** Indexed by RUN_INDEXERS (waves.ts). */
  runs: Lister<MaintenanceRun>;
  clusters: Lister<HcpCluster>;
  client: Pick<KubeClient, "createIfAbsent" | "mergePatch">;
  writer: Pick<ObjectWriter, "addFinalizer" | "removeFinalizer" | "applyStatus">;
  events: Pick<EventRecorder, "record">;
  /** Default: the system clock. */
  clock?: () => Date;
}

export interface RolloutScope {
  deps: RolloutReconcilerDeps;
  rollout: Rollout;
  now: Date;
  log: Logger;
  plan: ResolvedWaves;
  /** Set by selectClusters: the clusters spec.clusters names now, sorted. */
  candidates: string[];
  /** Set by selectClusters: spec.clusters.names naming no cluster. */
  missing: string[];
  /** Set by observeWaves: the rollout's waves, by index. */
  waves: Wave[];
  /** Set by advance: a wave this reconcile began (not yet in the cache). */
  begun?: { index: number; task: string; members: string[] };
  /** Set by advance: every cluster is in a finished wave and none is held over its budget. */
  done?: boolean;
  /** The status this reconcile writes (its events are told once the write is made). */
  next?: RolloutStatus;
}

export const currentWave = (scope: Pick<RolloutScope, "waves">): Wave | undefined => scope.waves.at(-1);
