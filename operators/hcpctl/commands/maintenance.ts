/**
 * `hcpctl maintenance list|describe|run|pause|resume`: MaintenanceTasks (cluster-scoped, one task
 * over many clusters) and their MaintenanceRuns (one per cluster, in the cluster's namespace).
 * `run` creates a task; `pause` and `resume` set its spec.paused (no run is admitted while it is
 * true; a Running run finishes its current step and waits). The maintenance controller does the
 * rest; these commands only read and ask.
 */
import { randomBytes } from "node:crypto";
import {
  MAINTENANCE_LABELS,
  MAINTENANCE_RUN_PHASES,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  type MaintenanceRun,
  type MaintenanceRunPhase,
  type MaintenanceTask,
  type MaintenanceTaskSpec,
  type MaintenanceTaskType,
} from "../../api/v1alpha1/index.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { toJson, toYaml, withoutManagedFields } from "../output.ts";
import { runsTable, tasksTable } from "./maintenance-render.ts";
import {
  parseClusters,
  parseMaxPerManagementCluster,
  parseObjectName,
  parseRelease,
  parseTaskType,
  parseWindow,
  refusalOf,
} from "./maintenance-spec.ts";

export type DataFormat = "json" | "yaml";

export interface MaintenanceRunFlags {
  clusters?: string;
  selector?: string;
  release?: string;
  urgent: boolean;
  notBefore?: string;
  notAfter?: string;
  maxPerManagementCluster?: string;
  name?: string;
  output?: DataFormat;
}

export interface MaintenanceListFlags {
  task?: string;
  namespace?: string;
  allNamespaces: boolean;
  phase?: string;
  output?: DataFormat;
}

/** The flag that sets each field of a task's spec, to name it in the API server's refusals. */
export const TASK_FLAGS: Readonly<Record<string, string>> = {
  "metadata.name": "--name",
  "spec.task": "TYPE",
  "spec.release": "--release",
  "spec.clusters.names": "--clusters",
  "spec.clusters.selector": "--selector",
  "spec.clusters": "--clusters or --selector",
  "spec.notBefore": "--not-before",
  "spec.notAfter": "--not-after",
  "spec.maxConcurrentPerManagementCluster": "--max-per-management-cluster",
};

export function printData(io: Io, format: DataFormat, value: unknown): void {
  io.stdout.write(format === "json" ? toJson(value) : toYaml(value));
}

/** The release an UpgradeControlPlane task needs, and no other task takes. */
function releaseFor(task: MaintenanceTaskType, text: string | undefined): string | undefined {
  if (task === "UpgradeControlPlane" && text === undefined)
    throw new CliError(
      "--release is required for UpgradeControlPlane: the version to upgrade to, such as 4.19.10",
    );
  if (task !== "UpgradeControlPlane" && text !== undefined)
    throw new CliError(`--release is only for UpgradeControlPlane, not ${task}`);
  return text === undefined ? undefined : parseRelease(text);
}

function nameFor(flags: MaintenanceRunFlags, release: string | undefined, suffix: string): string {
  if (flags.name !== undefined) return parseObjectName(flags.name, "--name");
  return `${release ? `upgrade-${release.replaceAll(".", "-")}` : "rotate-signing-key"}-${suffix}`;
}

/** The task `hcpctl maintenance run TYPE …` asks for; every flag checked, nothing written. */
export function taskFromFlags(type: string, flags: MaintenanceRunFlags, suffix: string): MaintenanceTask {
  const task = parseTaskType(type, "task type");
  const clusters = parseClusters(flags);
  const release = releaseFor(task, flags.release);
  const max =
    flags.maxPerManagementCluster === undefined
      ? undefined
      : parseMaxPerManagementCluster(flags.maxPerManagementCluster);
  const name = nameFor(flags, release, suffix);
  const spec: MaintenanceTaskSpec = {
    task,
    ...(release ? { release: { version: release } } : {}),
    clusters,
    ...parseWindow(flags),
    urgency: flags.urgent ? "Urgent" : "Normal",
    ...(max === undefined ? {} : { maxConcurrentPerManagementCluster: max }),
  };
  return { apiVersion: "hcp.aro.dev/v1alpha1", kind: "MaintenanceTask", metadata: { name }, spec };
}

export async function runMaintenanceRun(
  io: Io,
  connect: Connect,
  args: { type: string; flags: MaintenanceRunFlags },
): Promise<void> {
  const task = taskFromFlags(args.type, args.flags, randomBytes(3).toString("hex"));
  const conn = connect();
  const name = task.metadata.name ?? "";
  let created: MaintenanceTask;
  try {
    created = await conn.client.create(MaintenanceTaskResource, task);
  } catch (err) {
    throw (
      refusalOf(err, `MaintenanceTask "${name}"`, TASK_FLAGS) ?? conn.explain(err, MaintenanceTaskResource)
    );
  }
  if (args.flags.output) return printData(io, args.flags.output, withoutManagedFields(created));
  io.stdout.write(`maintenancetask/${name} created; its runs: hcpctl maintenance list --task ${name} -A\n`);
}

export async function taskOf(conn: Connection, name: string): Promise<MaintenanceTask> {
  const task = await conn.get<MaintenanceTask>(MaintenanceTaskResource, name);
  if (!task) throw new CliError(`MaintenanceTask "${name}" not found`);
  return task;
}

/** The runs of one task (across namespaces), or of every task in `namespace` (undefined: all). */
export async function runsOf(
  conn: Connection,
  q: { task?: string; namespace: string | undefined },
): Promise<MaintenanceRun[]> {
  const labelSelector = q.task ? `${MAINTENANCE_LABELS.task}=${q.task}` : undefined;
  const list = await conn.list<MaintenanceRun>(MaintenanceRunResource, {
    namespace: q.namespace,
    labelSelector,
  });
  const key = (r: MaintenanceRun): string =>
    `${r.spec.task}/${r.metadata.namespace ?? ""}/${r.spec.clusterRef.name}`;
  return list.items.sort((a, b) => key(a).localeCompare(key(b)));
}

function resolveRunPhase(text: string): MaintenanceRunPhase {
  const found = MAINTENANCE_RUN_PHASES.find((p) => p.toLowerCase() === text.toLowerCase());
  if (!found)
    throw new CliError(
      `--phase "${text}" is not a run phase: expected one of ${MAINTENANCE_RUN_PHASES.join(", ")}`,
    );
  return found;
}

/** The run phase --phase names, after checking the other flags; nothing read yet. */
function checkListFlags(flags: MaintenanceListFlags): MaintenanceRunPhase | undefined {
  if (flags.allNamespaces && flags.namespace) throw new CliError("-A and -n cannot be given together");
  if (flags.task !== undefined) parseObjectName(flags.task, "--task");
  return flags.phase === undefined ? undefined : resolveRunPhase(flags.phase);
}

function printList(
  io: Io,
  shown: { tasks: MaintenanceTask[]; runs: MaintenanceRun[]; namespace: string | undefined },
  phase: MaintenanceRunPhase | undefined,
): void {
  const { tasks, runs, namespace } = shown;
  const now = io.now();
  if (tasks.length === 0) io.stderr.write("No MaintenanceTasks found\n");
  else io.stdout.write(tasksTable(tasks, now));
  if (runs.length === 0) {
    const where = namespace === undefined ? "" : ` in ${namespace} namespace`;
    io.stderr.write(`No MaintenanceRuns${phase ? ` ${phase}` : ""} found${where}.\n`);
    return;
  }
  if (tasks.length > 0) io.stdout.write("\n");
  io.stdout.write(runsTable(runs, now, { namespaceColumn: namespace === undefined, message: false }));
}

export async function runMaintenanceList(
  io: Io,
  connect: Connect,
  flags: MaintenanceListFlags,
): Promise<void> {
  const phase = checkListFlags(flags);
  const conn = connect();
  const namespace = flags.allNamespaces ? undefined : (flags.namespace ?? conn.namespace);
  const [tasks, runs] = await Promise.all([
    flags.task
      ? taskOf(conn, flags.task).then((t) => [t])
      : conn.list<MaintenanceTask>(MaintenanceTaskResource).then((l) => l.items),
    runsOf(conn, { ...(flags.task ? { task: flags.task } : {}), namespace }),
  ]);
  tasks.sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
  const shown = runs.filter((r) => phase === undefined || (r.status?.phase ?? "Pending") === phase);
  if (!flags.output) return printList(io, { tasks, runs: shown, namespace }, phase);
  const items = [...tasks, ...shown].map(withoutManagedFields);
  printData(io, flags.output, { apiVersion: "v1", kind: "List", metadata: { resourceVersion: "" }, items });
}

/** Sets spec.paused; says so when it already was. */
export async function runMaintenancePause(
  io: Io,
  connect: Connect,
  args: { name: string; paused: boolean },
): Promise<void> {
  parseObjectName(args.name, "TASK");
  const conn = connect();
  const task = await taskOf(conn, args.name);
  const verb = args.paused ? "paused" : "resumed";
  if ((task.spec.paused ?? false) === args.paused) {
    io.stdout.write(`maintenancetask/${args.name} already ${args.paused ? "paused" : "not paused"}\n`);
    return;
  }
  try {
    await conn.client.mergePatch(
      MaintenanceTaskResource,
      { name: args.name },
      { spec: { paused: args.paused } },
    );
  } catch (err) {
    throw (
      refusalOf(err, `MaintenanceTask "${args.name}"`, TASK_FLAGS) ??
      conn.explain(err, MaintenanceTaskResource)
    );
  }
  const then = args.paused
    ? "no run is admitted; a Running run finishes its current step and waits"
    : "its runs are admitted again";
  io.stdout.write(`maintenancetask/${args.name} ${verb}: ${then}\n`);
}
