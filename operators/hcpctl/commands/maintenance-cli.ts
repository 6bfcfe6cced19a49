/**
 * Commander wiring of `hcpctl maintenance …`, and the small option helpers it shares with
 * `hcpctl rollout …` (cli.ts keeps its own for the older commands).
 */
import { InvalidArgumentError, Option, type Command } from "commander";
import type { Io } from "../io.ts";
import { Connection } from "../kube.ts";
import { parseOutput } from "../output.ts";
import {
  runMaintenanceList,
  runMaintenancePause,
  runMaintenanceRun,
  type DataFormat,
  type MaintenanceListFlags,
  type MaintenanceRunFlags,
} from "./maintenance.ts";
import { runMaintenanceDescribe, type MaintenanceDescribeFlags } from "./maintenance-describe.ts";

/** An option value parser whose errors commander reports as an invalid argument. */
export function optionParser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (err) {
      throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
    }
  };
}

/** Opens the connection the global --kubeconfig and --context name, once the arguments are good. */
export function connectorOf(cmd: Command): () => Connection {
  return () => new Connection(cmd.optsWithGlobals<{ kubeconfig?: string; context?: string }>());
}

/** -o json|yaml: the objects as data instead of text. */
export const dataOutputOption = (what: string): Option =>
  new Option("-o, --output <format>", `json or yaml: ${what} as data`).argParser(
    optionParser((v) => parseOutput(v, ["json", "yaml"]) as DataFormat),
  );

export function addMaintenance(program: Command, io: Io): void {
  const mt = program
    .command("maintenance")
    .description("MaintenanceTasks and their runs (one per cluster): list, describe, run, pause, resume");
  mt.command("list")
    .description(
      "the tasks with their runs by phase, then the runs: cluster, task, phase, step, attempts, age",
    )
    .option("--task <task>", "only this task's runs")
    .option("-n, --namespace <namespace>", "runs in this namespace (default: the context's, else default)")
    .option("-A, --all-namespaces", "runs in every namespace", false)
    .option("--phase <phase>", "only runs in this phase (Pending, Waiting, Running, Succeeded, Failed, …)")
    .addOption(dataOutputOption("the tasks and runs, a v1 List"))
    .action(async (flags: MaintenanceListFlags) => {
      await runMaintenanceList(io, connectorOf(mt), flags);
    });
  mt.command("describe")
    .description("a task: its spec, conditions and each run's step and message; or `describe run NAME -n NS`")
    .argument("<task>", "the MaintenanceTask, or the word run")
    .argument("[name]", "with run: the MaintenanceRun")
    .option("-n, --namespace <namespace>", "with run: the run's namespace (default: the context's)")
    .addOption(dataOutputOption("{task, runs} or the run"))
    .action(async (target: string, name: string | undefined, flags: MaintenanceDescribeFlags) => {
      await runMaintenanceDescribe(io, connectorOf(mt), { target, ...(name ? { name } : {}), flags });
    });
  mt.command("run")
    .description("create a MaintenanceTask: TYPE over the clusters named or selected")
    .argument("<type>", "RotateServiceAccountSigningKey, UpgradeControlPlane or RefreshWorkTemplate")
    .option("--clusters <list>", "HcpClusters as namespace/name, comma-separated")
    .option("--selector <labels>", "HcpClusters in every namespace with these labels, k=v,k2=v2")
    .option("--release <version>", "UpgradeControlPlane: the release, such as 4.19.10")
    .option("--urgent", "do not wait for the clusters' maintenance windows and freezes", false)
    .option("--not-before <time>", "RFC 3339: no run begins before it")
    .option("--not-after <time>", "RFC 3339: a run not begun by then is TimedOut")
    .option(
      "--max-per-management-cluster <n>",
      "runs of the task at once on one management cluster (default 1)",
    )
    .option("--name <name>", "the task's name (default: the type and a random suffix)")
    .addOption(dataOutputOption("the created task"))
    .action(async (type: string, flags: MaintenanceRunFlags) => {
      await runMaintenanceRun(io, connectorOf(mt), { type, flags });
    });
  for (const [verb, paused] of [
    ["pause", true],
    ["resume", false],
  ] as const)
    mt.command(verb)
      .description(
        paused
          ? "set spec.paused: no run is admitted; a Running run finishes its current step and waits"
          : "clear spec.paused: runs are admitted again",
      )
      .argument("<task>", "the MaintenanceTask")
      .action(async (name: string) => {
        await runMaintenancePause(io, connectorOf(mt), { name, paused });
      });
}
