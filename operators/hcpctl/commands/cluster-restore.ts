/**
 * `hcpctl cluster backups NAME` (the newest completed backups its status lists, newest first) and
 * `hcpctl cluster restore NAME --backup BACKUP [--wait] | --clear`: sets or clears the cluster's
 * spec.restore through the API server (which refuses a backup not of this cluster, naming
 * spec.restore.backupName); --wait follows status.restore to its end, a line per change, exit 0
 * when Completed and 1 otherwise.
 */
import {
  HcpClusterResource,
  type HcpCluster,
  type HcpClusterRestoreStatus,
} from "../../api/v1alpha1/index.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { printData, type DataFormat } from "./maintenance.ts";
import { refusalOf } from "./maintenance-spec.ts";
import { parseDuration } from "../time.ts";
import { startInformer, warningLogger } from "../watch.ts";

export interface ClusterBackupsFlags {
  namespace?: string;
  output?: DataFormat;
}

export interface ClusterRestoreFlags {
  namespace?: string;
  backup?: string;
  wait: boolean;
  timeout: string;
  clear: boolean;
}

const ENDED = new Set(["Completed", "PartiallyFailed", "Failed", "FailedValidation"]);
const RESTORE_FLAGS = { "spec.restore.backupName": "--backup" } as const;

async function clusterOf(conn: Connection, name: string, namespace: string): Promise<HcpCluster> {
  const cluster = await conn.get<HcpCluster>(HcpClusterResource, name, namespace);
  if (!cluster) throw new CliError(`hcpcluster "${name}" not found in namespace "${namespace}"`);
  return cluster;
}

export async function runClusterBackups(
  io: Io,
  connect: Connect,
  args: { name: string; flags: ClusterBackupsFlags },
): Promise<void> {
  const conn = connect();
  const namespace = args.flags.namespace ?? conn.namespace;
  const cluster = await clusterOf(conn, args.name, namespace);
  const backup = cluster.status?.backup;
  const recent = backup?.recent ?? [];
  if (args.flags.output) {
    printData(io, args.flags.output, { recent, ...(backup ? { backup } : {}) });
    return;
  }
  if (recent.length === 0) {
    io.stdout.write(`hcpcluster/${args.name}: no completed backup reported yet\n`);
    return;
  }
  const restoring = cluster.spec.restore?.backupName;
  io.stdout.write("BACKUP (newest first)\n");
  for (const name of recent) io.stdout.write(`${name}${name === restoring ? "  (spec.restore)" : ""}\n`);
}

/** One line of a restore's progress. */
export function describeRestore(s: HcpClusterRestoreStatus): string {
  const items =
    s.itemsRestored !== undefined
      ? ` ${s.itemsRestored}${s.itemsTotal !== undefined ? `/${s.itemsTotal}` : ""} objects`
      : "";
  const counts = [s.warnings ? `${s.warnings} warnings` : "", s.errors ? `${s.errors} errors` : ""]
    .filter(Boolean)
    .join(", ");
  const why = s.failureReason ? `: ${s.failureReason}` : "";
  return `restore from ${s.backupName}: ${s.phase}${items}${counts ? ` (${counts})` : ""}${why}`;
}

/** status.restore when it is about the backup asked. */
function restoreOf(cluster: HcpCluster | undefined, backup: string): HcpClusterRestoreStatus | undefined {
  const s = cluster?.status?.restore;
  return s?.backupName === backup ? s : undefined;
}

async function patchRestore(conn: Connection, name: string, namespace: string, restore: object | null) {
  try {
    await conn.client.mergePatch(HcpClusterResource, { name, namespace }, { spec: { restore } });
  } catch (err) {
    throw refusalOf(err, `hcpcluster/${name}`, RESTORE_FLAGS) ?? conn.explain(err, HcpClusterResource);
  }
}

/** Whether status.restore says the restore spec.restore asks for has ended. */
function askedEnded(cluster: HcpCluster): boolean {
  const status = cluster.status?.restore;
  return (
    status !== undefined && status.backupName === cluster.spec.restore?.backupName && ENDED.has(status.phase)
  );
}

/** Why the restore asked cannot be asked now, if it cannot. */
function refusal(cluster: HcpCluster, backup: string): string | undefined {
  const asked = cluster.spec.restore?.backupName;
  if (!asked) return undefined;
  const ended = askedEnded(cluster);
  if (asked !== backup && !ended)
    return `a restore from ${asked} is under way (${cluster.status?.restore?.phase ?? "New"}): wait for it to end`;
  if (asked === backup && ended)
    return `already restored from ${backup} (${cluster.status?.restore?.phase}); to restore from it again, clear it first (--clear)`;
  return undefined;
}

function checkFlags(flags: ClusterRestoreFlags): number {
  if (flags.clear && flags.backup) throw new CliError("--clear and --backup do not go together");
  if (!flags.clear && !flags.backup) throw new CliError("--backup <name> is required (or --clear)");
  return parseDuration(flags.timeout, "--timeout");
}

export async function runClusterRestore(
  io: Io,
  connect: Connect,
  args: { name: string; flags: ClusterRestoreFlags },
): Promise<void> {
  const { flags, name } = args;
  const timeoutMs = checkFlags(flags);
  const conn = connect();
  const namespace = flags.namespace ?? conn.namespace;
  const cluster = await clusterOf(conn, name, namespace);
  if (flags.clear) {
    await patchRestore(conn, name, namespace, null);
    io.stdout.write(`hcpcluster/${name}: spec.restore cleared; its Restore leaves the management cluster\n`);
    return;
  }
  const backup = flags.backup ?? "";
  const refused = refusal(cluster, backup);
  if (refused) throw new CliError(`hcpcluster/${name}: ${refused}`);
  if (cluster.spec.restore?.backupName !== backup) {
    await patchRestore(conn, name, namespace, { backupName: backup });
    io.stdout.write(
      `hcpcluster/${name}: restore from ${backup} asked; the HostedCluster is paused until it ends\n`,
    );
  }
  if (flags.wait) await waitForEnd(io, conn, { name, namespace, backup, timeoutMs });
}

/** --wait: the restore's end, an error unless Completed. */
async function waitForEnd(
  io: Io,
  conn: Connection,
  q: { name: string; namespace: string; backup: string; timeoutMs: number },
): Promise<void> {
  const ended = await followRestore(io, conn, q);
  if (!ended) {
    if (io.signal.aborted) throw new CliError("interrupted", { exitCode: 130 });
    throw new CliError(`timed out waiting for the restore of hcpcluster/${q.name} from ${q.backup}`);
  }
  if (ended.phase !== "Completed") throw new CliError(`hcpcluster/${q.name}: ${describeRestore(ended)}`);
}

/** Watches the cluster, a line per change of status.restore, until it ends; undefined on timeout. */
async function followRestore(
  io: Io,
  conn: Connection,
  q: { name: string; namespace: string; backup: string; timeoutMs: number },
): Promise<HcpClusterRestoreStatus | undefined> {
  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal, AbortSignal.timeout(q.timeoutMs)]);
  let last = "";
  let ended: HcpClusterRestoreStatus | undefined;
  const look = () => {
    const s = restoreOf(informer.get(q.namespace, q.name), q.backup);
    if (!s) return;
    const line = describeRestore(s);
    if (line !== last) io.stdout.write(`${line}\n`);
    last = line;
    if (ENDED.has(s.phase)) {
      ended = s;
      stop.abort();
    }
  };
  const informer = startInformer<HcpCluster>(
    conn,
    { type: HcpClusterResource, namespace: q.namespace, fieldSelector: `metadata.name=${q.name}` },
    () => {
      if (informer.hasSynced()) look();
    },
    { signal, log: warningLogger((l) => io.stderr.write(l)) },
  );
  if (await informer.waitForSync(signal)) look();
  await new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
  );
  return ended;
}
