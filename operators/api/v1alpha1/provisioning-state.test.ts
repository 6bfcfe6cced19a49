/** Provisioning states computed from a CR. */
import { describe, expect, it } from "vitest";
import { progressState, resourceState, type Observed } from "./operation-state.ts";

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
