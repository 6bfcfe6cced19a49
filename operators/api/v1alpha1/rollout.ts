/**
 * Rollout (hcp.aro.dev/v1alpha1, cluster-scoped): a release or a maintenance task rolled over a
 * set of HcpClusters in waves (a canary, then growing waves), each wave one MaintenanceTask the
 * rollout owns. Mirrors crds/hcp.aro.dev_rollouts.yaml; the controller is operators/rollout/.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import { GROUP, VERSION, type API_VERSION, type Condition } from "./meta.ts";
import type {
  MaintenanceClusters,
  MaintenanceRelease,
  MaintenanceRunPhase,
  MaintenanceTaskType,
  MaintenanceUrgency,
} from "./maintenance.ts";

export const ROLLOUT_KIND = "Rollout";

export const RolloutResource = {
  group: GROUP,
  version: VERSION,
  kind: ROLLOUT_KIND,
  plural: "rollouts",
  namespaced: false,
} as const satisfies ResourceType;

/** Held by the rollout controller so that a deleted rollout cancels its current wave first. */
export const ROLLOUT_FINALIZER = "hcp.aro.dev/rollout";

/** On each wave's MaintenanceTask: the rollout it belongs to, and its wave number. */
export const ROLLOUT_LABELS = {
  rollout: "hcp.aro.dev/rollout",
  wave: "hcp.aro.dev/rollout-wave",
} as const;

/** The bounds and defaults of spec.waves (a wave is one MaintenanceTask, whose names list holds 1000). */
export const ROLLOUT_WAVES = {
  canaryDefault: 1,
  growthDefault: 2,
  maxGrowth: 10,
  maxWaveSize: 1000,
} as const;

/** How the waves grow: wave 1 (the canary) has `canary` clusters, wave n `canary · growthⁿ⁻¹`, at most maxSize. */
export interface RolloutWaves {
  /** Default 1. */
  canary?: number;
  /** Default 2: each wave this many times the one before. */
  growth?: number;
  /** No wave larger (and never more than 1000). */
  maxSize?: number;
}

export interface RolloutFailureBudget {
  /** Default 0: failed or timed-out runs a wave may have before the rollout pauses itself. */
  maxFailedPerWave?: number;
}

/** Immutable but for paused, abort and proceedPastWave. */
export interface RolloutSpec {
  /** Exactly one of release and task: release rolls UpgradeControlPlane to this version. */
  release?: MaintenanceRelease;
  /** Exactly one of release and task; not UpgradeControlPlane (that is spec.release). */
  task?: MaintenanceTaskType;
  clusters: MaintenanceClusters;
  waves?: RolloutWaves;
  /** Default 1: Running runs of a wave at once on one management cluster. */
  maxConcurrentPerManagementCluster?: number;
  failureBudget?: RolloutFailureBudget;
  /** Default Normal: each run waits for its cluster's windows. */
  urgency?: MaintenanceUrgency;
  /** While true no run of the current wave is admitted and no next wave starts. */
  paused?: boolean;
  /** May only go from false to true: the current wave's runs not yet Running are cancelled, no wave follows. */
  abort?: boolean;
  /**
   * The failures of waves 1..proceedPastWave are accepted: a rollout that paused itself over a
   * wave's failure budget goes on once this reaches that wave. Never decreases.
   */
  proceedPastWave?: number;
}

export const ROLLOUT_PHASES = ["Pending", "Progressing", "Paused", "Succeeded", "Aborted"] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

export const ROLLOUT_WAVE_STATES = [
  "Progressing",
  "Succeeded",
  "FailureBudgetExceeded",
  "FailuresAccepted",
  "Aborted",
] as const;
export type RolloutWaveState = (typeof ROLLOUT_WAVE_STATES)[number];

/** Why a rollout is Paused (its Paused condition's reason). */
export const ROLLOUT_PAUSE_REASONS = {
  budget: "FailureBudgetExceeded",
  spec: "PausedBySpec",
} as const;

/** The most failed clusters a wave's status names (the runs name them all). */
export const MAX_LISTED_FAILURES = 20;

export interface RolloutWaveStatus {
  /** 1 is the canary. */
  index: number;
  /** The wave's MaintenanceTask. */
  task: string;
  /** How many clusters the wave holds. */
  clusters: number;
  /** The wave's runs by phase. */
  runs?: Partial<Record<MaintenanceRunPhase, number>>;
  state: RolloutWaveState;
  /** "namespace/name" of the clusters whose run Failed or TimedOut (at most MAX_LISTED_FAILURES). */
  failedClusters?: string[];
}

export interface RolloutStatus {
  phase?: RolloutPhase;
  /** Accepted (clusters matched, the task is known), Progressing, Paused. */
  conditions?: Condition[];
  observedGeneration?: number;
  /** Clusters in the rollout: those in its waves and those still to come. */
  clusters?: number;
  /** The index of the latest wave begun; 0 before the canary. */
  currentWave?: number;
  waves?: RolloutWaveStatus[];
}

export interface Rollout extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof ROLLOUT_KIND;
  spec: RolloutSpec;
  status?: RolloutStatus;
}
