/**
 * A credential's end: once its certificate expires it says so (Expired, an Event on the cluster
 * and an audit line), and after the retention period (deps.expiredRetentionMs, default a day) it
 * is deleted; its deletion takes its work and the key's Secret, and the garbage collector the
 * kubeconfig's. Level-triggered: each reconcile compares the clock with the expiry and asks to
 * come back at the next moment that matters, so nothing depends on a timer surviving a restart.
 */
import { BreakglassCredentialResource } from "../api/v1alpha1/index.ts";
import { isTrue } from "../runtime/conditions.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { Phase } from "../runtime/phases.ts";
import type { CredentialScope } from "./scope.ts";
import { CREDENTIAL_CONDITIONS } from "./status.ts";

/** The default retention of an expired credential. */
export const EXPIRED_RETENTION_MS = 24 * 3600 * 1000;

/**
 * The longest single wait: a requeue further out than this is cut, and the reconcile then simply
 * asks again (timers beyond 2^31 ms overflow, and a shorter look costs one cached read).
 */
const MAX_WAIT_MS = 12 * 3600 * 1000;

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

/** When the issued certificate expires, and when the credential is to go; undefined before it is issued. */
function expiryOf(scope: CredentialScope): { expiresAt: number; deleteAt: number } | undefined {
  const at = scope.facts.issued?.expirationTimestamp ?? scope.credential.status?.expirationTimestamp;
  const expiresAt = at ? Date.parse(at) : NaN;
  if (Number.isNaN(expiresAt)) return undefined;
  return { expiresAt, deleteAt: expiresAt + scope.deps.expiredRetentionMs };
}

/** Records whether the certificate expired; the first reconcile that sees it expired tells the cluster's audience. */
export const observeExpiry: Phase<CredentialScope> = async ({ signal }, scope) => {
  const expiry = expiryOf(scope);
  if (!expiry) return {};
  const now = scope.deps.now();
  const expired = now >= expiry.expiresAt;
  scope.facts.expiry = { expired, at: iso(expiry.expiresAt), deleteAt: iso(expiry.deleteAt) };
  if (expired && !isTrue(scope.credential.status?.conditions, CREDENTIAL_CONDITIONS.Expired))
    await recordExpiry(scope, signal);
  const next = expired ? expiry.deleteAt : expiry.expiresAt;
  return { requeueAfterMs: Math.min(Math.max(next - now, 1000), MAX_WAIT_MS) };
};

async function recordExpiry(scope: CredentialScope, signal: AbortSignal): Promise<void> {
  const { credential, cluster, deps } = scope;
  const { at = "", deleteAt = "" } = scope.facts.expiry ?? {};
  scope.log.info("Audit: break-glass credential expired", {
    audit: "breakglass",
    action: "expire",
    credential: credential.metadata.name,
    cluster: credential.spec.clusterRef.name,
    requester: credential.spec.requester,
    expired: at,
    deleteAt,
  });
  await deps.events.record(cluster ?? credential, {
    type: "Normal",
    reason: "BreakglassCredentialExpired",
    message: `Break-glass credential ${credential.metadata.name ?? ""} of ${credential.spec.requester} expired at ${at}; it is deleted at ${deleteAt}`,
    signal,
  });
}

/** Deletes the credential once its retention after expiry is over; true when it did. */
export async function deleteIfRetentionOver(ctx: ReconcileContext, scope: CredentialScope): Promise<boolean> {
  const expiry = expiryOf(scope);
  if (!expiry || scope.deps.now() < expiry.deleteAt) return false;
  const { credential, deps } = scope;
  ctx.log.info("Deleting an expired break-glass credential", {
    expired: iso(expiry.expiresAt),
    retentionSeconds: Math.round(deps.expiredRetentionMs / 1000),
  });
  await deps.client.delete(
    BreakglassCredentialResource,
    { name: credential.metadata.name ?? "", namespace: credential.metadata.namespace },
    { signal: ctx.signal },
  );
  return true;
}
