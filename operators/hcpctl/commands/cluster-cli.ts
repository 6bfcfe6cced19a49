/** Commander wiring of `hcpctl cluster backups|restore` (and deleted|undelete, cluster-undelete.ts). */
import { Option, type Command } from "commander";
import type { Io } from "../io.ts";
import { connectorOf, dataOutputOption } from "./maintenance-cli.ts";
import {
  runClusterBackups,
  runClusterRestore,
  type ClusterBackupsFlags,
  type ClusterRestoreFlags,
} from "./cluster-restore.ts";
import { addUndelete } from "./cluster-undelete.ts";

const namespaceOption = (): Option =>
  new Option("-n, --namespace <namespace>", "namespace (default: the context's, else default)");

export function addCluster(program: Command, io: Io): void {
  const cl = program
    .command("cluster")
    .description(
      "one HcpCluster's backups, a restore of its control plane from one of them, and soft-deleted clusters' undelete",
    );
  cl.command("backups")
    .description("the cluster's newest completed backups (newest first), the names a restore takes")
    .argument("<cluster>", "the HcpCluster")
    .addOption(namespaceOption())
    .addOption(dataOutputOption("{recent, backup}"))
    .action(async (name: string, flags: ClusterBackupsFlags) => {
      await runClusterBackups(io, connectorOf(cl), { name, flags });
    });
  cl.command("restore")
    .description(
      "restore the cluster's control plane from one of its backups (sets spec.restore; the HostedCluster is paused until it ends)",
    )
    .argument("<cluster>", "the HcpCluster")
    .addOption(namespaceOption())
    .option("--backup <name>", "the backup, as `hcpctl cluster backups` lists it")
    .option("--wait", "follow the restore to its end: exit 0 when Completed, 1 otherwise", false)
    .option("--timeout <duration>", "with --wait: give up after this long", "30m")
    .option("--clear", "clear spec.restore: its Restore leaves the management cluster", false)
    .action(async (name: string, flags: ClusterRestoreFlags) => {
      await runClusterRestore(io, connectorOf(cl), { name, flags });
    });
  addUndelete(cl, io);
}
