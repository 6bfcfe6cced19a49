/** Operation IDs, and where an operation stands against the CR it acts on. */
import { describe, expect, it } from "vitest";
import type { OperationDoc } from "../../api/v1alpha1/index.ts";
import type { Observed } from "../mapping/provisioning-state.ts";
import { newOperationId, operationKey } from "./document.ts";
import { evaluate } from "./status.ts";

function cr(
  generation: number,
  observed: number | undefined,
  conds: Array<[string, string, string?]>,
): Observed {
  return {
    metadata: { generation, annotations: {} },
    ...(observed === undefined
      ? {}
      : {
          status: {
            observedGeneration: observed,
            conditions: conds.map(([type, status, reason]) => ({
              type,
              status: status as "True",
              reason: reason ?? "R",
              message: `${type} message`,
              lastTransitionTime: "2026-01-01T00:00:00Z",
            })),
          },
        }),
  };
}

describe("operations", () => {
  it("evaluates operations against the CR they act on", () => {
    const doc: OperationDoc = {
      id: "op-1",
      request: "Delete",
      resourceId: "x",
      kind: "cluster",
      target: "c",
      location: "eastus",
      apiVersion: "2026-06-30-preview",
      startTime: "",
      lastTransitionTime: "",
      status: "Deleting",
    };
    const current = cr(1, 1, []);
    current.metadata.annotations = { "hcp.aro.dev/arm-operation-id": "op-1" };
    expect(evaluate(doc, current).state).toBe("Deleting");
    expect(evaluate(doc, undefined).state).toBe("Succeeded");
    const update = { ...doc, request: "Update" as const, status: "Accepted" as const };
    expect(evaluate(update, undefined).state).toBe("Failed");
    const other = cr(1, 1, []);
    other.metadata.annotations = { "hcp.aro.dev/arm-operation-id": "op-2" };
    expect(evaluate(update, other)).toMatchObject({ state: "Canceled", error: { code: "Canceled" } });
    expect(evaluate({ ...update, status: "Succeeded" }, other).state).toBe("Succeeded");
  });

  it("makes operation IDs that name their CR and look like UUIDs", () => {
    const id = newOperationId("nodePool", "workers-1a2b3c4d");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id.slice(0, 8)).toBe(operationKey("nodePool", "workers-1a2b3c4d"));
    expect(id[7]).toBe("1");
    expect(operationKey("cluster", "workers-1a2b3c4d")[7]).toBe("0");
    expect(newOperationId("nodePool", "workers-1a2b3c4d")).not.toBe(id);
  });
});
