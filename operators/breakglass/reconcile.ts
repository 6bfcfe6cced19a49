/**
 * Reconciles one BreakglassCredential in the project's fixed order: get by key; a credential whose
 * cluster is gone or going, or whose retention after expiry is over (expiry.ts), is deleted (no
 * credential outlives its cluster or its use); deletion or the finalizer first; the scope; the
 * phases (phases.ts); one status write. Deletion removes the credential's work (maestro-server
 * holds it until the agent confirms the CSR and its approval are gone) and the key's Secret in the
 * operators' namespace before the finalizer goes; the kubeconfig's Secret, owned by the
 * credential, goes with it by garbage collection.
 */
import { SecretResource } from "../api/core.ts";
import {
  BREAKGLASS_FINALIZER,
  BreakglassCredentialResource,
  type BreakglassCredential,
} from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { deleteOwnedWorks, placedConsumer, type WorkRef } from "../hcp/work.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { phasesResult, runPhases, timed, type Phase } from "../runtime/phases.ts";
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

export const releaseFinalizer: Phase<CredentialScope> = async ({ signal }, scope) => {
  if (scope.deleting) return {};
  const { credential, deps } = scope;
  await deps.client.delete(
    SecretResource,
    { name: keySecretName(credential), namespace: deps.namespace },
    { signal },
  );
  await deps.writer.removeFinalizer(BreakglassCredentialResource, credential, BREAKGLASS_FINALIZER, {
    signal,
  });
  return {};
};

export class BreakglassReconciler implements Reconciler {
  readonly #d: BreakglassReconcilerDeps;

  constructor(deps: BreakglassReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const credential = this.#d.credentials.get(req.namespace, req.name);
    if (!credential?.metadata.uid) return {};
    const scope: CredentialScope = {
      deps: this.#d,
      credential,
      log: ctx.log,
      facts: { credential, steps: {} },
    };
    if (credential.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, scope);
    if (await this.#deleteOrphan(ctx, credential)) return {};
    if (await deleteIfRetentionOver(ctx, scope)) return {};
    if (
      await this.#d.writer.addFinalizer(BreakglassCredentialResource, credential, BREAKGLASS_FINALIZER, ctx)
    )
      return {};
    const outcome = await runPhases(ctx, scope, CREDENTIAL_PHASES);
    await timed(ctx, "writeStatus", () =>
      this.#d.writer.applyStatus(
        BreakglassCredentialResource,
        credential,
        composeCredentialStatus(scope.facts, { succeeded: outcome.errors.length === 0 }),
        ctx,
      ),
    );
    return phasesResult(outcome);
  }

  /**
   * A credential of a cluster being deleted goes too. One naming a cluster that does not exist
   * stays to say so in its status; its owner reference to the cluster, when it has one, lets the
   * garbage collector take it if the cluster went while nothing watched.
   */
  async #deleteOrphan(ctx: ReconcileContext, credential: BreakglassCredential): Promise<boolean> {
    const cluster = this.#d.clusters.get(
      credential.metadata.namespace ?? "",
      credential.spec.clusterRef.name,
    );
    if (!cluster?.metadata.deletionTimestamp) return false;
    ctx.log.info("Deleting a break-glass credential whose cluster is going", {
      cluster: credential.spec.clusterRef.name,
    });
    await this.#d.client.delete(
      BreakglassCredentialResource,
      { name: credential.metadata.name ?? "", namespace: credential.metadata.namespace },
      { signal: ctx.signal },
    );
    return true;
  }

  async #reconcileDelete(ctx: ReconcileContext, scope: CredentialScope): Promise<Result> {
    if (!scope.credential.metadata.finalizers?.includes(BREAKGLASS_FINALIZER)) return {};
    return phasesResult(await runPhases(ctx, scope, [deleteWork, releaseFinalizer]));
  }
}
