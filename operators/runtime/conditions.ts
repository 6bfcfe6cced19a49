/**
 * Status conditions in the metav1.Condition shape, written only through `setCondition`, which
 * stamps observedGeneration, keeps lastTransitionTime unless the status flips, keeps a stable
 * order so that an unchanged status serialises identically and its write can be skipped, and
 * bounds the message so that no text a user put in a spec can make the status unwritable.
 */
import type { Condition, ConditionStatus } from "../api/meta/v1.ts";

export type { Condition, ConditionStatus } from "../api/meta/v1.ts";

export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

export interface SetConditionOptions {
  /** The metadata.generation the condition was computed from. Omitted from the condition if unset. */
  observedGeneration?: number;
  /** Defaults to the current time. */
  now?: Date;
}

/** The message maxLength of the condition schema (metav1.Condition and every CRD here). */
export const MAX_CONDITION_MESSAGE_LENGTH = 32768;

/**
 * `text` if it has at most `max` characters, else its start with a marker saying it was cut and
 * how long it was, `max` characters in all. Never splits a surrogate pair. Kubernetes counts
 * code points, never more than UTF-16 units, so `max` units are within a `maxLength` of `max`.
 */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = `… [truncated: ${text.length} characters in all]`;
  let keep = Math.max(0, max - marker.length);
  if (keep > 0 && isHighSurrogate(text.charCodeAt(keep - 1))) keep--;
  return (text.slice(0, keep) + marker).slice(0, max);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Summary conditions lead, lifecycle conditions trail, the rest sort by type in between. */
const leadingTypes = ["Ready", "Available"];
const trailingTypes = ["Deleting", "Paused"];

function rank(type: string): number {
  if (leadingTypes.includes(type)) return leadingTypes.indexOf(type);
  if (trailingTypes.includes(type)) return leadingTypes.length + 1 + trailingTypes.indexOf(type);
  return leadingTypes.length;
}

function compareConditions(a: Condition, b: Condition): number {
  const byRank = rank(a.type) - rank(b.type);
  if (byRank !== 0) return byRank;
  return a.type < b.type ? -1 : a.type > b.type ? 1 : 0;
}

/** Kubernetes stores condition times with second precision; matching it avoids spurious diffs. */
export function conditionTime(now: Date): string {
  return now.toISOString().slice(0, 19) + "Z";
}

/** Returns a new list with `next` set; the input is not modified. */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: ConditionInput,
  opts: SetConditionOptions = {},
): Condition[] {
  if (!next.type || !next.reason)
    throw new Error(`condition ${next.type || "(no type)"} needs a type and a reason`);
  const existing = getCondition(conditions, next.type);
  const lastTransitionTime =
    existing?.status === next.status ? existing.lastTransitionTime : conditionTime(opts.now ?? new Date());
  const condition: Condition = {
    type: next.type,
    status: next.status,
    ...(opts.observedGeneration === undefined ? {} : { observedGeneration: opts.observedGeneration }),
    lastTransitionTime,
    reason: next.reason,
    message: truncateText(next.message, MAX_CONDITION_MESSAGE_LENGTH),
  };
  return [...removeCondition(conditions, next.type), condition].sort(compareConditions);
}

export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === "True";
}

export function isFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === "False";
}

/** Returns a new list without the condition of `type`. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

function conditionEqual(a: Condition, b: Condition): boolean {
  return (
    a.type === b.type &&
    a.status === b.status &&
    a.observedGeneration === b.observedGeneration &&
    a.lastTransitionTime === b.lastTransitionTime &&
    a.reason === b.reason &&
    a.message === b.message
  );
}

/**
 * Whether two lists would be written identically, field by field and in order; used to skip
 * no-op status writes. A missing list equals an empty one.
 */
export function conditionsEqual(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const left = a ?? [];
  const right = b ?? [];
  return (
    left.length === right.length &&
    left.every((c, i) => {
      const other = right[i];
      return other !== undefined && conditionEqual(c, other);
    })
  );
}
