/**
 * The chaos region's own backup, as a region deploy has it (docs/operations.md, "Back up and
 * restore the region"): a private container on the storage emulator, a key file, and the
 * operators run with --region-backup-* every few seconds so the recovery point is small. The
 * chaos run reads it back with the product's code (readPointer, openDocument) to restore the
 * region after service-cluster-loss and to know what the backup held.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBlobStore, type BlobStore } from "../../operators/azure/blob.ts";
import { resolveAzureConfig } from "../../operators/azure/config.ts";
import { createCredential } from "../../operators/azure/credentials.ts";
import { readPointer, type BackupPointer } from "../../operators/regionbackup/backup.ts";
import {
  backupKey,
  openDocument,
  type BackupDocument,
  type BackupKey,
} from "../../operators/regionbackup/document.ts";
import type { ArmEmulator } from "../harness/arm-emulator/index.ts";
import type { StorageEmulator } from "../harness/storage-emulator/index.ts";

export const REGION_BACKUP_CONTAINER = "region-backups";
/** Seconds between the operators' backups: the recovery point is this plus one backup's listing. */
export const REGION_BACKUP_INTERVAL_S = 10;

export interface ChaosBackup {
  /** The operators' --region-backup-* flags. */
  flags: string[];
  store: BlobStore;
  key: BackupKey;
  /** The pointer to the newest backup; undefined before the first. */
  latest(signal?: AbortSignal): Promise<BackupPointer | undefined>;
  /** A backup blob, opened with the region's key. */
  open(blob: string, signal?: AbortSignal): Promise<BackupDocument>;
}

type Azure = Pick<ArmEmulator, "endpoint" | "caPath" | "tenantId" | "clientId" | "clientSecret">;

/** Writes the key under `workDir` and opens the container as the operators do (Entra ID tokens from the ARM emulator). */
export async function chaosBackup(
  workDir: string,
  storage: StorageEmulator,
  arm: Azure,
): Promise<ChaosBackup> {
  const raw = randomBytes(32);
  const keyPath = join(workDir, "region-backup.key");
  await writeFile(keyPath, `${raw.toString("base64")}\n`, { mode: 0o600 });
  const containerUrl = `${storage.blobServiceUrl}/${REGION_BACKUP_CONTAINER}`;
  const credential = createCredential(
    await resolveAzureConfig({
      armEndpoint: arm.endpoint,
      authorityHost: arm.endpoint,
      caFile: arm.caPath,
      credential: { tenantId: arm.tenantId, clientId: arm.clientId, clientSecret: arm.clientSecret },
    }),
  );
  const store = await createBlobStore({ containerUrl, credential, caFile: storage.caPath });
  const key = backupKey(raw);
  return {
    flags: [
      `--region-backup-container-url=${containerUrl}`,
      `--region-backup-key=${keyPath}`,
      `--region-backup-interval=${REGION_BACKUP_INTERVAL_S}`,
      `--region-backup-storage-ca=${storage.caPath}`,
    ],
    store,
    key,
    latest: (signal) => readPointer(store, signal),
    async open(blob, signal) {
      const body = await store.read(blob, signal ? { signal } : {});
      if (body === undefined) throw new Error(`${store.location}/${blob} does not exist`);
      return openDocument(body, key, `${store.location}/${blob}`);
    },
  };
}
