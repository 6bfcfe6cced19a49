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
  type BreakglassRevocation,
  type BreakglassRevocationStatus,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork, type ManifestWorkObject } from "../api/work/v1.ts";
import { feedbackOf } from "../hcp/feedback.ts";
import { clusterNames, LABELS, workLabels } from "../hcp/names.ts";
import {
  firstNotReady,
  firstUserFailure,
  heldBy,
  isReady,
  stepCondition,
  workStep,
  type StepState,
} from "../hcp/steps.ts";
import { asManifest, deleteWorks, manifestWork } from "../hcp/work.ts";
import { isTrue, setCondition, type Condition, type ConditionInput } from "../runtime/conditions.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { BREAKGLASS_UID_INDEX, type BreakglassReconcilerDeps } from "./scope.ts";

export const REVOCATION_FINALIZER = "hcp.aro.dev/breakglass-revocation";
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

  async #revoke(
    ctx: ReconcileContext,
    r: BreakglassRevocation,
    current: ManifestWorkObject | undefined,
  ): Promise<Outcome> {
    const deps = this.#d;
    const cluster = deps.clusters.get(r.metadata.namespace ?? "", r.spec.clusterRef.name);
    const mc = deps.managementClusters.get("", cluster?.status?.managementCluster ?? "");
    if (!cluster || !mc || !isTrue(cluster.status?.conditions, "HostedClusterApplied"))
      return {
        steps: {
          ClusterReady: cluster
            ? {
                state: "pending",
                reason: "WaitingForCluster",
                message: `Waiting for HcpCluster ${r.spec.clusterRef.name} to be placed`,
              }
            : {
                state: "failed",
                reason: "ClusterNotFound",
                message: `HcpCluster ${r.spec.clusterRef.name} does not exist`,
                userActionRequired: true,
              },
        },
      };
    const names = clusterNames(cluster, deps.region);
    const crr: CertificateRevocationRequest = {
      apiVersion: HYPERSHIFT_CERTIFICATES_API_VERSION,
      kind: "CertificateRevocationRequest",
      metadata: { name: crrName(r), namespace: names.controlPlaneNamespace },
      spec: { signerClass: CUSTOMER_BREAK_GLASS },
    };
    const desired = manifestWork({
      name: `${names.clusterID}-bgr-${(r.metadata.uid ?? "").slice(0, 8)}`,
      consumer: mc.spec.consumerName,
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
    const written = await deps.writer.applyIfChanged<ManifestWork>(
      ManifestWorkResource,
      desired,
      current,
      ctx,
    );
    const work = written ?? current;
    const steps: Outcome["steps"] = {
      ClusterReady: {
        state: "ready",
        reason: "ClusterReady",
        message: `Control plane ${names.controlPlaneNamespace}`,
      },
    };
    if (!work) return { steps };
    const fb = feedbackOf(work, { kind: "CertificateRevocationRequest", name: crrName(r) });
    const revoked = fb["revoked"] as { status?: unknown; message?: unknown } | undefined;
    const timestamp = typeof fb["revocationTimestamp"] === "string" ? fb["revocationTimestamp"] : undefined;
    if (revoked?.status === "True" && timestamp) {
      steps.PreviousCertificatesRevoked = {
        state: "ready",
        reason: "Revoked",
        message: `Every certificate issued before ${timestamp} is revoked`,
      };
      return { steps, revocationTimestamp: timestamp };
    }
    const applied = workStep(work);
    steps.PreviousCertificatesRevoked = isReady(applied)
      ? {
          state: "pending",
          reason: "WaitingForRevocation",
          message: "Waiting for HyperShift to revoke the previous certificates",
        }
      : applied;
    return { steps };
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

function composeRevocationStatus(r: BreakglassRevocation, outcome: Outcome): BreakglassRevocationStatus {
  const stamp = { observedGeneration: r.metadata.generation };
  let conditions: Condition[] = r.status?.conditions ?? [];
  for (const type of REVOCATION_STEPS) {
    const s = outcome.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), stamp);
  }
  const failure = firstUserFailure(REVOCATION_STEPS, outcome.steps);
  const blocker = firstNotReady(REVOCATION_STEPS, outcome.steps);
  const summary: ConditionInput[] = [
    blocker
      ? heldBy("Ready", "False", blocker)
      : {
          type: "Ready",
          status: "True",
          reason: "Revoked",
          message: "The previous certificates are revoked",
        },
    failure
      ? { type: "Progressing", status: "False", reason: "UserActionRequired", message: failure.step.message }
      : blocker
        ? heldBy("Progressing", "True", blocker)
        : { type: "Progressing", status: "False", reason: "AsExpected", message: "Nothing left to do" },
    failure
      ? { type: "Degraded", status: "True", reason: failure.step.reason, message: failure.step.message }
      : { type: "Degraded", status: "False", reason: "AsExpected", message: "No problem found" },
  ];
  for (const c of summary) conditions = setCondition(conditions, c, stamp);
  const revocationTimestamp = outcome.revocationTimestamp ?? r.status?.revocationTimestamp;
  return {
    conditions,
    observedGeneration: r.metadata.generation ?? 1,
    ...(revocationTimestamp ? { revocationTimestamp } : {}),
  };
}
