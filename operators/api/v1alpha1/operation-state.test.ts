/** Provisioning states computed from a CR, and where an operation stands against the CR it acts on. */
import { describe, expect, it } from "vitest";
import type { OperationDoc } from "./operation.ts";
import { evaluate, progressState, resourceState, type Observed } from "./operation-state.ts";
import { ORIGINAL_UID_ANNOTATION } from "./labels.ts";

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

describe("states", () => {
  it("follows observedGeneration and the summary conditions", () => {
    expect(progressState("Create", cr(1, undefined, [])).state).toBe("Accepted");
    expect(progressState("Update", cr(2, 1, [["Ready", "True"]])).state).toBe("Accepted");
    expect(
      progressState(
        "Create",
        cr(1, 1, [
          ["Ready", "False"],
          ["Progressing", "True"],
        ]),
      ).state,
    ).toBe("Provisioning");
    expect(
      progressState(
        "Update",
        cr(2, 2, [
          ["Ready", "True"],
          ["Progressing", "True"],
        ]),
      ).state,
    ).toBe("Updating");
    expect(
      progressState(
        "Create",
        cr(1, 1, [
          ["Ready", "True"],
          ["Progressing", "False"],
        ]),
      ).state,
    ).toBe("Succeeded");
    expect(
      progressState(
        "Create",
        cr(1, 1, [
          ["Degraded", "True", "QuotaExceeded"],
          ["Progressing", "False"],
        ]),
      ),
    ).toEqual({
      state: "Failed",
      error: { code: "QuotaExceeded", message: "Degraded message" },
    });
    const deleting = cr(1, 1, [["Ready", "True"]]);
    deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    expect(resourceState(deleting).state).toBe("Deleting");
  });
});

/** A cluster's Delete operation under way. */
const DELETING: OperationDoc = {
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

describe("operations", () => {
  it("follows a delete by the uid its target was first created with, across a region restore", () => {
    const doc: OperationDoc = { ...DELETING, targetUid: "uid-first" };
    const restored = cr(1, 1, []);
    restored.metadata.uid = "uid-after-restore";
    restored.metadata.annotations = { [ORIGINAL_UID_ANNOTATION]: "uid-first" };
    expect(evaluate(doc, restored).state).toBe("Deleting");
    const recreated = cr(1, 1, []);
    recreated.metadata.uid = "uid-other";
    expect(evaluate(doc, recreated).state).toBe("Succeeded");
  });

  it("evaluates operations against the CR they act on", () => {
    const doc: OperationDoc = DELETING;
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
