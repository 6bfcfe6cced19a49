/**
 * Placement: which management cluster hosts a new control plane. Pure: the controller passes the
 * management clusters and the current load, and gets a choice or the reason there is none.
 * Least loaded first (by fraction of capacity, then by count, then by name, so the choice is
 * deterministic); a selector narrows the candidates. A placed cluster is never moved, so this runs
 * only for clusters without a placement.
 */
import type { LabelSelector, ManagementCluster } from "../api/v1alpha1/index.ts";
import { truncateText } from "../runtime/conditions.ts";
import { matchesSelector } from "../hcp/label-selector.ts";

/** Longest selector or load list quoted in a message: the whole is in the spec and the informer. */
const QUOTED_TEXT_MAX = 1024;

export type Placement =
  | { placed: true; managementCluster: ManagementCluster }
  | {
      placed: false;
      reason: "NoManagementCluster" | "NoMatchingManagementCluster" | "NoCapacity";
      message: string;
    };

function describeSelector(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const r of selector.matchExpressions ?? [])
    parts.push(`${r.key} ${r.operator}${r.values ? ` (${r.values.join(",")})` : ""}`);
  return truncateText(parts.join(", "), QUOTED_TEXT_MAX);
}

/**
 * Chooses where to place. `load` maps a ManagementCluster name to the control planes placed on it
 * (including choices not yet visible in the informer).
 */
export function place(
  candidates: readonly ManagementCluster[],
  load: ReadonlyMap<string, number>,
  selector?: LabelSelector,
): Placement {
  const schedulable = candidates.filter((m) => m.spec.schedulable !== false && !m.metadata.deletionTimestamp);
  if (schedulable.length === 0)
    return {
      placed: false,
      reason: "NoManagementCluster",
      message: "no schedulable ManagementCluster exists in the region",
    };
  const matching = schedulable.filter((m) => matchesSelector(m.spec.labels, selector));
  if (matching.length === 0)
    return {
      placed: false,
      reason: "NoMatchingManagementCluster",
      message: `no schedulable ManagementCluster matches the placement selector ${describeSelector(selector ?? {})}`,
    };
  const used = (m: ManagementCluster): number => load.get(m.metadata.name ?? "") ?? 0;
  const withRoom = matching.filter((m) => used(m) < m.spec.capacity.maxHostedClusters);
  if (withRoom.length === 0)
    return {
      placed: false,
      reason: "NoCapacity",
      message: `all ${matching.length} matching ManagementClusters are full (${truncateText(
        matching
          .map((m) => `${m.metadata.name ?? ""} ${used(m)}/${m.spec.capacity.maxHostedClusters}`)
          .join(", "),
        QUOTED_TEXT_MAX,
      )}); the cluster is placed when room appears`,
    };
  const fraction = (m: ManagementCluster): number => used(m) / m.spec.capacity.maxHostedClusters;
  const [best] = [...withRoom].sort(
    (a, b) =>
      fraction(a) - fraction(b) ||
      used(a) - used(b) ||
      (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""),
  );
  return { placed: true, managementCluster: best! };
}

/**
 * Whether a ManagementCluster's update can let a cluster waiting for placement go on: its spec
 * changed (capacity, schedulable, labels) or its load went down. A placement raises the load and
 * frees nothing, so waiting clusters need not wake for it.
 */
export function mayMakeRoom(before: ManagementCluster, after: ManagementCluster): boolean {
  return (
    before.metadata.generation !== after.metadata.generation ||
    (after.status?.hostedClusters ?? 0) < (before.status?.hostedClusters ?? 0)
  );
}
