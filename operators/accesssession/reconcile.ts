/**
 * Reconciles one AccessSession through the runtime's skeleton (runtime/reconciler.ts): a session
 * past its retention is deleted before anything else; then the phases (phases.ts) and one status
 * write. Deletion removes the session's work (maestro-server holds it until the agent confirms the
 * CSR and its approval are gone) and its Secret before the finalizer goes, so no key outlives its
 * session.
 */
import {
  ACCESS_SESSION_FINALIZER,
  AccessSessionResource,
  type AccessSession,
} from "../api/v1alpha1/accesssession.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { Phase } from "../runtime/phases.ts";
import { PhasedReconciler } from "../runtime/reconciler.ts";
import { removeCredential, SESSION_PHASES } from "./phases.ts";
import type { SessionReconcilerDeps, SessionScope } from "./scope.ts";
import { composeSessionStatus } from "./status.ts";

const deleteCredential: Phase<SessionScope> = async ({ signal }, scope) => {
  await removeCredential(scope, signal);
  return {};
};

/**
 * A session stays as a record for the retention period after its expiry (or, never approved,
 * after its creation), then goes: sessions are audit records, not a growing list.
 */
async function deleteIfRetentionOver(ctx: ReconcileContext, scope: SessionScope): Promise<boolean> {
  const { session, deps } = scope;
  const from = Date.parse(session.status?.expiresAt ?? session.metadata.creationTimestamp ?? "");
  if (Number.isNaN(from) || deps.now() < from + deps.policy.retentionMs) return false;
  ctx.log.info("Deleting an access session past its retention", { session: session.metadata.name });
  await deps.client.delete(
    AccessSessionResource,
    { name: session.metadata.name ?? "" },
    { signal: ctx.signal },
  );
  return true;
}

export class SessionReconciler extends PhasedReconciler<AccessSession, SessionScope> {
  constructor(deps: SessionReconcilerDeps) {
    super({
      resource: AccessSessionResource,
      finalizer: ACCESS_SESSION_FINALIZER,
      get: (_namespace, name) => deps.sessions.get("", name),
      writer: deps.writer,
      scope: (ctx, session) => ({ deps, session, log: ctx.log, facts: { session, steps: {} } }),
      guard: (ctx, scope) => deleteIfRetentionOver(ctx, scope),
      phases: () => SESSION_PHASES,
      deletion: {
        phases: [deleteCredential],
        waiting: (scope) => Boolean(scope.deleting),
        reportsWaiting: false,
      },
      status: { compose: (scope, succeeded) => composeSessionStatus(scope.facts, { succeeded }) },
    });
  }
}
