/**
 * How far an operation has come and what it waits on, for `hcpOperationStatuses`: ARM's
 * `percentComplete`, and in `properties` the step the resource's controller is on and its words
 * (the same conditions `hcpctl trace` and `kubectl describe` read). Computed from the CR on each
 * poll, like the status itself, so nothing more is stored.
 *
 *   - Create or Update, before the controller has seen the change: 0, waiting for it to.
 *   - While steps remain: the share of the kind's steps done (api/v1alpha1/steps.ts), never 100
 *     before the operation ends, and the first step not done, with its condition's message.
 *   - Every step done but the resource still Progressing (HyperShift installing or upgrading):
 *     99, with the Progressing condition's message.
 *   - Delete: no share (what is left to delete is not counted), the Progressing message.
 *   - Succeeded: 100. Failed or Canceled: no share; the error says why.
 */
import {
  EXTERNAL_AUTH_STEPS,
  HCP_CLUSTER_STEPS,
  NODE_POOL_STEPS,
  type Observed,
  type OperationDoc,
} from "../../api/v1alpha1/index.ts";
import type { Condition } from "../../runtime/conditions.ts";
import type { ResourceKind } from "../resource-id.ts";

const STEPS: Record<ResourceKind, readonly string[]> = {
  cluster: HCP_CLUSTER_STEPS,
  nodePool: NODE_POOL_STEPS,
  externalAuth: EXTERNAL_AUTH_STEPS,
};

export interface OperationProgress {
  percentComplete?: number;
  /** The step the operation waits on (a condition type of the resource), when one does. */
  step?: string;
  message?: string;
}

const conditionOf = (cr: Observed, type: string): Condition | undefined =>
  cr.status?.conditions?.find((c) => c.type === type);

/** Where a Create or Update stands among its resource's steps. */
function stepProgress(kind: ResourceKind, cr: Observed): OperationProgress {
  const generation = cr.metadata.generation ?? 1;
  if ((cr.status?.observedGeneration ?? 0) < generation)
    return {
      percentComplete: 0,
      message: `Waiting for the ${kind} controller to take up generation ${generation} of the resource`,
    };
  const steps = STEPS[kind];
  const done = steps.filter((type) => conditionOf(cr, type)?.status === "True").length;
  const waiting = steps.find((type) => conditionOf(cr, type)?.status !== "True");
  const percentComplete = Math.min(99, Math.floor((100 * done) / steps.length));
  if (waiting)
    return {
      percentComplete,
      step: waiting,
      message: conditionOf(cr, waiting)?.message ?? `Waiting for ${waiting}`,
    };
  const progressing = conditionOf(cr, "Progressing");
  return { percentComplete, ...(progressing?.message ? { message: progressing.message } : {}) };
}

/** The progress a poll shows for `doc`, from the CR it acts on (undefined when gone). */
export function operationProgress(doc: OperationDoc, cr: Observed | undefined): OperationProgress {
  if (doc.status === "Succeeded") return { percentComplete: 100 };
  if (doc.status === "Failed" || doc.status === "Canceled" || !cr) return {};
  if (doc.request === "Delete") {
    const message = conditionOf(cr, "Progressing")?.message;
    return message ? { message } : {};
  }
  if (doc.request !== "Create" && doc.request !== "Update") return {};
  return stepProgress(doc.kind, cr);
}
