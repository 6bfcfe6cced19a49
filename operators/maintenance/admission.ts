/**
 * Which runs may be Running at once: one per cluster, and at most the task's
 * maxConcurrentPerManagementCluster of one task per management cluster. The process is
 * leader-elected and JavaScript runs one reconcile's synchronous code at a time, so the decision
 * is atomic when the check and the record of the admission happen with no await between them.
 * Running runs come from the cache; an admission made here counts until the cache shows that run
 * Running (or finished, or gone), covering the time between the status write and its watch event.
 */
import { MAINTENANCE_CONCURRENCY, type MaintenanceRun } from "../api/v1alpha1/index.ts";
import type { Lister } from "../runtime/informer.ts";
import { objectKey } from "../runtime/informer.ts";
import { RUNNING_BY_MANAGEMENT_CLUSTER, RUNS_BY_CLUSTER, clusterKey, placementKey } from "./runs.ts";

export interface Admission {
  /** "namespace/cluster". */
  cluster: string;
  /** "task/managementCluster". */
  placement: string;
  managementCluster: string;
  /** When it was admitted; a repeated admission of the same run keeps it (the same status write). */
  startedAt: string;
}

export type AdmissionVerdict =
  | { admitted: true; admission: Admission }
  | { admitted: false; reason: "ClusterBusy" | "ManagementClusterBusy"; message: string };

export class Admissions {
  readonly #runs: Lister<MaintenanceRun>;
  /** By run key ("namespace/name"): admitted here, not yet seen Running in the cache. */
  readonly #pending = new Map<string, Admission>();

  constructor(runs: Lister<MaintenanceRun>) {
    this.#runs = runs;
  }

  /** Synchronous on purpose: see the file's comment. */
  admit(run: MaintenanceRun, managementCluster: string, now: Date): AdmissionVerdict {
    const key = objectKey(run);
    const earlier = this.#pending.get(key);
    if (earlier) return { admitted: true, admission: earlier };
    const cluster = clusterKey(run.metadata.namespace ?? "", run.spec.clusterRef.name);
    const placement = placementKey(run.spec.task, managementCluster);
    const onCluster = this.#running(RUNS_BY_CLUSTER, cluster, (a) => a.cluster === cluster, key);
    if (onCluster.length > 0)
      return {
        admitted: false,
        reason: "ClusterBusy",
        message: `Waiting for MaintenanceRun ${onCluster[0]} to finish: one run at a time per cluster`,
      };
    const limit = run.spec.maxConcurrentPerManagementCluster ?? MAINTENANCE_CONCURRENCY.default;
    const onPlacement = this.#running(
      RUNNING_BY_MANAGEMENT_CLUSTER,
      placement,
      (a) => a.placement === placement,
      key,
    );
    if (onPlacement.length >= limit)
      return {
        admitted: false,
        reason: "ManagementClusterBusy",
        message: `Waiting: ${onPlacement.length} run(s) of task ${run.spec.task} already running on management cluster ${managementCluster} (at most ${limit} at once)`,
      };
    const admission = { cluster, placement, managementCluster, startedAt: now.toISOString() };
    this.#pending.set(key, admission);
    return { admitted: true, admission };
  }

  /** The cache now shows the run as it is (Running, finished, or gone): its own record counts. */
  settle(run: MaintenanceRun | undefined, key: string): void {
    const phase = run?.status?.phase;
    if (!run || (phase !== undefined && phase !== "Pending" && phase !== "Waiting"))
      this.#pending.delete(key);
  }

  /** Keys of the Running runs (cached or admitted here) other than `self`. */
  #running(index: string, value: string, pendingMatch: (a: Admission) => boolean, self: string): string[] {
    const found = new Set<string>();
    for (const r of this.#runs.byIndex(index, value))
      if (r.status?.phase === "Running") found.add(objectKey(r));
    for (const [key, a] of this.#pending) if (pendingMatch(a)) found.add(key);
    found.delete(self);
    return [...found];
  }
}
