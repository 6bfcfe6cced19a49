/**
 * Deletion runs the create path backwards behind the finalizer: node pools (their works reference
 * the HostedCluster), then external auths, then the cluster's works (maestro-server holds each
 * until the agent confirms Deleted), then the Azure resources, then the OIDC issuer's documents
 * and key; then the skeleton (runtime/reconciler.ts) removes the finalizer. A phase that is still
 * waiting records why in `facts.deleting`, which holds the phases after it. With a soft-delete
 * retention (soft-delete.ts) the cluster is recorded first, the Azure resources, issuer and keys
 * are kept, and the record is completed last.
 */
import { ExternalAuthResource, NodePoolResource, originalUid } from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { deleteOwnedWorks, placedConsumer, type WorkRef } from "../hcp/work.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { errorMessage } from "../runtime/errors.ts";
import { failpoint } from "../runtime/failpoints.ts";
import type { Phase } from "../runtime/phases.ts";
import { issuerPath } from "./oidc.ts";
import { RetryableStepError } from "./azure-step.ts";
import { CLUSTER_PHASES } from "./phases.ts";
import { replaceRestoredClusterWork } from "./restored-work.ts";
import { completeDeletionRecord, keptForUndelete, recordDeletion } from "./soft-delete.ts";
import { AZURE_POLL_MS, externalAuthsOf, recheckMs, worksOf, type ClusterScope } from "./scope.ts";

export const deleteNodePools: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (scope.facts.deleting) return {};
  const { cluster, deps } = scope;
  const pools = deps.nodePools
    .list(cluster.metadata.namespace)
    .filter((p) => p.spec.clusterRef.name === cluster.metadata.name);
  if (pools.length === 0) return {};
  for (const p of pools.filter((p) => !p.metadata.deletionTimestamp))
    await deps.writer.delete(
      NodePoolResource,
      { name: p.metadata.name ?? "", namespace: p.metadata.namespace },
      { signal },
    );
  scope.facts.deleting = {
    reason: "DeletingNodePools",
    message: `Waiting for ${pools.length} node pool(s) to be deleted: ${pools.map((p) => p.metadata.name).join(", ")}`,
  };
  return {};
};

/** ExternalAuths go with their cluster; their controller lets them go once the HostedCluster is going too. */
export const deleteExternalAuths: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (scope.facts.deleting) return {};
  const auths = externalAuthsOf(scope);
  if (auths.length === 0) return {};
  for (const ea of auths.filter((ea) => !ea.metadata.deletionTimestamp))
    await scope.deps.writer.delete(
      ExternalAuthResource,
      { name: ea.metadata.name ?? "", namespace: ea.metadata.namespace },
      { signal },
    );
  scope.facts.deleting = {
    reason: "DeletingExternalAuths",
    message: `Waiting for ${auths.length} external auth(s) to be deleted: ${auths.map((ea) => ea.metadata.name).join(", ")}`,
  };
  return {};
};

/** The cluster's own work as it would be named had it been applied: its uid, where it was placed. */
function expectedClusterWork(scope: ClusterScope): WorkRef | undefined {
  const { cluster, deps, memory } = scope;
  const placedOn =
    cluster.status?.managementCluster ??
    memory.reservations.get(cluster.metadata.uid ?? "")?.managementCluster;
  const namespace = placedConsumer(deps.managementClusters, placedOn);
  return namespace === undefined
    ? undefined
    : { name: clusterNames(cluster, deps.region).workName, namespace };
}

export const deleteWorks: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (scope.facts.deleting) return {};
  const namespace = await deleteOwnedWorks(
    scope.deps.writer,
    worksOf(scope),
    expectedClusterWork(scope),
    signal,
  );
  if (namespace === undefined) return {};
  failpoint("cluster/after-works-deleted");
  scope.facts.deleting = {
    reason: "DeletingHostedCluster",
    message: `Waiting for the agent of ${namespace} to confirm the HostedCluster is deleted`,
  };
  return {};
};

export const deleteInfrastructure: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (scope.facts.deleting || keptForUndelete(scope)) return {};
  const { step } = await scope.deps.infra.deleteAll(scope.infraSpec, { signal });
  if (step.state === "ready") return {};
  scope.facts.deleting = { reason: "DeletingAzureResources", message: step.message };
  if (step.state === "pending") return { requeueAfterMs: step.retryAfterMs ?? AZURE_POLL_MS };
  if (step.userActionRequired) return { requeueAfterMs: recheckMs(scope) };
  throw new RetryableStepError(step.message);
};

/**
 * The issuer's documents, then the signing key (the HostedCluster that signed with it is gone):
 * nothing of the issuer outlives the cluster (unless kept for an undelete).
 */
export const deleteOidcIssuer: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (scope.facts.deleting || keptForUndelete(scope)) return {};
  const { cluster, deps } = scope;
  const { step } = await deps.oidc.documents.unpublish(issuerPath(cluster), { signal });
  if (step.state !== "ready") {
    scope.facts.deleting = { reason: "DeletingOidcIssuer", message: step.message };
    throw new RetryableStepError(step.message);
  }
  await deps.oidc.keys.remove({ uid: originalUid(cluster), name: scope.infraSpec.ownerName }, { signal });
  return {};
};

/** Just before the finalizer goes: nothing of the cluster is left but what is kept for an undelete (a crash point). */
export function releasingCluster(): void {
  failpoint("cluster/before-finalizer-removed");
}

/** The finalizer is gone: everything remembered of the cluster goes, and its audience is told. */
export async function clusterReleased({ signal }: ReconcileContext, scope: ClusterScope): Promise<void> {
  const { cluster, deps, memory } = scope;
  const uid = cluster.metadata.uid ?? "";
  memory.reservations.delete(uid);
  memory.holds.forget(uid);
  memory.verified.forget(uid);
  memory.worksWritten.delete(uid);
  await deps.events.record(cluster, {
    type: "Normal",
    reason: "Deleted",
    message: keptForUndelete(scope)
      ? "Node pools and HostedCluster are gone; Azure resources, the OIDC issuer and signing keys are kept for an undelete until the retention ends"
      : "Node pools, HostedCluster, Azure resources and the OIDC issuer are gone",
    signal,
  });
}

/** A deletion phase that failed holds the ones after it, as one that is still waiting does. */
function holdOnError(reason: string, phase: Phase<ClusterScope>): Phase<ClusterScope> {
  const held: Phase<ClusterScope> = async (ctx, scope) => {
    try {
      return await phase(ctx, scope);
    } catch (err) {
      scope.facts.deleting ??= { reason, message: errorMessage(err) };
      throw err;
    }
  };
  // The phase's own name, for its metric.
  return Object.defineProperty(held, "name", { value: phase.name });
}

export const DELETE_PHASES: readonly Phase<ClusterScope>[] = [
  holdOnError("RecordingDeletedCluster", recordDeletion),
  holdOnError("ReplacingRestoredWork", replaceRestoredClusterWork(CLUSTER_PHASES)),
  holdOnError("DeletingNodePools", deleteNodePools),
  holdOnError("DeletingExternalAuths", deleteExternalAuths),
  holdOnError("DeletingHostedCluster", deleteWorks),
  holdOnError("DeletingAzureResources", deleteInfrastructure),
  holdOnError("DeletingOidcIssuer", deleteOidcIssuer),
  holdOnError("RecordingDeletedCluster", completeDeletionRecord),
];
