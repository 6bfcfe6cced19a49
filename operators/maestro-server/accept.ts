/**
 * Which agent status updates maestro-server keeps: only from the consumer that owns the work, only
 * for its current generation (a deletion confirmation whatever its version, but only of a work this
 * server is deleting), and only in sequence order as StatusStore bounds it. Anything else is
 * dropped with a reason. What is kept is first
 * cut to what the ManifestWork schema admits (bounds.ts); a status still too large is kept as
 * refused, so that the work says so instead of failing its status write.
 */
import type { CachedManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import type { StatusUpdate } from "../cloudevents/codec/manifestbundle.ts";
import type { StatusRefusal, StatusStore } from "../cloudevents/store/status.ts";
import type { IndexFunc, Lister } from "../runtime/informer.ts";
import { MAX_STATUS_BYTES, boundStatus, type TrimReason } from "./bounds.ts";

/** The works' informer index by metadata.uid, which is the resource ID agents report on. */
export const UID_INDEX = "uid";
export const uidIndexer: IndexFunc<ManifestWorkObject> = (w) => (w.metadata.uid ? [w.metadata.uid] : []);

/** The reason of the condition a work shows when its agent's status is refused for its size. */
export const STATUS_TOO_LARGE = "AgentStatusTooLarge";

export type StatusDecision =
  | {
      verdict: "accepted";
      work: CachedManifestWork;
      /** Parts of the status left out or cut to fit the schema. */
      trimmed: TrimReason[];
      /** Its sequence ID was too far ahead of the server's clock to order later statuses. */
      unordered: boolean;
      /** Set when the status, even cut, is over MAX_STATUS_BYTES and is not written. */
      refusal?: StatusRefusal;
    }
  | {
      verdict: "dropped";
      reason: "unknown-resource" | "not-owner" | "delete-not-requested" | "stale-version" | "stale-sequence";
      why: string;
    };

type Dropped = Extract<StatusDecision, { verdict: "dropped" }>;

/** The work the update reports on, or why it is not one this consumer may report on now. */
function workOf(update: StatusUpdate, works: Lister<CachedManifestWork>): CachedManifestWork | Dropped {
  const work = works.byIndex(UID_INDEX, update.resourceId)[0];
  if (!work)
    return {
      verdict: "dropped",
      reason: "unknown-resource",
      why: `no ManifestWork has uid ${update.resourceId}`,
    };
  if (work.metadata.namespace !== update.consumer) {
    const why = `${update.consumer} reported on a work of ${work.metadata.namespace ?? ""}`;
    return { verdict: "dropped", reason: "not-owner", why };
  }
  // Deleted is final (StatusStore keeps no later status after it) and releases the work's
  // finalizer, so it is taken only as the answer to a deletion: this server publishes one only for
  // a work with a deletionTimestamp, which it keeps until the agent confirms. On a live work it
  // would freeze the work at Deleted=True, its later statuses all dropped.
  if (update.deleted && !work.metadata.deletionTimestamp) {
    const why = `${update.consumer} reported ${update.resourceId} deleted, which is not being deleted`;
    return { verdict: "dropped", reason: "delete-not-requested", why };
  }
  if (!update.deleted && update.resourceVersion !== work.metadata.generation) {
    const why = `status of version ${update.resourceVersion}, work is at ${work.metadata.generation ?? 0}`;
    return { verdict: "dropped", reason: "stale-version", why };
  }
  return work;
}

function sizeRefusal(bytes: number): StatusRefusal | undefined {
  if (bytes <= MAX_STATUS_BYTES) return undefined;
  return {
    reason: STATUS_TOO_LARGE,
    message: `The agent's status of ${bytes} bytes is over the ${MAX_STATUS_BYTES}-byte limit; it is not shown`,
  };
}

/** Decides on one status update; an accepted one is stored in `statuses`. */
export function acceptStatus(
  update: StatusUpdate,
  works: Lister<CachedManifestWork>,
  statuses: StatusStore,
): StatusDecision {
  const work = workOf(update, works);
  if (!("metadata" in work)) return work;
  const bounded = boundStatus(update.status, work.spec?.workload?.manifestCount ?? 0);
  const refusal = sizeRefusal(bounded.bytes);
  const verdict = statuses.offer({ ...update, status: bounded.status }, refusal);
  if (verdict === "stale-sequence")
    return { verdict: "dropped", reason: verdict, why: `sequence ${update.sequenceId ?? ""}` };
  const unordered = verdict === "accepted-unordered";
  return { verdict: "accepted", work, trimmed: bounded.trimmed, unordered, ...(refusal ? { refusal } : {}) };
}
