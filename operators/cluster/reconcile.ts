/**
 * Reconciles one HcpCluster, in Cluster API's fixed order: get by key; deletion (DELETE_PHASES) or
 * the finalizer first; the scope; paused is checked here, once (a paused cluster is only
 * observed); the phases (phases.ts) through runPhases; one status write at the end, with
 * `observedGeneration` moved only when every phase got through; the result, or the phases' errors
 * so the queue backs off.
 */
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { CLUSTER_FINALIZER, HcpClusterResource } from "../api/v1alpha1/index.ts";
import { requestLog } from "../hcp/requests.ts";
import { staleness } from "../hcp/staleness.ts";
import { failedSteps, stepsFromConditions } from "../hcp/steps.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { recordTransitions, type TransitionPolicy } from "../runtime/events.ts";
import { phasesResult, runPhases, timed } from "../runtime/phases.ts";
import { DELETE_PHASES } from "./delete.ts";
import { RecheckBudget, UserErrorHold, VerifiedSteps } from "./holds.ts";
import { CLUSTER_PHASES, PAUSED_PHASES } from "./phases.ts";
import {
  newScope,
  INFRA_RECHECK_BUDGET,
  INFRA_RECHECK_MS,
  USER_ACTION_RECHECK_MS,
  type ClusterMemory,
  type ClusterReconcilerDeps,
  type ClusterScope,
} from "./scope.ts";
import { composeStatus, CONDITIONS, STEP_CONDITIONS } from "./status.ts";

/** Events for every condition's transitions but Progressing, which restates the steps; an install told by its failures and its end. */
export const CLUSTER_EVENTS: TransitionPolicy = {
  negative: [CONDITIONS.Degraded, CONDITIONS.VersionEndOfLife],
  quiet: [CONDITIONS.Progressing],
  install: { ready: CONDITIONS.Ready, steps: STEP_CONDITIONS },
};

export class ClusterReconciler implements Reconciler {
  readonly #d: ClusterReconcilerDeps;
  readonly #memory: ClusterMemory;
  readonly #now: () => number;

  constructor(deps: ClusterReconcilerDeps, now: () => number = Date.now) {
    this.#d = deps;
    this.#now = now;
    this.#memory = {
      holds: new UserErrorHold(deps.userErrorRecheckMs ?? USER_ACTION_RECHECK_MS, now),
      reservations: new Map(),
      verified: new VerifiedSteps(deps.infraRecheckMs ?? INFRA_RECHECK_MS, now),
      rechecks: new RecheckBudget(deps.infraRecheckBudget ?? INFRA_RECHECK_BUDGET, now),
      worksWritten: new Map(),
    };
  }

  /** What outlives a reconcile, for tests that check it is dropped with the cluster. */
  get memory(): Readonly<ClusterMemory> {
    return this.#memory;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const cluster = this.#d.clusters.get(req.namespace, req.name);
    if (!cluster?.metadata.uid) return {};
    const scope = newScope(
      { deps: this.#d, memory: this.#memory, log: requestLog(ctx, cluster), now: this.#now() },
      cluster,
    );
    if (cluster.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, scope);
    if (await this.#d.writer.addFinalizer(HcpClusterResource, cluster, CLUSTER_FINALIZER, ctx)) return {};
    if (cluster.spec.paused)
      scope.facts.steps = stepsFromConditions(STEP_CONDITIONS, cluster.status?.conditions ?? []);
    const outcome = await runPhases(ctx, scope, cluster.spec.paused ? PAUSED_PHASES : CLUSTER_PHASES);
    await timed(ctx, "writeStatus", () => this.#writeStatus(ctx, scope, outcome.errors.length === 0));
    return phasesResult(outcome);
  }

  async #reconcileDelete(ctx: ReconcileContext, scope: ClusterScope): Promise<Result> {
    if (!scope.cluster.metadata.finalizers?.includes(CLUSTER_FINALIZER)) return {};
    const outcome = await runPhases(ctx, scope, DELETE_PHASES);
    // Once the finalizer is gone the object may be too; status is written only while it waits.
    if (scope.facts.deleting) await this.#writeStatus(ctx, scope, outcome.errors.length === 0);
    return phasesResult(outcome);
  }

  async #writeStatus(ctx: ReconcileContext, scope: ClusterScope, succeeded: boolean): Promise<void> {
    const { cluster } = scope;
    const placed = scope.facts.managementCluster;
    const mc = placed ? this.#d.managementClusters.get("", placed) : undefined;
    const status = composeStatus(scope.facts, { succeeded, stale: staleness(mc) });
    const written = await this.#d.writer.applyStatus<HcpCluster>(HcpClusterResource, cluster, status, ctx);
    if (!written) return;
    // The reservation stays until the informer shows the placement (phases.ts placementLoad): the
    // next reconcile may read the copy from before this write, and would place the cluster again.
    await recordTransitions(
      this.#d.events,
      cluster,
      {
        before: cluster.status?.conditions ?? [],
        after: status.conditions ?? [],
        failedSteps: failedSteps(scope.facts.steps),
        signal: ctx.signal,
      },
      CLUSTER_EVENTS,
    );
    // Once the status says what the control plane is asked to run: one event per move.
    if (scope.upgradeStarted)
      await this.#d.events.record(cluster, {
        type: "Normal",
        reason: "Upgrading",
        message: scope.upgradeStarted,
        signal: ctx.signal,
      });
  }
}
