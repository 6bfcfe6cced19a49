/**
 * The metering bench's simulated fleet (issue 35), pure so that the bench, its marketplace
 * process and its test agree on it: N clusters with one node pool each, their ARM IDs, and what
 * each hour of the simulated day should bill. Every 10th cluster's pool scales from 8 to 16 vCPUs
 * half-way through an hour of its own (spread over the day), so the day holds rate changes
 * inside hours, not only whole hours at one rate.
 */

export const HOUR_MS = 3_600_000;
export const PLAN_ID = "hcp-standard";
export const DIMENSIONS = ["controlPlaneHours", "vCPUHours"] as const;
export const POOL_VCPUS = 8;
export const SCALED_POOL_VCPUS = 16;
const CLUSTERS_PER_SUBSCRIPTION = 10;
const SCALE_EVERY = 10;

export interface FleetCluster {
  clusterId: string;
  poolUid: string;
  subscriptionId: string;
  clusterResourceId: string;
  poolResourceId: string;
}

const hex12 = (n: number): string => n.toString(16).padStart(12, "0");

export function fleetCluster(i: number): FleetCluster {
  if (!Number.isInteger(i) || i < 0) throw new RangeError(`cluster index ${i} is not a whole number ≥ 0`);
  const subscriptionId = `00000000-0000-4000-8000-${hex12(Math.floor(i / CLUSTERS_PER_SUBSCRIPTION))}`;
  const clusterResourceId = `/subscriptions/${subscriptionId}/resourceGroups/rg-c${i}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c${i}`;
  return {
    clusterId: `10000000-0000-4000-8000-${hex12(i)}`,
    poolUid: `20000000-0000-4000-8000-${hex12(i)}`,
    subscriptionId,
    clusterResourceId,
    poolResourceId: `${clusterResourceId}/nodePools/workers`,
  };
}

/** The hour (0–23) in whose middle cluster i's pool scales up, or undefined when it never does. */
export function scaleHour(i: number): number | undefined {
  return i % SCALE_EVERY === 0 ? (i / SCALE_EVERY) % 24 : undefined;
}

/** The clusters whose pool scales in `hour` of the day. */
export function scalingIn(n: number, hour: number): number[] {
  const out: number[] = [];
  for (let i = hour * SCALE_EVERY; i < n; i += 24 * SCALE_EVERY) out.push(i);
  return out;
}

/** What cluster i should bill for `hour` (0-based from the day's start) in `dimension`. */
export function expectedQuantity(i: number, hour: number, dimension: (typeof DIMENSIONS)[number]): number {
  if (dimension === "controlPlaneHours") return 1;
  const at = scaleHour(i);
  if (at === undefined || hour < at) return POOL_VCPUS;
  return hour === at ? (POOL_VCPUS + SCALED_POOL_VCPUS) / 2 : SCALED_POOL_VCPUS;
}

/** Everything the day should bill: the check on what the ledger holds after the roll-up. */
export function expectedDayTotal(n: number, hours: number): number {
  let total = 0;
  for (let i = 0; i < n; i++)
    for (let h = 0; h < hours; h++) for (const d of DIMENSIONS) total += expectedQuantity(i, h, d);
  return total;
}

/** Rows a day of N clusters makes: one per cluster and pool per hour. */
export const rowsPerDay = (n: number, hours = 24): number => n * DIMENSIONS.length * hours;

/** Ten times the rate a region of `clusters` makes rows at, per second (the target). */
export const tenTimesRegionRate = (clusters: number): number =>
  (10 * clusters * DIMENSIONS.length) / (HOUR_MS / 1000);

/** One row of the day: what the ledger should hold and the API should receive for it. */
export interface FleetUsage {
  cluster: FleetCluster;
  resourceUid: string;
  resourceId: string;
  dimension: (typeof DIMENSIONS)[number];
  quantity: number;
}

/** The rows of `hour` (0-based), a cluster's control plane then its pool, cluster by cluster. */
export function hourUsage(n: number, hour: number): FleetUsage[] {
  const out: FleetUsage[] = [];
  for (let i = 0; i < n; i++) {
    const cluster = fleetCluster(i);
    out.push(
      {
        cluster,
        resourceUid: cluster.clusterId,
        resourceId: cluster.clusterResourceId,
        dimension: "controlPlaneHours",
        quantity: expectedQuantity(i, hour, "controlPlaneHours"),
      },
      {
        cluster,
        resourceUid: cluster.poolUid,
        resourceId: cluster.poolResourceId,
        dimension: "vCPUHours",
        quantity: expectedQuantity(i, hour, "vCPUHours"),
      },
    );
  }
  return out;
}
