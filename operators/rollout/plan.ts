/**
 * The wave plan, pure: which clusters a rollout names now (sorted, so that every reconcile and
 * every restart picks the same ones), how large wave n is, and which clusters it takes. A wave's
 * members are chosen once, when it begins, from the clusters no earlier wave holds; they are
 * then written in that wave's MaintenanceTask and never chosen again.
 */
import {
  ROLLOUT_WAVES,
  type HcpCluster,
  type MaintenanceClusters,
  type RolloutWaves,
} from "../api/v1alpha1/index.ts";
import type { Lister } from "../runtime/informer.ts";
import { matchesSelector } from "../hcp/label-selector.ts";

export interface ResolvedWaves {
  canary: number;
  growth: number;
  /** At most ROLLOUT_WAVES.maxWaveSize (a MaintenanceTask's names list holds no more). */
  maxSize: number;
}

export function resolveWaves(waves: RolloutWaves | undefined): ResolvedWaves {
  const max = ROLLOUT_WAVES.maxWaveSize;
  return {
    canary: Math.min(waves?.canary ?? ROLLOUT_WAVES.canaryDefault, max),
    growth: waves?.growth ?? ROLLOUT_WAVES.growthDefault,
    maxSize: Math.min(waves?.maxSize ?? max, max),
  };
}

/** How many clusters wave `index` (1 is the canary) takes: canary · growth^(index-1), at most maxSize. */
export function waveSize(waves: ResolvedWaves, index: number): number {
  if (!Number.isInteger(index) || index < 1) throw new RangeError(`wave index ${index} is not 1 or more`);
  let size = waves.canary;
  // Multiplied step by step so that a long rollout stops at maxSize instead of overflowing.
  for (let i = 1; i < index && size < waves.maxSize; i++) size *= waves.growth;
  return Math.max(1, Math.min(size, waves.maxSize));
}

/** The members of wave `index`: the first waveSize clusters of `candidates` that no earlier wave holds. */
export function nextWaveMembers(
  candidates: readonly string[],
  earlier: ReadonlySet<string>,
  waves: ResolvedWaves,
  index: number,
): string[] {
  const size = waveSize(waves, index);
  const members: string[] = [];
  for (const key of candidates) {
    if (members.length === size) break;
    if (!earlier.has(key)) members.push(key);
  }
  return members;
}

export const clusterKey = (c: HcpCluster): string => `${c.metadata.namespace ?? ""}/${c.metadata.name ?? ""}`;

export interface Selection {
  /** "namespace/name" of the clusters named now, not being deleted, in code-point order. */
  candidates: string[];
  /** spec.clusters.names that name no existing cluster. */
  missing: string[];
}

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function namedClusters(spec: MaintenanceClusters, clusters: Lister<HcpCluster>): Selection {
  const { selector, names } = spec;
  const missing: string[] = [];
  const found = selector
    ? clusters.list().filter((c) => matchesSelector(c.metadata.labels, selector))
    : (names ?? []).flatMap((ref) => {
        const [namespace = "", name = ""] = ref.split("/");
        const c = clusters.get(namespace, name);
        if (!c) missing.push(ref);
        return c ? [c] : [];
      });
  const candidates = found
    .filter((c) => !c.metadata.deletionTimestamp)
    .map(clusterKey)
    .sort(byCodePoint);
  return { candidates: [...new Set(candidates)], missing };
}
