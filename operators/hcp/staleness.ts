/**
 * Stale status: what the cluster and node pool controllers show of a control plane comes from its
 * management cluster's agent (the ManifestWork feedback). While that ManagementCluster's Connected
 * condition is False (its agent not heard beyond its bound, or maestro-server off the broker), the
 * last report may no longer hold, so a Ready that rests on it becomes Unknown with reason
 * StatusStale, naming the management cluster and since when, instead of staying a stale True. An
 * Unknown Connected (an agent that sends no heartbeat, liveness not tracked in this process) is
 * not staleness: the service cannot tell, so it keeps what the agent last said.
 */
import { CONNECTED, STATUS_STALE, type ManagementCluster } from "../api/v1alpha1/index.ts";
import { getCondition, type ConditionInput } from "../runtime/conditions.ts";

export interface Staleness {
  managementCluster: string;
  /** When its agent was last heard, or when Connected turned False if it never was. */
  since: string;
  /** Why, as the ManagementCluster's Connected condition says (its message says more). */
  reason: string;
}

/** The staleness of everything placed on `mc`, or undefined while its agent is Connected or unknown. */
export function staleness(mc: ManagementCluster | undefined): Staleness | undefined {
  const connected = getCondition(mc?.status?.conditions, CONNECTED);
  if (!mc || connected?.status !== "False") return undefined;
  return {
    managementCluster: mc.metadata.name ?? "",
    since: mc.status?.agent?.lastHeardTime ?? connected.lastTransitionTime,
    reason: connected.reason,
  };
}

/** Ready as a stale report: Unknown, StatusStale, with what was last reported. */
export function staleReady(
  ready: Pick<ConditionInput, "type" | "status" | "reason" | "message">,
  stale: Staleness,
): ConditionInput {
  return {
    type: ready.type,
    status: "Unknown",
    reason: STATUS_STALE,
    message:
      `No status from management cluster ${stale.managementCluster} since ${stale.since} (${stale.reason}); ` +
      `last reported Ready ${ready.status}, ${ready.reason}: ${ready.message}`,
  };
}
