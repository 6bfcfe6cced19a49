/** A versioned body ⇄ the internal model, fields a version cannot see kept. */
import { describe, expect, it } from "vitest";
import { carryHidden, toInternalProperties, toVersioned } from "./conversion.ts";

describe("conversion", () => {
  it("converts 2024-06-10-preview's kms.activeKey.vaultName and keeps what that version cannot see", () => {
    const v2024 = {
      properties: {
        etcd: { dataEncryption: { customerManaged: { kms: { activeKey: { name: "k", vaultName: "v" } } } } },
      },
    };
    const hub = toInternalProperties(v2024, "2024-06-10-preview", "cluster");
    expect(hub).toEqual({
      etcd: { dataEncryption: { customerManaged: { kms: { vaultName: "v", activeKey: { name: "k" } } } } },
    });
    const stored = {
      id: "i",
      name: "n",
      type: "t",
      location: "eastus",
      properties: { ...hub, ingress: { type: "Private" as const } },
    };
    const seen = toInternalProperties(
      toVersioned(stored, "2024-06-10-preview", "cluster"),
      "2024-06-10-preview",
      "cluster",
    );
    expect(carryHidden(stored.properties, seen, { nodeDrainTimeoutMinutes: 3 })).toEqual({
      nodeDrainTimeoutMinutes: 3,
      ingress: { type: "Private" },
    });
  });
});
