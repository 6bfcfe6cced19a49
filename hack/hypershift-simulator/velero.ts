/**
 * Plays Velero on a management cluster for the Schedules the clusters' works carry (the real CRDs,
 * hack/harness/upstream.ts). Per Schedule in the `velero` namespace: phase Enabled, or
 * FailedValidation for a cron Velero would refuse; unless paused, a Backup
 * `<schedule>-<yyyyMMddHHmmss>` at creation (Velero backs up at once unless skipImmediately) and
 * at each due time, labelled as the Schedule plus `velero.io/schedule-name`, completed at once: its
 * contents (a JSON listing of the included namespaces' objects, names only) written to the
 * BackupStorageLocation as `<prefix>/backups/<name>/<name>.tar.gz`, then phase Completed; Backups
 * past their expiration go, with their stored object. Velero's Schedule status says when a backup
 * started, not how it ended, so the Schedule is also annotated with the newest Backup's outcome
 * and the newest completed Backups' names (operators/cluster/backup.ts LAST_BACKUP_ANNOTATIONS), as a
 * reporter beside Velero would. Restores are velero-restore.ts.
 *
 * Storage: the BackupStorageLocation the template names, else the one marked default, provider
 * `azure`: `objectStorage.bucket` is the blob container, `config.storageAccountURI` the Blob
 * service URL, `objectStorage.caCert` the CA to trust, and `credential` a Secret key holding the
 * Azure plugin's credentials file (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET,
 * AZURE_AUTHORITY_HOST, and for the simulator only AZURE_AUTHORITY_CA_FILE: the token endpoint's CA).
 * veleroInstall() builds them for a storage emulator. With none, a Backup ends FailedValidation.
 *
 * Test-only annotations on a Schedule: SIMULATE_FAILURE_ANNOTATION "true" makes each Backup fail;
 * PERIOD_OVERRIDE_ANNOTATION "<ms>" backs up at that interval instead of the cron's.
 */
import { ClientSecretCredential } from "@azure/identity";
import { readFile } from "node:fs/promises";
import { isDeepStrictEqual } from "node:util";
import { rootCertificates } from "node:tls";
import { SecretResource } from "../../operators/api/core.ts";
import { HostedClusterResource, NodePoolResource } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  BACKUP_KIND,
  SCHEDULE_KIND,
  BackupResource,
  BackupStorageLocationResource,
  SCHEDULE_NAME_LABEL,
  ScheduleResource,
  STORAGE_LOCATION_LABEL,
  VELERO_API_VERSION,
  VELERO_NAMESPACE,
  type Backup,
  type BackupStorageLocation,
  type Schedule,
} from "../../operators/api/velero/v1/index.ts";
import { HttpsBlobStore, type BlobStore } from "../../operators/azure/blob.ts";
import { sdkTlsSettings } from "../../operators/azure/config.ts";
import { LAST_BACKUP_ANNOTATIONS, RECENT_BACKUPS_MAX } from "../../operators/cluster/backup.ts";
import { cronError, nextFire, parseCron } from "../../operators/cluster/backup-cron.ts";
import type { Applier } from "../../operators/runtime/apply.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../../operators/runtime/controller.ts";
import { errorMessage, isNotFound } from "../../operators/runtime/errors.ts";
import type { Informer, Lister } from "../../operators/runtime/informer.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../operators/runtime/kube.ts";

export const SIMULATE_FAILURE_ANNOTATION = "hcp.aro.dev/simulate-backup-failure";
export const PERIOD_OVERRIDE_ANNOTATION = "hypershift-simulator.hcp.aro.dev/velero-period-ms";
/** The blob container the local region's backups go to. */
export const BACKUP_CONTAINER = "velero-backups";
const CREDENTIALS_KEY = "cloud";

/** Where a Backup's contents go in the bucket, as Velero lays them out. */
export function backupObjectName(backup: string, prefix = ""): string {
  return `${prefix ? `${prefix.replace(/\/+$/, "")}/` : ""}backups/${backup}/${backup}.tar.gz`;
}

/** `<schedule>-<yyyyMMddHHmmss>` in UTC, Velero's name for a scheduled Backup. */
export function scheduledBackupName(schedule: string, at: Date): string {
  return `${schedule}-${at.toISOString().replace(/[-:T]/g, "").slice(0, 14)}`;
}

/** Velero's install on a management cluster, pointed at a storage account: its BSL and credentials Secret. */
export function veleroInstall(opts: {
  blobServiceUrl: string;
  storageCaPem: string;
  container?: string;
  azure: { tenantId: string; clientId: string; clientSecret: string; authorityHost: string; caPath: string };
}): { location: BackupStorageLocation; credentials: KubeObject } {
  const { azure } = opts;
  const file = [
    `AZURE_TENANT_ID=${azure.tenantId}`,
    `AZURE_CLIENT_ID=${azure.clientId}`,
    `AZURE_CLIENT_SECRET=${azure.clientSecret}`,
    `AZURE_AUTHORITY_HOST=${azure.authorityHost}`,
    `AZURE_AUTHORITY_CA_FILE=${azure.caPath}`,
  ].join("\n");
  return {
    credentials: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "velero-azure-credentials", namespace: VELERO_NAMESPACE },
      data: { [CREDENTIALS_KEY]: Buffer.from(file).toString("base64") },
    },
    location: {
      apiVersion: VELERO_API_VERSION,
      kind: "BackupStorageLocation",
      metadata: { name: "default", namespace: VELERO_NAMESPACE },
      spec: {
        provider: "azure",
        default: true,
        objectStorage: {
          bucket: opts.container ?? BACKUP_CONTAINER,
          caCert: Buffer.from(opts.storageCaPem).toString("base64"),
        },
        config: { storageAccountURI: opts.blobServiceUrl },
        credential: { name: "velero-azure-credentials", key: CREDENTIALS_KEY },
      },
    },
  };
}

export interface VeleroReconcilerDeps {
  client: KubeClient;
  schedules: Informer<Schedule>;
  /** Velero's Backups (cachedBackup, indexed BACKUPS_BY_SCHEDULE). */
  backups: Lister<CachedBackup>;
  storage: VeleroStorage;
  applier: Applier;
  now?: () => number;
}

type SecretObject = KubeObject & { data?: Record<string, string> };

/** A Backup as cached: what expiry and the Schedule's outcome read, without its spec. */
export type CachedBackup = KubeObject & { status?: Backup["status"] };

/** Index of the Backup cache: the Schedule a Backup was taken for. */
export const BACKUPS_BY_SCHEDULE = "schedule";

export function cachedBackup(backup: Backup): CachedBackup {
  const { apiVersion, kind, metadata, status } = backup;
  return { apiVersion, kind, metadata, ...(status ? { status } : {}) };
}

export function scheduleOfBackup(backup: CachedBackup): string[] {
  const schedule = backup.metadata.labels?.[SCHEDULE_NAME_LABEL];
  return schedule ? [schedule] : [];
}

/** What Velero's manager caches and the storage reads: its locations, and its namespace's Secrets whole. */
export interface VeleroCaches {
  locations: Lister<BackupStorageLocation>;
  secrets: Lister<SecretObject>;
}

const FAILED = "the simulated backup failed (hcp.aro.dev/simulate-backup-failure)";

/**
 * Velero's storage on a management cluster: its BackupStorageLocations and their blob containers,
 * read from the caches as Velero's controllers read them. A location or credential Secret the cache
 * does not hold is asked of the apiserver: one installed a moment ago may not be cached yet, and
 * the stand-in's first backup should not fail for it where a fresh read would have found it.
 */
export class VeleroStorage {
  readonly #client: KubeClient;
  readonly #caches: VeleroCaches;
  /** Blob stores by the location's and its Secret's resourceVersions, so credentials keep their tokens. */
  readonly #stores = new Map<string, BlobStore>();

  constructor(client: KubeClient, caches: VeleroCaches) {
    this.#client = client;
    this.#caches = caches;
  }

  /** The location named, else the one marked default. */
  async location(signal: AbortSignal, named?: string): Promise<BackupStorageLocation | undefined> {
    const pick = (items: readonly BackupStorageLocation[]): BackupStorageLocation | undefined =>
      items.find((l) => (named ? l.metadata.name === named : l.spec.default === true));
    const cached = pick(this.#caches.locations.list(VELERO_NAMESPACE));
    if (cached) return cached;
    const list = await this.#client.list<BackupStorageLocation>(BackupStorageLocationResource, {
      namespace: VELERO_NAMESPACE,
      signal,
    });
    return pick(list.items);
  }

  async storeFor(location: BackupStorageLocation): Promise<BlobStore> {
    const ref = location.spec.credential;
    const secret = ref
      ? (this.#caches.secrets.get(VELERO_NAMESPACE, ref.name) ??
        (await this.#client.get<SecretObject>(SecretResource, ref.name, VELERO_NAMESPACE)))
      : undefined;
    const key = `${location.metadata.uid}/${location.metadata.resourceVersion}/${secret?.metadata.resourceVersion}`;
    const cached = this.#stores.get(key);
    if (cached) return cached;
    const env = parseEnvFile(Buffer.from(secret?.data?.[ref?.key ?? ""] ?? "", "base64").toString());
    const store = blobStoreOf(location, await credentialOf(env));
    this.#stores.clear();
    this.#stores.set(key, store);
    return store;
  }
}

/** One Schedule: its status, its due Backup, its expired Backups. */
export class VeleroScheduleReconciler implements Reconciler {
  readonly #d: VeleroReconcilerDeps;
  readonly #now: () => number;
  readonly #storage: VeleroStorage;
  /** The last backup each Schedule (by uid) was given: the cache may not show the status write yet. */
  readonly #taken = new Map<string, string>();
  /** The Backup this process made last per Schedule (by uid), until the cache shows it. */
  readonly #made = new Map<string, CachedBackup>();
  /** Backups (uid → name) this process deleted, until the cache drops them. */
  readonly #deleted = new Map<string, string>();

  constructor(deps: VeleroReconcilerDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
    this.#storage = deps.storage;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const schedule = this.#d.schedules.get(req.namespace, req.name);
    if (!schedule || schedule.metadata.deletionTimestamp) return {};
    const invalid = cronError(schedule.spec.schedule);
    if (invalid) {
      await this.#write(ctx, schedule, { phase: "FailedValidation", validationErrors: [invalid] });
      return {};
    }
    const now = this.#now();
    const kept = await this.#expire(ctx, schedule, now);
    let lastBackup = this.#lastBackupOf(schedule);
    let newest: Backup | undefined;
    if (!schedule.spec.paused && this.#dueAt(schedule, lastBackup) <= now) {
      newest = await this.#backUp(ctx, schedule, new Date(now));
      lastBackup = rfc3339(now);
      this.#taken.set(schedule.metadata.uid ?? "", lastBackup);
      this.#made.set(schedule.metadata.uid ?? "", cachedBackup(newest));
    }
    await this.#write(
      ctx,
      schedule,
      { phase: "Enabled", ...(lastBackup ? { lastBackup } : {}) },
      newest &&
        outcomeAnnotations(newest, kept, schedule.metadata.annotations?.[LAST_BACKUP_ANNOTATIONS.completed]),
    );
    return this.#nextLook(schedule, lastBackup, kept, now);
  }

  /** The status's lastBackup, or the one this process gave when the cache does not show it yet. */
  #lastBackupOf(schedule: Schedule): string | undefined {
    const remembered = this.#taken.get(schedule.metadata.uid ?? "");
    return [schedule.status?.lastBackup, remembered]
      .filter((t) => t !== undefined)
      .sort()
      .at(-1);
  }

  /** Back at the next due time or the next expiration, whichever is first. */
  #nextLook(schedule: Schedule, lastBackup: string | undefined, kept: CachedBackup[], now: number): Result {
    const next = schedule.spec.paused ? Infinity : this.#dueAt(schedule, lastBackup) - now;
    const expiries = kept.map((b) => Date.parse(b.status?.expiration ?? "") - now).filter((ms) => ms > 0);
    const wait = Math.min(next, ...expiries);
    return Number.isFinite(wait) ? { requeueAfterMs: Math.max(wait, 100) } : {};
  }

  /** When the next Backup is due: at once when none was taken, else the cron's next time (or the test override). */
  #dueAt(schedule: Schedule, lastBackup: string | undefined): number {
    const last = Date.parse(lastBackup ?? "");
    if (Number.isNaN(last)) {
      const created = Date.parse(schedule.metadata.creationTimestamp ?? "");
      return schedule.spec.skipImmediately ? this.#cronAfter(schedule, created) : 0;
    }
    const override = Number(schedule.metadata.annotations?.[PERIOD_OVERRIDE_ANNOTATION] ?? "");
    if (override > 0) return last + override;
    return this.#cronAfter(schedule, last);
  }

  #cronAfter(schedule: Schedule, t: number): number {
    return nextFire(parseCron(schedule.spec.schedule), new Date(t))?.getTime() ?? Infinity;
  }

  /**
   * The status and the outcome annotations in one apply: Velero's Schedule CRD has no status
   * subresource, and an apply drops the fields its manager no longer sends. Without a new outcome,
   * the annotations this manager wrote before stay as they are.
   */
  async #write(
    ctx: ReconcileContext,
    schedule: Schedule,
    status: Schedule["status"],
    outcome?: Record<string, string>,
  ): Promise<void> {
    const merged = { ...schedule.status, ...status };
    if (status?.phase === "Enabled") delete merged.validationErrors;
    const keys: string[] = Object.values(LAST_BACKUP_ANNOTATIONS);
    const previous = Object.entries(schedule.metadata.annotations ?? {}).filter(([k]) => keys.includes(k));
    const annotations = outcome ?? Object.fromEntries(previous);
    const unchanged =
      isDeepStrictEqual(schedule.status ?? {}, merged) &&
      isDeepStrictEqual(Object.fromEntries(previous), annotations);
    if (unchanged) return;
    await this.#d.applier.apply(
      ScheduleResource,
      {
        apiVersion: VELERO_API_VERSION,
        kind: SCHEDULE_KIND,
        metadata: { name: schedule.metadata.name, namespace: VELERO_NAMESPACE, annotations },
        status: merged,
      },
      { signal: ctx.signal },
    );
  }

  /** Creates the due Backup and completes it (or fails it), writing its contents to storage. */
  async #backUp(ctx: ReconcileContext, schedule: Schedule, at: Date): Promise<Backup> {
    const name = scheduledBackupName(schedule.metadata.name ?? "", at);
    const ttlHours = Number(/^(\d+)h/.exec(schedule.spec.template.ttl ?? "")?.[1] ?? 720);
    const started = at.toISOString().replace(/\.\d+Z$/, "Z");
    const location = await this.#location(ctx, schedule);
    const base: Backup = {
      apiVersion: VELERO_API_VERSION,
      kind: BACKUP_KIND,
      metadata: {
        name,
        namespace: VELERO_NAMESPACE,
        labels: {
          ...schedule.metadata.labels,
          [SCHEDULE_NAME_LABEL]: schedule.metadata.name ?? "",
          ...(location ? { [STORAGE_LOCATION_LABEL]: location.metadata.name ?? "" } : {}),
        },
      },
      spec: schedule.spec.template,
    };
    const expiration = new Date(at.getTime() + ttlHours * 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
    const outcome = await this.#store(ctx, schedule, name, location);
    const backup: Backup = {
      ...base,
      status: {
        startTimestamp: started,
        completionTimestamp: started,
        expiration,
        ...outcome,
      },
    };
    try {
      return await this.#d.client.create(BackupResource, backup, { signal: ctx.signal });
    } catch (err) {
      // Made by a reconcile that crashed before it wrote the Schedule's status: that one stands.
      const existing = await this.#d.client.find<Backup>(BackupResource, name, VELERO_NAMESPACE);
      if (existing) return existing;
      throw err;
    }
  }

  /** Writes the Backup's contents; the status fields of its outcome. */
  async #store(
    ctx: ReconcileContext,
    schedule: Schedule,
    name: string,
    location: BackupStorageLocation | undefined,
  ): Promise<Backup["status"]> {
    if (schedule.metadata.annotations?.[SIMULATE_FAILURE_ANNOTATION] === "true")
      return { phase: "Failed", failureReason: FAILED };
    if (!location)
      return {
        phase: "FailedValidation",
        validationErrors: ["an existing backup storage location was not specified and no default was found"],
      };
    try {
      const store = await this.#storage.storeFor(location);
      const contents = await this.#contents(ctx, schedule.spec.template.includedNamespaces ?? []);
      await store.write(
        backupObjectName(name, location.spec.objectStorage.prefix),
        JSON.stringify({ backup: name, namespaces: contents }),
        "application/json",
        { signal: ctx.signal },
      );
      return { phase: "Completed" };
    } catch (err) {
      return { phase: "Failed", failureReason: `writing to ${location.metadata.name}: ${errorMessage(err)}` };
    }
  }

  /** The kinds listed per namespace: names only, never a Secret's data. */
  async #contents(ctx: ReconcileContext, namespaces: string[]): Promise<Record<string, string[]>> {
    const kinds: ResourceType[] = [HostedClusterResource, NodePoolResource, SecretResource];
    const out: Record<string, string[]> = {};
    for (const namespace of namespaces) {
      const names: string[] = [];
      for (const kind of kinds) {
        const list = await this.#d.client.list(kind, { namespace, signal: ctx.signal });
        for (const item of list.items) names.push(`${kind.kind}/${item.metadata.name ?? ""}`);
      }
      out[namespace] = names.sort();
    }
    return out;
  }

  #location(ctx: ReconcileContext, schedule: Schedule): Promise<BackupStorageLocation | undefined> {
    return this.#storage.location(ctx.signal, schedule.spec.template.storageLocation);
  }

  /**
   * The Schedule's Backups as the cache has them, made up to what this process wrote: the Backup
   * it made last until the cache shows it, without those it deleted until the cache drops them.
   */
  #backupsOf(schedule: Schedule): CachedBackup[] {
    for (const [uid, name] of this.#deleted)
      if (this.#d.backups.get(VELERO_NAMESPACE, name)?.metadata.uid !== uid) this.#deleted.delete(uid);
    const cached = this.#d.backups.byIndex(BACKUPS_BY_SCHEDULE, schedule.metadata.name ?? "");
    const made = this.#made.get(schedule.metadata.uid ?? "");
    const shown = made && cached.some((b) => b.metadata.uid === made.metadata.uid);
    if (shown) this.#made.delete(schedule.metadata.uid ?? "");
    return [...cached, ...(made && !shown ? [made] : [])].filter(
      (b) => !this.#deleted.has(b.metadata.uid ?? ""),
    );
  }

  /** Deletes the Schedule's Backups past their expiration, and their stored objects; the rest. */
  async #expire(ctx: ReconcileContext, schedule: Schedule, now: number): Promise<CachedBackup[]> {
    const kept: CachedBackup[] = [];
    for (const backup of this.#backupsOf(schedule)) {
      const expiration = Date.parse(backup.status?.expiration ?? "");
      if (Number.isNaN(expiration) || expiration > now) kept.push(backup);
      else await this.#remove(ctx, schedule, backup);
    }
    return kept;
  }

  /** An expired Backup: its stored object, then the Backup. */
  async #remove(ctx: ReconcileContext, schedule: Schedule, backup: CachedBackup): Promise<void> {
    const name = backup.metadata.name ?? "";
    const location = await this.#location(ctx, schedule);
    if (location && backup.status?.phase === "Completed") {
      const store = await this.#storage.storeFor(location);
      await store.remove(backupObjectName(name, location.spec.objectStorage.prefix), { signal: ctx.signal });
    }
    await this.#d.client
      .delete(BackupResource, { name, namespace: VELERO_NAMESPACE }, { signal: ctx.signal })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    this.#deleted.set(backup.metadata.uid ?? "", name);
  }
}

/** LAST_BACKUP_ANNOTATIONS: the newest Backup's phase and failure, the newest completion (kept from before if none). */
function outcomeAnnotations(
  newest: CachedBackup,
  kept: CachedBackup[],
  before: string | undefined,
): Record<string, string> {
  const status = newest.status ?? {};
  const completed = [newest, ...kept]
    .filter((b) => b.status?.phase === "Completed")
    .map((b) => b.status?.completionTimestamp ?? "")
    .sort()
    .at(-1);
  const failure = status.failureReason ?? status.validationErrors?.join("; ");
  const lastCompleted = completed ?? before;
  const recent = recentCompleted([newest, ...kept]);
  return {
    [LAST_BACKUP_ANNOTATIONS.phase]: status.phase ?? "",
    ...(failure ? { [LAST_BACKUP_ANNOTATIONS.failure]: failure } : {}),
    ...(lastCompleted ? { [LAST_BACKUP_ANNOTATIONS.completed]: lastCompleted } : {}),
    ...(recent ? { [LAST_BACKUP_ANNOTATIONS.recent]: recent } : {}),
  };
}

/** The newest Completed Backups' names, newest first, comma-separated: what a restore may name. */
export function recentCompleted(backups: readonly CachedBackup[]): string | undefined {
  const names = backups
    .filter((b) => b.status?.phase === "Completed")
    .sort((a, b) =>
      `${b.status?.completionTimestamp}/${b.metadata.name}`.localeCompare(
        `${a.status?.completionTimestamp}/${a.metadata.name}`,
      ),
    )
    .slice(0, RECENT_BACKUPS_MAX)
    .map((b) => b.metadata.name ?? "");
  return names.length > 0 ? names.join(",") : undefined;
}

/** The location's blob container: the account's URL and the bucket, trusting its CA. */
function blobStoreOf(
  location: BackupStorageLocation,
  credential: ClientSecretCredential | undefined,
): BlobStore {
  const ca = location.spec.objectStorage.caCert;
  const account = location.spec.config?.storageAccountURI ?? "";
  return new HttpsBlobStore({
    containerUrl: `${account.replace(/\/+$/, "")}/${location.spec.objectStorage.bucket}`,
    ...(credential ? { credential } : {}),
    ...(ca ? { tls: sdkTlsSettings([...rootCertificates, Buffer.from(ca, "base64").toString()]) } : {}),
  });
}

/** A client-secret credential from the Azure plugin's file, with the simulator's authority CA; none without a secret. */
async function credentialOf(env: Record<string, string>): Promise<ClientSecretCredential | undefined> {
  const { AZURE_TENANT_ID: tenant, AZURE_CLIENT_ID: client, AZURE_CLIENT_SECRET: secret } = env;
  if (!tenant || !client || !secret) return undefined;
  const authority = env.AZURE_AUTHORITY_HOST;
  const caFile = env.AZURE_AUTHORITY_CA_FILE;
  const ca = caFile ? await readFile(caFile, "utf8") : undefined;
  return new ClientSecretCredential(tenant, client, secret, {
    ...(authority ? { authorityHost: authority, disableInstanceDiscovery: true } : {}),
    ...(ca ? { tlsOptions: sdkTlsSettings([...rootCertificates, ca]) } : {}),
  });
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

/** KEY=value lines, as the Azure plugin reads its credentials file. */
function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
