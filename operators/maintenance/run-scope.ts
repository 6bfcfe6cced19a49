/**
 * What one reconcile of a MaintenanceRun works with: the dependencies, and the facts the phases
 * record for the one status write (run-status.ts).
 */
import type {
  HcpCluster,
  MaintenanceRun,
  MaintenanceRunPhase,
  MaintenanceStepStatus,
  MaintenanceTask,
} from "../api/v1alpha1/index.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { EventRecorder, EventSeverity } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import type { Logger } from "../runtime/logger.ts";
import type { Admissions } from "./admission.ts";
import type { TaskDefinition, TaskRegistry } from "./step.ts";

export interface RunReconcilerDeps {
  /** Indexed by RUN_INDEXERS (runs.ts). */
  runs: Lister<MaintenanceRun>;
  clusters: Lister<HcpCluster>;
  /** The MaintenanceTasks (cluster-scoped): a run reads its task's paused and cancelled here. */
  maintenanceTasks: Lister<MaintenanceTask>;
  tasks: TaskRegistry;
  admissions: Admissions;
  writer: ObjectWriter;
  events: Pick<EventRecorder, "record">;
  /** Default: the system clock. */
  clock?: () => Date;
  /** Transient failures of one step before the run fails; default MAX_STEP_ATTEMPTS. */
  maxAttempts?: number;
}

export const MAX_STEP_ATTEMPTS = 6;

/** Why a run is not Running, on its Progressing condition. */
export type WaitReason =
  | "NotBefore"
  | "OutsideMaintenanceWindow"
  | "NotPlaced"
  | "ClusterBusy"
  | "ManagementClusterBusy"
  | "ClusterDeleting"
  | "TaskPaused";

export interface RunEvent {
  type: EventSeverity;
  reason: string;
  message: string;
}

export interface RunFacts {
  phase: MaintenanceRunPhase;
  /** Progressing's reason and message when the run is not Running (why it waits or how it ended). */
  reason: string;
  message: string;
  steps: MaintenanceStepStatus[];
  startedAt?: string;
  completedAt?: string;
  managementCluster?: string;
  /** Running, but its task is paused: no next step begins (Progressing says TaskPaused). */
  paused?: string;
  /** Recorded once the status that says them is written. */
  events: RunEvent[];
}

export interface RunScope {
  deps: RunReconcilerDeps;
  run: MaintenanceRun;
  now: Date;
  log: Logger;
  facts: RunFacts;
  /** The phase the cache shows: the steps run only once Running is stored. */
  stored: MaintenanceRunPhase;
  /** Set by findCluster. */
  cluster?: HcpCluster;
  /** Set by findCluster. */
  definition?: TaskDefinition;
  /** Set by schedule or admit: the run waits this reconcile (no admission, no step). */
  held?: boolean;
}

/** The facts as the stored status says them; the steps listed from the definition when not yet. */
export function storedFacts(run: MaintenanceRun, definition: TaskDefinition | undefined): RunFacts {
  const s = run.status ?? {};
  const steps =
    s.steps && s.steps.length > 0
      ? s.steps.map((step) => ({ ...step }))
      : (definition?.steps ?? []).map((step): MaintenanceStepStatus => ({
          name: step.name,
          state: "Pending",
        }));
  return {
    phase: s.phase ?? "Pending",
    reason: s.phase ?? "Pending",
    message: "",
    steps,
    ...(s.startedAt === undefined ? {} : { startedAt: s.startedAt }),
    ...(s.completedAt === undefined ? {} : { completedAt: s.completedAt }),
    ...(s.managementCluster === undefined ? {} : { managementCluster: s.managementCluster }),
    events: [],
  };
}
