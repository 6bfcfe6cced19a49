/**
 * `hcpctl rollout start|pause|resume|abort`: a Rollout rolls a release (or a maintenance task)
 * over many clusters in waves, each wave a MaintenanceTask the rollout controller makes. These
 * commands create the Rollout and set its spec.paused, spec.proceedPastWave and spec.abort; the
 * controller does the rest. `resume` of a rollout that paused itself (a wave over its failure
 * budget) accepts that wave's failures, and says so.
 */
import {
  MAINTENANCE_CONCURRENCY,
  ROLLOUT_WAVES,
  RolloutResource,
  type Rollout,
  type RolloutSpec,
} from "../../api/v1alpha1/index.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { withoutManagedFields } from "../output.ts";
import { printData, type DataFormat } from "./maintenance.ts";
import {
  parseClusters,
  parseCount,
  parseObjectName,
  parseRelease,
  parseTaskType,
  refusalOf,
} from "./maintenance-spec.ts";

export interface RolloutStartFlags {
  release?: string;
  task?: string;
  clusters?: string;
  selector?: string;
  canary?: string;
  growth?: string;
  maxWave?: string;
  failureBudget?: string;
  maxPerManagementCluster?: string;
  urgent: boolean;
  output?: DataFormat;
}

/** The flag that sets each field of a rollout's spec, to name it in the API server's refusals. */
export const ROLLOUT_FLAGS: Readonly<Record<string, string>> = {
  "metadata.name": "NAME",
  spec: "--release or --task",
  "spec.release": "--release",
  "spec.task": "--task",
  "spec.clusters.names": "--clusters",
  "spec.clusters.selector": "--selector",
  "spec.clusters": "--clusters or --selector",
  "spec.waves.canary": "--canary",
  "spec.waves.growth": "--growth",
  "spec.waves.maxSize": "--max-wave",
  "spec.failureBudget.maxFailedPerWave": "--failure-budget",
  "spec.maxConcurrentPerManagementCluster": "--max-per-management-cluster",
};

const WAVE_SIZE = { min: 1, max: ROLLOUT_WAVES.maxWaveSize };

/** Exactly one of --release and --task; UpgradeControlPlane is rolled out by its release. */
function whatToRoll(flags: RolloutStartFlags): Pick<RolloutSpec, "release" | "task"> {
  if (flags.release !== undefined && flags.task !== undefined)
    throw new CliError("--release and --task cannot be given together: a rollout rolls one thing");
  if (flags.release !== undefined) return { release: { version: parseRelease(flags.release) } };
  if (flags.task === undefined)
    throw new CliError("say what to roll out: --release VERSION (an upgrade) or --task TYPE");
  const task = parseTaskType(flags.task, "--task");
  if (task === "UpgradeControlPlane")
    throw new CliError("--task UpgradeControlPlane is rolled out with --release VERSION instead");
  return { task };
}

const count = (text: string | undefined, flag: string, bounds: { min: number; max: number }) =>
  text === undefined ? undefined : parseCount(text, flag, bounds);

function wavesOf(flags: RolloutStartFlags): RolloutSpec["waves"] {
  const canary = count(flags.canary, "--canary", WAVE_SIZE);
  const growth = count(flags.growth, "--growth", { min: 1, max: ROLLOUT_WAVES.maxGrowth });
  const maxSize = count(flags.maxWave, "--max-wave", WAVE_SIZE);
  if (maxSize !== undefined && maxSize < (canary ?? ROLLOUT_WAVES.canaryDefault))
    throw new CliError(
      `--max-wave (${maxSize}) must be at least --canary (${canary ?? ROLLOUT_WAVES.canaryDefault})`,
    );
  return {
    ...(canary === undefined ? {} : { canary }),
    ...(growth === undefined ? {} : { growth }),
    ...(maxSize === undefined ? {} : { maxSize }),
  };
}

/** The Rollout `hcpctl rollout start NAME …` asks for; every flag checked, nothing written. */
export function rolloutFromFlags(name: string, flags: RolloutStartFlags): Rollout {
  if (name.length > 63) throw new CliError(`NAME must be at most 63 characters (it labels the wave tasks)`);
  parseObjectName(name, "NAME");
  const what = whatToRoll(flags);
  const clusters = parseClusters(flags);
  const budget = count(flags.failureBudget, "--failure-budget", { min: 0, max: 1000 });
  const max = count(flags.maxPerManagementCluster, "--max-per-management-cluster", MAINTENANCE_CONCURRENCY);
  const spec: RolloutSpec = {
    ...what,
    clusters,
    waves: wavesOf(flags),
    ...(budget === undefined ? {} : { failureBudget: { maxFailedPerWave: budget } }),
    ...(max === undefined ? {} : { maxConcurrentPerManagementCluster: max }),
    urgency: flags.urgent ? "Urgent" : "Normal",
  };
  return { apiVersion: "hcp.aro.dev/v1alpha1", kind: "Rollout", metadata: { name }, spec };
}

export async function runRolloutStart(
  io: Io,
  connect: Connect,
  args: { name: string; flags: RolloutStartFlags },
): Promise<void> {
  const rollout = rolloutFromFlags(args.name, args.flags);
  const conn = connect();
  let created: Rollout;
  try {
    created = await conn.client.create(RolloutResource, rollout);
  } catch (err) {
    throw refusalOf(err, `Rollout "${args.name}"`, ROLLOUT_FLAGS) ?? conn.explain(err, RolloutResource);
  }
  if (args.flags.output) return printData(io, args.flags.output, withoutManagedFields(created));
  io.stdout.write(`rollout/${args.name} started; follow it: hcpctl rollout status ${args.name}\n`);
}

export async function rolloutOf(conn: Connection, name: string): Promise<Rollout> {
  parseObjectName(name, "NAME");
  const rollout = await conn.get<Rollout>(RolloutResource, name);
  if (!rollout) throw new CliError(`Rollout "${name}" not found`);
  return rollout;
}

async function patchSpec(conn: Connection, name: string, spec: Partial<RolloutSpec>): Promise<void> {
  try {
    await conn.client.mergePatch(RolloutResource, { name }, { spec });
  } catch (err) {
    throw refusalOf(err, `Rollout "${name}"`, ROLLOUT_FLAGS) ?? conn.explain(err, RolloutResource);
  }
}

const finished = (r: Rollout): string | undefined =>
  r.spec.abort ? "aborted" : r.status?.phase === "Succeeded" ? "succeeded" : undefined;

export async function runRolloutPause(io: Io, connect: Connect, args: { name: string }): Promise<void> {
  const conn = connect();
  const rollout = await rolloutOf(conn, args.name);
  const done = finished(rollout);
  if (done) throw new CliError(`rollout/${args.name} has ${done}: there is nothing to pause`);
  if (rollout.spec.paused) {
    io.stdout.write(`rollout/${args.name} already paused\n`);
    return;
  }
  await patchSpec(conn, args.name, { paused: true });
  io.stdout.write(
    `rollout/${args.name} paused: no run of the current wave is admitted and no next wave starts (Running runs finish their current step)\n`,
  );
}

/** The wave the rollout halted itself at, over its failure budget, if any. */
const haltedWave = (r: Rollout): number | undefined =>
  r.status?.waves?.find((w) => w.state === "FailureBudgetExceeded")?.index;

/** The wave whose failures `resume` accepts: the one the rollout halted at, unless already accepted. */
function waveToAccept(r: Rollout): number | undefined {
  const halted = haltedWave(r);
  return halted !== undefined && halted > (r.spec.proceedPastWave ?? 0) ? halted : undefined;
}

function acceptedText(r: Rollout, wave: number | undefined): string {
  if (wave === undefined) return "";
  const failed = r.status?.waves?.find((w) => w.index === wave)?.failedClusters ?? [];
  const which = failed.length > 0 ? ` (${failed.join(", ")})` : "";
  return `; it had paused itself over wave ${wave}'s failure budget: spec.proceedPastWave is now ${wave}, so wave ${wave}'s failures${which} are accepted and the next wave may start`;
}

export async function runRolloutResume(io: Io, connect: Connect, args: { name: string }): Promise<void> {
  const conn = connect();
  const rollout = await rolloutOf(conn, args.name);
  const done = finished(rollout);
  if (done) throw new CliError(`rollout/${args.name} has ${done}: there is nothing to resume`);
  const proceed = waveToAccept(rollout);
  const paused = rollout.spec.paused === true;
  if (!paused && proceed === undefined) {
    io.stdout.write(`rollout/${args.name} is not paused\n`);
    return;
  }
  await patchSpec(conn, args.name, {
    ...(paused ? { paused: false } : {}),
    ...(proceed === undefined ? {} : { proceedPastWave: proceed }),
  });
  io.stdout.write(`rollout/${args.name} resumed${acceptedText(rollout, proceed)}\n`);
}

export async function runRolloutAbort(
  io: Io,
  connect: Connect,
  args: { name: string; yes: boolean },
): Promise<void> {
  const conn = connect();
  const rollout = await rolloutOf(conn, args.name);
  if (rollout.spec.abort) {
    io.stdout.write(`rollout/${args.name} already aborted\n`);
    return;
  }
  if (rollout.status?.phase === "Succeeded")
    throw new CliError(`rollout/${args.name} has succeeded: there is nothing to abort`);
  const wave = rollout.status?.currentWave ?? 0;
  const what = `aborting rollout/${args.name} cancels the runs of wave ${wave} not yet Running and starts no further wave; it cannot be undone`;
  if (!args.yes) throw new CliError(`${what}. Run again with --yes to abort`);
  await patchSpec(conn, args.name, { abort: true });
  io.stdout.write(
    `rollout/${args.name} aborted: runs of wave ${wave} not yet Running are cancelled, no wave follows\n`,
  );
}
