/**
 * `hcpctl region backup` (one backup now, the operators' own code) and `hcpctl region restore`
 * (a backup into an empty service cluster). Both validate their flags and read the key before
 * they reach a server, so a bad flag is reported as one.
 */
import type { Command } from "commander";
import { LATEST_BLOB, readPointer, takeBackup } from "../../regionbackup/backup.ts";
import {
  openDocument,
  readBackupKey,
  type BackupDocument,
  type BackupKey,
} from "../../regionbackup/document.ts";
import { restoreRegion, type RestoreSummary } from "../../regionbackup/restore.ts";
import { openBackupStore, type BlobStore } from "../../regionbackup/store.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import { connectorOf } from "./maintenance-cli.ts";

export interface RegionStoreFlags {
  containerUrl: string;
  key: string;
  storageCa?: string;
  anonymous: boolean;
  azureAuthorityHost?: string;
  azureCa?: string;
  namespace: string;
}

export interface RegionBackupFlags extends RegionStoreFlags {
  region: string;
}

export interface RegionRestoreFlags extends RegionStoreFlags {
  from: string;
}

async function open(flags: RegionStoreFlags): Promise<{ store: BlobStore; key: BackupKey }> {
  if (!flags.containerUrl.startsWith("https://"))
    throw new CliError(`--container-url must be https://…; got "${flags.containerUrl}"`);
  const key = await readBackupKey(flags.key, "--key").catch((err: unknown) => {
    throw new CliError(err instanceof Error ? err.message : String(err));
  });
  const store = await openBackupStore({
    containerUrl: flags.containerUrl,
    anonymous: flags.anonymous,
    ...(flags.storageCa ? { storageCa: flags.storageCa } : {}),
    ...(flags.azureAuthorityHost ? { authorityHost: flags.azureAuthorityHost } : {}),
    ...(flags.azureCa ? { azureCa: flags.azureCa } : {}),
  });
  return { store, key };
}

export async function runRegionBackup(io: Io, connect: Connect, flags: RegionBackupFlags): Promise<void> {
  const { store, key } = await open(flags);
  const conn = connect();
  const started = io.now();
  const taken = await takeBackup({
    client: conn.client,
    store,
    key,
    region: flags.region,
    namespace: flags.namespace,
    signal: io.signal,
  });
  const seconds = ((io.now() - started) / 1000).toFixed(1);
  io.stdout.write(
    `backup ${store.location}/${taken.blob}: ${taken.objects} objects, ${taken.bytes} bytes, taken in ${seconds}s (key ${key.id})\n`,
  );
  if (taken.removed.length > 0) io.stdout.write(`removed past the retention: ${taken.removed.join(", ")}\n`);
}

async function readDocument(
  store: BlobStore,
  key: BackupKey,
  from: string,
  io: Io,
): Promise<{ blob: string; doc: BackupDocument }> {
  let blob = from;
  if (from === LATEST_BLOB) {
    const pointer = await readPointer(store, io.signal);
    if (!pointer) throw new CliError(`${store.location} holds no backup (no ${LATEST_BLOB} pointer)`);
    blob = pointer.latest;
  }
  const body = await store.read(blob, { signal: io.signal });
  if (body === undefined) throw new CliError(`${store.location}/${blob} does not exist`);
  try {
    return { blob, doc: openDocument(body, key, `${store.location}/${blob}`) };
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
}

/** The recovery point a backup states: what changed after takenAt is not in it. */
function recoveryPoint(doc: BackupDocument, now: number): string {
  const age = Math.max(0, Math.round((now - Date.parse(doc.takenAt)) / 1000));
  const interval =
    doc.intervalSeconds !== undefined
      ? `; the region's stated recovery point is ${doc.intervalSeconds + Math.ceil(doc.listDurationMs / 1000)}s (interval ${doc.intervalSeconds}s + ${doc.listDurationMs}ms to list)`
      : "; taken by hand";
  return `changes after ${doc.takenAt} (${age}s ago) are not in it${interval}`;
}

function printSummary(io: Io, summary: RestoreSummary): void {
  const rows = Object.entries(summary.counts).map(([type, c]) => {
    const kind = type.split("/")[1] ?? type;
    return `  ${kind.padEnd(22)} ${String(c.created).padStart(6)} created ${String(c.existed).padStart(6)} existed`;
  });
  io.stdout.write(`${rows.join("\n")}\n`);
  for (const d of summary.droppedOwners)
    io.stdout.write(`owner reference dropped (its owner is not in the backup): ${d}\n`);
  for (const d of summary.resumedDeletions)
    io.stdout.write(`being deleted at the backup, deleted again (its controller finishes it): ${d}\n`);
}

export async function runRegionRestore(io: Io, connect: Connect, flags: RegionRestoreFlags): Promise<void> {
  const { store, key } = await open(flags);
  const { blob, doc } = await readDocument(store, key, flags.from, io);
  const conn = connect();
  io.stdout.write(
    `restoring ${store.location}/${blob} (region ${doc.region}, taken ${doc.takenAt}, ${doc.objects.length} objects) into ${conn.target.server}\n`,
  );
  let summary: RestoreSummary;
  try {
    summary = await restoreRegion({
      client: conn.client,
      doc,
      source: blob,
      namespace: flags.namespace,
      signal: io.signal,
    });
  } catch (err) {
    if (err instanceof Error && err.name === "RestoreRefusedError")
      throw new CliError(`restore refused: ${err.message}`);
    throw err;
  }
  printSummary(io, summary);
  io.stdout.write(`restored from the backup taken at ${doc.takenAt}: ${recoveryPoint(doc, io.now())}\n`);
}

function storeOptions(cmd: Command): Command {
  return cmd
    .requiredOption(
      "--container-url <url>",
      "the backup blob container, https://<account>.blob.core.windows.net/<container>",
    )
    .requiredOption(
      "--key <path>",
      "the 32-byte backup key, raw or base64 (the operators' --region-backup-key)",
    )
    .option("--namespace <namespace>", "the operators' namespace", "hcp-system")
    .option("--storage-ca <path>", "extra CA to trust for the container (an emulator's)")
    .option("--anonymous", "send no Entra ID token (a container that takes anonymous requests)", false)
    .option(
      "--azure-authority-host <url>",
      "Entra ID authority for the storage token (default: the public cloud's)",
    )
    .option("--azure-ca <path>", "extra CA to trust for the authority");
}

export function addRegion(program: Command, io: Io): void {
  const region = program
    .command("region")
    .description(
      "the region's own state: back it up to blob storage, restore it into an empty service cluster",
    );
  storeOptions(
    region
      .command("backup")
      .description("take one region backup now, as the operators do on their interval")
      .option("--region <name>", "the region's name, recorded in the backup", "local"),
  ).action(async (flags: RegionBackupFlags) => {
    await runRegionBackup(io, connectorOf(region), flags);
  });
  storeOptions(
    region
      .command("restore")
      .description(
        "restore a backup into an EMPTY service cluster (CRDs installed, operators stopped); run again after an interruption, it completes the rest",
      )
      .option("--from <blob>", "the backup blob, or latest", LATEST_BLOB),
  ).action(async (flags: RegionRestoreFlags) => {
    await runRegionRestore(io, connectorOf(region), flags);
  });
}
