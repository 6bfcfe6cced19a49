/**
 * Which agent status updates maestro-server keeps: only from the consumer that owns the work, only
 * for its current generation (a deletion confirmation whatever its version), and only with a
 * newer sequence ID than the one last accepted. Anything else is dropped with a reason.
 */
import type { ManifestWork } from "../api/work/v1.ts";
import type { StatusUpdate } from "../cloudevents/codec/manifestbundle.ts";
import type { StatusStore } from "../cloudevents/store/status.ts";
import type { IndexFunc, Lister } from "../runtime/informer.ts";

/** The works' informer index by metadata.uid, which is the resource ID agents report on. */
export const UID_INDEX = "uid";
export const uidIndexer: IndexFunc<ManifestWork> = (w) => (w.metadata.uid ? [w.metadata.uid] : []);

export type StatusDecision =
  | { verdict: "accepted"; work: ManifestWork }
  | {
      verdict: "dropped";
      reason: "unknown-resource" | "not-owner" | "stale-version" | "stale-sequence";
      why: string;
    };

/** Decides on one status update; an accepted one is stored in `statuses`. */
export function acceptStatus(
  update: StatusUpdate,
  works: Lister<ManifestWork>,
  statuses: StatusStore,
): StatusDecision {
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
  if (!update.deleted && update.resourceVersion !== work.metadata.generation) {
    const why = `status of version ${update.resourceVersion}, work is at ${work.metadata.generation ?? 0}`;
    return { verdict: "dropped", reason: "stale-version", why };
  }
  if (statuses.offer(update) !== "accepted")
    return { verdict: "dropped", reason: "stale-sequence", why: `sequence ${update.sequenceId ?? ""}` };
  return { verdict: "accepted", work };
}
