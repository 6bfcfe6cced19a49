/** What a VM size's restrictions and a quota refuse, and how many nodes a pool asks for. */
import { describe, expect, it } from "vitest";
import type { NodePoolProperties } from "../api/internal.ts";
import { SUB } from "../../../test/support/azure-check-fixtures.ts";
import { checkQuota, checkVmSize, poolNeeds, type VmSku } from "./compute.ts";

describe("checkVmSize", () => {
  const sku = (extra: Partial<VmSku> = {}): VmSku => ({
    resourceType: "virtualMachines",
    name: "Standard_D8s_v3",
    family: "standardDSv3Family",
    locationInfo: [{ location: "eastus", zones: ["1", "2", "3"] }],
    capabilities: [{ name: "vCPUs", value: "8" }],
    restrictions: [],
    ...extra,
  });

  it("finds a size offered in the location and zone, in any casing", () => {
    expect(checkVmSize([sku()], { vmSize: "standard_d8s_V3", location: "eastus", zone: "2" })).toEqual({
      sku: sku(),
    });
  });

  it.each<[string, VmSku[], string | undefined, string]>([
    ["unknown size", [sku({ name: "Standard_D4s_v3" })], undefined, "properties.platform.vmSize"],
    [
      "other location",
      [sku({ locationInfo: [{ location: "westus3", zones: ["1"] }] })],
      undefined,
      "properties.platform.vmSize",
    ],
    [
      "restricted in the location",
      [
        sku({
          restrictions: [
            {
              type: "Location",
              restrictionInfo: { locations: ["eastus"] },
              reasonCode: "NotAvailableForSubscription",
            },
          ],
        }),
      ],
      "1",
      "properties.platform.vmSize",
    ],
    [
      "zone not offered",
      [sku({ locationInfo: [{ location: "eastus", zones: ["1"] }] })],
      "3",
      "properties.platform.availabilityZone",
    ],
    [
      "zone restricted",
      [sku({ restrictions: [{ type: "Zone", restrictionInfo: { locations: ["eastus"], zones: ["3"] } }] })],
      "3",
      "properties.platform.availabilityZone",
    ],
  ])("refuses: %s", (_what, skus, zone, target) => {
    const found = checkVmSize(skus, { vmSize: "Standard_D8s_v3", location: "eastus", zone });
    expect("errors" in found && found.errors.map((e) => e.target)).toEqual([target]);
  });
});

describe("quota", () => {
  const usages = [
    { name: { value: "cores", localizedValue: "Total Regional vCPUs" }, currentValue: 10, limit: 100 },
    {
      name: { value: "standardDSv3Family", localizedValue: "Standard DSv3 Family vCPUs" },
      currentValue: 40,
      limit: 48,
    },
  ];
  const want = {
    family: "standardDSv3Family",
    location: "eastus",
    target: "properties.replicas",
    what: "The pool",
  };

  it("passes current + requested up to the limit, refuses one more, per line", () => {
    expect(checkQuota(usages, { ...want, more: 8 })).toEqual([]);
    expect(checkQuota(usages, { ...want, more: 9 })).toEqual([
      {
        target: "properties.replicas",
        message: expect.stringContaining(
          "needs 9 more vCPUs of 'Standard DSv3 Family vCPUs' in location 'eastus', but the subscription uses 40 of its quota of 48",
        ),
      },
    ]);
    expect(checkQuota(usages, { ...want, family: "other", more: 91 })).toHaveLength(1);
  });

  const pool = (p: Partial<NodePoolProperties>): NodePoolProperties => ({
    platform: { vmSize: "Standard_D8s_v3" },
    ...p,
  });

  it("asks for a new pool's replicas or autoscaling maximum, a grown pool's growth, nothing for a shrunk one", () => {
    const check = { subscriptionId: SUB, location: "East US" };
    expect(
      poolNeeds({
        ...check,
        properties: pool({ replicas: 3, platform: { vmSize: "Standard_D8s_v3", availabilityZone: "2" } }),
      }),
    ).toMatchObject({
      location: "eastus",
      zone: "2",
      isNew: true,
      moreNodes: 3,
      target: "properties.replicas",
    });
    expect(
      poolNeeds({
        ...check,
        properties: pool({ replicas: 0, autoScaling: { min: 1, max: 5 } }),
        stored: pool({ replicas: 2 }),
      }),
    ).toMatchObject({
      isNew: false,
      moreNodes: 3,
      target: "properties.autoScaling.max",
    });
    expect(
      poolNeeds({ ...check, properties: pool({ replicas: 1 }), stored: pool({ replicas: 2 }) }),
    ).toBeUndefined();
  });
});
