/**
 * The operators' region backup from their flags: none without --region-backup-container-url; a
 * bad or missing companion flag is refused naming it, before anything starts.
 */
import type { KubeClient } from "../runtime/kube.ts";
import type { Logger } from "../runtime/logger.ts";
import { intervalFromFlag, RegionBackup } from "./controller.ts";
import { readBackupKey } from "./document.ts";
import { openBackupStore } from "./store.ts";

export interface RegionBackupFlags {
  namespace: string;
  environment: string;
  "region-backup-container-url"?: string;
  "region-backup-key"?: string;
  "region-backup-interval": string;
  "region-backup-retention": string;
  "region-backup-storage-ca"?: string;
  "azure-authority-host"?: string;
  "azure-ca"?: string;
}

export async function regionBackupFromFlags(
  values: RegionBackupFlags,
  client: KubeClient,
  log: Logger,
): Promise<RegionBackup | undefined> {
  const containerUrl = values["region-backup-container-url"];
  if (!containerUrl) return undefined;
  if (!containerUrl.startsWith("https://"))
    throw new Error(`--region-backup-container-url must be https://…; got "${containerUrl}"`);
  const keyFile = values["region-backup-key"];
  if (!keyFile) throw new Error("--region-backup-container-url needs --region-backup-key");
  const retention = Number(values["region-backup-retention"]);
  if (!Number.isInteger(retention) || retention < 2)
    throw new Error(
      `--region-backup-retention must be a whole number of backups, 2 or more; got "${values["region-backup-retention"]}"`,
    );
  const intervalSeconds = intervalFromFlag("--region-backup-interval", values["region-backup-interval"]);
  const key = await readBackupKey(keyFile, "--region-backup-key");
  const storageCa = values["region-backup-storage-ca"];
  const authorityHost = values["azure-authority-host"];
  const azureCa = values["azure-ca"];
  const store = await openBackupStore({
    containerUrl,
    ...(storageCa ? { storageCa } : {}),
    ...(authorityHost ? { authorityHost } : {}),
    ...(azureCa ? { azureCa } : {}),
  });
  log.info("Region backup on", { store: store.location, intervalSeconds, retention, key: key.id });
  return new RegionBackup({
    client,
    store,
    key,
    region: values.environment,
    namespace: values.namespace,
    intervalSeconds,
    retention,
    log,
  });
}
