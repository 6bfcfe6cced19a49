/**
 * The backup container as a BlobStore, for the operators and for hcpctl alike: Entra ID tokens for
 * storage from the usual credential chain (AZURE_* environment, workload or managed identity),
 * or none for a container that takes anonymous writes (an emulator without authentication).
 */
import { createBlobStore, type BlobStore } from "../azure/blob.ts";
import { resolveAzureConfig } from "../azure/config.ts";
import { createCredential } from "../azure/credentials.ts";

export type { BlobStore };

export interface BackupStoreOptions {
  /** `https://<account>.blob.core.windows.net/<container>`. */
  containerUrl: string;
  /** Extra CA to trust for the container (an emulator's). */
  storageCa?: string;
  /** Send no token. */
  anonymous?: boolean;
  /** Entra ID authority host and the CA for it (an emulator's), when not the public cloud's. */
  authorityHost?: string;
  azureCa?: string;
}

export async function openBackupStore(o: BackupStoreOptions): Promise<BlobStore> {
  if (!o.containerUrl.startsWith("https://"))
    throw new Error(`the backup container URL must be https://…; got "${o.containerUrl}"`);
  const credential = o.anonymous
    ? undefined
    : createCredential(
        await resolveAzureConfig({
          ...(o.authorityHost ? { authorityHost: o.authorityHost } : {}),
          ...(o.azureCa ? { caFile: o.azureCa } : {}),
        }),
      );
  return createBlobStore({
    containerUrl: o.containerUrl,
    ...(credential ? { credential } : {}),
    ...(o.storageCa ? { caFile: o.storageCa } : {}),
  });
}
