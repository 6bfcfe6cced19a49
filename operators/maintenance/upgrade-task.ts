/**
 * UpgradeControlPlane: moves a cluster's control plane to the task's release (spec.release), as an
 * SRE would by raising spec.version.id, so that a fleet rollout can do it in waves. Three steps,
 * each idempotent: CheckUpgradePath (the update graph from what runs to the target; a cluster
 * already there succeeds without a change), AskForRelease (raises spec.version.id, never lowers
 * it) and AwaitControlPlane (until the control plane runs the target; HyperShift's upgrade itself
 * is what HcpUpgradeStuck watches). The cluster controller does the upgrade from spec.version.
 */
import { MAINTENANCE_VERSION_ANNOTATIONS, type HcpCluster, type NodePool } from "../api/v1alpha1/index.ts";
import { compareVersions, parseVersion, type ReleaseCatalog } from "../releases/catalog.ts";
import { planVersion, type PoolInput } from "../releases/plan.ts";
import { objectKey, type Lister } from "../runtime/informer.ts";
import { getCondition } from "../runtime/conditions.ts";
import type { KubeClient } from "../runtime/kube.ts";
import type { MaintenanceStep, StepContext, StepOutcome, TaskDefinition } from "./step.ts";
import { clusterName, done, patchClusterAsRead, terminal, waiting } from "./step-outcomes.ts";

/** A lost race on the cluster: look again as soon as the cache has the newer cluster. */
const RACE_RETRY_MS = 1_000;

/** What the steps read and change of a cluster, given at construction (this folder imports no controller). */
export interface ControlPlaneUpgrades {
  /** The release catalog as it stands now. */
  catalog(): ReleaseCatalog;
  /** The cluster's node pools not being deleted, as the update-graph plan reads them. */
  nodePools(cluster: HcpCluster): PoolInput[];
  /**
   * Sets spec.version.id to `id` and the MAINTENANCE_VERSION_ANNOTATIONS (asked by `run`, replacing
   * the id the cluster asked), only while the cluster is still at `cluster`'s resourceVersion:
   * "changed" when it is not (someone wrote it meanwhile; nothing was written).
   */
  askForVersion(
    cluster: HcpCluster,
    id: string,
    run: string,
    signal: AbortSignal,
  ): Promise<"asked" | "changed">;
}

/** ControlPlaneUpgrades over the service cluster's client, the catalog and the node pool cache. */
export function controlPlaneUpgrades(deps: {
  client: Pick<KubeClient, "mergePatch">;
  catalog: () => ReleaseCatalog;
  nodePools: Lister<NodePool>;
}): ControlPlaneUpgrades {
  return {
    catalog: deps.catalog,
    nodePools: (cluster) =>
      deps.nodePools
        .list(cluster.metadata.namespace)
        .filter((p) => p.spec.clusterRef.name === cluster.metadata.name && !p.metadata.deletionTimestamp)
        .map((p) => ({
          name: p.metadata.name ?? "",
          ...(p.spec.version ? { version: p.spec.version.id } : {}),
        })),
    async askForVersion(cluster, id, run, signal) {
      const patch = {
        metadata: {
          annotations: {
            [MAINTENANCE_VERSION_ANNOTATIONS.askedBy]: run,
            [MAINTENANCE_VERSION_ANNOTATIONS.replaced]: cluster.spec.version.id,
          },
        },
        spec: { version: { id } },
      };
      return (await patchClusterAsRead(deps.client, cluster, patch, signal)) === "written"
        ? "asked"
        : "changed";
    },
  };
}

/** Whether spec.version.id asks for less than `target`: an older release, or an older minor. */
export function asksForLess(id: string, target: string): boolean {
  return !parseVersion(id) || compareVersions(id, target) < 0;
}

/** The run's target, or why the run has none (a run made before the task carried one cannot exist). */
function targetOf(ctx: StepContext): string | undefined {
  return ctx.run.spec.release?.version;
}

/** The control plane already runs the target or newer: every step is done without a change. */
function alreadyThere(cluster: HcpCluster, target: string): StepOutcome | undefined {
  const running = cluster.status?.version;
  if (running && compareVersions(running, target) >= 0)
    return done(`${clusterName(cluster)} already runs ${running}, at or past ${target}: nothing to change`);
  return undefined;
}

function checkUpgradePath(ops: ControlPlaneUpgrades, ctx: StepContext, target: string): StepOutcome {
  const { cluster, now } = ctx;
  const running = cluster.status?.version;
  if (!running)
    return waiting(`Waiting for ${clusterName(cluster)} to report the version its control plane runs`);
  const plan = planVersion({
    catalog: ops.catalog(),
    version: {
      id: target,
      ...(cluster.spec.version.channelGroup ? { channelGroup: cluster.spec.version.channelGroup } : {}),
    },
    running,
    ...(cluster.status?.desiredVersion ? { previous: cluster.status.desiredVersion } : {}),
    pools: ops.nodePools(cluster),
    now: now.getTime(),
  });
  const hold = plan.holds[0];
  if (hold?.reason === "CatalogUnavailable")
    return { kind: "transient", message: `The release catalog is unavailable: ${hold.message}` };
  if (hold) return terminal(`${hold.reason}: ${clusterName(cluster)} runs ${running}; ${hold.message}`);
  const via = plan.hops.map((h) => h.to.version).join(" → ");
  return done(`${clusterName(cluster)} can move from ${running} to ${target} (${via || target})`);
}

/**
 * Raises spec.version.id to the target when it asks for less. Done only once the cache shows an id
 * at or past the target, so the next step never reads a cluster from before the patch.
 */
async function askForRelease(
  ops: ControlPlaneUpgrades,
  ctx: StepContext,
  target: string,
): Promise<StepOutcome> {
  const { cluster, run, signal } = ctx;
  const asked = cluster.spec.version.id;
  const annotations = cluster.metadata.annotations ?? {};
  // The annotations come in the same write as the id: a cache that shows them shows the id raised.
  const raisedHere = annotations[MAINTENANCE_VERSION_ANNOTATIONS.askedBy] === objectKey(run);
  if (!asksForLess(asked, target)) {
    if (raisedHere)
      return done(
        `Raised spec.version.id from ${annotations[MAINTENANCE_VERSION_ANNOTATIONS.replaced] ?? "?"} to ${target}`,
      );
    // A customer's own ask for the target or more is theirs: never lowered, and it takes the cluster there.
    return done(`spec.version.id already asks for ${asked}, at or past ${target}: left as it is`);
  }
  if (raisedHere)
    return terminal(
      `spec.version.id was set to ${asked} after this run asked for ${target}; a later choice is not overridden`,
    );
  if ((await ops.askForVersion(cluster, target, objectKey(run), signal)) === "changed")
    return waiting(
      `${clusterName(cluster)} changed while asking for ${target}; looking again`,
      RACE_RETRY_MS,
    );
  return waiting(
    `Asked for ${target} in spec.version.id (it asked for ${asked}); waiting to see it`,
    RACE_RETRY_MS,
  );
}

/** A hold of the version asked now (not of an older spec) ends the run; a missing catalog may come back. */
function holdOf(cluster: HcpCluster): StepOutcome | undefined {
  const valid = getCondition(cluster.status?.conditions, "ValidVersion");
  if (valid?.status !== "False" || valid.reason === "CatalogUnavailable") return undefined;
  if (valid.observedGeneration !== undefined && valid.observedGeneration !== cluster.metadata.generation)
    return undefined;
  return terminal(`${valid.reason}: ${clusterName(cluster)} runs ${runsOf(cluster)}; ${valid.message}`);
}

const runsOf = (cluster: HcpCluster): string => cluster.status?.version ?? "no version yet";

function awaitControlPlane(ctx: StepContext, target: string): StepOutcome {
  const { cluster } = ctx;
  const asked = cluster.spec.version.id;
  if (asksForLess(asked, target))
    return terminal(
      `spec.version.id was set to ${asked} after this run asked for ${target}; a later choice is not overridden`,
    );
  return (
    holdOf(cluster) ??
    waiting(
      `Waiting for the control plane of ${clusterName(cluster)} to run ${target} (runs ${runsOf(cluster)}, asked ${cluster.status?.desiredVersion ?? "nothing yet"})`,
    )
  );
}

/** A step that first checks the run's target and whether the cluster is already there. */
function upgradeStep(
  name: string,
  body: (ctx: StepContext, target: string) => StepOutcome | Promise<StepOutcome>,
): MaintenanceStep {
  return {
    name,
    execute(ctx) {
      const target = targetOf(ctx);
      if (!target)
        return Promise.resolve(
          terminal("spec.release is missing: UpgradeControlPlane needs a release version"),
        );
      return Promise.resolve(alreadyThere(ctx.cluster, target) ?? body(ctx, target));
    },
  };
}

/** UpgradeControlPlane: the control plane to the task's release, within the update graph. */
export function upgradeControlPlane(ops: ControlPlaneUpgrades): TaskDefinition {
  return {
    steps: [
      upgradeStep("CheckUpgradePath", (ctx, target) => checkUpgradePath(ops, ctx, target)),
      upgradeStep("AskForRelease", (ctx, target) => askForRelease(ops, ctx, target)),
      upgradeStep("AwaitControlPlane", (ctx, target) => awaitControlPlane(ctx, target)),
    ],
  };
}
