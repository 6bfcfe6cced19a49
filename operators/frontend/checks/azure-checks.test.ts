/** What a cluster's create or update has to check in the customer's Azure. */
import { describe, expect, it } from "vitest";
import type { ClusterProperties } from "../api/internal.ts";
import { cluster, id, SUB } from "../../../test/support/azure-check-fixtures.ts";
import { clusterChange } from "./azure-checks.ts";

describe("clusterChange", () => {
  const check = (properties: ClusterProperties, stored?: ClusterProperties) => ({
    subscriptionId: SUB,
    identity: undefined,
    properties,
    ...(stored ? { stored } : {}),
  });
  const withKey = (version: string): ClusterProperties =>
    cluster({
      etcd: {
        dataEncryption: {
          keyManagementMode: "CustomerManaged",
          customerManaged: {
            encryptionType: "KMS",
            kms: { vaultName: "kv", activeKey: { name: "etcd", version } },
          },
        },
      },
    });

  it("checks everything on a create, what changed on an update", () => {
    expect(clusterChange(check(cluster()))).toEqual({ identities: true, key: true });
    expect(clusterChange(check(cluster(), cluster()))).toEqual({ identities: false, key: false });
    expect(clusterChange(check(withKey("v2"), withKey("v1")))).toEqual({ identities: false, key: true });
    const moved = cluster();
    const ops = moved.platform?.operatorsAuthentication?.userAssignedIdentities?.controlPlaneOperators;
    if (ops) ops["control-plane"] = id("cp").toUpperCase();
    // The same identity in other casing is no change; another one is.
    expect(clusterChange(check(moved, cluster()))).toEqual({ identities: false, key: false });
    if (ops) ops["control-plane"] = id("cp-2");
    expect(clusterChange(check(moved, cluster()))).toEqual({ identities: true, key: false });
  });
});
