/**
 * What a session's audience hears: an Event on the hosted cluster's HcpCluster (or on the session
 * when the cluster is unknown) and a JSON audit line, once per transition: issued, and ended.
 * "Once" is read from the stored status, so a crash between the event and the status write
 * repeats the event at most once, never loses it.
 */
import { AccessSessionResource, type AccessSession } from "../api/v1alpha1/accesssession.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { gauge, metricsRegistry } from "../runtime/metrics.ts";
import type { Lister } from "../runtime/informer.ts";
import type { Gauge } from "prom-client";
import { ACCESS_LEVELS, ACCESS_SESSION_PHASES } from "../api/v1alpha1/accesssession.ts";
import type { SessionScope } from "./scope.ts";
import { phaseOf } from "./status.ts";

/** The fields every audit line of a session carries. */
export function auditFields(scope: SessionScope, action: string): Record<string, unknown> {
  const { session } = scope;
  return {
    audit: "access-session",
    action,
    session: session.metadata.name,
    owner: session.spec.owner,
    cluster: `${session.spec.clusterRef.namespace}/${session.spec.clusterRef.name}`,
    level: session.spec.level,
    reason: session.spec.reason,
  };
}

function audience(scope: SessionScope): KubeObject {
  const { session, deps, cluster } = scope;
  const ref = session.spec.clusterRef;
  return (
    cluster ??
    deps.clusters.get(ref.namespace, ref.name) ?? {
      ...session,
      apiVersion: `${AccessSessionResource.group}/${AccessSessionResource.version}`,
      kind: AccessSessionResource.kind,
    }
  );
}

export async function recordIssue(scope: SessionScope, signal: AbortSignal): Promise<void> {
  const { session, deps, facts } = scope;
  if (session.status?.credentialSecret) return;
  scope.log.info("Audit: access session credential issued", {
    ...auditFields(scope, "issue"),
    subject: facts.credentialSubject,
    expires: facts.expiresAt,
  });
  await deps.events.record(audience(scope), {
    type: "Normal",
    reason: "AccessSessionActive",
    message: `${session.spec.level} access session ${session.metadata.name ?? ""} of ${session.spec.owner} is active until ${facts.expiresAt ?? ""} (${session.spec.reason})`,
    signal,
  });
}

export async function recordEnd(scope: SessionScope, signal: AbortSignal): Promise<void> {
  const { session, deps, facts } = scope;
  const phase = phaseOf(facts);
  if (!facts.end || session.status?.phase === phase) return;
  const by =
    facts.end === "Revoked"
      ? session.spec.revocation?.by
      : facts.end === "Denied"
        ? session.spec.approval?.by
        : undefined;
  scope.log.info("Audit: access session ended", { ...auditFields(scope, "end"), end: facts.end, by });
  await deps.events.record(audience(scope), {
    type: "Normal",
    reason: `AccessSession${facts.end}`,
    message: `Access session ${session.metadata.name ?? ""} of ${session.spec.owner} ended (${facts.end}${by ? ` by ${by}` : ""}); its credential is deleted`,
    signal,
  });
}

let source: Lister<AccessSession> | undefined;
let registered: Gauge | undefined;

/** hcp_access_sessions{phase,level}, read from the sessions cache when /metrics is scraped. */
export function registerSessionGauge(sessions: Lister<AccessSession>): void {
  source = sessions;
  registered ??= gauge(metricsRegistry, {
    name: "hcp_access_sessions",
    help: "SRE access sessions by phase and level",
    labelNames: ["phase", "level"],
    collect() {
      this.reset();
      if (!source) return;
      for (const phase of ACCESS_SESSION_PHASES)
        for (const level of ACCESS_LEVELS) this.set({ phase, level }, 0);
      for (const s of source.list()) this.inc({ phase: s.status?.phase ?? "Pending", level: s.spec.level });
    },
  });
}
