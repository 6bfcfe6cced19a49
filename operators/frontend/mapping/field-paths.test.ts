/** CR field paths in API server refusals, named as ARM fields. */
import { describe, expect, it } from "vitest";
import { armFieldPath } from "./field-paths.ts";

describe("field paths", () => {
  it("names ARM fields in the API server's refusals", () => {
    expect(armFieldPath("spec.platform.azure.identities.controlPlaneOperators")).toBe(
      "properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators",
    );
    expect(armFieldPath("spec.network.podCidr must be")).toBe("properties.network.podCidr must be");
    expect(armFieldPath("spec.fips: Invalid value")).toBe("properties.cryptoRestrictions: Invalid value");
    expect(armFieldPath("spec.api.authorizedCIDRs[3]: Invalid value: spec.api.authorizedCIDRs entries")).toBe(
      "properties.api.authorizedCidrs[3]: Invalid value: properties.api.authorizedCidrs entries",
    );
  });
});
