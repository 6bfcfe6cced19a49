/**
 * The command line: commander wiring only. Each command validates its arguments before it opens
 * a connection, so a typo is reported as a typo and not as a kubeconfig problem; every failure
 * ends as one "error: …" line on stderr and a non-zero exit code.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import {
  runBreakglassList,
  runBreakglassRequest,
  runBreakglassRevoke,
  type BreakglassListOptions,
  type BreakglassRequestOptions,
} from "./commands/breakglass.ts";
import { runDescribe, parseShowConditions, type DescribeOptions } from "./commands/describe.ts";
import { runGet, type GetOptions } from "./commands/get.ts";
import { addCluster } from "./commands/cluster-cli.ts";
import { addMaintenance } from "./commands/maintenance-cli.ts";
import { runMustGather, type MustGatherOptions } from "./commands/must-gather.ts";
import { addRegion } from "./commands/region.ts";
import { addRollout } from "./commands/rollout-cli.ts";
import { addSession } from "./commands/session-cli.ts";
import { runTrace, type TraceOptions } from "./commands/trace.ts";
import { runUpgradePlan, type UpgradePlanOptions } from "./commands/upgrade.ts";
import { addUsage } from "./commands/usage.ts";
import { runWait, type WaitOptions } from "./commands/wait.ts";
import { CliError } from "./errors.ts";
import type { Io } from "./io.ts";
import { Connection } from "./kube.ts";
import { parseOutput, type OutputFormat } from "./output.ts";
import { SHOW_NONE, type ShowConditions } from "./render-tree.ts";

interface GlobalOptions {
  kubeconfig?: string;
  context?: string;
}

/** An option value parser whose CliError commander reports as an invalid argument. */
function parser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (err) {
      throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
    }
  };
}

function parseBool(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new CliError(`expected true or false, got "${value}"`);
}

const namespaceOption = (): Option =>
  new Option("-n, --namespace <namespace>", "namespace (default: the context's, else default)");

function connector(cmd: Command): () => Connection {
  return () => new Connection(cmd.optsWithGlobals<GlobalOptions>());
}

function addGet(program: Command, io: Io): void {
  program
    .command("get")
    .description("list HcpClusters, NodePools, ExternalAuths or ManagementClusters")
    .argument(
      "<resource>",
      "clusters, nodepools, externalauths or managementclusters (or a short name: hcpc, np, ea, mc)",
    )
    .argument("[names...]", "only these objects")
    .addOption(namespaceOption())
    .option("-A, --all-namespaces", "across all namespaces", false)
    .option("-l, --selector <selector>", "label selector, e.g. env=prod,tier!=dev")
    .option("--management-cluster <name>", "only objects placed on this management cluster")
    .option("--phase <phase>", "only objects in this phase")
    .option(
      "--stale",
      "only objects whose status lags what was asked (a generation not observed, sent or applied)",
      false,
    )
    .addOption(
      new Option("-o, --output <format>", "wide, json, yaml or name")
        .argParser(parser((v) => parseOutput(v, ["wide", "json", "yaml", "name"])))
        .default("table" satisfies OutputFormat),
    )
    .action(async (resource: string, names: string[], opts: GetOptions, cmd: Command) => {
      await runGet(io, connector(cmd), { resource, names, opts });
    });
}

interface DescribeFlags {
  namespace?: string;
  output?: "json" | "yaml";
  showConditions: ShowConditions;
  grouping: boolean;
  watch: boolean;
  from?: string;
}

function addDescribe(program: Command, io: Io): void {
  program
    .command("describe")
    .description(
      "the tree of one HcpCluster: node pools, external auths, management cluster, works, HostedCluster, Azure",
    )
    .argument("<resource>", "cluster")
    .argument("<name>", "the HcpCluster")
    .addOption(namespaceOption())
    .addOption(
      new Option("-o, --output <format>", "json or yaml: the tree as data").argParser(
        parser((v) => parseOutput(v, ["json", "yaml"])),
      ),
    )
    .addOption(
      new Option(
        "--show-conditions <kinds>",
        "expand conditions: all, or kinds such as HcpCluster,ManifestWork",
      )
        .argParser(parser(parseShowConditions))
        .default(SHOW_NONE, "none"),
    )
    .addOption(
      new Option("--grouping [bool]", "group siblings in the same state")
        .argParser(parser(parseBool))
        .preset(true)
        .default(true),
    )
    .option("-w, --watch", "draw again whenever an object of the tree changes", false)
    .option("--from <dir>", "draw the tree from a must-gather directory, as of its gathering")
    .action(async (resource: string, name: string, flags: DescribeFlags, cmd: Command) => {
      const opts: DescribeOptions = flags;
      await runDescribe(io, connector(cmd), { resource, name, opts });
    });
}

function addWait(program: Command, io: Io): void {
  program
    .command("wait")
    .description("wait until a condition holds or the object is gone, as kubectl wait does")
    .argument("<resource>", "cluster, nodepool or managementcluster")
    .argument("<name>", "the object")
    .addOption(namespaceOption())
    .requiredOption("--for <condition>", "condition=TYPE[=STATUS] (STATUS defaults to True) or delete")
    .option("--timeout <duration>", "give up after this long (0: check once)", "30s")
    .action(async (resource: string, name: string, opts: WaitOptions, cmd: Command) => {
      await runWait(io, connector(cmd), { resource, name, opts });
    });
}

function addMustGather(program: Command, io: Io): void {
  program
    .command("must-gather")
    .description(
      "write one cluster's service-cluster objects, works and events to a directory, secrets redacted",
    )
    .argument("<cluster>", "the HcpCluster")
    .addOption(namespaceOption())
    .requiredOption("-o, --output <dir>", "the directory to write (new or empty)")
    .option("--force", "write into a directory that is not empty", false)
    .action(async (name: string, opts: MustGatherOptions, cmd: Command) => {
      await runMustGather(io, connector(cmd), { name, opts });
    });
}

function addTrace(program: Command, io: Io): void {
  program
    .command("trace")
    .description("every hop one ARM request took, from the frontend's operation to its result")
    .argument("<id>", "the request's correlation id (x-ms-correlation-request-id) or client request id")
    .addOption(
      new Option("-o, --output <format>", "json or yaml: the hops as data").argParser(
        parser((v) => parseOutput(v, ["json", "yaml"])),
      ),
    )
    .action(async (id: string, opts: TraceOptions, cmd: Command) => {
      await runTrace(io, connector(cmd), { id, opts });
    });
}

function addBreakglass(program: Command, io: Io): void {
  const bg = program
    .command("breakglass")
    .description("break-glass (admin) credentials of an HcpCluster: request, list, revoke");
  bg.command("request")
    .description("request a temporary admin client certificate; its kubeconfig lands in a Secret")
    .argument("<cluster>", "the HcpCluster")
    .addOption(namespaceOption())
    .requiredOption("--requester <who>", "who asks (audit)")
    .requiredOption("--reason <why>", "why (audit)")
    .option("--ttl <duration>", "how long the certificate is valid, 10m to 24h", "24h")
    .action(async (cluster: string, opts: BreakglassRequestOptions, cmd: Command) => {
      await runBreakglassRequest(io, connector(cmd), { cluster, opts });
    });
  bg.command("list")
    .description("the credentials and revocations, and where each stands")
    .argument("[cluster]", "only this HcpCluster's")
    .addOption(namespaceOption())
    .action(async (cluster: string | undefined, opts: BreakglassListOptions, cmd: Command) => {
      await runBreakglassList(io, connector(cmd), { ...(cluster ? { cluster } : {}), opts });
    });
  bg.command("revoke")
    .description("revoke every credential of the cluster issued so far")
    .argument("<cluster>", "the HcpCluster")
    .addOption(namespaceOption())
    .requiredOption("--requester <who>", "who asks (audit)")
    .requiredOption("--reason <why>", "why (audit)")
    .action(async (cluster: string, opts: Omit<BreakglassRequestOptions, "ttl">, cmd: Command) => {
      await runBreakglassRevoke(io, connector(cmd), { cluster, opts });
    });
}

function addUpgrade(program: Command, io: Io): void {
  const upgrade = program
    .command("upgrade")
    .description("an HcpCluster's upgrades on the region's update graph");
  upgrade
    .command("plan")
    .description(
      "the path an upgrade takes (each hop), the node pools that roll or must go first, and what holds it; exit 1 when refused",
    )
    .argument("<cluster>", "the HcpCluster")
    .addOption(namespaceOption())
    .option(
      "--to <version>",
      "the version to plan for, 4.20 or 4.20.2 (default: the cluster's spec.version.id)",
    )
    .option("--channel-group <group>", "plan in this channel group (default: the cluster's)")
    .option("--catalog-namespace <namespace>", "where the release catalog ConfigMap lives", "hcp-system")
    .addOption(
      new Option("-o, --output <format>", "json or yaml: the plan as data").argParser(
        parser((v) => parseOutput(v, ["json", "yaml"])),
      ),
    )
    .action(async (cluster: string, opts: UpgradePlanOptions, cmd: Command) => {
      await runUpgradePlan(io, connector(cmd), { name: cluster, opts });
    });
}

export function buildProgram(io: Io, name: string): Command {
  const program = new Command(name)
    .description(
      "SRE tool for the hosted-control-plane region: reads the service cluster; writes only break-glass requests, maintenance tasks and rollouts (and their pause, resume and abort), a cluster's restore from one of its backups, a soft-deleted cluster's undelete, and a region restore into an empty one",
    )
    .option("--kubeconfig <path>", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
    .option("--context <name>", "kubeconfig context (default: the current one)")
    .exitOverride()
    .showHelpAfterError(`(run ${name} --help for usage)`)
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
    });
  addGet(program, io);
  addDescribe(program, io);
  addWait(program, io);
  addTrace(program, io);
  addMustGather(program, io);
  addBreakglass(program, io);
  addUpgrade(program, io);
  addMaintenance(program, io);
  addRollout(program, io);
  addSession(program, io);
  addRegion(program, io);
  addCluster(program, io);
  addUsage(program, io);
  return program;
}

/** Runs one command line; resolves to the exit code. */
export async function run(argv: readonly string[], io: Io, name = "hcpctl"): Promise<number> {
  try {
    await buildProgram(io, name).parseAsync([...argv], { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`error: ${message}\n`);
    return err instanceof CliError ? err.exitCode : 1;
  }
}
