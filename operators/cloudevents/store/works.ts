/**
 * The agent's works, by resource ID, in memory as the OCM agent keeps them (there is no
 * ManifestWork API on a management cluster). Spec events are merged in by the protocol's rules:
 * an older resourceversion is dropped, an equal one is taken again (duplicates are harmless), a
 * deletion marks the work and keeps it until the controller confirms. A work removed after its
 * deletion is remembered for a while (a tombstone): the broker may deliver an older update for it
 * late or twice (Event Grid does not promise order), and taking that as a new work would apply
 * manifests nobody wants any more, so such an update is dropped. A deletion of it is taken again:
 * the source may not have heard the confirmation (it restarted) and asks again, and only a new
 * confirmation lets it go. After a restart the store starts empty and is refilled by the spec
 * resync.
 *
 * A work is superseded by a newer one of the same ManifestWork namespace and name under another
 * resource ID (the source wrote it again, as a restored region does): once the newer one is
 * applied, the older is retired, deleted as the source would delete it but without a word to the
 * source, which no longer knows that ID.
 */
import type { ManifestWorkStatus } from "../../api/work/v1.ts";
import { MANIFEST_WORK_NAME_ANNOTATION, type ReceivedWork } from "../codec/manifestbundle.ts";
import type { ResourceVersion } from "../codec/resync.ts";

export interface AgentWork extends ReceivedWork {
  /** The status last computed for this work, and its hash. */
  status?: ManifestWorkStatus;
  statusHash?: string;
  /** The generation whose manifests were last applied in full, and when. */
  appliedGeneration?: number;
  appliedAtMs?: number;
  /**
   * How each manifest's object stood right after that apply, by ordinal (its generation and
   * metadata, or its resourceVersion): an object still so has not changed since, and the
   * drift-repair apply leaves it alone.
   */
  appliedVersions?: ReadonlyArray<string | undefined>;
  /**
   * Deleted by this agent because a newer work of the same name superseded it: no status of it
   * is sent (the source does not know it), until the source itself asks for its deletion.
   */
  retired?: boolean;
}

/**
 * `<namespace>/<name>` of the ManifestWork a work was sent from, as the source names it, or
 * undefined when the source did not say (the work is then never superseded).
 */
export function manifestWorkName(work: Pick<ReceivedWork, "metadata">): string | undefined {
  const name = work.metadata.annotations?.[MANIFEST_WORK_NAME_ANNOTATION];
  const namespace = work.metadata.namespace;
  return name && namespace ? `${namespace}/${name}` : undefined;
}

/** Whether `other` was created after `work` by the source's clock (unknown: not newer). */
function createdAfter(other: AgentWork, work: AgentWork): boolean {
  const a = Date.parse(other.metadata.creationTimestamp ?? "");
  const b = Date.parse(work.metadata.creationTimestamp ?? "");
  return Number.isFinite(a) && Number.isFinite(b) && a > b;
}

/** "removed": an update for a work this store removed after its deletion, delivered late or again. */
export type UpsertResult = "added" | "updated" | "deleting" | "stale" | "removed";

export interface WorkStoreOptions {
  /** How long a removed work's tombstone is kept. Default 1 h (Maestro retires unconfirmed deletions after 1 h). */
  tombstoneMs?: number;
  /** At most this many tombstones, the oldest dropped first. Default 50 000. */
  maxTombstones?: number;
  now?: () => number;
}

export class WorkStore {
  readonly #works = new Map<string, AgentWork>();
  /** uid → when it was removed; in removal order. */
  readonly #tombstones = new Map<string, number>();
  readonly #tombstoneMs: number;
  readonly #maxTombstones: number;
  readonly #now: () => number;

  constructor(opts: WorkStoreOptions = {}) {
    this.#tombstoneMs = opts.tombstoneMs ?? 3_600_000;
    this.#maxTombstones = opts.maxTombstones ?? 50_000;
    this.#now = opts.now ?? Date.now;
  }

  get(uid: string): AgentWork | undefined {
    return this.#works.get(uid);
  }

  list(): AgentWork[] {
    return [...this.#works.values()];
  }

  upsert(received: ReceivedWork): UpsertResult {
    const current = this.#works.get(received.uid);
    if (!current && !received.deletionTimestamp && this.#removed(received.uid)) return "removed";
    if (!current) {
      this.#works.set(received.uid, { ...received });
      return received.deletionTimestamp ? "deleting" : "added";
    }
    if (received.deletionTimestamp) {
      if (!current.deletionTimestamp) current.deletionTimestamp = received.deletionTimestamp;
      current.generation = Math.max(current.generation, received.generation);
      // The source asks for it after all: it waits for the confirmation.
      current.retired = false;
      return "deleting";
    }
    // A deletion is final; an older version is late.
    if (current.deletionTimestamp) return "stale";
    if (received.generation !== 0 && received.generation < current.generation) return "stale";
    const { status, statusHash, appliedGeneration, appliedAtMs, appliedVersions } = current;
    this.#works.set(received.uid, {
      ...received,
      status,
      statusHash,
      appliedGeneration,
      appliedAtMs,
      appliedVersions,
    });
    return "updated";
  }

  /** Merges fields the controller computed into the stored work, if it is still there. */
  update(
    uid: string,
    fields: Partial<
      Pick<AgentWork, "status" | "statusHash" | "appliedGeneration" | "appliedAtMs" | "appliedVersions">
    >,
  ): void {
    const work = this.#works.get(uid);
    if (work) Object.assign(work, fields);
  }

  /**
   * The live works `work` supersedes: of the same ManifestWork name, under another resource ID,
   * and not created after it.
   */
  supersededBy(work: AgentWork): AgentWork[] {
    const name = manifestWorkName(work);
    if (!name) return [];
    return this.list().filter(
      (w) =>
        w.uid !== work.uid && !w.deletionTimestamp && manifestWorkName(w) === name && !createdAfter(w, work),
    );
  }

  /**
   * Marks a superseded work for deletion, without a status to the source. A work this store does
   * not hold (known only from the cluster's records after a restart) is added as such.
   */
  retire(uid: string, consumer: string, deletionTimestamp: string): void {
    const current = this.#works.get(uid);
    if (current) {
      // One the source is deleting already is confirmed to it as usual.
      if (current.deletionTimestamp) return;
      current.deletionTimestamp = deletionTimestamp;
      current.retired = true;
      return;
    }
    this.#works.set(uid, {
      uid,
      name: uid,
      consumer,
      generation: 0,
      originalSource: "",
      metadata: { name: uid, namespace: consumer, uid },
      deletionTimestamp,
      spec: {},
      retired: true,
    });
  }

  /** Forgets a deleted work, keeping its tombstone. */
  remove(uid: string): void {
    if (!this.#works.delete(uid)) return;
    this.#tombstones.delete(uid);
    this.#tombstones.set(uid, this.#now());
    for (const oldest of this.#tombstones.keys()) {
      if (this.#tombstones.size <= this.#maxTombstones) break;
      this.#tombstones.delete(oldest);
    }
  }

  #removed(uid: string): boolean {
    const at = this.#tombstones.get(uid);
    if (at === undefined) return false;
    if (this.#now() - at <= this.#tombstoneMs) return true;
    this.#tombstones.delete(uid);
    return false;
  }

  /** What the agent holds, for a spec resync request. */
  versions(): ResourceVersion[] {
    return this.list().map((w) => ({ resourceID: w.uid, resourceVersion: w.generation }));
  }
}
