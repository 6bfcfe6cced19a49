/**
 * Restoring a region backup into an EMPTY service cluster (the CRDs installed, the operators not
 * running). Objects are created in ranks (restoreRanks: by tier, selection.ts, and an owner always a
 * rank before what it owns), the objects of one rank side by side (RESTORE_CONCURRENCY); each gets
 * its ownerReferences pointed at the new uids of its owners, then its status written through
 * /status. Labels and annotations are kept exactly; each object of the region's own kinds also gets
 * ORIGINAL_UID_ANNOTATION (the uid it was first created with: its backed-up one, or the annotation
 * an earlier restore set), which the controllers name its Azure resources, namespaces and works by.
 *
 * Crash-safe and idempotent: before the first cluster-scoped region object, a record ConfigMap
 * (RESTORE_RECORD) in the operators' namespace names the backup being restored; a restore run
 * again from the same backup passes the emptiness check by that record, keeps every object whose
 * create is refused as existing (writing its status if the first run stopped before that), and
 * creates the rest. When an object fails, the creates already started finish, none after them
 * begins, and the error names the object (RestoreFailedError): a run again finishes the restore.
 */
import { ConfigMapResource, NamespaceResource } from "../api/core.ts";
import type { KubeObject, OwnerReference, ResourceType } from "../api/meta/v1.ts";
import {
  GROUP,
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  ORIGINAL_UID_ANNOTATION,
  RESTORED_WORK_FINALIZER,
} from "../api/v1alpha1/index.ts";
import { KubeApiError, type KubeClient } from "../runtime/kube.ts";
import type { BackedUpObject, BackupDocument } from "./document.ts";
import { entryOfKey, REGION_KINDS, typeKey, typeOf } from "./selection.ts";
import { sideBySide } from "./side-by-side.ts";

export const RESTORE_RECORD = "hcp-region-restore";

/**
 * Objects a rank holds being created at once: the rank goes at the apiserver's pace (the bench's
 * raw-client floor at 50 is no faster) and stays far under its 200 mutating requests in flight.
 */
export const RESTORE_CONCURRENCY = 32;

export class RestoreRefusedError extends Error {
  override readonly name = "RestoreRefusedError";
}

/** An object could not be restored; what was started finished, nothing after it was begun. */
export class RestoreFailedError extends Error {
  override readonly name = "RestoreFailedError";
  /** "Kind namespace/name" of each object that failed, the first first. */
  readonly objects: string[];
  constructor(failures: ReadonlyArray<{ object: string; error: unknown }>, restored: number, total: number) {
    const [first, ...more] = failures;
    const why = (e: unknown): string => (e instanceof Error ? e.message : String(e));
    const others = more.length ? ` (and ${more.length} more: ${more.map((f) => f.object).join(", ")})` : "";
    super(
      `restoring ${first?.object}: ${why(first?.error)}${others}; ${restored} of ${total} objects are restored, ` +
        "the rest not: run the restore again from the same backup to finish it",
      { cause: first?.error },
    );
    this.objects = failures.map((f) => f.object);
  }
}

/** Where an object is: `group/Kind/namespace/name` (namespace "" when cluster-scoped). */
const refKey = (group: string, kind: string, namespace: string, name: string): string =>
  `${group}/${kind}/${namespace}/${name}`;

function keyOf(o: BackedUpObject): string {
  const m = o.object.metadata;
  return `${o.type}/${m.namespace ?? ""}/${m.name ?? ""}`;
}

/** "Kind namespace/name" (or "Kind name"), for messages. */
function whereOf(o: BackedUpObject): string {
  const m = o.object.metadata;
  return `${o.object.kind} ${[m.namespace, m.name].filter(Boolean).join("/")}`;
}

/** The key of the owner an ownerReference names, from an object in `namespace`; undefined for a kind never held. */
function ownerKey(ref: OwnerReference, namespace: string): string | undefined {
  const entry = typeOf(ref.apiVersion, ref.kind);
  if (!entry) return undefined;
  return refKey(entry.type.group, ref.kind, entry.type.namespaced ? namespace : "", ref.name);
}

/**
 * The order of creation, in ranks: by tier, and an object a rank after each of its owners (a
 * kubeconfig Secret owned by its BreakglassCredential, a task owned by its Rollout, a pool's
 * owner in its own tier), so no object shares a rank with an owner and a rank's objects can be
 * created side by side. Within a rank, the document's order.
 */
export function restoreRanks(objects: readonly BackedUpObject[]): BackedUpObject[][] {
  const byKey = new Map(objects.map((o) => [keyOf(o), o]));
  const rank = new Map<string, number>();
  const rankOf = (o: BackedUpObject, seen: Set<string>): number => {
    const key = keyOf(o);
    const known = rank.get(key);
    if (known !== undefined) return known;
    let r = entryOfKey(o.type)?.tier ?? Number.MAX_SAFE_INTEGER;
    seen.add(key);
    for (const ref of o.object.metadata.ownerReferences ?? []) {
      const owner = byKey.get(ownerKey(ref, o.object.metadata.namespace ?? "") ?? "");
      if (owner && !seen.has(keyOf(owner))) r = Math.max(r, rankOf(owner, seen) + 1);
    }
    rank.set(key, r);
    return r;
  };
  const ranks = new Map<number, BackedUpObject[]>();
  for (const o of objects) {
    const r = rankOf(o, new Set());
    const these = ranks.get(r);
    if (these) these.push(o);
    else ranks.set(r, [o]);
  }
  return [...ranks.entries()].sort(([a], [b]) => a - b).map(([, these]) => these);
}

/** restoreRanks, one after the other: an owner always before what it owns. */
export function restorePlan(objects: readonly BackedUpObject[]): BackedUpObject[] {
  return restoreRanks(objects).flat();
}

/** The ownerReferences with their owners' uids in the target; those with no owner there are dropped. */
export function mapOwnerReferences(
  refs: readonly OwnerReference[] | undefined,
  namespace: string,
  uidOf: (key: string) => string | undefined,
): { kept: OwnerReference[]; dropped: OwnerReference[] } {
  const kept: OwnerReference[] = [];
  const dropped: OwnerReference[] = [];
  for (const ref of refs ?? []) {
    const key = ownerKey(ref, namespace);
    const uid = key ? uidOf(key) : undefined;
    if (uid) kept.push({ ...ref, uid });
    else dropped.push(ref);
  }
  return { kept, dropped };
}

export interface RestoreOptions {
  client: KubeClient;
  doc: BackupDocument;
  /** The blob the document came from, for the record. */
  source: string;
  /** The operators' namespace: where the restore record lives. */
  namespace: string;
  signal?: AbortSignal;
  /** Told of each object as it is done. */
  progress?: (line: string) => void;
}

export interface RestoreSummary {
  takenAt: string;
  /** Per `group/kind`. */
  counts: Record<string, { created: number; existed: number }>;
  /** "Kind ns/name → OwnerKind name": references whose owner is neither in the backup nor here. */
  droppedOwners: string[];
  /** "Kind ns/name": objects being deleted when the backup was taken, deleted again once restored. */
  resumedDeletions: string[];
}

async function checkCrds(o: RestoreOptions): Promise<void> {
  for (const t of REGION_KINDS) {
    try {
      await o.client.list(t, { limit: 1, signal: o.signal });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404)
        throw new RestoreRefusedError(
          `the service cluster does not serve ${t.plural}.${t.group}: install the CRDs (crds/) before restoring`,
        );
      throw err;
    }
  }
}

/** Refuses unless every CRD is served and no cluster exists (except from this same backup's restore). */
export async function checkTarget(o: RestoreOptions): Promise<void> {
  const { client, signal } = o;
  await checkCrds(o);
  const present: string[] = [];
  for (const t of [HcpClusterResource, ManagementClusterResource] as ResourceType[]) {
    const page = await client.list(t, { limit: 5, signal });
    for (const item of page.items)
      present.push(`${t.kind} ${[item.metadata.namespace, item.metadata.name].filter(Boolean).join("/")}`);
  }
  if (present.length === 0) return;
  const record = await client.find(ConfigMapResource, RESTORE_RECORD, o.namespace, { signal });
  const data = (record?.["data"] ?? {}) as Record<string, string>;
  if (data["takenAt"] === o.doc.takenAt && data["region"] === o.doc.region) return;
  throw new RestoreRefusedError(
    `the service cluster is not empty (${present.join(", ")}${present.length >= 5 ? ", …" : ""}); a restore goes into an empty one only`,
  );
}

async function writeRecord(o: RestoreOptions, state: string): Promise<void> {
  const cm = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: RESTORE_RECORD, namespace: o.namespace },
    data: { source: o.source, takenAt: o.doc.takenAt, region: o.doc.region, state },
  };
  await o.client.apply(ConfigMapResource, cm, { fieldManager: "hcp-region-restore", signal: o.signal });
}

const hasStatus = (obj: KubeObject | undefined): boolean => {
  const status = obj?.["status"];
  return typeof status === "object" && status !== null && Object.keys(status).length > 0;
};

/**
 * The cluster deletion phases that come after its works are gone (operators/cluster/delete.ts): a
 * cluster backed up in one of them has no work left for an agent to hold.
 */
const PAST_THE_WORKS = ["DeletingAzureResources", "DeletingOidcIssuer"];

/**
 * Whether a restored object's work is held by an agent from before the loss, so its controller must
 * write it again before deleting the object (RESTORED_WORK_FINALIZER).
 */
function awaitsWork(o: BackedUpObject, t: ResourceType): boolean {
  if (t.group !== GROUP || (t.kind !== HcpClusterResource.kind && t.kind !== NodePoolResource.kind))
    return false;
  if (!o.deleting) return true;
  const conditions = (
    o.object["status"] as { conditions?: Array<{ type: string; reason?: string }> } | undefined
  )?.conditions;
  const deleting = conditions?.find((c) => c.type === "Deleting");
  return !PAST_THE_WORKS.includes(deleting?.reason ?? "");
}

/** The apiserver's refusal of a create in a namespace that is being deleted. */
function isNamespaceTerminating(err: unknown): boolean {
  if (!(err instanceof KubeApiError) || err.code !== 403) return false;
  const causes = (err.status as { details?: { causes?: Array<{ reason?: string }> } } | undefined)?.details
    ?.causes;
  return (
    causes?.some((c) => c.reason === "NamespaceTerminating") === true ||
    err.message.includes("because it is being terminated")
  );
}

class Restorer {
  readonly #o: RestoreOptions;
  readonly #uids = new Map<string, string>();
  /** Per object created, the owner references it lost; merged in plan order at the end. */
  readonly #dropped = new Map<BackedUpObject, string[]>();
  readonly summary: RestoreSummary;
  /** Objects created or found so far, their statuses written. */
  done = 0;

  constructor(o: RestoreOptions) {
    this.#o = o;
    this.summary = { takenAt: o.doc.takenAt, counts: {}, droppedOwners: [], resumedDeletions: [] };
  }

  /**
   * Creates each object of `objects` (no one owning another), RESTORE_CONCURRENCY at once. When
   * one fails, those started finish and the error names every failed object.
   */
  async rank(objects: readonly BackedUpObject[]): Promise<void> {
    const { signal } = this.#o;
    const { failures } = await sideBySide(objects, RESTORE_CONCURRENCY, (o) => this.one(o), signal);
    // Stopped from outside: the caller's reason, not an object's failure.
    if (signal?.aborted) throw signal.reason;
    if (failures.length > 0)
      throw new RestoreFailedError(
        failures.map((f) => ({ object: whereOf(f.item), error: f.error })),
        this.done,
        this.#o.doc.objects.length,
      );
  }

  /** The owner references dropped from the objects created, in the plan's order. */
  droppedOwners(plan: readonly BackedUpObject[]): string[] {
    return plan.flatMap((o) => this.#dropped.get(o) ?? []);
  }

  /** The new uid of an owner: restored in this run, else found here by name. */
  async #resolveOwners(o: BackedUpObject): Promise<void> {
    const ns = o.object.metadata.namespace ?? "";
    for (const ref of o.object.metadata.ownerReferences ?? []) {
      const key = ownerKey(ref, ns);
      const entry = typeOf(ref.apiVersion, ref.kind);
      if (!key || !entry || this.#uids.has(key)) continue;
      const found = await this.#o.client.find(entry.type, ref.name, entry.type.namespaced ? ns : undefined, {
        signal: this.#o.signal,
      });
      if (found?.metadata.uid) this.#uids.set(key, found.metadata.uid);
    }
  }

  /**
   * Creates the object, or on AlreadyExists (a run before this one made it) reads it to learn its
   * uid and whether its status is still to be written: a fresh restore costs a POST and a PUT.
   */
  async one(o: BackedUpObject): Promise<void> {
    const entry = entryOfKey(o.type);
    if (!entry) throw new Error(`the backup holds ${o.type}, a kind this version does not restore`);
    const t = entry.type;
    // Before any await, so the summary's kinds come in the plan's order.
    const count = (this.summary.counts[o.type] ??= { created: 0, existed: 0 });
    const { body, dropped } = await this.#body(o, t);
    const made = await this.#createOrFind(t, body);
    if (!made) {
      // Its namespace was being deleted at the backup, and this run's predecessor deleted it again.
      this.done++;
      this.#o.progress?.(`${whereOf(o)}: not created, its namespace is being deleted`);
      return;
    }
    const { current, existed } = made;
    if (existed) count.existed++;
    else {
      count.created++;
      if (dropped.length > 0) this.#dropped.set(o, dropped);
    }
    this.#uids.set(keyOf(o), current.metadata.uid ?? "");
    if (entry.status) await this.#writeStatus(t, o, current);
    this.done++;
    this.#o.progress?.(`${whereOf(o)}: ${existed ? "exists, kept" : "created"}`);
  }

  /** The backed-up status, unless the object has one (an earlier run wrote it). */
  async #writeStatus(t: ResourceType, o: BackedUpObject, current: KubeObject): Promise<void> {
    if (!hasStatus(o.object) || hasStatus(current)) return;
    await this.#o.client.replace(t, { ...current, status: o.object["status"] }, "status", {
      signal: this.#o.signal,
    });
  }

  /**
   * Undefined when the object is not there and cannot be: its namespace is terminating (a namespace
   * being deleted at the backup is deleted again at the end of a run, so a run after that one finds
   * it going, and the apiserver refuses every create in it, even of an object that exists).
   */
  async #createOrFind(
    t: ResourceType,
    body: KubeObject,
  ): Promise<{ current: KubeObject; existed: boolean } | undefined> {
    const { client, signal } = this.#o;
    try {
      return { current: await client.create(t, body, { signal }), existed: false };
    } catch (err) {
      const terminating = isNamespaceTerminating(err);
      if (!(err instanceof KubeApiError && err.code === 409) && !terminating) throw err;
      const found = await client.find(t, body.metadata.name ?? "", body.metadata.namespace, { signal });
      if (!found && terminating) return undefined;
      // Gone between the two calls: something else is deleting it, which a restore does not decide.
      if (!found) throw err;
      return { current: found, existed: true };
    }
  }

  /** An object being deleted at the backup is deleted again (its finalizer holds it for its controller). */
  async resumeDeletion(o: BackedUpObject): Promise<void> {
    const t = entryOfKey(o.type)?.type;
    if (!t || !o.deleting) return;
    const { client, signal } = this.#o;
    const meta = o.object.metadata;
    const current = await client.find(t, meta.name ?? "", meta.namespace, { signal });
    const where = whereOf(o);
    this.summary.resumedDeletions.push(where);
    if (!current || current.metadata.deletionTimestamp) return;
    await client.delete(t, { name: meta.name ?? "", namespace: meta.namespace }, { signal });
    this.#o.progress?.(`${where}: being deleted at the backup, deleted again`);
  }

  /** What to create: no status, owners on their new uids, the original uid and the finalizer. */
  async #body(o: BackedUpObject, t: ResourceType): Promise<{ body: KubeObject; dropped: string[] }> {
    const rest: KubeObject = { ...o.object };
    delete rest["status"];
    const meta = { ...rest.metadata };
    await this.#resolveOwners(o);
    const { kept, dropped } = mapOwnerReferences(meta.ownerReferences, meta.namespace ?? "", (k) =>
      this.#uids.get(k),
    );
    if (meta.ownerReferences) {
      if (kept.length > 0) meta.ownerReferences = kept;
      else delete meta.ownerReferences;
    }
    if (t.group === GROUP && o.uid)
      meta.annotations = { [ORIGINAL_UID_ANNOTATION]: o.uid, ...meta.annotations };
    if (awaitsWork(o, t))
      meta.finalizers = [
        ...(meta.finalizers ?? []).filter((f) => f !== RESTORED_WORK_FINALIZER),
        RESTORED_WORK_FINALIZER,
      ];
    return {
      body: { ...rest, metadata: meta },
      dropped: dropped.map((ref) => `${whereOf(o)} → ${ref.kind} ${ref.name}`),
    };
  }
}

/** Restores `doc` into the service cluster; see the module comment. */
export async function restoreRegion(o: RestoreOptions): Promise<RestoreSummary> {
  await checkTarget(o);
  const restorer = new Restorer(o);
  const namespace = typeKey(NamespaceResource);
  const ranks = restoreRanks(o.doc.objects);
  await restorer.rank(ranks.flat().filter((x) => x.type === namespace));
  // The operators' namespace may be one the backup did not hold (nothing of the region's lived there).
  const own = { metadata: { name: o.namespace } };
  await o.client.createIfAbsent(NamespaceResource, own, { signal: o.signal });
  await writeRecord(o, "InProgress");
  for (const rank of ranks) {
    const these = rank.filter((x) => x.type !== namespace);
    if (these.length > 0) await restorer.rank(these);
  }
  const plan = ranks.flat();
  restorer.summary.droppedOwners.push(...restorer.droppedOwners(plan));
  // Once everything is there, so that a deleting cluster finds its node pools to delete first.
  for (const obj of plan.filter((x) => x.deleting)) await restorer.resumeDeletion(obj);
  await writeRecord(o, "Complete");
  return restorer.summary;
}
