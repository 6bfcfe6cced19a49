/** The internal node pool ⇄ NodePool CR. */
import { describe, expect, it } from "vitest";
import { formatResourceId, type ResourceId } from "../resource-id.ts";
import { nodePoolToCR } from "./node-pool.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";

describe("node pool translation", () => {
  const id: ResourceId = { kind: "cluster", subscriptionId: SUB, resourceGroup: "rg", cluster: "Demo" };

  it("refuses duplicate node pool label keys and replicas beside autoScaling", () => {
    const np: ResourceId = { ...id, kind: "nodePool", nodePool: "np" };
    const hub = {
      id: formatResourceId(np),
      name: "np",
      type: "t",
      location: "eastus",
      properties: {
        platform: { vmSize: "Standard_D8s_v3" },
        replicas: 2,
        autoScaling: { min: 1, max: 2 },
        labels: [{ key: "a" }, { key: "a" }],
      },
    };
    expect(() => nodePoolToCR(hub, { id: np, namespace: "ns", name: "np-x", annotations: {} })).toThrowError(
      "2 errors",
    );
  });
});
