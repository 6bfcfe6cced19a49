/**
 * Reconciles one NodePool: finalizer, then the phases in order (its cluster is placed and has a
 * HostedCluster, the version resolves and respects the control plane's, the work is applied), the
 * nodes observed through feedback, and one status write. Deletion removes the pool's work and
 * waits for the agent to confirm before the finalizer goes.
 */
import type { HcpCluster, ManagementCluster, NodePool } from "../api/v1alpha1/index.ts";
import { NodePoolResource } from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import {
  clusterNames,
  feedbackOf,
  type ClusterNames,
  type RegionSettings,
} from "../cluster/hostedcluster.ts";
import { requestLog } from "../cluster/reconcile.ts";
import type { StepState } from "../cluster/status.ts";
import { compareVersions, type Release, type Resolution } from "../releases/catalog.ts";
import type { Applier } from "../runtime/apply.ts";
import type { Condition } from "../runtime/conditions.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Informer } from "../runtime/informer.ts";
import type { Logger } from "../runtime/logger.ts";
import { nodePoolWork, POOL_FEEDBACK, poolNames } from "./nodepool.ts";
import {
  composePoolStatus,
  POOL_CONDITIONS,
  type PoolFacts,
  type PoolReport,
  type PoolStep,
} from "./status.ts";

export const NODE_POOL_FINALIZER = "hcp.aro.dev/nodepool";
export const NODE_POOL_UID_INDEX = "nodepool-uid";

export interface NodePoolReconcilerDeps {
  pools: Informer<NodePool>;
  clusters: Informer<HcpCluster>;
  managementClusters: Informer<ManagementCluster>;
  /** Node pool works, indexed by NODE_POOL_UID_INDEX. */
  works: Informer<ManifestWork>;
  releases: () => { resolve(spec: NodePool["spec"]["version"] & object): Resolution };
  region: RegionSettings;
  applier: Applier;
  events: EventRecorder;
}

interface Scope {
  pool: NodePool;
  /** Set by applyWork when it wrote the work in this reconcile (the informer lags behind). */
  appliedWork?: ManifestWork;
  log: Logger;
  facts: PoolFacts;
  cluster?: HcpCluster;
  names?: ClusterNames;
  consumer?: string;
  release?: Release;
}

type Phase = (scope: Scope) => boolean | Promise<boolean>;

export class NodePoolReconciler implements Reconciler {
  readonly #d: NodePoolReconcilerDeps;

  constructor(deps: NodePoolReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const pool = this.#d.pools.get(req.namespace, req.name);
    if (!pool?.metadata.uid) return {};
    const scope: Scope = { pool, log: requestLog(ctx, pool), facts: { pool, steps: {} } };
    if (pool.metadata.deletionTimestamp) return this.#reconcileDelete(scope);
    if (await this.#d.applier.addFinalizer(NodePoolResource, pool, NODE_POOL_FINALIZER)) return {};
    try {
      const phases: Phase[] = [
        (s) => this.#findCluster(s),
        (s) => this.#resolveRelease(s),
        (s) => this.#applyWork(s),
      ];
      for (const phase of phases) if (!(await phase(scope))) break;
      this.#observe(scope);
    } finally {
      await this.#writeStatus(scope);
    }
    return {};
  }

  #work(pool: NodePool): ManifestWork | undefined {
    return this.#d.works.byIndex(NODE_POOL_UID_INDEX, pool.metadata.uid ?? "")[0];
  }

  #step(scope: Scope, type: PoolStep, step: StepState): boolean {
    scope.facts.steps[type] = step;
    return step.state === "ready";
  }

  /** The pool's cluster must exist, be placed and have its HostedCluster applied. */
  #findCluster(scope: Scope): boolean {
    const { pool } = scope;
    const ref = pool.spec.clusterRef.name;
    const cluster = this.#d.clusters.get(pool.metadata.namespace ?? "", ref);
    if (!cluster)
      return this.#step(scope, POOL_CONDITIONS.ClusterReady, {
        state: "failed",
        reason: "ClusterNotFound",
        message: `HcpCluster ${ref} does not exist in namespace ${pool.metadata.namespace ?? ""}`,
        userActionRequired: true,
      });
    if (cluster.metadata.deletionTimestamp)
      return this.#step(scope, POOL_CONDITIONS.ClusterReady, {
        state: "pending",
        reason: "ClusterDeleting",
        message: `HcpCluster ${ref} is being deleted`,
      });
    scope.cluster = cluster;
    scope.names = clusterNames(cluster, this.#d.region);
    const mc = this.#d.managementClusters
      .list()
      .find((m) => m.metadata.name === cluster.status?.managementCluster);
    const hostedApplied =
      cluster.status?.conditions?.find((c) => c.type === "HostedClusterApplied")?.status === "True";
    if (!mc || !hostedApplied)
      return this.#step(scope, POOL_CONDITIONS.ClusterReady, {
        state: "pending",
        reason: "WaitingForCluster",
        message: `Waiting for HcpCluster ${ref} to be placed and its HostedCluster applied`,
      });
    scope.consumer = mc.spec.consumerName;
    return this.#step(scope, POOL_CONDITIONS.ClusterReady, {
      state: "ready",
      reason: "ClusterReady",
      message: `HostedCluster ${scope.names.hostedClusterNamespace}/${scope.names.hostedClusterName} on ${mc.metadata.name ?? ""}`,
    });
  }

  /** The pool follows the cluster's version unless it names its own; never backwards, never ahead. */
  #resolveRelease(scope: Scope): boolean {
    const { pool, cluster } = scope;
    if (!cluster) return false;
    const spec = pool.spec.version ?? cluster.spec.version;
    const resolution = this.#d.releases().resolve(spec);
    if (!resolution.ok)
      return this.#step(scope, POOL_CONDITIONS.ValidVersion, {
        state: "failed",
        reason: resolution.reason,
        message: resolution.message,
        userActionRequired: resolution.reason === "UnknownVersion",
      });
    const wanted = resolution.release.version;
    const running = pool.status?.version;
    if (running && compareVersions(wanted, running) < 0)
      return this.#step(scope, POOL_CONDITIONS.ValidVersion, {
        state: "failed",
        reason: "DowngradeRefused",
        message: `version ${spec.id} resolves to ${wanted}, older than the nodes' ${running}; OpenShift does not downgrade`,
        userActionRequired: true,
      });
    const controlPlane = cluster.status?.version;
    if (controlPlane && compareVersions(wanted, controlPlane) > 0)
      return this.#step(scope, POOL_CONDITIONS.ValidVersion, {
        state: "pending",
        reason: "WaitingForControlPlane",
        message: `The nodes move to ${wanted} once the control plane runs it (now ${controlPlane})`,
      });
    scope.release = resolution.release;
    if (running && running !== wanted) scope.facts.updatingTo = wanted;
    return this.#step(scope, POOL_CONDITIONS.ValidVersion, {
      state: "ready",
      reason: "VersionResolved",
      message: `${spec.id} resolves to ${wanted}`,
    });
  }

  async #applyWork(scope: Scope): Promise<boolean> {
    const { pool, cluster, names, release, consumer } = scope;
    if (!cluster || !names || !release || !consumer) return false;
    const desired = nodePoolWork(pool, cluster, names, release, consumer);
    const current = this.#work(pool);
    if (cluster.spec.paused && current) return true;
    scope.appliedWork = await this.#d.applier.applyIfChanged<ManifestWork>(
      ManifestWorkResource,
      desired,
      current,
    );
    if (scope.appliedWork) {
      scope.log.info("Applied the NodePool ManifestWork", {
        work: `${consumer}/${desired.metadata.name ?? ""}`,
      });
      if (!current)
        await this.#d.events.event(
          pool,
          "Normal",
          "NodePoolCreated",
          `ManifestWork ${consumer}/${desired.metadata.name ?? ""} created`,
        );
    }
    return true;
  }

  #observe(scope: Scope): void {
    const { pool, names } = scope;
    const work = scope.appliedWork ?? this.#work(pool);
    if (!work || !names) return;
    const applied = work.status?.conditions?.find((c) => c.type === "Applied");
    this.#step(
      scope,
      POOL_CONDITIONS.NodePoolApplied,
      applied?.status === "True" && applied.observedGeneration === work.metadata.generation
        ? { state: "ready", reason: "Applied", message: `Applied on ${work.metadata.namespace ?? ""}` }
        : {
            state: "pending",
            reason: "WaitingForAgent",
            message: `Waiting for the agent of ${work.metadata.namespace ?? ""}`,
          },
    );
    const report = poolReport(
      feedbackOf(work, { kind: "NodePool", name: poolNames(pool, names).hyperShiftName }),
    );
    scope.facts.report = report;
    const ready = report.conditions.find((c) => c.type === "Ready");
    const want = pool.spec.autoScaling?.min ?? pool.spec.replicas ?? 0;
    this.#step(
      scope,
      POOL_CONDITIONS.NodesReady,
      ready?.status === "True" && (report.replicas ?? 0) >= want
        ? { state: "ready", reason: "AsExpected", message: `${report.replicas ?? 0} node(s) ready` }
        : ready?.status === "False" && ready.reason && !isProgressReason(ready.reason)
          ? {
              state: "failed",
              reason: `NodePool${ready.reason}`,
              message: ready.message ?? "",
              userActionRequired: true,
            }
          : {
              state: "pending",
              reason: "WaitingForNodes",
              message: `${report.replicas ?? 0} of ${want} node(s) ready`,
            },
    );
    if (report.version && scope.release && report.version !== scope.release.version)
      scope.facts.updatingTo = scope.release.version;
  }

  async #reconcileDelete(scope: Scope): Promise<Result> {
    const { pool } = scope;
    if (!pool.metadata.finalizers?.includes(NODE_POOL_FINALIZER)) return {};
    const work = this.#work(pool);
    if (work) {
      if (!work.metadata.deletionTimestamp) {
        const ref = { name: work.metadata.name ?? "", namespace: work.metadata.namespace };
        await this.#d.applier.client.delete(ManifestWorkResource, ref);
        this.#d.applier.forget(ManifestWorkResource, ref);
      }
      scope.facts.deleting = {
        reason: "DeletingNodePool",
        message: `Waiting for the agent of ${work.metadata.namespace ?? ""} to confirm the NodePool is deleted`,
      };
      await this.#writeStatus(scope);
      return {};
    }
    await this.#d.applier.removeFinalizer(NodePoolResource, pool, NODE_POOL_FINALIZER);
    return {};
  }

  async #writeStatus(scope: Scope): Promise<void> {
    const { pool } = scope;
    const status = composePoolStatus(scope.facts);
    const written = await this.#d.applier.applyStatus(NodePoolResource, pool, status);
    if (written) await this.#recordTransitions(pool, pool.status?.conditions ?? [], status.conditions ?? []);
  }

  async #recordTransitions(pool: NodePool, before: Condition[], after: Condition[]): Promise<void> {
    for (const c of after) {
      if (c.type !== POOL_CONDITIONS.Ready && c.type !== POOL_CONDITIONS.Degraded) continue;
      const old = before.find((b) => b.type === c.type);
      if (old ? old.status === c.status && old.reason === c.reason : c.status !== "True") continue;
      const degraded = c.type === POOL_CONDITIONS.Degraded && c.status === "True";
      await this.#d.events.event(
        pool,
        degraded ? "Warning" : "Normal",
        c.status === "True" ? c.type : c.reason,
        c.message,
      );
    }
  }
}

export function poolReport(fb: Record<string, unknown>): PoolReport {
  const ready = fb[POOL_FEEDBACK.ready] as PoolReport["conditions"][number] | undefined;
  const conditions = ready && typeof ready.type === "string" ? [ready] : [];
  const replicas = fb[POOL_FEEDBACK.replicas];
  const version = fb[POOL_FEEDBACK.version];
  return {
    conditions,
    replicas: typeof replicas === "number" ? replicas : undefined,
    version: typeof version === "string" && version ? version : undefined,
  };
}

/**
 * Reasons HyperShift and CAPI give a NodePool that is getting there (WaitingForAvailable,
 * WaitingForAvailableMachines, WaitingForNodeRef, scaling, updating); any other reason for
 * Ready=False is a failure someone must look at.
 */
export function isProgressReason(reason: string): boolean {
  return /^(WaitingFor|Scaling|Updating|AsExpected)/.test(reason);
}
