import { describe, expect, it } from "vitest";
import {
  expectedDayTotal,
  expectedQuantity,
  fleetCluster,
  hourUsage,
  POOL_VCPUS,
  rowsPerDay,
  SCALED_POOL_VCPUS,
  scaleHour,
  scalingIn,
  tenTimesRegionRate,
} from "./metering-fleet.ts";

describe("the metering bench's fleet", () => {
  it("gives each cluster and pool its own IDs, ten clusters to a subscription", () => {
    const a = fleetCluster(0);
    const b = fleetCluster(9);
    const c = fleetCluster(10);
    expect(new Set([a.clusterId, a.poolUid, b.clusterId, c.clusterId]).size).toBe(4);
    expect(a.subscriptionId).toBe(b.subscriptionId);
    expect(c.subscriptionId).not.toBe(a.subscriptionId);
    expect(c.clusterResourceId).toBe(
      `/subscriptions/${c.subscriptionId}/resourceGroups/rg-c10/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c10`,
    );
    expect(c.poolResourceId).toBe(`${c.clusterResourceId}/nodePools/workers`);
    expect(() => fleetCluster(-1)).toThrow(/cluster index -1/);
  });

  it("scales every 10th pool once, in an hour spread over the day, the others never", () => {
    expect(scaleHour(0)).toBe(0);
    expect(scaleHour(30)).toBe(3);
    expect(scaleHour(240)).toBe(0);
    expect(scaleHour(7)).toBeUndefined();
    for (let h = 0; h < 24; h++) for (const i of scalingIn(1000, h)) expect(scaleHour(i)).toBe(h);
    const scaled = Array.from({ length: 24 }, (_, h) => scalingIn(1000, h).length);
    expect(scaled.reduce((x, y) => x + y, 0)).toBe(100);
  });

  it("bills a control plane 1 an hour and a pool its vCPUs, half of each rate in the hour it scales", () => {
    expect(expectedQuantity(7, 5, "controlPlaneHours")).toBe(1);
    expect(expectedQuantity(7, 5, "vCPUHours")).toBe(POOL_VCPUS);
    expect(expectedQuantity(30, 2, "vCPUHours")).toBe(POOL_VCPUS);
    expect(expectedQuantity(30, 3, "vCPUHours")).toBe((POOL_VCPUS + SCALED_POOL_VCPUS) / 2);
    expect(expectedQuantity(30, 4, "vCPUHours")).toBe(SCALED_POOL_VCPUS);
    // 10 clusters, 1 hour: 10 control planes + 9 pools at 8 + cluster 0's at 12 (it scales in hour 0).
    expect(expectedDayTotal(10, 1)).toBe(10 + 9 * 8 + 12);
  });

  it("lists each hour's rows, a control plane then a pool per cluster, summing to the day's total", () => {
    const day = Array.from({ length: 24 }, (_, h) => hourUsage(30, h));
    expect(day.flat()).toHaveLength(rowsPerDay(30));
    const total = day.flat().reduce((sum, u) => sum + u.quantity, 0);
    expect(total).toBe(expectedDayTotal(30, 24));
    const [cp, pool] = day[3] ?? [];
    expect([cp?.dimension, cp?.resourceUid, pool?.dimension, pool?.resourceUid]).toEqual([
      "controlPlaneHours",
      fleetCluster(0).clusterId,
      "vCPUHours",
      fleetCluster(0).poolUid,
    ]);
    expect(
      day[3]?.find((u) => u.cluster.clusterId === fleetCluster(20).clusterId && u.dimension === "vCPUHours")
        ?.quantity,
    ).toBe(SCALED_POOL_VCPUS);
  });

  it("counts the issue's rows: 480,000 a day at 10,000 clusters, ten times the rate ≈ 56 rows/s", () => {
    expect(rowsPerDay(10_000)).toBe(480_000);
    expect(tenTimesRegionRate(10_000)).toBeCloseTo(55.56, 2);
  });
});
