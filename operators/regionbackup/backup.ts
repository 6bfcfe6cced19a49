/**
 * Taking one region backup: list the selection from the apiserver, seal it, write it as
 * `backups/<takenAt>.json.gz.enc`, then delete what falls past the retention, then replace the
 * pointer blob `latest` (the newest backup and the retained ones, newest first).
 *
 * Lists go to the apiserver, in pages of 500, not to the informers: the shared caches hold objects
 * transformed for the controllers (managedFields summarised, strings interned) and no Secrets
 * outside the operators' namespace, and a list per kind gives the resourceVersion the backup is
 * consistent with per kind. At 10,000 clusters that is some 30 lists a minute, served by the
 * apiserver's watch cache.
 *
 * The pointer names the retained backups because the blob client has no list (one container,
 * three verbs). The order of the writes keeps `latest` readable after a crash anywhere: old
 * backups are removed only while the pointer still names a newer one that exists; a crash
 * between the backup's write and the pointer's leaves one blob that no pointer names.
 */
import { NamespaceResource } from "../api/core.ts";
import type { KubeObject, ResourceType } from "../api/meta/v1.ts";
import type { BlobStore } from "../azure/blob.ts";
import type { KubeClient } from "../runtime/kube.ts";
import {
  FORMAT_VERSION,
  sealDocument,
  type BackedUpObject,
  type BackupDocument,
  type BackupKey,
} from "./document.ts";
import { NAMESPACES, SELECTION, stripServerSet, typeKey, type SelectionEntry } from "./selection.ts";

export const LATEST_BLOB = "latest";
export const DEFAULT_RETENTION = 48;
const CONTENT_TYPE = "application/vnd.hcp-region-backup+json";

/** The pointer blob: the newest backup first. */
export interface BackupPointer {
  latest: string;
  takenAt: string;
  retained: string[];
}

export interface TakeBackupOptions {
  client: KubeClient;
  store: BlobStore;
  key: BackupKey;
  region: string;
  /** The operators' namespace (signing keys, the catalog). */
  namespace: string;
  /** Backups kept, the new one included. Default DEFAULT_RETENTION. */
  retention?: number;
  intervalSeconds?: number;
  now?: () => Date;
  signal?: AbortSignal;
}

export interface TakenBackup {
  blob: string;
  takenAt: string;
  objects: number;
  bytes: number;
  /** Backups deleted as past the retention. */
  removed: string[];
}

export const backupBlobName = (takenAt: string): string => `backups/${takenAt}.json.gz.enc`;

async function listEntry(
  client: KubeClient,
  e: SelectionEntry,
  opts: { namespace: string; signal?: AbortSignal },
): Promise<{ items: KubeObject[]; resourceVersion: string }> {
  const namespace = e.operatorsNamespaceOnly ? opts.namespace : undefined;
  if (e.name) {
    const found = await client.find(e.type, e.name, namespace, { signal: opts.signal });
    return { items: found ? [found] : [], resourceVersion: found?.metadata.resourceVersion ?? "" };
  }
  const list = await client.listAll(e.type, {
    ...(namespace ? { namespace } : {}),
    ...(e.labelSelector ? { labelSelector: e.labelSelector } : {}),
    signal: opts.signal,
  });
  return { items: list.items, resourceVersion: list.metadata.resourceVersion ?? "" };
}

function held(t: ResourceType, obj: KubeObject): BackedUpObject {
  return { type: typeKey(t), uid: obj.metadata.uid ?? "", object: stripServerSet(obj, t) };
}

/** Every object of the selection, and each list's resourceVersion. */
export async function collect(
  client: KubeClient,
  opts: { namespace: string; signal?: AbortSignal },
): Promise<Pick<BackupDocument, "objects" | "resourceVersions">> {
  const objects: BackedUpObject[] = [];
  const resourceVersions: Record<string, string[]> = {};
  const record = (t: ResourceType, rv: string): void => {
    (resourceVersions[typeKey(t)] ??= []).push(rv);
  };
  for (const e of SELECTION) {
    const { items, resourceVersion } = await listEntry(client, e, opts);
    record(e.type, resourceVersion);
    for (const item of items) if (!item.metadata.deletionTimestamp) objects.push(held(e.type, item));
  }
  const subscriptions = await listEntry(client, NAMESPACES, opts);
  record(NamespaceResource, subscriptions.resourceVersion);
  const namespaces = new Map(subscriptions.items.map((ns) => [ns.metadata.name ?? "", ns]));
  const wanted = new Set(objects.map((o) => o.object.metadata.namespace).filter((n): n is string => !!n));
  for (const name of [...wanted].filter((n) => !namespaces.has(n))) {
    const ns = await client.find(NamespaceResource, name, undefined, { signal: opts.signal });
    if (ns) namespaces.set(name, ns);
  }
  const nsObjects = [...namespaces.values()].map((ns) => {
    const h = held(NamespaceResource, ns);
    delete h.object["status"];
    return h;
  });
  return { objects: [...nsObjects, ...objects], resourceVersions };
}

/** The pointer, or undefined when there is none yet. */
export async function readPointer(
  store: BlobStore,
  signal?: AbortSignal,
): Promise<BackupPointer | undefined> {
  const body = await store.read(LATEST_BLOB, signal ? { signal } : {});
  if (body === undefined) return undefined;
  const parsed = JSON.parse(body) as Partial<BackupPointer>;
  if (typeof parsed.latest !== "string" || !Array.isArray(parsed.retained))
    throw new Error(`${store.location}/${LATEST_BLOB} is not a backup pointer`);
  return parsed as BackupPointer;
}

/** Takes one backup now; resolves what it wrote. */
export async function takeBackup(o: TakeBackupOptions): Promise<TakenBackup> {
  const started = (o.now ?? (() => new Date()))();
  const takenAt = started.toISOString();
  const callOpts = o.signal ? { signal: o.signal } : {};
  const collected = await collect(o.client, { namespace: o.namespace, ...callOpts });
  const doc: BackupDocument = {
    formatVersion: FORMAT_VERSION,
    region: o.region,
    takenAt,
    listDurationMs: Date.now() - started.getTime(),
    ...(o.intervalSeconds !== undefined ? { intervalSeconds: o.intervalSeconds } : {}),
    ...collected,
  };
  const body = sealDocument(doc, o.key);
  const blob = backupBlobName(takenAt);
  await o.store.write(blob, body, CONTENT_TYPE, callOpts);
  const previous = await readPointer(o.store, o.signal);
  const all = [blob, ...(previous?.retained ?? []).filter((b) => b !== blob)];
  // Two at least: the previous latest is never removed before the pointer has moved off it.
  const keep = Math.max(2, o.retention ?? DEFAULT_RETENTION);
  const removed = all.slice(keep);
  for (const old of removed) await o.store.remove(old, callOpts);
  const pointer: BackupPointer = { latest: blob, takenAt, retained: all.slice(0, keep) };
  await o.store.write(LATEST_BLOB, JSON.stringify(pointer), "application/json", callOpts);
  return { blob, takenAt, objects: doc.objects.length, bytes: Buffer.byteLength(body), removed };
}
