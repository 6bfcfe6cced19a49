/**
 * Reconciles one ExternalAuth in the fixed order: get by key; deletion or the finalizer first; the
 * scope; the phases (phases.ts) through runPhases; one status write with `observedGeneration`
 * moved only when every phase got through. Deletion waits until the HostedCluster no longer
 * carries the provider (deletionHold), then the finalizer goes.
 */
import type { ExternalAuth } from "../api/v1alpha1/index.ts";
import { EXTERNAL_AUTH_FINALIZER, ExternalAuthResource } from "../api/v1alpha1/index.ts";
import { requestLog } from "../hcp/requests.ts";
import { failedSteps } from "../hcp/steps.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { recordTransitions, type TransitionPolicy } from "../runtime/events.ts";
import { phasesResult, runPhases, timed } from "../runtime/phases.ts";
import { AUTH_PHASES, deletionHold } from "./phases.ts";
import { type AuthScope, type ExternalAuthReconcilerDeps } from "./scope.ts";
import { AUTH_CONDITIONS, AUTH_STEPS, composeAuthStatus } from "./status.ts";

/** The same rule as the cluster's and the node pool's: every condition's transitions but Progressing. */
export const AUTH_EVENTS: TransitionPolicy = {
  negative: [AUTH_CONDITIONS.Degraded],
  quiet: [AUTH_CONDITIONS.Progressing],
  install: { ready: AUTH_CONDITIONS.Ready, steps: AUTH_STEPS },
};

export class ExternalAuthReconciler implements Reconciler {
  readonly #d: ExternalAuthReconcilerDeps;

  constructor(deps: ExternalAuthReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const auth = this.#d.externalAuths.get(req.namespace, req.name);
    if (!auth?.metadata.uid) return {};
    const scope: AuthScope = { deps: this.#d, auth, log: requestLog(ctx, auth), facts: { auth, steps: {} } };
    if (auth.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, scope);
    if (await this.#d.writer.addFinalizer(ExternalAuthResource, auth, EXTERNAL_AUTH_FINALIZER, ctx))
      return {};
    const outcome = await runPhases(ctx, scope, AUTH_PHASES);
    await timed(ctx, "writeStatus", () => this.#writeStatus(ctx, scope, outcome.errors.length === 0));
    return phasesResult(outcome);
  }

  async #reconcileDelete(ctx: ReconcileContext, scope: AuthScope): Promise<Result> {
    const { auth } = scope;
    if (!auth.metadata.finalizers?.includes(EXTERNAL_AUTH_FINALIZER)) return {};
    scope.facts.deleting = deletionHold(scope);
    if (scope.facts.deleting) {
      await this.#writeStatus(ctx, scope, true);
      return {};
    }
    scope.log.info("Releasing the ExternalAuth: the HostedCluster no longer carries it");
    await this.#d.writer.removeFinalizer(ExternalAuthResource, auth, EXTERNAL_AUTH_FINALIZER, ctx);
    return {};
  }

  async #writeStatus(ctx: ReconcileContext, scope: AuthScope, succeeded: boolean): Promise<void> {
    const { auth } = scope;
    const status = composeAuthStatus(scope.facts, { succeeded });
    const written = await this.#d.writer.applyStatus<ExternalAuth>(ExternalAuthResource, auth, status, ctx);
    if (!written) return;
    await recordTransitions(
      this.#d.events,
      auth,
      {
        before: auth.status?.conditions ?? [],
        after: status.conditions ?? [],
        failedSteps: failedSteps(scope.facts.steps),
        signal: ctx.signal,
      },
      AUTH_EVENTS,
    );
  }
}
