/**
 * The phases of a NodePool reconcile, in order: its cluster is ready for pools, the version
 * resolves and respects the control plane's, the work is applied, the work and the nodes are
 * observed through feedback. Each records its step in `scope.facts`; a phase whose input is not
 * ready does nothing. No phase requeues: the cluster's, the work's and the catalog's watches bring
 * the pool back. The reconciler's requeues are the new pool's two waits, both following its
 * cluster rather than the pool's age: untoldClusterWaitMs before the phases, while the cluster is
 * on its way to placement (bounded by the cluster going quiet), and firstStatusHoldMs at the status
 * write, a window from the cluster's placement.
 */
import {
  awaitsRestoredWork,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
  type VersionSpec,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import { feedbackOf, isProgressReason, poolReport, type PoolReport } from "../api/v1alpha1/feedback.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { findClusterPhase } from "../hcp/cluster-ref.ts";
import { isReady, workStep, type StepState } from "../hcp/steps.ts";
import {
  compareVersions,
  poolTooFarBehind,
  type ReleaseCatalog,
  type Resolution,
} from "../releases/catalog.ts";
import { getCondition } from "../runtime/conditions.ts";
import { isTrue } from "../runtime/conditions.ts";
import { failpoint } from "../runtime/failpoints.ts";
import type { Phase, PhaseResult } from "../runtime/phases.ts";
import { nodePoolWork, poolNames } from "./nodepool.ts";
import { confirmRestoredPoolWork, keepRestoredPoolSteps } from "./restored-work.ts";
import { poolWork, type NodePoolReconcilerDeps, type PoolScope } from "./scope.ts";
import { POOL_CONDITIONS, type PoolStep } from "./status.ts";

function record(scope: PoolScope, type: PoolStep, step: StepState): PhaseResult {
  scope.facts.steps[type] = step;
  return {};
}

function stepReady(scope: PoolScope, type: PoolStep): boolean {
  return isReady(scope.facts.steps[type]);
}

/**
 * Why a cluster that is not placed or has no HostedCluster holds its pools: a cluster that needs
 * the user (Degraded) fails the step with its own reason, so the pool says so at once instead of
 * waiting; otherwise the pool waits, quoting what the cluster's Ready says.
 */
function clusterHold(cluster: HcpCluster, ref: string): StepState {
  const conditions = cluster.status?.conditions ?? [];
  const degraded = getCondition(conditions, "Degraded");
  if (degraded?.status === "True")
    return {
      state: "failed",
      reason: degraded.reason,
      message: `HcpCluster ${ref} needs attention before its node pools can be created: ${degraded.message}`,
      userActionRequired: true,
    };
  // The cluster's own progress is not quoted: each of its steps would rewrite every pool's status
  // (a write per pool per step at a region's scale) to say what the cluster's Ready already says.
  return {
    state: "pending",
    reason: "WaitingForCluster",
    message: `Waiting for HcpCluster ${ref} to be placed and its HostedCluster applied; the HcpCluster's Ready condition says what it is doing`,
  };
}

/** The management cluster the pool's cluster is placed on, once its HostedCluster is applied. */
function placedOn(cluster: HcpCluster, deps: NodePoolReconcilerDeps): ManagementCluster | undefined {
  const mc = deps.managementClusters
    .list()
    .find((m) => m.metadata.name === cluster.status?.managementCluster);
  return mc && isTrue(cluster.status?.conditions, "HostedClusterApplied") ? mc : undefined;
}

/**
 * Reasons for the cluster's Ready while a step is under way that isProgressReason (HyperShift's
 * words: WaitingFor…) does not know: a step not reached yet (hcp/steps.ts heldBy), an Azure
 * operation running or retried after a conflict (cluster/azure.ts), the broker out of reach for a
 * moment. A reason not listed tells the pool at once: an unknown one costs a write, never hides a
 * failure.
 */
const CLUSTER_PROGRESS_REASONS = new Set(["Pending", "InProgress", "Conflict", "BrokerNotConnected"]);

/**
 * Whether a cluster is getting on with its placement unasked: not paused, not Degraded, and its
 * Ready either not written yet or False for a step under way (not a failure such as NoCapacity).
 */
function clusterOnItsWay(cluster: HcpCluster): boolean {
  const conditions = cluster.status?.conditions ?? [];
  if (cluster.spec.paused || getCondition(conditions, "Degraded")?.status === "True") return false;
  const ready = getCondition(conditions, "Ready");
  if (!ready) return true;
  return (
    ready.status === "False" && (isProgressReason(ready.reason) || CLUSTER_PROGRESS_REASONS.has(ready.reason))
  );
}

/** The latest of some stored timestamps in ms, -Infinity when none parses (restart-safe clocks). */
function latestMs(times: ReadonlyArray<string | undefined>): number {
  return Math.max(...times.map((t) => Date.parse(t ?? "")).filter((ms) => !Number.isNaN(ms)));
}

/** When the cluster last moved: its creation or any of its conditions' last transition. */
function clusterMovedMs(cluster: HcpCluster): number {
  const conditions = cluster.status?.conditions ?? [];
  return latestMs([cluster.metadata.creationTimestamp, ...conditions.map((c) => c.lastTransitionTime)]);
}

/**
 * How long a new pool may still say nothing while its cluster is on its way to being placed, or
 * undefined when its status must be written now. A pool created with its cluster would otherwise
 * write "waiting for the cluster" before the cluster is placed (a status write per pool that no
 * one reads: the cluster's own Ready says what it is doing). The wait follows the cluster, not the
 * clock: at a region's scale a cluster takes minutes to be placed, so a window from the pool's
 * creation ran out first. The cluster's watch brings the pool back as it moves and once it is
 * placed; only a cluster none of whose conditions moved for `stallMs` is told on its pools, by
 * the requeue at that bound. Only a pool never written to: a missing, deleting, paused, Degraded
 * or failing cluster is told at once. Judged from stored timestamps, so a restart keeps the wait.
 */
export function untoldClusterWaitMs(
  pool: NodePool,
  deps: NodePoolReconcilerDeps,
  now: number,
  stallMs: number,
): number | undefined {
  if (!neverTold(pool)) return undefined;
  const cluster = deps.clusters.get(pool.metadata.namespace ?? "", pool.spec.clusterRef.name);
  if (!cluster || cluster.metadata.deletionTimestamp || placedOn(cluster, deps)) return undefined;
  if (!clusterOnItsWay(cluster)) return undefined;
  const left = clusterMovedMs(cluster) + stallMs - now;
  return left > 0 ? left : undefined;
}

type NextStatus = { conditions?: Array<{ type: string; status?: string; reason?: string }> };

/** Whether a status says only that the pool is on its way: Ready False for a progress reason, not Degraded. */
function onlyUnderWay(next: NextStatus): boolean {
  const of = (type: string) => next.conditions?.find((c) => c.type === type);
  const ready = of(POOL_CONDITIONS.Ready);
  return (
    ready?.status === "False" &&
    isProgressReason(ready.reason ?? "") &&
    of(POOL_CONDITIONS.Degraded)?.status !== "True"
  );
}

/** When the pool could start: the later of its creation and its cluster's placement (HostedClusterApplied). */
function couldStartMs(pool: NodePool, cluster: HcpCluster | undefined): number | undefined {
  const applied = getCondition(cluster?.status?.conditions, "HostedClusterApplied");
  if (applied?.status !== "True") return undefined;
  return latestMs([pool.metadata.creationTimestamp, applied.lastTransitionTime]);
}

/**
 * How long a new pool's first status may wait for news while it says only that the pool is on its
 * way: up to `windowMs` from when the pool could start, so a pool created with a slow cluster
 * still gets its window after placement. A pool whose nodes come up within it is told once, Ready;
 * a slower one at the window's end, then Ready: two writes at most where each step was one (work
 * applied, nodes awaited, Ready). A pool whose cluster is not placed is not held: it says
 * WaitingForCluster only once untoldClusterWaitMs has waited for the cluster.
 */
export function firstStatusHoldMs(
  pool: NodePool,
  cluster: HcpCluster | undefined,
  next: NextStatus,
  clock: { now: number; windowMs: number },
): number | undefined {
  if (!neverTold(pool) || !onlyUnderWay(next)) return undefined;
  const started = couldStartMs(pool, cluster);
  const left = started === undefined ? 0 : started + clock.windowMs - clock.now;
  return left > 0 ? left : undefined;
}

/** A pool nothing was written of yet, neither deleting nor restored (a restored pool has a story). */
function neverTold(pool: NodePool): boolean {
  return !pool.metadata.deletionTimestamp && !pool.status?.conditions?.length && !awaitsRestoredWork(pool);
}

/** The pool's cluster must exist, be placed and have its HostedCluster applied. */
export const findCluster = findClusterPhase<PoolScope>({
  referrer: (scope) => scope.pool,
  // A restored pool writes its work again even while its cluster goes (hcp/restored-work.ts).
  evenWhileDeleting: (scope) => awaitsRestoredWork(scope.pool),
  record: (scope, step) => void record(scope, POOL_CONDITIONS.ClusterReady, step),
  judge: (scope, cluster) => {
    const names = clusterNames(cluster, scope.deps.region);
    scope.cluster = cluster;
    scope.names = names;
    const mc = placedOn(cluster, scope.deps);
    if (!mc) return clusterHold(cluster, scope.pool.spec.clusterRef.name);
    scope.consumer = mc.spec.consumerName;
    return {
      state: "ready",
      reason: "ClusterReady",
      message: `HostedCluster ${names.hostedClusterNamespace}/${names.hostedClusterName} on ${mc.metadata.name ?? ""}`,
    };
  },
});

/** Why the wanted version cannot roll out to the nodes now, if it cannot. */
function versionHold(scope: PoolScope, spec: VersionSpec, wanted: string): StepState | undefined {
  const running = scope.pool.status?.version;
  if (running && compareVersions(wanted, running) < 0)
    return {
      state: "failed",
      reason: "DowngradeRefused",
      message: `version ${spec.id} resolves to ${wanted}, older than the nodes' ${running}; OpenShift does not downgrade`,
      userActionRequired: true,
    };
  const controlPlane = scope.cluster?.status?.version;
  const behind = controlPlane ? poolTooFarBehind(wanted, controlPlane) : undefined;
  if (behind)
    return {
      state: "failed",
      reason: "TooFarBehind",
      message: `version ${spec.id} resolves to ${wanted}, but ${behind}`,
      userActionRequired: true,
    };
  if (controlPlane && compareVersions(wanted, controlPlane) > 0)
    return {
      state: "pending",
      reason: "WaitingForControlPlane",
      message: `The nodes move to ${wanted} once the control plane runs it (now ${controlPlane})${notRequested(scope, wanted)}`,
    };
  return undefined;
}

/** When the cluster does not even ask for `wanted`, the two ways out (the pool's version can still be changed). */
function notRequested(scope: PoolScope, wanted: string): string {
  const requested = scope.cluster?.spec.version.id;
  if (!requested || compareVersions(wanted, requested) <= 0) return "";
  const name = scope.cluster?.metadata.name ?? "";
  return `; HcpCluster ${name} asks for ${requested}: upgrade it, or set the node pool's version to at most ${requested}`;
}

/**
 * The release a pool that names no version runs: the one its control plane is asked to run (the
 * cluster's status.desiredVersion, a hop of the update graph), else what the cluster's version
 * resolves to (a cluster the controller has not planned yet).
 */
function followedRelease(catalog: ReleaseCatalog, cluster: HcpCluster): Resolution {
  const desired = cluster.status?.desiredVersion;
  const release = desired ? catalog.releases.find((r) => r.version === desired) : undefined;
  return release ? { ok: true, release } : catalog.resolve(cluster.spec.version);
}

/**
 * The pool follows its control plane unless it names its own version; never backwards, never
 * ahead, never more than two minors behind.
 */
export const resolveRelease: Phase<PoolScope> = (_ctx, scope) => {
  const { pool, cluster, deps } = scope;
  if (!cluster || !stepReady(scope, POOL_CONDITIONS.ClusterReady)) return {};
  const spec = pool.spec.version ?? cluster.spec.version;
  const catalog = deps.releases();
  const resolution = pool.spec.version
    ? catalog.resolve(pool.spec.version)
    : followedRelease(catalog, cluster);
  if (!resolution.ok)
    return record(scope, POOL_CONDITIONS.ValidVersion, {
      state: "failed",
      reason: resolution.reason,
      message: resolution.message,
      userActionRequired: resolution.reason === "UnknownVersion",
    });
  const wanted = resolution.release.version;
  const hold = versionHold(scope, spec, wanted);
  if (hold) return record(scope, POOL_CONDITIONS.ValidVersion, hold);
  scope.release = resolution.release;
  const running = pool.status?.version;
  if (running && running !== wanted) scope.facts.updatingTo = wanted;
  return record(scope, POOL_CONDITIONS.ValidVersion, {
    state: "ready",
    reason: "VersionResolved",
    message: pool.spec.version
      ? `${spec.id} resolves to ${wanted}`
      : `${wanted}, the release the control plane is asked to run (the pool names no version of its own)`,
  });
};

/** Applies the pool's work when it differs from this controller's last apply; a paused cluster's pools keep theirs. */
export const applyWork: Phase<PoolScope> = async ({ signal }, scope) => {
  const { pool, cluster, names, release, consumer, deps } = scope;
  if (!cluster || !names || !release || !consumer || !stepReady(scope, POOL_CONDITIONS.ValidVersion))
    return {};
  const current = poolWork(scope);
  if (cluster.spec.paused && current) return {};
  const desired = nodePoolWork({ pool, cluster, names, release, consumer });
  scope.appliedWork = await deps.writer.applyIfChanged<ManifestWork>(ManifestWorkResource, desired, current, {
    signal,
  });
  if (!scope.appliedWork) return {};
  failpoint("nodepool/after-work-applied");
  const work = `${consumer}/${desired.metadata.name ?? ""}`;
  // No event for the work's creation: NodePoolApplied shows it, and an install is told by its
  // failures and its end (runtime/events.ts TransitionPolicy.install).
  scope.log.info("Applied the NodePool ManifestWork", { work, created: !current });
  return {};
};

function nodesStep(report: PoolReport, want: number): StepState {
  const ready = report.conditions.find((c) => c.type === "Ready");
  const replicas = report.replicas ?? 0;
  if (ready?.status === "True" && replicas >= want)
    return { state: "ready", reason: "AsExpected", message: `${replicas} node(s) ready` };
  if (ready?.status === "False" && ready.reason && !isProgressReason(ready.reason))
    return {
      state: "failed",
      reason: `NodePool${ready.reason}`,
      message: ready.message ?? "",
      userActionRequired: true,
    };
  return { state: "pending", reason: "WaitingForNodes", message: `${replicas} of ${want} node(s) ready` };
}

/** The work (published, applied) and the nodes HyperShift reports through its feedback. */
export const observeNodes: Phase<PoolScope> = (_ctx, scope) => {
  const { pool, names } = scope;
  const work = scope.appliedWork ?? poolWork(scope);
  if (!work || !names || keepRestoredPoolSteps(scope, work)) return {};
  record(scope, POOL_CONDITIONS.NodePoolApplied, workStep(work));
  const report = poolReport(
    feedbackOf(work, { kind: "NodePool", name: poolNames(pool, names).hyperShiftName }),
  );
  scope.facts.report = report;
  const want = pool.spec.autoScaling?.min ?? pool.spec.replicas ?? 0;
  record(scope, POOL_CONDITIONS.NodesReady, nodesStep(report, want));
  if (report.version && scope.release && report.version !== scope.release.version)
    scope.facts.updatingTo = scope.release.version;
  return {};
};

export const POOL_PHASES: readonly Phase<PoolScope>[] = [
  findCluster,
  resolveRelease,
  applyWork,
  observeNodes,
  confirmRestoredPoolWork,
];
