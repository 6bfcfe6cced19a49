import { describe, expect, it } from "vitest";
import { AzureUserError, RESOURCE_OWNED_BY_ANOTHER } from "./errors.ts";
import { assertOwned, CLUSTER_TAG, hasOwnerTags, isOwnedBy, OWNER_TAG, withOwnerTags } from "./ownership.ts";

const owner = { id: "uid-1", cluster: "ns/c1" };

describe("ownership", () => {
  it("uses tag names ARM accepts", () => {
    for (const key of [OWNER_TAG, CLUSTER_TAG]) expect(key).not.toMatch(/[<>%&\\?/]/);
  });

  it("reads the owner tag case-insensitively, as ARM compares tag names", () => {
    expect(isOwnedBy({ "HCP.ARO.DEV_OWNER": "uid-1" }, owner)).toBe(true);
    expect(isOwnedBy({ [OWNER_TAG]: "uid-2" }, owner)).toBe(false);
    expect(isOwnedBy(undefined, owner)).toBe(false);
  });

  it("refuses someone else's resource without naming the other owner", () => {
    const check = (): void => assertOwned({ [OWNER_TAG]: "uid-2" }, owner, "DNS zone z.example.com");
    expect(check).toThrow(AzureUserError);
    try {
      check();
    } catch (err) {
      expect((err as AzureUserError).code).toBe(RESOURCE_OWNED_BY_ANOTHER);
      expect((err as AzureUserError).message).toContain("DNS zone z.example.com");
      expect((err as AzureUserError).message).not.toContain("uid-2");
    }
  });

  it("refuses an untagged resource: it was not created by this service", () => {
    expect(() => assertOwned({ team: "x" }, owner, "zone")).toThrow(/not created by this service/);
  });

  it("adds owner tags, keeping the others and replacing case variants of ours", () => {
    const tags = withOwnerTags({ team: "x", "Hcp.Aro.Dev_Owner": "uid-1" }, owner);
    expect(tags).toEqual({ team: "x", [OWNER_TAG]: "uid-1", [CLUSTER_TAG]: "ns/c1" });
    expect(hasOwnerTags(tags, owner)).toBe(true);
    expect(hasOwnerTags({ [OWNER_TAG]: "uid-1" }, owner)).toBe(false);
  });
});
