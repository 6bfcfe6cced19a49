/**
 * A restored cluster's work written again before it is deleted, and its Ready kept while the agent
 * has not yet answered for that work (operators/hcp/restored-work.ts).
 */
import { awaitsRestoredWork, HcpClusterResource } from "../api/v1alpha1/index.ts";
import type { ManifestWorkObject } from "../api/work/v1.ts";
import { confirmRestoredWork, replaceRestoredWork, type RestoredWorkOptions } from "../hcp/restored-work.ts";
import type { Phase } from "../runtime/phases.ts";
import { stepsFromConditions, workStep } from "../hcp/steps.ts";
import { clusterWork, type ClusterScope } from "./scope.ts";
import { CONDITIONS } from "./status.ts";

const RESTORED_WORK: RestoredWorkOptions<ClusterScope> = {
  resource: HcpClusterResource,
  object: (scope) => scope.cluster,
  writer: (scope) => scope.deps.writer,
  placedOn: (scope) => scope.cluster.status?.managementCluster || undefined,
  // The work's own status, not the steps, which keepRestoredSteps may have kept from the backup.
  applied: (scope) => {
    const work = scope.appliedWork ?? clusterWork(scope);
    return work !== undefined && workStep(work).state === "ready";
  },
  hold: (scope, reason, message) => {
    scope.facts.deleting = { reason, message };
  },
};

export const confirmRestoredClusterWork = confirmRestoredWork(RESTORED_WORK);

/** The first deletion phase; `phases` are the ordinary ones, which write the work. */
export function replaceRestoredClusterWork(phases: readonly Phase<ClusterScope>[]): Phase<ClusterScope> {
  return replaceRestoredWork(RESTORED_WORK, phases);
}

/** The steps the agent's reports decide (the DNS records wait for the endpoint HyperShift reports). */
const HOSTED_STEPS = [
  CONDITIONS.HostedClusterApplied,
  CONDITIONS.HostedClusterValid,
  CONDITIONS.HostedClusterAvailable,
  CONDITIONS.DnsRecordsReady,
] as const;

/**
 * A restored cluster's work is new to the agent, which answers for it within seconds; until it
 * has, the HostedCluster's steps stay as the backup recorded them. The control plane did not stop
 * running, and its Ready flapping False for the restore would tell the customer otherwise.
 */
export function keepRestoredSteps(scope: ClusterScope, work: ManifestWorkObject): boolean {
  if (!awaitsRestoredWork(scope.cluster)) return false;
  if (work.status?.conditions?.some((c) => c.type === "Applied")) return false;
  const kept = stepsFromConditions(HOSTED_STEPS, scope.cluster.status?.conditions ?? []);
  if (kept[CONDITIONS.HostedClusterApplied]?.state !== "ready") return false;
  Object.assign(scope.facts.steps, kept);
  return true;
}
