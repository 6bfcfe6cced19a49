/**
 * Reconciles one BreakglassCredential through the runtime's skeleton (runtime/reconciler.ts): a
 * credential whose cluster is going, or whose retention after expiry is over (expiry.ts), is
 * deleted before anything else; then the phases (phases.ts) and one status write. Deletion
 * removes the credential's work (maestro-server holds it until the agent confirms the CSR and its
 * approval are gone) and the key's Secret in the operators' namespace before the finalizer goes;
 * the kubeconfig's Secret, owned by the credential, goes with it by garbage collection.
 */
import { SecretResource } from "../api/core.ts";
import {
  BREAKGLASS_FINALIZER,
  BreakglassCredentialResource,
  type BreakglassCredential,
} from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { deleteOwnedWorks, placedConsumer, type WorkRef } from "../hcp/work.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { Phase } from "../runtime/phases.ts";
import { PhasedReconciler } from "../runtime/reconciler.ts";
import { deleteIfRetentionOver } from "./expiry.ts";
import { CREDENTIAL_PHASES } from "./phases.ts";
import { workName } from "./work.ts";
import {
  credentialWorkOf,
  keySecretName,
  type BreakglassReconcilerDeps,
  type CredentialScope,
} from "./scope.ts";
import { composeCredentialStatus } from "./status.ts";

/** The credential's work as it would be named had it been applied, where its cluster is placed. */
function expectedCredentialWork(scope: CredentialScope): WorkRef | undefined {
  const { credential, deps } = scope;
  const cluster = deps.clusters.get(credential.metadata.namespace ?? "", credential.spec.clusterRef.name);
  const namespace = placedConsumer(deps.managementClusters, cluster?.status?.managementCluster);
  if (!cluster || namespace === undefined) return undefined;
  return { name: workName(credential, clusterNames(cluster, deps.region)), namespace };
}

export const deleteWork: Phase<CredentialScope> = async ({ signal }, scope) => {
  const work = credentialWorkOf(scope);
  const expected = expectedCredentialWork(scope);
  scope.deleting =
    (await deleteOwnedWorks(scope.deps.writer, work ? [work] : [], expected, signal)) !== undefined;
  return {};
};

/** The key the service made goes with the credential: its Secret is in another namespace, out of the garbage collector's reach. */
export const deleteKeySecret: Phase<CredentialScope> = async ({ signal }, scope) => {
  if (scope.deleting) return {};
  const { credential, deps } = scope;
  await deps.client.delete(
    SecretResource,
    { name: keySecretName(credential), namespace: deps.namespace },
    { signal },
  );
  return {};
};

/**
 * A credential of a cluster being deleted goes too. One naming a cluster that does not exist
 * stays to say so in its status; its owner reference to the cluster, when it has one, lets the
 * garbage collector take it if the cluster went while nothing watched.
 */
async function deleteOrphan(ctx: ReconcileContext, scope: CredentialScope): Promise<boolean> {
  const { credential, deps } = scope;
  const cluster = deps.clusters.get(credential.metadata.namespace ?? "", credential.spec.clusterRef.name);
  if (!cluster?.metadata.deletionTimestamp) return false;
  ctx.log.info("Deleting a break-glass credential whose cluster is going", {
    cluster: credential.spec.clusterRef.name,
  });
  await deps.client.delete(
    BreakglassCredentialResource,
    { name: credential.metadata.name ?? "", namespace: credential.metadata.namespace },
    { signal: ctx.signal },
  );
  return true;
}

export class BreakglassReconciler extends PhasedReconciler<BreakglassCredential, CredentialScope> {
  constructor(deps: BreakglassReconcilerDeps) {
    super({
      resource: BreakglassCredentialResource,
      finalizer: BREAKGLASS_FINALIZER,
      get: (namespace, name) => deps.credentials.get(namespace, name),
      writer: deps.writer,
      scope: (ctx, credential) => ({ deps, credential, log: ctx.log, facts: { credential, steps: {} } }),
      // No credential outlives its cluster or its use.
      guard: async (ctx, scope) => (await deleteOrphan(ctx, scope)) || deleteIfRetentionOver(ctx, scope),
      phases: () => CREDENTIAL_PHASES,
      deletion: {
        phases: [deleteWork, deleteKeySecret],
        waiting: (scope) => Boolean(scope.deleting),
        reportsWaiting: false,
      },
      status: { compose: (scope, succeeded) => composeCredentialStatus(scope.facts, { succeeded }) },
    });
  }
}
