/** Where an operation stands against the CR it acts on. */
import { describe, expect, it } from "vitest";
import type { OperationDoc } from "./operation.ts";
import { evaluate, type Observed } from "./operation-state.ts";

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
});
