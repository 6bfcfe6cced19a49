import { describe, expect, it } from "vitest";
import { CloudError } from "../errors.ts";
import { resourceIdFromPath } from "./names.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";

function codeOf(params: Record<string, string>): string | undefined {
  try {
    resourceIdFromPath(params);
    return undefined;
  } catch (err) {
    return err instanceof CloudError ? err.body.code : "not a CloudError";
  }
}

describe("resource names", () => {
  it("names the resource a path identifies, with the caller's casing", () => {
    expect(
      resourceIdFromPath({ subscriptionId: SUB, resourceGroup: "RG", cluster: "C1", nodePool: "np1" }),
    ).toEqual({
      kind: "nodePool",
      subscriptionId: SUB,
      resourceGroup: "RG",
      cluster: "C1",
      nodePool: "np1",
    });
    expect(
      resourceIdFromPath({ subscriptionId: SUB, resourceGroup: "rg", cluster: "c", externalAuth: "e" })?.kind,
    ).toBe("externalAuth");
    expect(resourceIdFromPath({ subscriptionId: SUB, resourceGroup: "rg" })).toBeUndefined();
  });

  it("refuses a subscription ID, resource group or name outside ARM's rules, each with its code", () => {
    expect(codeOf({ subscriptionId: "not-a-guid" })).toBe("InvalidSubscriptionID");
    expect(codeOf({ subscriptionId: SUB, resourceGroup: "ends-with." })).toBe("InvalidResourceGroupName");
    expect(codeOf({ subscriptionId: SUB, resourceGroup: "rg", cluster: "1starts-with-a-digit" })).toBe(
      "InvalidResourceName",
    );
    expect(
      codeOf({ subscriptionId: SUB, resourceGroup: "rg", cluster: "c", nodePool: "sixteen-letters1" }),
    ).toBe("InvalidResourceName");
  });
});
