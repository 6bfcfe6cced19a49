/** Which identities a cluster names, and at which field. */
import { describe, expect, it } from "vitest";
import { cluster, id, OPERATORS } from "../../../test/support/azure-check-fixtures.ts";
import { identityUses } from "./identities.ts";

describe("identityUses", () => {
  it("names each identity once, at its operator's field first, in any casing", () => {
    const uses = identityUses(
      { type: "UserAssigned", userAssignedIdentities: { [id("CCM").toUpperCase()]: {}, [id("extra")]: {} } },
      cluster(),
    );
    expect(uses.map((u) => u.target)).toEqual([
      `${OPERATORS}.controlPlaneOperators.cloud-controller-manager`,
      `${OPERATORS}.controlPlaneOperators.disk-csi-driver`,
      `${OPERATORS}.controlPlaneOperators.control-plane`,
      `${OPERATORS}.dataPlaneOperators.file-csi-driver`,
      `${OPERATORS}.serviceManagedIdentity`,
      `identity.userAssignedIdentities.${id("extra")}`,
    ]);
  });
});
