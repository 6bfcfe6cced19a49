/**
 * Maintenance vocabulary (hcp.aro.dev/v1alpha1): a cluster's windows and freezes
 * (HcpCluster spec.maintenance), MaintenanceTask (a task over a set of clusters) and MaintenanceRun
 * (one task on one cluster). Mirrors crds/hcp.aro.dev_maintenancetasks.yaml and
 * crds/hcp.aro.dev_maintenanceruns.yaml.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import { GROUP, VERSION, type API_VERSION, type Condition, type LabelSelector } from "./meta.ts";

export const WEEKDAYS = [
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
  "Sunday",
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A weekly window in the cluster's time zone; an end at or before the start runs past midnight. */
export interface MaintenanceWindow {
  days: Weekday[];
  /** "HH:MM", wall-clock time in spec.maintenance.timeZone. */
  start: string;
  end: string;
}

/** A period in which nothing disruptive begins, even inside a window (an SRE's urgent work aside). */
export interface MaintenanceFreeze {
  /** RFC 3339. */
  start: string;
  end: string;
  reason?: string;
}

export interface MaintenanceSpec {
  /** IANA time zone of the windows; defaults to UTC. */
  timeZone?: string;
  /** None: any time. */
  windows?: MaintenanceWindow[];
  freezes?: MaintenanceFreeze[];
}

/** The task types this version knows; the CRD's enum refuses any other. */
export const MAINTENANCE_TASK_TYPES = [
  "RotateServiceAccountSigningKey",
  "UpgradeControlPlane",
  "RefreshWorkTemplate",
] as const;
export type MaintenanceTaskType = (typeof MAINTENANCE_TASK_TYPES)[number];

/** Normal work waits for the cluster's windows and freezes; Urgent (an SRE's call) does not. */
export const MAINTENANCE_URGENCIES = ["Normal", "Urgent"] as const;
export type MaintenanceUrgency = (typeof MAINTENANCE_URGENCIES)[number];

export const MAINTENANCE_TASK_KIND = "MaintenanceTask";
export const MAINTENANCE_RUN_KIND = "MaintenanceRun";

export const MaintenanceTaskResource = {
  group: GROUP,
  version: VERSION,
  kind: MAINTENANCE_TASK_KIND,
  plural: "maintenancetasks",
  namespaced: false,
} as const satisfies ResourceType;

export const MaintenanceRunResource = {
  group: GROUP,
  version: VERSION,
  kind: MAINTENANCE_RUN_KIND,
  plural: "maintenanceruns",
  namespaced: true,
} as const satisfies ResourceType;

/** Labels on a run naming its task and its cluster (the task controller lists runs by them). */
export const MAINTENANCE_LABELS = {
  task: "hcp.aro.dev/maintenance-task",
  clusterName: "hcp.aro.dev/cluster-name",
  clusterNamespace: "hcp.aro.dev/cluster-namespace",
} as const;

/**
 * On an HcpCluster whose spec.version.id an UpgradeControlPlane run raised, written in the same
 * patch: which run ("namespace/name") and the id it replaced, so a re-run after a crash still
 * says what it changed.
 */
export const MAINTENANCE_VERSION_ANNOTATIONS = {
  askedBy: "hcp.aro.dev/version-asked-by",
  replaced: "hcp.aro.dev/version-replaced",
} as const;

/**
 * The revision of the template the cluster controller builds a cluster's ManifestWork from.
 * Bump it by hand in the same change that makes the rendering produce a different work from an
 * unchanged cluster (a new field, a label, a default): works built from an older revision are then
 * held (the cluster's WorkTemplateCurrent False) until a RefreshWorkTemplate maintenance run lets
 * them be written, at the rate a task or rollout allows, instead of every work at once at start.
 * A change of the cluster itself (its spec, release, signing key, ExternalAuths) writes at once.
 */
export const WORK_TEMPLATE_REVISION = 3;

/**
 * On a cluster's ManifestWork: the template revision it was built from, and a digest of what it
 * was built from (operators/cluster/work-template.ts), so that a work differing only by the
 * template can be told from one whose cluster changed.
 */
export const WORK_TEMPLATE_ANNOTATIONS = {
  revision: "hcp.aro.dev/template-revision",
  inputs: "hcp.aro.dev/template-inputs",
} as const;

/**
 * On an HcpCluster: the highest template revision its work may be rewritten to while only the
 * template moved. Set by a RefreshWorkTemplate run (a guarded merge patch).
 */
export const WORK_TEMPLATE_ALLOWED_ANNOTATION = "hcp.aro.dev/work-template-allowed";

/** Held by the run actuator so that a deleted run leaves its admission in one place. */
export const MAINTENANCE_RUN_FINALIZER = "hcp.aro.dev/maintenance-run";

/** The bounds of spec.maxConcurrentPerManagementCluster. */
export const MAINTENANCE_CONCURRENCY = { min: 1, max: 100, default: 1 } as const;

/** Exactly one of selector and names. */
export interface MaintenanceClusters {
  /** HcpClusters in every namespace. */
  selector?: LabelSelector;
  /** "namespace/name" of HcpClusters. */
  names?: string[];
}

/** What an UpgradeControlPlane task moves its clusters to. */
export interface MaintenanceRelease {
  /** A major.minor.patch OpenShift release, such as 4.19.10. */
  version: string;
}

/** Immutable but for paused and cancelled: a different task is a new MaintenanceTask. */
export interface MaintenanceTaskSpec {
  task: MaintenanceTaskType;
  /** Set exactly when task is UpgradeControlPlane. */
  release?: MaintenanceRelease;
  clusters: MaintenanceClusters;
  /** RFC 3339: no run begins before it. */
  notBefore?: string;
  /** RFC 3339: a run not begun by then is TimedOut. After notBefore. */
  notAfter?: string;
  /** Default Normal. */
  urgency?: MaintenanceUrgency;
  /** Default 1: Running runs of this task at once on one management cluster. */
  maxConcurrentPerManagementCluster?: number;
  /**
   * While true no run of the task is admitted; a Running run finishes the step it is on and waits
   * before the next one.
   */
  paused?: boolean;
  /**
   * May only go from false to true. Runs not yet Running become Cancelled; Running runs finish
   * their steps (an upgrade asked for is not taken back half way).
   */
  cancelled?: boolean;
}

export const MAINTENANCE_RUN_PHASES = [
  "Pending",
  "Waiting",
  "Running",
  "Succeeded",
  "Failed",
  "TimedOut",
  "Cancelled",
] as const;
export type MaintenanceRunPhase = (typeof MAINTENANCE_RUN_PHASES)[number];

/** The phases a run never leaves. */
export const FINISHED_RUN_PHASES: readonly MaintenanceRunPhase[] = [
  "Succeeded",
  "Failed",
  "TimedOut",
  "Cancelled",
];

export interface MaintenanceTaskStatus {
  /** Accepted (the clusters matched), Complete (every run finished), Paused (spec.paused). */
  conditions?: Condition[];
  observedGeneration?: number;
  /** How many clusters the task matched (one run each). */
  clusters?: number;
  /** Runs by phase. */
  runs?: Partial<Record<MaintenanceRunPhase, number>>;
}

export interface MaintenanceTask extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof MAINTENANCE_TASK_KIND;
  spec: MaintenanceTaskSpec;
  status?: MaintenanceTaskStatus;
}

/** Copied from the task when the run is made; immutable. */
export interface MaintenanceRunSpec {
  /** The MaintenanceTask's name. */
  task: string;
  taskType: MaintenanceTaskType;
  /** An HcpCluster in the run's namespace. */
  clusterRef: { name: string };
  urgency?: MaintenanceUrgency;
  notBefore?: string;
  notAfter?: string;
  /** The task's maxConcurrentPerManagementCluster. */
  maxConcurrentPerManagementCluster?: number;
  /** The task's release (UpgradeControlPlane). */
  release?: MaintenanceRelease;
}

export const MAINTENANCE_STEP_STATES = ["Pending", "Running", "Succeeded", "Failed"] as const;
export type MaintenanceStepState = (typeof MAINTENANCE_STEP_STATES)[number];

export interface MaintenanceStepStatus {
  name: string;
  state: MaintenanceStepState;
  /** Attempts that ended in a transient error (reset when the step moves on). */
  attempts?: number;
  message?: string;
  startedAt?: string;
  completedAt?: string;
}

export interface MaintenanceRunStatus {
  phase?: MaintenanceRunPhase;
  /** Ready, Progressing and one per step (the step's name). */
  conditions?: Condition[];
  observedGeneration?: number;
  steps?: MaintenanceStepStatus[];
  /** When the run was admitted (phase Running). */
  startedAt?: string;
  completedAt?: string;
  /** The management cluster the run was admitted on (its concurrency is counted there). */
  managementCluster?: string;
}

export interface MaintenanceRun extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof MAINTENANCE_RUN_KIND;
  spec: MaintenanceRunSpec;
  status?: MaintenanceRunStatus;
}
