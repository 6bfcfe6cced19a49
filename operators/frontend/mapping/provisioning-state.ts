/**
 * ARM provisioning states computed from a CR, so that nothing but the CR needs storing: the
 * operation that last changed it (annotation), its generation against status.observedGeneration,
 * and the summary conditions Ready, Progressing and Degraded the controllers write.
 *
 *   not yet observed (observedGeneration < generation)   Accepted
 *   Degraded=True and not Progressing                     Failed (the Degraded reason and message)
 *   Ready=True and not Progressing                        Succeeded
 *   otherwise                                             Provisioning (Create) / Updating (Update)
 *   deletionTimestamp set                                 Deleting
 *
 * A state that is not terminal once the current operation's deadline (annotation, deadlines.ts)
 * has passed is Failed: what the operation ended as, so that ARM may send the next request. A
 * deleting CR's deadline is its Delete operation's only (a node pool deleted with its cluster has
 * no operation of its own, and shows Deleting until it goes).
 */
import {
  ARM_ANNOTATIONS,
  isTerminal,
  type CloudErrorBody,
  type ProvisioningState,
} from "../../api/v1alpha1/index.ts";
import type { Condition } from "../../runtime/conditions.ts";
import type { KubeObject } from "../../runtime/kube.ts";
import { isPast } from "../operations/deadlines.ts";

export const STATES = [
  "Accepted",
  "Provisioning",
  "Updating",
  "Deleting",
  "Succeeded",
  "Failed",
  "Canceled",
] as const satisfies readonly ProvisioningState[];

export interface StateResult {
  state: ProvisioningState;
  error?: CloudErrorBody;
  /** When the state was reached, when the result knows better than the CR's conditions (a deadline). */
  endTime?: string;
}

/** What this file reads of an HcpCluster or NodePool. */
export interface Observed extends KubeObject {
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

const isTrue = (conditions: Condition[], type: string): boolean =>
  conditions.some((c) => c.type === type && c.status === "True");

/** Where a Create or Update stands on the CR it wrote. */
export function progressState(request: "Create" | "Update", cr: Observed): StateResult {
  const generation = cr.metadata.generation ?? 1;
  const observed = cr.status?.observedGeneration;
  if (observed === undefined || observed < generation) return { state: "Accepted" };
  const conditions = cr.status?.conditions ?? [];
  const progressing = isTrue(conditions, "Progressing");
  const degraded = conditions.find((c) => c.type === "Degraded" && c.status === "True");
  if (degraded && !progressing)
    return { state: "Failed", error: { code: degraded.reason, message: degraded.message } };
  if (isTrue(conditions, "Ready") && !progressing) return { state: "Succeeded" };
  return { state: request === "Create" ? "Provisioning" : "Updating" };
}

/** The provisioningState GET shows for a CR at `now`. */
export function resourceState(cr: Observed, now = Date.now()): StateResult {
  const a = cr.metadata.annotations ?? {};
  const request = a[ARM_ANNOTATIONS.operationRequest];
  const deleting = cr.metadata.deletionTimestamp !== undefined;
  const result: StateResult = deleting
    ? { state: "Deleting" }
    : progressState(request === "Update" ? "Update" : "Create", cr);
  const deadline = a[ARM_ANNOTATIONS.operationDeadline];
  // The deadline belongs to the operation the CR names: a Delete's to a deleting CR, others' to one that is not.
  const ours = deleting === (request === "Delete");
  if (isTerminal(result.state) || !ours || !deadline || !isPast(deadline, now)) return result;
  return { state: "Failed", endTime: deadline };
}
