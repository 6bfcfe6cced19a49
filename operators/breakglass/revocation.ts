/**
 * BreakglassRevocation: every break-glass certificate of an HcpCluster issued before it stops
 * working. A ManifestWork of its own carries HyperShift's CertificateRevocationRequest for the
 * customer break-glass signer class to the control plane's namespace; feedback brings back its
 * revocation timestamp and PreviousCertificatesRevoked, and the credentials issued before that
 * timestamp report themselves revoked (phases.ts, markRevoked). Same skeleton as a credential:
 * a revocation of a deleting cluster goes; deletion removes the work first.
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
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork, type ManifestWorkObject } from "../api/work/v1.ts";
import { feedbackOf } from "../api/v1alpha1/feedback.ts";
import { clusterNames, type ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS as LABELS, workLabels } from "../api/v1alpha1/labels.ts";
import { isReady, stepCondition, workStep, type StepState } from "../hcp/steps.ts";
import { asManifest, deleteWorks, manifestWork } from "../hcp/work.ts";
import { isTrue, setCondition, type Condition } from "../runtime/conditions.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { BREAKGLASS_UID_INDEX, type BreakglassReconcilerDeps } from "./scope.ts";
import { stepSummary } from "./status.ts";

export const REVOCATION_STEPS = ["ClusterReady", "PreviousCertificatesRevoked"] as const;
type RevocationStep = (typeof REVOCATION_STEPS)[number];

export type RevocationDeps = BreakglassReconcilerDeps;

const crrName = (r: BreakglassRevocation): string => `breakglass-revoke-${r.metadata.uid ?? ""}`;

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

interface Outcome {
  steps: Partial<Record<RevocationStep, StepState>>;
  revocationTimestamp?: string;
}

export class RevocationReconciler implements Reconciler {
  readonly #d: RevocationDeps;

  constructor(deps: RevocationDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const r = this.#d.revocations.get(req.namespace, req.name);
    if (!r?.metadata.uid) return {};
    const work = revocationWorkOf(this.#d, r);
    if (r.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, r, work);
    const cluster = this.#d.clusters.get(r.metadata.namespace ?? "", r.spec.clusterRef.name);
    if (cluster?.metadata.deletionTimestamp) {
      await this.#d.client.delete(
        BreakglassRevocationResource,
        { name: req.name, namespace: req.namespace },
        ctx,
      );
      return {};
    }
    if (await this.#d.writer.addFinalizer(BreakglassRevocationResource, r, REVOCATION_FINALIZER, ctx))
      return {};
    const outcome = await this.#revoke(ctx, r, work);
    const status = composeRevocationStatus(r, outcome);
    await this.#recordDone(ctx, r, status);
    await this.#d.writer.applyStatus(BreakglassRevocationResource, r, status, ctx);
    return {};
  }

  /** The revocation's cluster, placed with its HostedCluster applied; or why it cannot be revoked yet. */
  #findCluster(r: BreakglassRevocation): { cluster: HcpCluster; consumer: string } | StepState {
    const ref = r.spec.clusterRef.name;
    const cluster = this.#d.clusters.get(r.metadata.namespace ?? "", ref);
    if (!cluster)
      return {
        state: "failed",
        reason: "ClusterNotFound",
        message: `HcpCluster ${ref} does not exist`,
        userActionRequired: true,
      };
    const mc = this.#d.managementClusters.get("", cluster.status?.managementCluster ?? "");
    if (!mc || !isTrue(cluster.status?.conditions, "HostedClusterApplied"))
      return {
        state: "pending",
        reason: "WaitingForCluster",
        message: `Waiting for HcpCluster ${ref} to be placed`,
      };
    return { cluster, consumer: mc.spec.consumerName };
  }

  async #revoke(
    ctx: ReconcileContext,
    r: BreakglassRevocation,
    current: ManifestWorkObject | undefined,
  ): Promise<Outcome> {
    const found = this.#findCluster(r);
    if ("state" in found) return { steps: { ClusterReady: found } };
    const names = clusterNames(found.cluster, this.#d.region);
    const desired = revocationWork(r, found.cluster, names, found.consumer);
    const written = await this.#d.writer.applyIfChanged<ManifestWork>(
      ManifestWorkResource,
      desired,
      current,
      ctx,
    );
    const ready: StepState = {
      state: "ready",
      reason: "ClusterReady",
      message: `Control plane ${names.controlPlaneNamespace}`,
    };
    const work = written ?? current;
    return work ? observeRevocation(r, work, ready) : { steps: { ClusterReady: ready } };
  }

  /** The first status that carries the timestamp: an Event on the cluster and an audit line. */
  async #recordDone(
    ctx: ReconcileContext,
    r: BreakglassRevocation,
    status: BreakglassRevocationStatus,
  ): Promise<void> {
    if (!status.revocationTimestamp || r.status?.revocationTimestamp) return;
    const cluster = this.#d.clusters.get(r.metadata.namespace ?? "", r.spec.clusterRef.name);
    if (!cluster) return;
    ctx.log.info("Audit: break-glass credentials revoked", {
      audit: "breakglass",
      action: "revoke",
      revocation: r.metadata.name,
      cluster: cluster.metadata.name,
      requester: r.spec.requester,
      reason: r.spec.reason ?? "",
      revokedBefore: status.revocationTimestamp,
    });
    await this.#d.events.record(cluster, {
      type: "Normal",
      reason: "BreakglassCredentialsRevoked",
      message: `Break-glass credentials issued before ${status.revocationTimestamp} revoked at the request of ${r.spec.requester}${r.spec.reason ? ` (${r.spec.reason})` : ""}`,
      signal: ctx.signal,
    });
  }

  async #reconcileDelete(
    ctx: ReconcileContext,
    r: BreakglassRevocation,
    work: ManifestWorkObject | undefined,
  ): Promise<Result> {
    if (!r.metadata.finalizers?.includes(REVOCATION_FINALIZER)) return {};
    if (work) {
      await deleteWorks(this.#d.writer, [work], ctx.signal);
      return {};
    }
    await this.#d.writer.removeFinalizer(BreakglassRevocationResource, r, REVOCATION_FINALIZER, ctx);
    return {};
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
    name: `${names.clusterID}-bgr-${(r.metadata.uid ?? "").slice(0, 8)}`,
    consumer,
    labels: { ...workLabels(cluster), [LABELS.breakglass]: r.metadata.uid ?? "" },
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

/** Revoked once HyperShift reports PreviousCertificatesRevoked with its timestamp. */
function observeRevocation(r: BreakglassRevocation, work: ManifestWorkObject, ready: StepState): Outcome {
  const fb = feedbackOf(work, { kind: "CertificateRevocationRequest", name: crrName(r) });
  const revoked = fb["revoked"] as { status?: unknown } | undefined;
  const timestamp = typeof fb["revocationTimestamp"] === "string" ? fb["revocationTimestamp"] : undefined;
  if (revoked?.status === "True" && timestamp)
    return {
      steps: {
        ClusterReady: ready,
        PreviousCertificatesRevoked: {
          state: "ready",
          reason: "Revoked",
          message: `Every certificate issued before ${timestamp} is revoked`,
        },
      },
      revocationTimestamp: timestamp,
    };
  const applied = workStep(work);
  const waiting: StepState = {
    state: "pending",
    reason: "WaitingForRevocation",
    message: "Waiting for HyperShift to revoke the previous certificates",
  };
  return {
    steps: { ClusterReady: ready, PreviousCertificatesRevoked: isReady(applied) ? waiting : applied },
  };
}

function composeRevocationStatus(r: BreakglassRevocation, outcome: Outcome): BreakglassRevocationStatus {
  const stamp = { observedGeneration: r.metadata.generation };
  let conditions: Condition[] = r.status?.conditions ?? [];
  for (const type of REVOCATION_STEPS) {
    const s = outcome.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), stamp);
  }
  const summary = stepSummary(REVOCATION_STEPS, outcome.steps, {
    reason: "Revoked",
    message: "The previous certificates are revoked",
  });
  for (const c of summary) conditions = setCondition(conditions, c, stamp);
  const revocationTimestamp = outcome.revocationTimestamp ?? r.status?.revocationTimestamp;
  return {
    conditions,
    observedGeneration: r.metadata.generation ?? 1,
    ...(revocationTimestamp ? { revocationTimestamp } : {}),
  };
}
