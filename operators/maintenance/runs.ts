/**
 * The runs of a task: which clusters a task names, the run's deterministic name, and the indexes
 * the actuator counts Running runs by.
 */
import { createHash } from "node:crypto";
import {
  API_VERSION,
  FINISHED_RUN_PHASES,
  MAINTENANCE_LABELS,
  MAINTENANCE_TASK_KIND,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
} from "../api/v1alpha1/index.ts";
import type { IndexFunc, Lister } from "../runtime/informer.ts";
import { matchesSelector } from "../hcp/label-selector.ts";

/** Runs by "namespace/cluster". */
export const RUNS_BY_CLUSTER = "maintenance-runs-by-cluster";
/** Running runs by "task/managementCluster". */
export const RUNNING_BY_MANAGEMENT_CLUSTER = "maintenance-running-by-management-cluster";
/** Runs by task name. */
export const RUNS_BY_TASK = "maintenance-runs-by-task";

export const clusterKey = (namespace: string, name: string): string => `${namespace}/${name}`;
export const placementKey = (task: string, managementCluster: string): string =>
  `${task}/${managementCluster}`;

export const RUN_INDEXERS: Record<string, IndexFunc<MaintenanceRun>> = {
  [RUNS_BY_CLUSTER]: (r: MaintenanceRun) => [clusterKey(r.metadata.namespace ?? "", r.spec.clusterRef.name)],
  [RUNNING_BY_MANAGEMENT_CLUSTER]: (r: MaintenanceRun) =>
    r.status?.phase === "Running" && r.status.managementCluster
      ? [placementKey(r.spec.task, r.status.managementCluster)]
      : [],
  [RUNS_BY_TASK]: (r: MaintenanceRun) => [r.spec.task],
};

export const isFinished = (run: MaintenanceRun): boolean =>
  FINISHED_RUN_PHASES.includes(run.status?.phase ?? "Pending");

/** The longest object name; a longer "task-cluster" is cut and given a hash of the whole. */
const MAX_NAME = 253;

/** The longest label value. */
const MAX_LABEL = 63;

/** `text`, or when longer than `max` a cut of it ending in a hash of the whole: the same every time. */
function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 16);
  return `${text.slice(0, max - hash.length - 1).replace(/[-._]+$/, "")}-${hash}`;
}

/** `<task>-<cluster>`, hashed when too long for a name. */
export function runName(task: string, cluster: string): string {
  return bounded(`${task}-${cluster}`, MAX_NAME);
}

/** The task's name as a label value (hashed when longer than a label value may be). */
export const taskLabel = (task: string): string => bounded(task, MAX_LABEL);

/** The clusters a task names that exist and are not being deleted. */
export function clustersOf(task: MaintenanceTask, clusters: Lister<HcpCluster>): HcpCluster[] {
  const { selector, names } = task.spec.clusters;
  const found = selector
    ? clusters.list().filter((c) => matchesSelector(c.metadata.labels, selector))
    : (names ?? []).flatMap((ref) => {
        const [namespace = "", name = ""] = ref.split("/");
        const c = clusters.get(namespace, name);
        return c ? [c] : [];
      });
  return found.filter((c) => !c.metadata.deletionTimestamp);
}

/** The run of `task` on `cluster`: owned by the task, labelled with both, its spec copied from the task. */
export function desiredRun(task: MaintenanceTask, cluster: HcpCluster): MaintenanceRun {
  const taskName = task.metadata.name ?? "";
  const clusterName = cluster.metadata.name ?? "";
  const { notBefore, notAfter, urgency, maxConcurrentPerManagementCluster, release } = task.spec;
  return {
    apiVersion: API_VERSION,
    kind: "MaintenanceRun",
    metadata: {
      name: runName(taskName, clusterName),
      namespace: cluster.metadata.namespace,
      labels: {
        [MAINTENANCE_LABELS.task]: taskLabel(taskName),
        [MAINTENANCE_LABELS.clusterName]: clusterName,
        [MAINTENANCE_LABELS.clusterNamespace]: cluster.metadata.namespace ?? "",
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: MAINTENANCE_TASK_KIND,
          name: taskName,
          uid: task.metadata.uid ?? "",
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      task: taskName,
      taskType: task.spec.task,
      clusterRef: { name: clusterName },
      ...(urgency === undefined ? {} : { urgency }),
      ...(notBefore === undefined ? {} : { notBefore }),
      ...(notAfter === undefined ? {} : { notAfter }),
      ...(maxConcurrentPerManagementCluster === undefined ? {} : { maxConcurrentPerManagementCluster }),
      ...(release === undefined ? {} : { release: { version: release.version } }),
    },
  };
}
