/**
 * Reconciles one ExternalAuth through the runtime's skeleton (runtime/reconciler.ts): the phases
 * of phases.ts, one status write (status.ts). Deletion waits until the HostedCluster no longer
 * carries the provider (deletionHold), then the finalizer goes.
 */
import { EXTERNAL_AUTH_FINALIZER, ExternalAuthResource, type ExternalAuth } from "../api/v1alpha1/index.ts";
import { requestLog } from "../hcp/requests.ts";
import { failedSteps } from "../hcp/steps.ts";
import type { TransitionPolicy } from "../runtime/events.ts";
import type { Phase } from "../runtime/phases.ts";
import { PhasedReconciler } from "../runtime/reconciler.ts";
import { AUTH_PHASES, deletionHold } from "./phases.ts";
import type { AuthScope, ExternalAuthReconcilerDeps } from "./scope.ts";
import { AUTH_CONDITIONS, AUTH_STEPS, composeAuthStatus } from "./status.ts";

/** The same rule as the cluster's and the node pool's: every condition's transitions but Progressing. */
export const AUTH_EVENTS: TransitionPolicy = {
  negative: [AUTH_CONDITIONS.Degraded],
  quiet: [AUTH_CONDITIONS.Progressing],
  install: { ready: AUTH_CONDITIONS.Ready, steps: AUTH_STEPS },
};

/** The finalizer waits while the HostedCluster still carries the provider. */
export const awaitProviderRemoved: Phase<AuthScope> = (_ctx, scope) => {
  scope.facts.deleting = deletionHold(scope);
  return {};
};

export class ExternalAuthReconciler extends PhasedReconciler<ExternalAuth, AuthScope> {
  constructor(deps: ExternalAuthReconcilerDeps) {
    super({
      resource: ExternalAuthResource,
      finalizer: EXTERNAL_AUTH_FINALIZER,
      get: (namespace, name) => deps.externalAuths.get(namespace, name),
      writer: deps.writer,
      scope: (ctx, auth) => ({ deps, auth, log: requestLog(ctx, auth), facts: { auth, steps: {} } }),
      phases: () => AUTH_PHASES,
      deletion: {
        phases: [awaitProviderRemoved],
        waiting: (scope) => Boolean(scope.facts.deleting),
        reportsWaiting: true,
        releasing: (scope) =>
          scope.log.info("Releasing the ExternalAuth: the HostedCluster no longer carries it"),
      },
      status: {
        compose: (scope, succeeded) => composeAuthStatus(scope.facts, { succeeded }),
        events: {
          recorder: deps.events,
          policy: AUTH_EVENTS,
          failedSteps: (scope) => failedSteps(scope.facts.steps),
        },
      },
    });
  }
}
