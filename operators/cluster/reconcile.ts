/**
 * Reconciles one HcpCluster through the runtime's skeleton (runtime/reconciler.ts): deletion
 * (DELETE_PHASES) or the finalizer first; a paused cluster is only observed (PAUSED_PHASES); the
 * phases of phases.ts; one status write (status.ts), then its events and the upgrade it started.
 */
import {
  CLUSTER_FINALIZER,
  HcpClusterResource,
  type HcpCluster,
  type HcpClusterStatus,
} from "../api/v1alpha1/index.ts";
import { requestLog } from "../hcp/requests.ts";
import { staleness } from "../hcp/staleness.ts";
import { failedSteps, stepsFromConditions } from "../hcp/steps.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { TransitionPolicy } from "../runtime/events.ts";
import type { Phase } from "../runtime/phases.ts";
import { PhasedReconciler } from "../runtime/reconciler.ts";
import { clusterReleased, DELETE_PHASES, releasingCluster } from "./delete.ts";
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
import { restoreEvents } from "./restore.ts";

/**
 * Events for every condition's transitions but Progressing, which restates the steps, and
 * WorkTemplateCurrent, which every cluster changes at an operators upgrade (the RefreshWorkTemplate
 * run tells each rewrite); an install told by its failures and its end.
 */
export const CLUSTER_EVENTS: TransitionPolicy = {
  negative: [CONDITIONS.Degraded, CONDITIONS.VersionEndOfLife],
  // BackupsHealthy is shown, not told: until a management cluster's Velero has a storage location
  // every cluster on it would tell "BackupFailed" at its first report (the local region's have
  // none yet), and a backup failure is a fact for the fleet's alerting, not one event per cluster.
  quiet: [CONDITIONS.Progressing, CONDITIONS.WorkTemplateCurrent, CONDITIONS.BackupsHealthy],
  install: { ready: CONDITIONS.Ready, steps: STEP_CONDITIONS },
};

/** A paused cluster's steps say what they said when it was paused; its phases only observe. */
const keepPausedSteps: Phase<ClusterScope> = (_ctx, scope) => {
  scope.facts.steps = stepsFromConditions(STEP_CONDITIONS, scope.cluster.status?.conditions ?? []);
  return {};
};

const PAUSED: readonly Phase<ClusterScope>[] = [keepPausedSteps, ...PAUSED_PHASES];

function newMemory(deps: ClusterReconcilerDeps, now: () => number): ClusterMemory {
  return {
    holds: new UserErrorHold(deps.userErrorRecheckMs ?? USER_ACTION_RECHECK_MS, now),
    reservations: new Map(),
    verified: new VerifiedSteps(deps.infraRecheckMs ?? INFRA_RECHECK_MS, now),
    rechecks: new RecheckBudget(deps.infraRecheckBudget ?? INFRA_RECHECK_BUDGET, now),
    worksWritten: new Map(),
  };
}

/** The status of the cluster as its phases found it; whether its management cluster's agent is heard from. */
function clusterStatus(scope: ClusterScope, succeeded: boolean): HcpClusterStatus {
  const placed = scope.facts.managementCluster;
  const mc = placed ? scope.deps.managementClusters.get("", placed) : undefined;
  return composeStatus(scope.facts, { succeeded, stale: staleness(mc) });
}

/** Once the status says what the control plane is asked to run: one event per move. */
async function recordUpgrade(ctx: ReconcileContext, scope: ClusterScope): Promise<void> {
  if (!scope.upgradeStarted) return;
  await scope.deps.events.record(scope.cluster, {
    type: "Normal",
    reason: "Upgrading",
    message: scope.upgradeStarted,
    signal: ctx.signal,
  });
}

/** Once the status says a restore started or ended: one event per transition (restore.ts). */
async function recordRestore(ctx: ReconcileContext, scope: ClusterScope): Promise<void> {
  for (const event of restoreEvents(scope.cluster.status?.restore, scope.facts.restore?.status))
    await scope.deps.events.record(scope.cluster, { ...event, signal: ctx.signal });
}

export class ClusterReconciler extends PhasedReconciler<HcpCluster, ClusterScope> {
  readonly #memory: ClusterMemory;

  constructor(deps: ClusterReconcilerDeps, now: () => number = Date.now) {
    const memory = newMemory(deps, now);
    super({
      resource: HcpClusterResource,
      finalizer: CLUSTER_FINALIZER,
      get: (namespace, name) => deps.clusters.get(namespace, name),
      writer: deps.writer,
      scope: (ctx, cluster) => newScope({ deps, memory, log: requestLog(ctx, cluster), now: now() }, cluster),
      phases: (scope) => (scope.cluster.spec.paused ? PAUSED : CLUSTER_PHASES),
      deletion: {
        phases: DELETE_PHASES,
        waiting: (scope) => Boolean(scope.facts.deleting),
        reportsWaiting: true,
        releasing: releasingCluster,
        released: clusterReleased,
      },
      status: {
        compose: clusterStatus,
        events: {
          recorder: deps.events,
          policy: CLUSTER_EVENTS,
          failedSteps: (scope) => failedSteps(scope.facts.steps),
        },
        // A written placement keeps its reservation until the informer shows it (phases.ts
        // placementLoad): the next reconcile may read the copy from before this write.
        written: async (ctx, scope) => {
          await recordUpgrade(ctx, scope);
          await recordRestore(ctx, scope);
        },
      },
    });
    this.#memory = memory;
  }

  /** What outlives a reconcile, for tests that check it is dropped with the cluster. */
  get memory(): Readonly<ClusterMemory> {
    return this.#memory;
  }
}
