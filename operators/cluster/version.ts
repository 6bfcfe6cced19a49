/**
 * The cluster's version on the update graph (releases/plan.ts): the release the control plane is
 * asked to run now, what holds an upgrade (ValidVersion False, naming the node pools it would
 * leave too far behind), whether the release that runs is past its end of life
 * (VersionEndOfLife), and the event of an upgrade this controller starts. The controller never
 * writes spec: the release it resolves is HyperShift's spec.release.image and status.desiredVersion.
 */
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { maintenanceWindowAt } from "../hcp/maintenance-window.ts";
import type { StepState } from "../hcp/steps.ts";
import type { Release, ReleaseCatalog } from "../releases/catalog.ts";
import {
  nextEndOfLife,
  planVersion,
  type PlanInput,
  type PoolInput,
  type VersionPlan,
} from "../releases/plan.ts";
import type { ConditionInput } from "../runtime/conditions.ts";
import type { ClusterScope } from "./scope.ts";
import { CONDITIONS } from "./status.ts";

/** The longest wait for an end of life to pass: a timer of weeks would overflow, and a day costs nothing. */
export const END_OF_LIFE_RECHECK_MS = 24 * 3600 * 1000;

/** The cluster's node pools (not those being deleted) as the plan reads them. */
function poolsOf(scope: ClusterScope): PoolInput[] {
  const { cluster } = scope;
  return scope.deps.nodePools
    .list(cluster.metadata.namespace)
    .filter((p) => p.spec.clusterRef.name === cluster.metadata.name && !p.metadata.deletionTimestamp)
    .map((p) => ({ name: p.metadata.name ?? "", ...(p.spec.version ? { version: p.spec.version.id } : {}) }));
}

/**
 * VersionEndOfLife: True once the release the control plane runs is past its end of life. None
 * until the control plane reports what it runs: Unknown then False would make an event of every
 * install, where a first False is no news.
 */
export function endOfLifeCondition(
  catalog: ReleaseCatalog,
  running: string | undefined,
  plan: VersionPlan,
): ConditionInput | undefined {
  const type = CONDITIONS.VersionEndOfLife;
  if (!running) return undefined;
  if (plan.endOfLife)
    return {
      type,
      status: "True",
      reason: "EndOfLife",
      message: `OpenShift ${running} reached its end of life on ${plan.endOfLife.since}: the control plane keeps running, but gets no more fixes; upgrade the cluster (hcpctl upgrade plan shows the way)`,
    };
  const release = catalog.releases.find((r) => r.version === running);
  if (!release)
    return {
      type,
      status: "Unknown",
      reason: "NotInCatalog",
      message: `OpenShift ${running} is not in the release catalog: its end of life is not known`,
    };
  const until = release.endOfLifeTimestamp?.slice(0, 10);
  return {
    type,
    status: "False",
    reason: "Supported",
    message: until
      ? `OpenShift ${running} is supported until ${until}`
      : `The release catalog gives OpenShift ${running} no end of life`,
  };
}

/** Why the controller moves the control plane, in the words of its event. */
function causeOf(cluster: HcpCluster, plan: VersionPlan, from: string): string {
  const { id } = cluster.spec.version;
  if (plan.automaticPatch) return "automatic patch upgrade";
  const minorOnly = id.split(".").length === 2;
  if (minorOnly && from.startsWith(`${id}.`)) return `the newest patch of ${id}`;
  return `spec.version.id ${id}`;
}

/**
 * The event message of an upgrade this reconcile starts: the release asked for moves from the one
 * asked before (a first install is no upgrade).
 */
export function upgradeStarted(cluster: HcpCluster, plan: VersionPlan): string | undefined {
  const before = cluster.status?.desiredVersion;
  const next = plan.next?.version;
  if (!before || !next || before === next) return undefined;
  const from = cluster.status?.version ?? before;
  if (from === next) return undefined;
  const target = plan.target?.version;
  const onTheWay = target && target !== next ? ` (on the way to ${target})` : "";
  return `Upgrading from ${from} to ${next}: ${causeOf(cluster, plan, from)}${onTheWay}`;
}

/** ValidVersion's message when the version resolves: where it leads, and the way there. */
function resolvedMessage(cluster: HcpCluster, plan: VersionPlan): string {
  const { id } = cluster.spec.version;
  const target = plan.target?.version ?? "";
  const way = plan.hops.length > 1 ? `, by way of ${plan.hops.map((h) => h.to.version).join(" → ")}` : "";
  const policy = plan.automaticPatch ? " (upgradePolicy AutomaticPatch)" : "";
  return `${id} resolves to ${target}${policy}${way} (${plan.next?.image ?? ""})`;
}

/**
 * Plans the cluster's version: fills scope.plan, scope.release (the plan's next release) and the
 * facts status reads; returns ValidVersion's step and when an end of life next changes the plan.
 */
export function resolveVersion(scope: ClusterScope): { step: StepState; recheckMs?: number } {
  const { cluster, deps, now } = scope;
  const catalog = deps.releases();
  const running = cluster.status?.version;
  const input: PlanInput = {
    catalog,
    version: cluster.spec.version,
    running,
    previous: cluster.status?.desiredVersion,
    pools: poolsOf(scope),
    now,
  };
  const plan = planVersion(input);
  scope.plan = plan;
  const endOfLife = endOfLifeCondition(catalog, running, plan);
  if (endOfLife) scope.facts.versionEndOfLife = endOfLife;
  const eol = nextEndOfLife(catalog, now);
  const recheckMs = eol === undefined ? undefined : Math.min(eol - now, END_OF_LIFE_RECHECK_MS);
  const [hold] = plan.holds;
  if (hold || !plan.next) {
    const { reason, message } = hold ?? { reason: "UnknownVersion", message: "no release" };
    const userActionRequired = reason !== "CatalogUnavailable";
    return { step: { state: "failed", reason, message, userActionRequired }, recheckMs };
  }
  const deferred = deferAutomaticPatch(scope, plan, input);
  scope.release = deferred?.stay ?? plan.next;
  scope.facts.desiredVersion = scope.release.version;
  if (deferred) scope.facts.maintenanceDeferred = deferred.condition;
  else scope.upgradeStarted = upgradeStarted(cluster, plan);
  return {
    step: { state: "ready", reason: "VersionResolved", message: resolvedMessage(cluster, plan) },
    recheckMs: lowest(recheckMs, deferred?.recheckMs),
  };
}

const lowest = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/**
 * An automatic patch upgrade is the service's own decision, so it begins only inside the
 * cluster's maintenance window: outside it the control plane stays on the release it was last asked
 * to run. An upgrade the customer asks for (spec.version, even with the policy set), or one already
 * begun, is not held.
 */
function deferAutomaticPatch(
  scope: ClusterScope,
  plan: VersionPlan,
  input: PlanInput,
): { stay: Release; condition: ConditionInput; recheckMs?: number } | undefined {
  const previous = input.previous;
  if (!plan.automaticPatch || !plan.next || !previous || plan.next.version === previous) return undefined;
  const asked = planVersion({ ...input, version: { ...input.version, upgradePolicy: "Manual" } });
  if (asked.next?.version !== previous) return undefined;
  const stay = asked.next;
  if (!stay) return undefined;
  const verdict = maintenanceWindowAt(scope.cluster.spec.maintenance, new Date(scope.now));
  if (verdict.open) return undefined;
  const opensIn = verdict.opensAt ? verdict.opensAt.getTime() - scope.now : undefined;
  return {
    stay,
    condition: {
      type: CONDITIONS.MaintenanceDeferred,
      status: "True",
      reason: verdict.reason.startsWith("maintenance frozen")
        ? "MaintenanceFrozen"
        : "OutsideMaintenanceWindow",
      message: `The automatic patch upgrade from ${previous} to ${plan.next.version} waits: ${verdict.reason}`,
    },
    ...(opensIn === undefined
      ? {}
      : { recheckMs: Math.min(Math.max(opensIn, 1000), END_OF_LIFE_RECHECK_MS) }),
  };
}
