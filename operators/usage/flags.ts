/**
 * Metering from the operators' flags: off without --metering-database-url; with it, the ledger is
 * migrated and opened, and the recorder and the exporter run on the leader. A missing or bad
 * companion flag is refused naming it, before anything starts.
 */
import { resolveAzureConfig } from "../azure/config.ts";
import { createCredential } from "../azure/credentials.ts";
import { MARKETPLACE_ENDPOINT } from "../metering/marketplace.ts";
import type { Cluster } from "../runtime/clusters.ts";
import type { Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { openMetering } from "./metering.ts";

export interface MeteringFlags {
  "metering-database-url"?: string;
  "metering-endpoint"?: string;
  "metering-plan-id"?: string;
  "metering-interval-seconds": string;
  "metering-ca"?: string;
  "azure-authority-host"?: string;
  "azure-ca"?: string;
}

export async function meteringFromFlags(
  values: MeteringFlags,
  service: Cluster,
  log: Logger,
): Promise<Runnable[]> {
  const url = values["metering-database-url"];
  if (!url) return [];
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new Error("--metering-database-url must be a postgresql:// connection URL");
  const planId = values["metering-plan-id"];
  if (!planId) throw new Error("--metering-database-url needs --metering-plan-id");
  const endpoint = values["metering-endpoint"] || MARKETPLACE_ENDPOINT;
  if (!endpoint.startsWith("https://"))
    throw new Error(`--metering-endpoint must be https://…; got "${endpoint}"`);
  const seconds = Number(values["metering-interval-seconds"]);
  if (!Number.isFinite(seconds) || seconds < 1)
    throw new Error(
      `--metering-interval-seconds must be a number of seconds, 1 or more; got "${values["metering-interval-seconds"]}"`,
    );
  const authorityHost = values["azure-authority-host"];
  const azureCa = values["azure-ca"];
  const credential = createCredential(
    await resolveAzureConfig({
      ...(authorityHost ? { authorityHost } : {}),
      ...(azureCa ? { caFile: azureCa } : {}),
    }),
  );
  const caPath = values["metering-ca"];
  const metering = await openMetering(
    {
      databaseUrl: url,
      planId,
      endpoint,
      intervalMs: seconds * 1000,
      credential,
      ...(caPath ? { caPath } : {}),
    },
    service,
    log,
  );
  return metering.runnables;
}
