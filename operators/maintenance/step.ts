/**
 * What a maintenance task is made of: an ordered list of steps. The actuator (run-phases.ts)
 * executes one step per reconcile and writes the outcome in that reconcile's one status write.
 */
import type { HcpCluster, MaintenanceRun } from "../api/v1alpha1/index.ts";

/** What one execution of a step found. A thrown error counts as `transient`. */
export type StepOutcome =
  /** The step's work is done; the run moves to the next step. */
  | { kind: "done"; message: string }
  /** Under way; look again after requeueMs (something no watch reports is progressing). */
  | { kind: "waiting"; message: string; requeueMs: number }
  /** Failed this time; retried with backoff up to a bound, then the run fails. */
  | { kind: "transient"; message: string }
  /** Cannot succeed on this cluster; the run fails now and says why. */
  | { kind: "terminal"; message: string };

export interface StepContext {
  run: MaintenanceRun;
  cluster: HcpCluster;
  now: Date;
  signal: AbortSignal;
}

/**
 * One step of a task. Steps MUST be idempotent: the actuator records a step's outcome only after
 * it returns, so an operators crash between the step's effect and that status write runs the same
 * step again (and never an earlier one). A step therefore reads the state it changes first and
 * only acts when the change is not there yet.
 */
export interface MaintenanceStep {
  /** A condition type on the run: letters and digits, starting with a capital. */
  name: string;
  execute(ctx: StepContext): Promise<StepOutcome>;
}

export interface TaskDefinition {
  steps: readonly MaintenanceStep[];
}

/** The task types this process can run, by spec.taskType. */
export type TaskRegistry = ReadonlyMap<string, TaskDefinition>;
