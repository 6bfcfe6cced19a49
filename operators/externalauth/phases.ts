/**
 * The phases of an ExternalAuth reconcile, in order: its cluster exists and has a HostedCluster
 * work; that work carries the provider at this generation and the agent applied it; HyperShift
 * validated the configuration at the HostedCluster's generation. The cluster controller writes
 * the provider into the work (cluster/authentication.ts); this controller only observes. No phase
 * requeues: the ExternalAuth's, the cluster's and the work's watches bring it back.
 */
import { externalAuthsCarried, carriedBy } from "../hcp/external-auths.ts";
import { feedbackOf, hostedReport } from "../api/v1alpha1/feedback.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { findClusterPhase } from "../hcp/cluster-ref.ts";
import { workStep, type StepState } from "../hcp/steps.ts";
import type { Phase, PhaseResult } from "../runtime/phases.ts";
import { clusterWorkOf, type AuthScope } from "./scope.ts";
import { AUTH_CONDITIONS, type AuthStep } from "./status.ts";

function record(scope: AuthScope, type: AuthStep, step: StepState): PhaseResult {
  scope.facts.steps[type] = step;
  return {};
}

/** The auth's cluster must exist and have its own work (the HostedCluster that carries the provider). */
export const findCluster = findClusterPhase<AuthScope>({
  referrer: (scope) => scope.auth,
  record: (scope, step) => void record(scope, AUTH_CONDITIONS.ClusterReady, step),
  judge: (scope, cluster) => {
    scope.cluster = cluster;
    scope.work = clusterWorkOf(scope.deps, cluster);
    if (!scope.work)
      return {
        state: "pending",
        reason: "WaitingForCluster",
        message: `Waiting for HcpCluster ${cluster.metadata.name ?? ""} to be placed and its HostedCluster work written`,
      };
    return {
      state: "ready",
      reason: "ClusterReady",
      message: `HostedCluster work ${scope.work.metadata.namespace ?? ""}/${scope.work.metadata.name ?? ""}`,
    };
  },
});

/** Why the HostedCluster does not carry this provider, when another ExternalAuth holds its one place. */
function heldByAnother(scope: AuthScope): StepState | undefined {
  const { auth, deps } = scope;
  const siblings = deps.externalAuths
    .list(auth.metadata.namespace)
    .filter((ea) => ea.spec.clusterRef.name === auth.spec.clusterRef.name);
  const carried = externalAuthsCarried(siblings);
  if (carried.some((ea) => ea.metadata.uid === auth.metadata.uid)) return undefined;
  const other = carried[0]?.metadata.name ?? "";
  return {
    state: "failed",
    reason: "OneExternalAuthPerCluster",
    message: `HcpCluster ${auth.spec.clusterRef.name} already has ExternalAuth ${other}; a cluster takes one external auth`,
    userActionRequired: true,
  };
}

/** The cluster's work names this ExternalAuth at its generation, and the agent applied that work. */
export const observeApplied: Phase<AuthScope> = (_ctx, scope) => {
  const { auth, work } = scope;
  if (!work) return {};
  const held = heldByAnother(scope);
  if (held) return record(scope, AUTH_CONDITIONS.ProviderApplied, held);
  const carried = carriedBy(work).get(auth.metadata.name ?? "");
  if (carried !== auth.metadata.generation)
    return record(scope, AUTH_CONDITIONS.ProviderApplied, {
      state: "pending",
      reason: "WaitingForClusterController",
      message: `Waiting for the cluster controller to write generation ${auth.metadata.generation ?? 0} into the HostedCluster`,
    });
  const applied = workStep(work);
  if (applied.state === "ready")
    return record(scope, AUTH_CONDITIONS.ProviderApplied, {
      state: "ready",
      reason: "Applied",
      message: `The HostedCluster carries the OIDC provider; ${applied.message}`,
    });
  return record(scope, AUTH_CONDITIONS.ProviderApplied, applied);
};

/**
 * HyperShift's ValidConfiguration, once it is about the HostedCluster the agent applied (its
 * observedGeneration is the generation the agent read back). HyperShift's reason and message
 * when it refuses the configuration.
 */
export const observeAccepted: Phase<AuthScope> = (_ctx, scope) => {
  const { cluster, work, facts } = scope;
  if (!cluster || !work || facts.steps[AUTH_CONDITIONS.ProviderApplied]?.state !== "ready") return {};
  const names = clusterNames(cluster, scope.deps.region);
  const report = hostedReport(feedbackOf(work, { kind: "HostedCluster", name: names.hostedClusterName }));
  const valid = report.validConfiguration;
  if (!valid || report.generation === undefined || valid.observedGeneration !== report.generation)
    return record(scope, AUTH_CONDITIONS.ProviderAccepted, {
      state: "pending",
      reason: "WaitingForHyperShift",
      message: "Waiting for HyperShift to validate the HostedCluster's authentication configuration",
    });
  if (valid.status === "True")
    return record(scope, AUTH_CONDITIONS.ProviderAccepted, {
      state: "ready",
      reason: "AsExpected",
      message: valid.message || "HyperShift accepts the configuration",
    });
  return record(scope, AUTH_CONDITIONS.ProviderAccepted, {
    state: "failed",
    reason: `HostedCluster${valid.reason || "InvalidConfiguration"}`,
    message: valid.message,
    userActionRequired: true,
  });
};

export const AUTH_PHASES: readonly Phase<AuthScope>[] = [findCluster, observeApplied, observeAccepted];

/**
 * Deletion: the finalizer goes once nothing on the management cluster carries the provider: its
 * cluster or the cluster's work is gone or going (the HostedCluster goes with it), or the work no
 * longer names it and the agent applied that.
 */
export function deletionHold(scope: AuthScope): { reason: string; message: string } | undefined {
  const { auth, deps } = scope;
  const cluster = deps.clusters.get(auth.metadata.namespace ?? "", auth.spec.clusterRef.name);
  if (!cluster || cluster.metadata.deletionTimestamp) return undefined;
  const work = clusterWorkOf(deps, cluster);
  if (!work || work.metadata.deletionTimestamp) return undefined;
  const where = work.metadata.namespace ?? "";
  if (carriedBy(work).has(auth.metadata.name ?? ""))
    return {
      reason: "RemovingProvider",
      message: "Waiting for the cluster controller to remove the OIDC provider from the HostedCluster",
    };
  if (workStep(work).state !== "ready")
    return {
      reason: "RemovingProvider",
      message: `Waiting for the agent of ${where} to apply the HostedCluster without the OIDC provider`,
    };
  return undefined;
}
