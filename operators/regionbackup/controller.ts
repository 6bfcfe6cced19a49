/**
 * The region backup on an interval, on the leader only: one backup (backup.ts) at the start and
 * then one every interval after the last one ended, so that a slow one never overlaps the next.
 * The recovery point it gives: the interval plus the time one backup takes (what changed in that
 * span before a loss is not in the last backup). A failure is logged and counted, and the next
 * attempt comes one interval later; the alert HcpRegionBackupStale fires after five intervals
 * without a success.
 */
import { sleep } from "../runtime/backoff.ts";
import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { BlobStore } from "../azure/blob.ts";
import type { KubeClient } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { counter, gauge, histogram, metricsRegistry } from "../runtime/metrics.ts";
import { takeBackup, type TakenBackup } from "./backup.ts";
import type { BackupKey } from "./document.ts";

export const DEFAULT_INTERVAL_SECONDS = 60;

export interface RegionBackupMetrics {
  lastSuccess: Gauge;
  duration: Histogram;
  bytes: Gauge;
  failures: Counter;
  /** The interval, so that the staleness alert needs no copy of the flag. */
  interval: Gauge;
}

export function regionBackupMetrics(registry: Registry = metricsRegistry): RegionBackupMetrics {
  return {
    lastSuccess: gauge(registry, {
      name: "hcp_region_backup_last_success_timestamp_seconds",
      help: "Unix time at which the last region backup was written",
    }),
    duration: histogram(registry, {
      name: "hcp_region_backup_duration_seconds",
      help: "Seconds one region backup took: list, seal, write, retention, pointer",
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    }),
    bytes: gauge(registry, {
      name: "hcp_region_backup_bytes",
      help: "Size of the last region backup's blob in bytes",
    }),
    failures: counter(registry, {
      name: "hcp_region_backup_failures_total",
      help: "Region backups that failed",
    }),
    interval: gauge(registry, {
      name: "hcp_region_backup_interval_seconds",
      help: "Seconds between region backups (--region-backup-interval)",
    }),
  };
}

export interface RegionBackupOptions {
  client: KubeClient;
  store: BlobStore;
  key: BackupKey;
  region: string;
  namespace: string;
  intervalSeconds?: number;
  retention?: number;
  log?: Logger;
  registry?: Registry;
}

/** Parses `--region-backup-interval`; the error names the flag. */
export function intervalFromFlag(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < 1 || n > 86_400)
    throw new Error(`${flag} must be a whole number of seconds from 1 to 86400; got "${value}"`);
  return n;
}

export class RegionBackup implements Runnable {
  readonly needLeaderElection = true;
  readonly #o: RegionBackupOptions;
  readonly #log: Logger;
  readonly #metrics: RegionBackupMetrics;
  readonly #intervalSeconds: number;

  constructor(o: RegionBackupOptions) {
    this.#o = o;
    this.#log = (o.log ?? silentLogger).child({ component: "region-backup" });
    this.#metrics = regionBackupMetrics(o.registry);
    this.#intervalSeconds = o.intervalSeconds ?? DEFAULT_INTERVAL_SECONDS;
    this.#metrics.interval.set(this.#intervalSeconds);
  }

  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.once(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.#metrics.failures.inc();
        this.#log.error("Region backup failed", err, { store: this.#o.store.location });
      }
      await sleep(this.#intervalSeconds * 1000, signal);
    }
  }

  /** One backup now, with its metrics. */
  async once(signal?: AbortSignal): Promise<TakenBackup> {
    const started = performance.now();
    const taken = await takeBackup({
      client: this.#o.client,
      store: this.#o.store,
      key: this.#o.key,
      region: this.#o.region,
      namespace: this.#o.namespace,
      intervalSeconds: this.#intervalSeconds,
      ...(this.#o.retention !== undefined ? { retention: this.#o.retention } : {}),
      ...(signal ? { signal } : {}),
    });
    const seconds = (performance.now() - started) / 1000;
    this.#metrics.duration.observe(seconds);
    this.#metrics.bytes.set(taken.bytes);
    this.#metrics.lastSuccess.set(Date.now() / 1000);
    this.#log.info("Region backup written", {
      blob: taken.blob,
      objects: taken.objects,
      bytes: taken.bytes,
      seconds: Number(seconds.toFixed(3)),
      removed: taken.removed.length,
    });
    return taken;
  }
}
