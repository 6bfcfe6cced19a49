/**
 * What one AccessSession reconcile works with: the dependencies, the region's policy, and the
 * scope the phases fill in (each field says which phase sets it); status.ts reads only `facts`.
 */
import type { AccessLevel, AccessSession } from "../api/v1alpha1/accesssession.ts";
import type { HcpCluster, ManagementCluster } from "../api/v1alpha1/index.ts";
import type { CachedManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import type { ClusterNames, RegionSettings } from "../api/v1alpha1/clusternames.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import type { KubeClient } from "../runtime/kube.ts";
import type { Logger } from "../runtime/logger.ts";
import type { SessionFacts } from "./status.ts";

export const ACCESS_SESSION_UID_INDEX = "access-session-uid";

/** The region's rules for sessions (the operators' --session-* flags). */
export interface SessionPolicy {
  /** The longest session each level may ask for, in seconds (the CRD allows up to 43,200). */
  maxTtlSeconds: Record<AccessLevel, number>;
  /** Whether the controller approves read-only sessions itself (as `policy`). */
  approveReadOnly: boolean;
  /** How long an ended or undecided session stays, as a record, before it is deleted. */
  retentionMs: number;
}

export const DEFAULT_SESSION_POLICY: SessionPolicy = {
  maxTtlSeconds: { ReadOnly: 43_200, Admin: 14_400 },
  approveReadOnly: true,
  retentionMs: 7 * 24 * 3600 * 1000,
};

export interface SessionReconcilerDeps {
  sessions: Lister<AccessSession>;
  clusters: Lister<HcpCluster>;
  managementClusters: Lister<ManagementCluster>;
  /** Session works, indexed by ACCESS_SESSION_UID_INDEX. */
  works: Lister<CachedManifestWork>;
  region: RegionSettings;
  /** The operators' own namespace: the sessions' keys and kubeconfigs live there, and only there. */
  namespace: string;
  policy: SessionPolicy;
  writer: ObjectWriter;
  /** For the credential Secrets, the policy's approvals and deleting sessions past retention. */
  client: KubeClient;
  events: Pick<EventRecorder, "record">;
  /** The clock (ms since the epoch). */
  now: () => number;
}

/** Why a session no longer opens anything (its credential goes). */
export type SessionEnd = "Denied" | "Revoked" | "Expired" | "ClusterGone";

export interface SessionScope {
  deps: SessionReconcilerDeps;
  session: AccessSession;
  log: Logger;
  facts: SessionFacts;
  /** Set by findCluster. */
  cluster?: HcpCluster;
  /** Set by findCluster. */
  names?: ClusterNames;
  /** Set by findCluster: the consumer of the management cluster the cluster is placed on. */
  consumer?: string;
  /** Set by prepareKey: the PEM key and request, and whether the kubeconfig is already stored. */
  key?: { key: string; request: string; stored: boolean };
  /** Set by applyWork when it wrote the work in this reconcile (the informer lags behind). */
  appliedWork?: ManifestWorkObject;
  /** Set by the deletion phases: the work is still going. */
  deleting?: boolean;
}

export function sessionWorkOf(scope: Pick<SessionScope, "deps" | "session">): ManifestWorkObject | undefined {
  return scope.deps.works.byIndex(ACCESS_SESSION_UID_INDEX, scope.session.metadata.uid ?? "")[0];
}

/**
 * The Secret in the operators' namespace with the session's key, its request and, once signed,
 * its kubeconfig; labelled ACCESS_SESSION_LABEL for the gate's informer. Named after the session:
 * sessions are cluster-scoped, so the name is unique while the session exists, and the Secret
 * goes before the session's finalizer does.
 */
export function credentialSecretName(session: AccessSession): string {
  return `access-session-${session.metadata.name ?? ""}`;
}

/** The CSR's (and its approval's) name on the management cluster. */
export function csrNameOf(session: AccessSession): string {
  return `access-session-${session.metadata.uid ?? ""}`;
}

export function workNameOf(session: AccessSession, names: ClusterNames): string {
  return `${names.clusterID}-as-${(session.metadata.uid ?? "").slice(0, 8)}`;
}
