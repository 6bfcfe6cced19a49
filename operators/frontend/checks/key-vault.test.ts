/** What a customer-managed etcd key needs: the key and its version enabled, the KMS identity's access. */
import { describe, expect, it } from "vitest";
import type { ClusterProperties } from "../api/internal.ts";
import { cluster, id, OPERATORS } from "../../../test/support/azure-check-fixtures.ts";
import { keyErrors, kmsIdentityErrors, kmsOf } from "./key-vault.ts";

describe("a customer-managed key", () => {
  const encrypted = (kms: {
    vaultName: string;
    activeKey: { name: string; version: string };
  }): ClusterProperties =>
    cluster({
      etcd: {
        dataEncryption: {
          keyManagementMode: "CustomerManaged",
          customerManaged: { encryptionType: "KMS", kms },
        },
      },
    });
  const key = { vaultName: "kv", key: "etcd", version: "v1" };

  it("is read only when etcd is customer-managed", () => {
    expect(kmsOf(cluster())).toBeUndefined();
    expect(kmsOf(encrypted({ vaultName: "kv", activeKey: { name: "etcd", version: "v1" } }))).toEqual(key);
  });

  it.each([
    ["missing", "enabled", "properties.etcd.dataEncryption.customerManaged.kms.activeKey.name"],
    ["disabled", "enabled", "properties.etcd.dataEncryption.customerManaged.kms.activeKey.name"],
    ["enabled", "missing", "properties.etcd.dataEncryption.customerManaged.kms.activeKey.version"],
    ["enabled", "disabled", "properties.etcd.dataEncryption.customerManaged.kms.activeKey.version"],
  ] as const)("a %s key with a %s version is refused naming %s", (k, v, target) => {
    expect(keyErrors(key, k, v).map((e) => e.target)).toEqual([target]);
  });

  it("needs the kms operator's identity, and an access policy to encrypt and decrypt when the vault has no RBAC", () => {
    const p = encrypted({ vaultName: "kv", activeKey: { name: "etcd", version: "v1" } });
    const target = `${OPERATORS}.controlPlaneOperators.kms`;
    expect(kmsIdentityErrors(p, {}, () => undefined).map((e) => e.target)).toEqual([target]);
    const ops = p.platform?.operatorsAuthentication?.userAssignedIdentities?.controlPlaneOperators;
    if (ops) ops["kms"] = id("kms");
    const principal = () => "p-1";
    expect(kmsIdentityErrors(p, { properties: { enableRbacAuthorization: true } }, principal)).toEqual([]);
    const policies = (keys: string[]) => ({
      properties: {
        enableRbacAuthorization: false,
        accessPolicies: [{ objectId: "P-1", permissions: { keys } }],
      },
    });
    expect(kmsIdentityErrors(p, policies(["Encrypt", "Decrypt"]), principal)).toEqual([]);
    expect(kmsIdentityErrors(p, policies(["all"]), principal)).toEqual([]);
    expect(kmsIdentityErrors(p, policies(["encrypt"]), principal).map((e) => e.target)).toEqual([target]);
  });
});
