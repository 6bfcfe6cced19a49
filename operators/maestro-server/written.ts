/**
 * What maestro-server last wrote to each work's status, kept until its watch shows the write.
 * maestro-server is the only writer of a work's status, so a cached copy older than its last write
 * is stale, and a status that differs from the one written was changed by someone else.
 */
import type { CachedManifestWork, ManifestWorkObject, ManifestWorkStatus } from "../api/work/v1.ts";
import { statusHash } from "../cloudevents/codec/statushash.ts";
import type { StatusStore, StoredStatus } from "../cloudevents/store/status.ts";

export class WrittenStatuses {
  readonly #statuses: StatusStore;
  /**
   * uid → the status last written, and the resourceVersions the cache may still show that are
   * older than that write: the copy it wrote over and, when reports came faster than the watch,
   * the versions its earlier writes made. While the cache shows one of those, the last write is
   * newer than the cached copy: composing from the cache wrote the same status again (a write the
   * apiserver finds changes nothing), with a new lastTransitionTime for a Published condition it
   * did not show yet. Any other version in the cache is that write or later (the watch may skip
   * straight past it when events coalesce), so resourceVersions are only compared for equality,
   * as they must be.
   */
  readonly #written = new Map<
    string,
    { olderVersions: Set<string>; version?: string; status: ManifestWorkStatus }
  >();
  /**
   * uid → the hash of the status last written. The agent's report is not kept once written (the
   * work holds it), so a status someone else changed is found by its hash, and the agent is asked
   * for its report again.
   */
  readonly #hashes = new Map<string, string>();
  /**
   * uid → the agent's report the last status write carried, until the cache shows that write.
   * Only then is its body dropped from the status store: a reconcile on a cached copy older than
   * the write (the finalizer's watch event, delivered after it) composes from the store, and
   * without the report would write the work's status back over it.
   */
  readonly #reports = new Map<string, StoredStatus>();

  constructor(statuses: StatusStore) {
    this.#statuses = statuses;
  }

  /** The cached work, with the status written last if the watch has not brought it yet. */
  withWritten(work: CachedManifestWork): CachedManifestWork {
    const uid = work.metadata.uid ?? "";
    const written = this.#written.get(uid);
    if (!written) return work;
    if (written.olderVersions.has(work.metadata.resourceVersion ?? ""))
      return { ...work, status: written.status };
    this.#written.delete(uid);
    return work;
  }

  /** The cache shows the last status write: the report it carried is on the work now, not needed here. */
  confirm(cached: CachedManifestWork): void {
    const uid = cached.metadata.uid ?? "";
    const report = this.#reports.get(uid);
    if (!report || statusHash(cached.status ?? {}) !== this.#hashes.get(uid)) return;
    this.#statuses.written(uid, report);
    this.#reports.delete(uid);
  }

  /**
   * True (once) when the work's status is not the one written last and the agent's report it
   * carried is no longer held: the agent is to be asked for it again.
   */
  reportLost(work: CachedManifestWork, uid: string): boolean {
    const hash = this.#hashes.get(uid);
    const held = this.#statuses.get(uid);
    if (hash === undefined || !held || held.status || held.refusal) return false;
    if (statusHash(work.status ?? {}) === hash) return false;
    this.#hashes.delete(uid);
    return true;
  }

  /**
   * A status write over `work`; `written` is undefined when the apply was skipped (the work
   * already showed `composed`).
   */
  remember(
    work: CachedManifestWork,
    composed: ManifestWorkStatus,
    written: ManifestWorkObject | undefined,
  ): void {
    const uid = work.metadata.uid ?? "";
    this.#hashes.set(uid, statusHash(written?.status ?? composed));
    const wroteOver = work.metadata.resourceVersion;
    if (!wroteOver || !written?.status) return;
    // Still here, the entry is the chain of writes the cache has not caught up with.
    const earlier = this.#written.get(uid);
    const olderVersions = earlier?.olderVersions ?? new Set<string>();
    olderVersions.add(wroteOver);
    if (earlier?.version) olderVersions.add(earlier.version);
    this.#written.set(uid, {
      olderVersions,
      version: written.metadata.resourceVersion,
      status: written.status,
    });
  }

  /** The write just remembered carried the agent's report. */
  carried(cached: CachedManifestWork, report: StoredStatus): void {
    this.#reports.set(cached.metadata.uid ?? "", report);
    this.confirm(cached);
  }

  forget(uid: string): void {
    this.#written.delete(uid);
    this.#hashes.delete(uid);
    this.#reports.delete(uid);
  }
}
