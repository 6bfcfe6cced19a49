/**
 * `hcpctl maintenance describe TASK` (the task, its conditions, each run with the step it is on
 * and what it says) and `hcpctl maintenance describe run NAME -n NS` (one run: its steps and
 * conditions). -o json|yaml gives the same as data: {task, runs} or the run.
 */
import {
  MaintenanceRunResource,
  type MaintenanceRun,
  type MaintenanceTask,
} from "../../api/v1alpha1/index.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import { withoutManagedFields } from "../output.ts";
import { printData, runsOf, taskOf, type DataFormat } from "./maintenance.ts";
import {
  clustersText,
  conditionsTable,
  countRuns,
  fields,
  indent,
  runsByPhase,
  runsTable,
  stepsTable,
} from "./maintenance-render.ts";
import { parseObjectName } from "./maintenance-spec.ts";

export interface MaintenanceDescribeFlags {
  namespace?: string;
  output?: DataFormat;
}

function describeTask(task: MaintenanceTask, runs: readonly MaintenanceRun[], now: number): string {
  const s = task.spec;
  const head = fields([
    ["Name", task.metadata.name],
    ["Task", s.task],
    ["Release", s.release?.version],
    ["Clusters", clustersText(s.clusters)],
    ["Urgency", s.urgency ?? "Normal"],
    ["Not before", s.notBefore],
    ["Not after", s.notAfter],
    ["Max per management cluster", s.maxConcurrentPerManagementCluster ?? 1],
    ["Paused", s.paused ?? false],
    ["Cancelled", s.cancelled ?? false],
    ["Matched clusters", task.status?.clusters ?? 0],
    ["Runs", runsByPhase(countRuns(runs))],
  ]);
  const conditions = `Conditions:\n${indent(conditionsTable(task.status?.conditions, now))}`;
  const runText =
    runs.length === 0
      ? "Runs: none yet\n"
      : `Runs:\n${indent(runsTable(runs, now, { namespaceColumn: true, message: true }))}`;
  return `${head}${conditions}${runText}`;
}

function describeRun(run: MaintenanceRun, now: number): string {
  const s = run.spec;
  const head = fields([
    ["Name", run.metadata.name],
    ["Namespace", run.metadata.namespace],
    ["Task", `${s.task} (${s.taskType}${s.release ? ` ${s.release.version}` : ""})`],
    ["Cluster", s.clusterRef.name],
    ["Phase", run.status?.phase ?? "Pending"],
    ["Management cluster", run.status?.managementCluster],
    ["Started", run.status?.startedAt],
    ["Completed", run.status?.completedAt],
  ]);
  const steps = `Steps:\n${indent(stepsTable(run, now))}`;
  return `${head}${steps}Conditions:\n${indent(conditionsTable(run.status?.conditions, now))}`;
}

/** Whether a run or a task is asked for, and its name; nothing read yet. */
function checkDescribe(args: { target: string; name?: string; flags: MaintenanceDescribeFlags }): {
  isRun: boolean;
  name: string;
} {
  const isRun = args.target === "run" && args.name !== undefined;
  if (!isRun && args.name !== undefined)
    throw new CliError(`describe takes TASK, or run NAME: "${args.target} ${args.name}" is neither`);
  if (!isRun && args.flags.namespace !== undefined)
    throw new CliError("-n is for a run (describe run NAME -n NS): a MaintenanceTask has no namespace");
  if (isRun) return { isRun, name: parseObjectName(args.name ?? "", "NAME") };
  return { isRun, name: parseObjectName(args.target, "TASK") };
}

export async function runMaintenanceDescribe(
  io: Io,
  connect: Connect,
  args: { target: string; name?: string; flags: MaintenanceDescribeFlags },
): Promise<void> {
  const { flags } = args;
  const { isRun, name } = checkDescribe(args);
  const conn = connect();
  const now = io.now();
  if (isRun) {
    const namespace = flags.namespace ?? conn.namespace;
    const run = await conn.get<MaintenanceRun>(MaintenanceRunResource, name, namespace);
    if (!run) throw new CliError(`MaintenanceRun "${name}" not found in namespace "${namespace}"`);
    if (flags.output) return printData(io, flags.output, withoutManagedFields(run));
    io.stdout.write(describeRun(run, now));
    return;
  }
  const [task, runs] = await Promise.all([
    taskOf(conn, name),
    runsOf(conn, { task: name, namespace: undefined }),
  ]);
  if (flags.output)
    return printData(io, flags.output, {
      task: withoutManagedFields(task),
      runs: runs.map(withoutManagedFields),
    });
  io.stdout.write(describeTask(task, runs, now));
}
