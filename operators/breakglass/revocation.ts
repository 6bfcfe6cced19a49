/**
 * BreakglassRevocation: every break-glass certificate of an HcpCluster issued before it stops
 * working. A ManifestWork of its own carries HyperShift's CertificateRevocationRequest for the
 * customer break-glass signer class to the control plane's namespace; feedback brings back its
 * revocation timestamp and PreviousCertificatesRevoked, and the credentials issued before that
 * timestamp report themselves revoked (phases.ts, markRevoked). The runtime's skeleton, as a
 * credential's: a revocation of a deleting cluster goes; deletion removes the work first.
 */
import {
  CertificateRevocationRequestResource,
  HYPERSHIFT_CERTIFICATES_API_VERSION,
  type CertificateRevocationRequest,
} from "../api/certificates/v1.ts";
import {
  BreakglassRevocationResource,
  CUSTOMER_BREAK_GLASS,
  REVOCATION_FINALIZER,
  type HcpCluster,
  type BreakglassRevocation,
  type BreakglassRevocationStatus,
  originalUid,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork, type ManifestWorkObject } from "../api/work/v1.ts";
import { feedbackOf } from "../api/v1alpha1/feedback.ts";
import { clusterNames, type ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS, workLabels } from "../api/v1alpha1/labels.ts";
import { findClusterPhase } from "../hcp/cluster-ref.ts";
import { isReady, stepCondition, workStep, type StepState } from "../hcp/steps.ts";
import { asManifest, deleteWorks, manifestWork } from "../hcp/work.ts";
import { isTrue, setCondition, type Condition } from "../runtime/conditions.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { Logger } from "../runtime/logger.ts";
import type { Phase } from "../runtime/phases.ts";
import { PhasedReconciler } from "../runtime/reconciler.ts";
import { BREAKGLASS_UID_INDEX, type BreakglassReconcilerDeps } from "./scope.ts";
import { stepSummary } from "./status.ts";

export const REVOCATION_STEPS = ["ClusterReady", "PreviousCertificatesRevoked"] as const;
type RevocationStep = (typeof REVOCATION_STEPS)[number];

export type RevocationDeps = BreakglassReconcilerDeps;

export interface RevocationScope {
  deps: RevocationDeps;
  revocation: BreakglassRevocation;
  log: Logger;
  steps: Partial<Record<RevocationStep, StepState>>;
  /** The revocation's work as the informer has it; replaced by applyRevocationWork's write. */
  work?: ManifestWorkObject;
  /** Set by findCluster. */
  cluster?: HcpCluster;
  /** Set by findCluster. */
  names?: ClusterNames;
  /** Set by findCluster: the consumer of the management cluster the cluster is placed on. */
  consumer?: string;
  /** Set by observeRevocation once HyperShift reports the certificates revoked. */
  revocationTimestamp?: string;
  /** Set by deleteRevocationWork: the work is still going. */
  deleting?: boolean;
}

const crrName = (r: BreakglassRevocation): string => `breakglass-revoke-${originalUid(r)}`;

export function revocationWorkOf(
  deps: RevocationDeps,
  r: BreakglassRevocation,
): ManifestWorkObject | undefined {
  return deps.works.byIndex(BREAKGLASS_UID_INDEX, r.metadata.uid ?? "")[0];
}

/** When HyperShift says the certificates before its timestamp are revoked: that timestamp. */
export function revokedBefore(r: BreakglassRevocation): number | undefined {
  const t = r.status?.revocationTimestamp;
  return t && isTrue(r.status?.conditions, "Ready") ? Date.parse(t) : undefined;
}

/** The revocation's cluster, placed with its HostedCluster applied; or why it cannot be revoked yet. */
export const findCluster = findClusterPhase<RevocationScope>({
  referrer: (scope) => scope.revocation,
  record: (scope, step) => void (scope.steps.ClusterReady = step),
  judge: (scope, cluster) => {
    const mc = scope.deps.managementClusters.get("", cluster.status?.managementCluster ?? "");
    if (!mc || !isTrue(cluster.status?.conditions, "HostedClusterApplied"))
      return {
        state: "pending",
        reason: "WaitingForCluster",
        message: `Waiting for HcpCluster ${cluster.metadata.name ?? ""} to be placed`,
      };
    scope.cluster = cluster;
    scope.names = clusterNames(cluster, scope.deps.region);
    scope.consumer = mc.spec.consumerName;
    return {
      state: "ready",
      reason: "ClusterReady",
      message: `Control plane ${scope.names.controlPlaneNamespace}`,
    };
  },
});

export const applyRevocationWork: Phase<RevocationScope> = async ({ signal }, scope) => {
  const { cluster, names, consumer, deps, revocation } = scope;
  if (!cluster || !names || consumer === undefined) return {};
  const desired = revocationWork(revocation, cluster, names, consumer);
  const written = await deps.writer.applyIfChanged<ManifestWork>(ManifestWorkResource, desired, scope.work, {
    signal,
  });
  scope.work = written ?? scope.work;
  return {};
};

/** Revoked once HyperShift reports PreviousCertificatesRevoked with its timestamp. */
export const observeRevocation: Phase<RevocationScope> = (_ctx, scope) => {
  const { work, revocation: r } = scope;
  if (!work || !isReady(scope.steps.ClusterReady)) return {};
  const fb = feedbackOf(work, { kind: "CertificateRevocationRequest", name: crrName(r) });
  const revoked = fb["revoked"] as { status?: unknown } | undefined;
  const timestamp = typeof fb["revocationTimestamp"] === "string" ? fb["revocationTimestamp"] : undefined;
  if (revoked?.status === "True" && timestamp) {
    scope.steps.PreviousCertificatesRevoked = {
      state: "ready",
      reason: "Revoked",
      message: `Every certificate issued before ${timestamp} is revoked`,
    };
    scope.revocationTimestamp = timestamp;
    return {};
  }
  const applied = workStep(work);
  scope.steps.PreviousCertificatesRevoked = isReady(applied)
    ? {
        state: "pending",
        reason: "WaitingForRevocation",
        message: "Waiting for HyperShift to revoke the previous certificates",
      }
    : applied;
  return {};
};

/** The first status that carries the timestamp: an Event on the cluster and an audit line. */
export const recordRevoked: Phase<RevocationScope> = async ({ signal }, scope) => {
  const { deps, revocation: r, revocationTimestamp } = scope;
  if (!revocationTimestamp || r.status?.revocationTimestamp) return {};
  const cluster = deps.clusters.get(r.metadata.namespace ?? "", r.spec.clusterRef.name);
  if (!cluster) return {};
  scope.log.info("Audit: break-glass credentials revoked", {
    audit: "breakglass",
    action: "revoke",
    revocation: r.metadata.name,
    cluster: cluster.metadata.name,
    requester: r.spec.requester,
    reason: r.spec.reason ?? "",
    revokedBefore: revocationTimestamp,
  });
  await deps.events.record(cluster, {
    type: "Normal",
    reason: "BreakglassCredentialsRevoked",
    message: `Break-glass credentials issued before ${revocationTimestamp} revoked at the request of ${r.spec.requester}${r.spec.reason ? ` (${r.spec.reason})` : ""}`,
    signal,
  });
  return {};
};

export const deleteRevocationWork: Phase<RevocationScope> = async ({ signal }, scope) => {
  if (!scope.work) return {};
  await deleteWorks(scope.deps.writer, [scope.work], signal);
  scope.deleting = true;
  return {};
};

/** A revocation of a cluster being deleted goes too. */
async function deleteOrphan(ctx: ReconcileContext, scope: RevocationScope): Promise<boolean> {
  const { deps, revocation: r } = scope;
  const cluster = deps.clusters.get(r.metadata.namespace ?? "", r.spec.clusterRef.name);
  if (!cluster?.metadata.deletionTimestamp) return false;
  await deps.client.delete(
    BreakglassRevocationResource,
    { name: r.metadata.name ?? "", namespace: r.metadata.namespace },
    ctx,
  );
  return true;
}

export const REVOCATION_PHASES: readonly Phase<RevocationScope>[] = [
  findCluster,
  applyRevocationWork,
  observeRevocation,
  recordRevoked,
];

export class RevocationReconciler extends PhasedReconciler<BreakglassRevocation, RevocationScope> {
  constructor(deps: RevocationDeps) {
    super({
      resource: BreakglassRevocationResource,
      finalizer: REVOCATION_FINALIZER,
      get: (namespace, name) => deps.revocations.get(namespace, name),
      writer: deps.writer,
      scope: (ctx, revocation) => ({
        deps,
        revocation,
        log: ctx.log,
        steps: {},
        work: revocationWorkOf(deps, revocation),
      }),
      guard: deleteOrphan,
      phases: () => REVOCATION_PHASES,
      deletion: {
        phases: [deleteRevocationWork],
        waiting: (scope) => Boolean(scope.deleting),
        reportsWaiting: false,
      },
      status: { compose: composeRevocationStatus },
    });
  }
}

/** HyperShift's CertificateRevocationRequest for the customer signer class, with feedback on its outcome. */
function revocationWork(
  r: BreakglassRevocation,
  cluster: HcpCluster,
  names: ClusterNames,
  consumer: string,
): ManifestWork {
  const crr: CertificateRevocationRequest = {
    apiVersion: HYPERSHIFT_CERTIFICATES_API_VERSION,
    kind: "CertificateRevocationRequest",
    metadata: { name: crrName(r), namespace: names.controlPlaneNamespace },
    spec: { signerClass: CUSTOMER_BREAK_GLASS },
  };
  return manifestWork({
    name: `${names.clusterID}-bgr-${originalUid(r).slice(0, 8)}`,
    consumer,
    labels: { ...workLabels(cluster), [WORK_LABELS.breakglass]: r.metadata.uid ?? "" },
    annotations: {},
    manifests: [asManifest(crr)],
    feedback: {
      type: CertificateRevocationRequestResource,
      name: crrName(r),
      namespace: names.controlPlaneNamespace,
      paths: [
        { name: "revocationTimestamp", path: ".status.revocationTimestamp" },
        { name: "revoked", path: '.status.conditions[?(@.type=="PreviousCertificatesRevoked")]' },
      ],
    },
  });
}

/** A condition per step, then Ready, Progressing and Degraded, through the one conditions helper. */
function revocationConditions(scope: RevocationScope): Condition[] {
  const r = scope.revocation;
  const stamp = { observedGeneration: r.metadata.generation };
  let conditions: Condition[] = r.status?.conditions ?? [];
  for (const type of REVOCATION_STEPS) {
    const s = scope.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), stamp);
  }
  const summary = stepSummary(REVOCATION_STEPS, scope.steps, {
    reason: "Revoked",
    message: "The previous certificates are revoked",
  });
  for (const c of summary) conditions = setCondition(conditions, c, stamp);
  return conditions;
}

/** The whole status; `succeeded` moves observedGeneration. */
function composeRevocationStatus(scope: RevocationScope, succeeded: boolean): BreakglassRevocationStatus {
  const r = scope.revocation;
  const revocationTimestamp = scope.revocationTimestamp ?? r.status?.revocationTimestamp;
  const observedGeneration = succeeded ? (r.metadata.generation ?? 1) : r.status?.observedGeneration;
  return {
    conditions: revocationConditions(scope),
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    ...(revocationTimestamp ? { revocationTimestamp } : {}),
  };
}
