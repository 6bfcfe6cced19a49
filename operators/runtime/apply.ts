/**
 * Writes as one controller: server-side apply with that controller's field manager (objects and
 * /status), and finalizers added or removed with a merge patch guarded by resourceVersion, so a
 * lost race is a 409 to retry rather than a silently dropped finalizer. A status apply that would
 * change nothing is skipped, and so is an object apply that repeats this controller's last one,
 * also across a restart.
 */
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { KubeClient, KubeObject, RequestOptions, ResourceType } from "./kube.ts";

/** The digest of the object a controller last applied, so a restarted controller recognises its own write. */
export const DIGEST_ANNOTATION = "hcp.aro.dev/applied-digest";

function ownsOnlyMetadata(fields: unknown): boolean {
  return (
    typeof fields === "object" && fields !== null && Object.keys(fields).every((k) => k === "f:metadata")
  );
}

/**
 * An informer transform: managedFields cut down to what applyIfChanged reads after a restart
 * (which manager owns which top-level fields, and through which subresource). The full field sets
 * are often the largest part of a cached object. The summaries repeat across objects (the same
 * controllers own the same top-level fields of every cluster), so each distinct one is kept once,
 * frozen, and shared rather than one per object (docs/decisions/0008).
 */
export function summariseManagedFields<T extends KubeObject>(obj: T): T {
  const managed = obj.metadata.managedFields;
  if (!managed) return obj;
  const parts = managed.map(({ manager, operation, subresource, fieldsV1 }) => {
    const fields = Object.keys(typeof fieldsV1 === "object" && fieldsV1 !== null ? fieldsV1 : {});
    return {
      manager,
      operation,
      subresource,
      fields,
      key: JSON.stringify([manager, operation, subresource, fields]),
    };
  });
  const listKey = parts.map((p) => p.key).join("\n");
  let list = summaryLists.get(listKey);
  if (!list) {
    list = Object.freeze(parts.map(sharedSummary)) as ManagedFields;
    if (summaryLists.size < MAX_SHARED_SUMMARIES) summaryLists.set(listKey, list);
  }
  return { ...obj, metadata: { ...obj.metadata, managedFields: list } };
}

type ManagedFields = NonNullable<KubeObject["metadata"]["managedFields"]>;
type ManagedFieldsEntry = ManagedFields[number];

/**
 * Bounds the shared summaries: managers are named by clients, and a client that invents a new
 * name per write must not grow the process. Past the bound a summary is built per object again.
 */
const MAX_SHARED_SUMMARIES = 2_000;
const summaries = new Map<string, ManagedFieldsEntry>();
const summaryLists = new Map<string, ManagedFields>();

function sharedSummary(part: {
  manager: string | undefined;
  operation: ManagedFieldsEntry["operation"];
  subresource: string | undefined;
  fields: string[];
  key: string;
}): ManagedFieldsEntry {
  const known = summaries.get(part.key);
  if (known) return known;
  const { manager, operation, subresource, fields } = part;
  const entry: ManagedFieldsEntry = Object.freeze({
    ...(manager !== undefined ? { manager } : {}),
    ...(operation !== undefined ? { operation } : {}),
    ...(subresource !== undefined ? { subresource } : {}),
    fieldsV1: Object.freeze(Object.fromEntries(fields.map((k) => [k, EMPTY]))),
  });
  if (summaries.size < MAX_SHARED_SUMMARIES) summaries.set(part.key, entry);
  return entry;
}

const EMPTY = Object.freeze({});

/** What applyIfChanged and applyStatus remember of what they sent. */
function digestOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("base64");
}

function withDigest(obj: KubeObject, digest: string): KubeObject {
  const annotations = { ...obj.metadata.annotations, [DIGEST_ANNOTATION]: digest };
  return { ...obj, metadata: { ...obj.metadata, annotations } };
}

export interface ObjectRef {
  name: string;
  namespace?: string;
}

export class Applier {
  readonly client: KubeClient;
  readonly fieldManager: string;
  /** Per object: a digest of what was last applied here and the generation the server gave it. */
  readonly #applied = new Map<string, { digest: string; generation: number | undefined }>();
  /**
   * Per object whose cached copy has not caught up with a status write here: a digest of that
   * status and the resourceVersion the cached copy had before it. Dropped once the cache moves on.
   */
  readonly #statusWritten = new Map<string, { digest: string; before: string | undefined }>();

  constructor(client: KubeClient, fieldManager: string) {
    this.client = client;
    this.fieldManager = fieldManager;
  }

  /** Applies the fields this controller owns; fields it stops sending are removed. */
  apply<T extends KubeObject>(type: ResourceType, obj: KubeObject, opts: RequestOptions = {}): Promise<T> {
    return this.client.apply<T>(type, obj, {
      fieldManager: this.fieldManager,
      force: true,
      signal: opts.signal,
    });
  }

  /**
   * Applies `obj` unless it is what this controller last applied and nobody changed it since:
   * either this Applier remembers applying exactly it and `current` (the cached copy) is still at
   * the generation that apply produced, or — after a restart, with no memory — `current` carries
   * the digest of exactly this object (DIGEST_ANNOTATION, written with every apply) and no other
   * manager owns any of its fields. Comparing specs instead does not work: the server fills
   * defaults the controller never sends, so they always differ. Resolves the written object, or
   * undefined when the apply was skipped.
   */
  async applyIfChanged<T extends KubeObject>(
    type: ResourceType,
    obj: KubeObject,
    current: KubeObject | undefined,
    opts: RequestOptions = {},
  ): Promise<T | undefined> {
    const key = appliedKey(type, obj.metadata);
    const digest = digestOf(obj);
    const last = this.#applied.get(key);
    const generation = current?.metadata.generation;
    if (current && last?.digest === digest && generation === last.generation) return undefined;
    if (current && !last && this.#appliedBefore(current, digest)) {
      this.#applied.set(key, { digest, generation });
      return undefined;
    }
    const written = await this.apply<T>(type, withDigest(obj, digest), opts);
    this.#applied.set(key, { digest, generation: written.metadata.generation });
    return written;
  }

  /**
   * `current` holds the object with this digest as this manager applied it: no other manager owns
   * a field outside metadata (a finalizer or a label another controller adds does not count, a
   * spec edit does), and no subresource is looked at.
   */
  #appliedBefore(current: KubeObject, digest: string): boolean {
    const managed = current.metadata.managedFields;
    if (current.metadata.annotations?.[DIGEST_ANNOTATION] !== digest || !managed) return false;
    return managed.every(
      (m) => m.subresource !== undefined || m.manager === this.fieldManager || ownsOnlyMetadata(m.fieldsV1),
    );
  }

  /** Deletes an object this controller applied, and forgets its last apply. Resolves false when it was gone. */
  async delete(type: ResourceType, ref: ObjectRef, opts: RequestOptions = {}): Promise<boolean> {
    this.forget(type, ref);
    return this.client.delete(type, ref, { signal: opts.signal });
  }

  /** Drops what applyIfChanged and applyStatus remember of an object that is being deleted. */
  forget(type: ResourceType, ref: ObjectRef): void {
    this.#applied.delete(appliedKey(type, ref));
    this.#statusWritten.delete(appliedKey(type, ref));
  }

  /**
   * Applies `status` through the /status subresource unless `current` already has exactly that
   * status, or unless this Applier just wrote exactly that status and `current` (the cached copy)
   * is still the object as it was before that write: a reconcile that runs before its own last
   * write comes back through the watch would send the same status again, a write that changes
   * nothing and still costs the apiserver a full apply. Returns the written object, or undefined
   * when the write was skipped.
   */
  async applyStatus<T extends KubeObject>(
    type: ResourceType,
    current: KubeObject,
    status: unknown,
    opts: RequestOptions = {},
  ): Promise<T | undefined> {
    const key = appliedKey(type, current.metadata);
    const before = current.metadata.resourceVersion;
    const pending = this.#statusWritten.get(key);
    if (pending && pending.before !== before) this.#statusWritten.delete(key);
    if (isDeepStrictEqual(current["status"], status)) return undefined;
    const digest = digestOf(status);
    if (pending && pending.before === before && pending.digest === digest) return undefined;
    const { name, namespace } = current.metadata;
    const written = await this.client.apply<T>(
      type,
      { metadata: { name, namespace }, status },
      { fieldManager: this.fieldManager, force: true, subresource: "status", signal: opts.signal },
    );
    this.#statusWritten.set(key, { digest, before });
    return written;
  }

  /** Adds the finalizer if missing. Resolves true when it wrote (the caller returns and waits for the event). */
  async addFinalizer(
    type: ResourceType,
    obj: KubeObject,
    finalizer: string,
    opts: RequestOptions = {},
  ): Promise<boolean> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer)) return false;
    await this.#setFinalizers(type, obj, [...finalizers, finalizer], opts);
    return true;
  }

  /** Removes the finalizer if present. Resolves true when it wrote. */
  async removeFinalizer(
    type: ResourceType,
    obj: KubeObject,
    finalizer: string,
    opts: RequestOptions = {},
  ): Promise<boolean> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return false;
    await this.#setFinalizers(
      type,
      obj,
      finalizers.filter((f) => f !== finalizer),
      opts,
    );
    // Released, a deleting object goes: nothing of its status writes is worth remembering.
    this.#statusWritten.delete(appliedKey(type, obj.metadata));
    return true;
  }

  async #setFinalizers(
    type: ResourceType,
    obj: KubeObject,
    finalizers: string[],
    opts: RequestOptions,
  ): Promise<void> {
    const { name = "", namespace, resourceVersion } = obj.metadata;
    // The resourceVersion makes the list replacement conditional: a concurrent change wins a 409.
    const patch = { metadata: { finalizers, resourceVersion } };
    await this.client.mergePatch(type, { name, namespace }, patch, { signal: opts.signal });
  }
}

/** What a reconciler writes through: the Applier, or a recording fake in phase tests. */
export type ObjectWriter = Pick<
  Applier,
  "applyIfChanged" | "applyStatus" | "addFinalizer" | "removeFinalizer" | "delete"
>;

function appliedKey(type: ResourceType, ref: { name?: string; namespace?: string }): string {
  return `${type.group}/${type.plural}/${ref.namespace ?? ""}/${ref.name ?? ""}`;
}
