/** Deadlines and the notification URI check as pure functions; the frontend's use of them is in test/integration. */
import { describe, expect, it } from "vitest";
import type { Condition } from "../../runtime/conditions.ts";
import {
  deadlineError,
  evaluate,
  formatBound,
  lastProgressMessage,
  resourceState,
  type Observed,
  type OperationDoc,
} from "../../api/v1alpha1/index.ts";
import { boundOf, DEFAULT_DEADLINES, resolveDeadlines } from "./deadlines.ts";
import { refusalOf } from "./notification-uri.ts";

const MINUTE = 60_000;
const START = "2026-01-01T00:00:00.000Z";
const DEADLINE = "2026-01-01T00:20:00.000Z";
const BEFORE = Date.parse(DEADLINE) - 1;
const AFTER = Date.parse(DEADLINE);

const condition = (type: string, status: "True" | "False", message: string): Condition => ({
  type,
  status,
  reason: "R",
  message,
  lastTransitionTime: START,
});

function progressing(annotations: Record<string, string>): Observed {
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "HcpCluster",
    metadata: { name: "c", namespace: "ns", generation: 1, uid: "uid-1", annotations },
    status: {
      observedGeneration: 1,
      conditions: [
        condition("Ready", "False", "not yet"),
        condition("Progressing", "True", "Placing the control plane"),
      ],
    },
  };
}

const doc: OperationDoc = {
  id: "op-1",
  request: "Create",
  resourceId: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c",
  kind: "cluster",
  target: "c",
  location: "eastus",
  apiVersion: "2026-06-30-preview",
  startTime: START,
  lastTransitionTime: START,
  status: "Accepted",
  deadline: DEADLINE,
};

describe("deadlines", () => {
  it("bounds each class of operation, upgrades longest", () => {
    const d = DEFAULT_DEADLINES;
    expect(boundOf(d, { request: "Create", kind: "cluster" })).toBe(20 * MINUTE);
    expect(boundOf(d, { request: "Create", kind: "nodePool" })).toBe(20 * MINUTE);
    expect(boundOf(d, { request: "Create", kind: "externalAuth" })).toBe(20 * MINUTE);
    expect(boundOf(d, { request: "Update", kind: "nodePool" })).toBe(20 * MINUTE);
    expect(boundOf(d, { request: "Update", kind: "nodePool", upgrade: true })).toBe(45 * MINUTE);
    expect(boundOf(d, { request: "Delete", kind: "externalAuth" })).toBe(25 * MINUTE);
    expect(boundOf(d, { request: "RequestCredential", kind: "cluster" })).toBe(10 * MINUTE);
    expect(boundOf(d, { request: "RevokeCredentials", kind: "cluster" })).toBe(20 * MINUTE);
    expect(() => resolveDeadlines({ delete: 0 })).toThrow(/delete/);
    expect(resolveDeadlines({ upgrade: 1000 })).toMatchObject({ upgrade: 1000, delete: 25 * MINUTE });
  });

  it("says the bound plainly, with the last progress message", () => {
    expect(formatBound(20 * MINUTE)).toBe("20 minutes");
    expect(formatBound(MINUTE)).toBe("1 minute");
    expect(formatBound(3000)).toBe("3 seconds");
    expect(formatBound(90_000)).toBe("90 seconds");
    const degraded = [condition("Degraded", "True", "quota"), condition("Progressing", "True", "placing")];
    expect(lastProgressMessage(degraded)).toBe("quota");
    expect(lastProgressMessage([condition("Ready", "False", "waiting")])).toBe("waiting");
    expect(lastProgressMessage([condition("Ready", "True", "fine")])).toBeUndefined();
    expect(deadlineError(START, DEADLINE, undefined)).toEqual({
      code: "InternalServerError",
      message: "The operation did not finish within 20 minutes.",
    });
  });

  it("fails a running operation at its deadline, ending then, and keeps what finished", () => {
    const cr = progressing({ "hcp.aro.dev/arm-operation-id": "op-1" });
    expect(evaluate(doc, cr, BEFORE).state).toBe("Provisioning");
    expect(evaluate(doc, cr, AFTER)).toEqual({
      state: "Failed",
      error: {
        code: "InternalServerError",
        message: "The operation did not finish within 20 minutes. Last status: Placing the control plane",
      },
      endTime: DEADLINE,
    });
    expect(evaluate({ ...doc, status: "Succeeded" }, cr, AFTER).state).toBe("Succeeded");
    const older: OperationDoc = { ...doc };
    delete older.deadline;
    expect(evaluate(older, cr, AFTER).state).toBe("Provisioning");
  });

  it("shows Failed on GET past the deadline of the CR's own operation only", () => {
    const created = {
      "hcp.aro.dev/arm-operation-request": "Create",
      "hcp.aro.dev/arm-operation-deadline": DEADLINE,
    };
    expect(resourceState(progressing(created), BEFORE).state).toBe("Provisioning");
    expect(resourceState(progressing(created), AFTER).state).toBe("Failed");
    // Deleted without a Delete operation of its own (a node pool with its cluster): no deadline.
    const swept = {
      ...progressing(created),
      metadata: { ...progressing(created).metadata, deletionTimestamp: START },
    };
    expect(resourceState(swept, AFTER).state).toBe("Deleting");
    const deleting = {
      ...swept,
      metadata: {
        ...swept.metadata,
        annotations: { ...created, "hcp.aro.dev/arm-operation-request": "Delete" },
      },
    };
    expect(resourceState(deleting, BEFORE).state).toBe("Deleting");
    expect(resourceState(deleting, AFTER).state).toBe("Failed");
  });

  it("keeps a Delete running while the CR it deletes exists, before the CR names it", () => {
    const del: OperationDoc = { ...doc, request: "Delete", status: "Deleting", targetUid: "uid-1" };
    const notYetMarked = progressing({ "hcp.aro.dev/arm-operation-id": "an-earlier-one" });
    expect(evaluate(del, notYetMarked, BEFORE).state).toBe("Deleting");
    const recreated = { ...notYetMarked, metadata: { ...notYetMarked.metadata, uid: "uid-2" } };
    expect(evaluate(del, recreated, BEFORE).state).toBe("Succeeded");
    expect(evaluate(del, undefined, AFTER).state).toBe("Succeeded");
  });
});

describe("Azure-AsyncNotificationUri", () => {
  const hosts = ["management.azure.com"];
  it.each([
    ["https://management.azure.com/notify?x=1", undefined],
    ["https://eastus.management.azure.com:443/notify", undefined],
    ["HTTPS://MANAGEMENT.AZURE.COM/n", undefined],
    ["http://management.azure.com/n", "is not an https URI"],
    ["https://evilmanagement.azure.com/n", "names a host that is not allowed ('evilmanagement.azure.com')"],
    ["https://management.azure.com.evil.io/n", "names a host that is not allowed"],
    ["https://a:b@management.azure.com/n", "carries credentials"],
    ["/relative", "is not an absolute URI"],
    [`https://management.azure.com/${"x".repeat(2048)}`, "is longer than 2048 characters"],
  ])("%s", (uri, refusal) => {
    const got = refusalOf(uri, hosts);
    if (refusal === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(refusal);
  });
});
