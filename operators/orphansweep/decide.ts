/**
 * The sweep's one decision, pure: given a resource's tags, the UIDs of the clusters that exist
 * (every HcpCluster in the synced cache, those being deleted too: their own delete path removes
 * their resources) and the time, what to do with it. The grace period runs from the mark on the
 * resource itself, so a restart neither forgets nor restarts it.
 */
import { ORPHANED_SINCE_TAG, tagOf, type OwnedResource } from "./inventory.ts";

export type Verdict =
  /** The owner exists and nothing is marked. */
  | { action: "keep" }
  /** The owner exists again (or the cache was behind when marking): take the mark off. */
  | { action: "unmark" }
  /** No owner, no (readable) mark: mark it now. */
  | { action: "mark" }
  /** Marked, within the grace period. */
  | { action: "wait"; since: Date; deleteAfter: Date }
  /** Marked longer ago than the grace period. */
  | { action: "delete"; since: Date };

/** When the resource was marked orphaned; undefined when it is not, or the mark is unreadable. */
export function markedSince(r: Pick<OwnedResource, "tags">): Date | undefined {
  const value = tagOf(r.tags, ORPHANED_SINCE_TAG);
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

export function decide(
  r: Pick<OwnedResource, "tags" | "owner">,
  live: ReadonlySet<string>,
  now: Date,
  graceMs: number,
): Verdict {
  const marked = tagOf(r.tags, ORPHANED_SINCE_TAG) !== undefined;
  if (live.has(r.owner.id)) return marked ? { action: "unmark" } : { action: "keep" };
  const since = markedSince(r);
  if (!since) return { action: "mark" };
  const deleteAfter = new Date(since.getTime() + graceMs);
  return now.getTime() >= deleteAfter.getTime()
    ? { action: "delete", since }
    : { action: "wait", since, deleteAfter };
}
