import { describe, expect, it } from "vitest";
import { ARM_ANNOTATIONS } from "../api/v1alpha1/arm.ts";
import { ORIGINAL_UID_ANNOTATION, type HcpCluster, type NodePool } from "../api/v1alpha1/index.ts";
import { clusterFacts, deletedAt, meteredPool, poolRate, readySince } from "./facts.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";

function cluster(o: { ready?: string; annotations?: Record<string, string> } = {}): HcpCluster {
  return {
    metadata: {
      name: "demo",
      namespace: "ns",
      uid: "uid-now",
      creationTimestamp: "2026-03-02T10:00:00Z",
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: { platform: { azure: { subscriptionId: SUB, tenantId: "t", location: "eastus" } } },
    status: o.ready
      ? {
          conditions: [
            { type: "Ready", status: "True", lastTransitionTime: o.ready, reason: "AsExpected", message: "" },
          ],
        }
      : {},
  } as unknown as HcpCluster;
}

function pool(o: { vmSize?: string; replicas?: number; deleting?: string } = {}): NodePool {
  return {
    metadata: {
      name: "workers",
      namespace: "ns",
      uid: "pool-uid",
      ...(o.deleting ? { deletionTimestamp: o.deleting } : {}),
    },
    spec: { clusterRef: { name: "demo" }, platform: { azure: { vmSize: o.vmSize ?? "Standard_D8s_v3" } } },
    status: o.replicas === undefined ? {} : { replicas: o.replicas },
  };
}

describe("the usage facts of a cluster", () => {
  it("takes the original uid, the ARM ID the frontend stamped, and the creation time", () => {
    const c = cluster({
      annotations: {
        [ORIGINAL_UID_ANNOTATION]: "uid-first",
        [ARM_ANNOTATIONS.resourceId]: "/subscriptions/x/c",
      },
    });
    expect(clusterFacts(c)).toEqual({
      clusterId: "uid-first",
      resourceId: "/subscriptions/x/c",
      subscriptionId: SUB,
      tenantId: "t",
      location: "eastus",
      createdAt: new Date("2026-03-02T10:00:00Z"),
    });
  });

  it("names a cluster made without the frontend as ARM would, with its namespace for the resource group", () => {
    expect(clusterFacts(cluster()).resourceId).toBe(
      `/subscriptions/${SUB}/resourceGroups/ns/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/demo`,
    );
    expect(meteredPool(pool(), cluster()).resourceId).toMatch(
      /hcpOpenShiftClusters\/demo\/nodePools\/workers$/,
    );
  });

  it("dates a restored cluster whose Ready predates its creationTimestamp from its Ready", () => {
    expect(clusterFacts(cluster({ ready: "2026-03-01T08:00:00Z" })).createdAt).toEqual(
      new Date("2026-03-01T08:00:00Z"),
    );
    expect(clusterFacts(cluster({ ready: "2026-03-02T11:00:00Z" })).createdAt).toEqual(
      new Date("2026-03-02T10:00:00Z"),
    );
  });

  it("reads Ready only while it is True, and refuses a time that is none, naming the field", () => {
    expect(readySince(cluster({ ready: "2026-03-02T11:00:00Z" }))).toEqual(new Date("2026-03-02T11:00:00Z"));
    expect(readySince(cluster())).toBeUndefined();
    expect(() => readySince(cluster({ ready: "soon" }))).toThrow(
      'HcpCluster ns/demo condition Ready lastTransitionTime is not a time: "soon"',
    );
  });
});

describe("a node pool's vCPU rate", () => {
  it("is the reported nodes × the size's vCPUs, 0 without nodes or once deleting", () => {
    expect(poolRate(pool({ replicas: 2 }))).toBe(16);
    expect(poolRate(pool({ replicas: 3, vmSize: "standard_e16ds_v5" }))).toBe(48);
    expect(poolRate(pool())).toBe(0);
    expect(poolRate(pool({ replicas: 2, deleting: "2026-03-02T12:00:00Z" }))).toBe(0);
    expect(deletedAt("NodePool", pool({ deleting: "2026-03-02T12:00:00Z" }))).toEqual(
      new Date("2026-03-02T12:00:00Z"),
    );
  });

  it("refuses a size without a known vCPU count, naming it", () => {
    expect(() => poolRate(pool({ replicas: 1, vmSize: "Standard_X1" }))).toThrow(/VM size "Standard_X1"/);
  });
});
