/**
 * Metering's parts, built one way for operators/main.ts (from its flags) and for the in-process
 * stack of `npm run local` and the tests: the ledger migrated and opened, the marketplace client,
 * and the recorder and exporter that run on the leader. close() ends the ledger's pool once they
 * have stopped, so a process that stops its controllers can exit.
 */
import type { TokenCredential } from "@azure/identity";
import { readFile } from "node:fs/promises";
import { rootCertificates } from "node:tls";
import { sdkTlsSettings } from "../azure/config.ts";
import { Ledger } from "../metering/ledger.ts";
import { MARKETPLACE_ENDPOINT, MarketplaceMeteringClient } from "../metering/marketplace.ts";
import type { Cluster } from "../runtime/clusters.ts";
import type { Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { DEFAULT_EXPORT_INTERVAL_MS, UsageExporter } from "./exporter.ts";
import { UsageRecorder } from "./recorder.ts";

export interface MeteringSettings {
  /** The ledger's PostgreSQL, postgres:// or postgresql://. */
  databaseUrl: string;
  /** The marketplace offer's plan the usage is reported against. */
  planId: string;
  /** The metering API (default Azure Marketplace's); https. */
  endpoint?: string;
  /** A PEM file trusted beside Node's roots for the endpoint (an emulator's CA). */
  caPath?: string;
  /** Between export passes (default a minute). */
  intervalMs?: number;
  /** Entra ID tokens for the metering API's audience. */
  credential: TokenCredential;
}

export interface Metering {
  ledger: Ledger;
  /** The recorder and the exporter. */
  runnables: Runnable[];
  /** Ends the ledger's connections; call after the runnables stopped. */
  close(): Promise<void>;
}

export async function openMetering(
  settings: MeteringSettings,
  service: Cluster,
  log: Logger,
): Promise<Metering> {
  const endpoint = settings.endpoint || MARKETPLACE_ENDPOINT;
  const intervalMs = settings.intervalMs ?? DEFAULT_EXPORT_INTERVAL_MS;
  const tls = settings.caPath
    ? sdkTlsSettings([...rootCertificates, await readFile(settings.caPath, "utf8")])
    : undefined;
  // Built before the ledger opens: a bad endpoint is refused without a connection left open.
  const client = new MarketplaceMeteringClient({
    credential: settings.credential,
    endpoint,
    ...(tls ? { tls } : {}),
  });
  const ledger = await Ledger.open(settings.databaseUrl, {
    onConnectionError: (err) => log.error("Usage ledger connection lost; the pool reconnects", err),
  });
  log.info("Metering on", { endpoint, planId: settings.planId, intervalSeconds: intervalMs / 1000 });
  return {
    ledger,
    runnables: [
      new UsageRecorder({ cluster: service, ledger, log }),
      new UsageExporter({ ledger, client, planId: settings.planId, intervalMs, log }),
    ],
    close: () => ledger.close(),
  };
}
