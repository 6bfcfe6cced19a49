/** Commander wiring of `hcpctl rollout start|status|pause|resume|abort`. */
import type { Command } from "commander";
import type { Io } from "../io.ts";
import { connectorOf, dataOutputOption } from "./maintenance-cli.ts";
import {
  runRolloutAbort,
  runRolloutPause,
  runRolloutResume,
  runRolloutStart,
  type RolloutStartFlags,
} from "./rollout.ts";
import { runRolloutStatus, type RolloutStatusFlags } from "./rollout-status.ts";

export function addRollout(program: Command, io: Io): void {
  const ro = program
    .command("rollout")
    .description("Rollouts: a release or a task over many clusters in waves (a canary, then growing)");
  ro.command("start")
    .description(
      "create a Rollout of a release (--release) or a task (--task) over the clusters named or selected",
    )
    .argument("<name>", "the Rollout (at most 63 characters)")
    .option("--release <version>", "upgrade the control planes to this release, such as 4.19.10")
    .option("--task <type>", "roll out this maintenance task instead, such as RotateServiceAccountSigningKey")
    .option("--clusters <list>", "HcpClusters as namespace/name, comma-separated")
    .option("--selector <labels>", "HcpClusters in every namespace with these labels, k=v,k2=v2")
    .option("--canary <n>", "clusters in the first wave (default 1)")
    .option("--growth <n>", "each wave this many times the one before, 1 to 10 (default 2)")
    .option("--max-wave <n>", "no wave larger than this")
    .option(
      "--failure-budget <n>",
      "failed runs a wave may have before the rollout pauses itself (default 0)",
    )
    .option(
      "--max-per-management-cluster <n>",
      "runs of a wave at once on one management cluster (default 1)",
    )
    .option("--urgent", "do not wait for the clusters' maintenance windows and freezes", false)
    .addOption(dataOutputOption("the created Rollout"))
    .action(async (name: string, flags: RolloutStartFlags) => {
      await runRolloutStart(io, connectorOf(ro), { name, flags });
    });
  ro.command("status")
    .description(
      "each wave's state and runs; each cluster of the current and failed waves: phase, step, message",
    )
    .argument("<name>", "the Rollout")
    .addOption(dataOutputOption("{rollout, runs}"))
    .action(async (name: string, flags: RolloutStatusFlags) => {
      await runRolloutStatus(io, connectorOf(ro), { name, flags });
    });
  ro.command("pause")
    .description("set spec.paused: no run of the current wave is admitted and no next wave starts")
    .argument("<name>", "the Rollout")
    .action(async (name: string) => {
      await runRolloutPause(io, connectorOf(ro), { name });
    });
  ro.command("resume")
    .description(
      "clear spec.paused; a rollout that paused itself over a wave's failure budget goes on with that wave's failures accepted (spec.proceedPastWave)",
    )
    .argument("<name>", "the Rollout")
    .action(async (name: string) => {
      await runRolloutResume(io, connectorOf(ro), { name });
    });
  ro.command("abort")
    .description(
      "set spec.abort (for good): runs of the current wave not yet Running are cancelled, no wave follows",
    )
    .argument("<name>", "the Rollout")
    .option("--yes", "abort without asking: without it the command only says what aborting does", false)
    .action(async (name: string, flags: { yes: boolean }) => {
      await runRolloutAbort(io, connectorOf(ro), { name, yes: flags.yes });
    });
}
