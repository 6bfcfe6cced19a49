/**
 * Velero's backup storage on the test region's management clusters, as ARO HCP keeps it: a
 * storage account of its own (a second storage emulator, reached with the region's Azure
 * credentials) named by a default BackupStorageLocation and its credentials Secret on each
 * management cluster (hack/hypershift-simulator/velero.ts veleroInstall).
 */
import { readFile } from "node:fs/promises";
import { startStorageEmulator, type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import { BACKUP_CONTAINER, veleroInstall } from "../../hack/hypershift-simulator/velero.ts";
import { SecretResource } from "../../operators/api/core.ts";
import { BackupStorageLocationResource, VELERO_NAMESPACE } from "../../operators/api/velero/v1/index.ts";
import { clientFor, scratchDir } from "./fixtures.ts";
import type { TestStack } from "./stack.ts";

export interface VeleroStorage {
  /** The backups' storage account. */
  backups: StorageEmulator;
  /** Removes the location and credentials from the management clusters, then the account. */
  remove(): Promise<void>;
}

/** Installs Velero's storage on `management` for the stack's region, in the account `account`. */
export async function installVeleroStorage(
  running: TestStack,
  account: string,
  management: readonly string[] = ["mgmt-1", "mgmt-2"],
): Promise<VeleroStorage> {
  const scratch = await scratchDir(`${account}-storage`);
  const backups = await startStorageEmulator({
    workDir: scratch.path,
    account,
    containers: [BACKUP_CONTAINER],
    verifyBearer: running.arm.verifyBearer,
  });
  const { location, credentials } = veleroInstall({
    blobServiceUrl: backups.blobServiceUrl,
    storageCaPem: await readFile(backups.caPath, "utf8"),
    azure: {
      tenantId: running.arm.tenantId,
      clientId: running.arm.clientId,
      clientSecret: running.arm.clientSecret,
      authorityHost: running.arm.endpoint,
      caPath: running.arm.caPath,
    },
  });
  for (const m of management) {
    const mgmt = clientFor(m);
    await mgmt.apply(SecretResource, credentials, { fieldManager: "velero-install", force: true });
    await mgmt.apply(BackupStorageLocationResource, location, {
      fieldManager: "velero-install",
      force: true,
    });
  }
  return {
    backups,
    async remove() {
      for (const m of management) {
        const mgmt = clientFor(m);
        await mgmt.delete(BackupStorageLocationResource, {
          name: location.metadata.name ?? "",
          namespace: VELERO_NAMESPACE,
        });
        await mgmt.delete(SecretResource, {
          name: credentials.metadata.name ?? "",
          namespace: VELERO_NAMESPACE,
        });
      }
      await backups.stop();
      await scratch.remove();
    },
  };
}
