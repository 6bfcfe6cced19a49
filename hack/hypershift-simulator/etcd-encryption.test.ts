import { describe, expect, it } from "vitest";
import type { AzureKMSKey, HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import { getCondition } from "../../operators/runtime/conditions.ts";
import { hostedClusterFixture } from "../../test/support/hypershift.ts";
import { keyFingerprint } from "./etcd-encryption.ts";
import { computeHostedClusterStatus } from "./status.ts";

const V1 = "0123456789abcdef0123456789abcdef";
const V2 = "fedcba9876543210fedcba9876543210";
const key = (keyVersion: string, keyName = "etcd", keyVaultName = "kv-demo"): AzureKMSKey => ({
  keyVaultName,
  keyName,
  keyVersion,
});

function encrypted(active: AzureKMSKey, backup?: AzureKMSKey): HostedCluster {
  const hc = hostedClusterFixture("ns", "demo");
  hc.metadata.generation = 3;
  hc.spec.secretEncryption = {
    type: "kms",
    kms: {
      provider: "Azure",
      azure: {
        activeKey: active,
        ...(backup ? { backupKey: backup } : {}),
        kms: { credentialsSecretName: "demo-kms", objectEncoding: "utf-8" },
      },
    },
  };
  return hc;
}

const t0 = new Date("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);

/** One reconcile: the status the simulator writes, and the fingerprint it records first. */
function reconcile(hc: HostedCluster, migratedKeyHash: string | undefined, now = t0) {
  const out = computeHostedClusterStatus(hc, {
    now,
    provisionDelayMs: 2_000,
    failure: undefined,
    migratedKeyHash,
  });
  return { hc: { ...hc, status: out.status }, out };
}

const cond = (hc: HostedCluster, type: string) => getCondition(hc.status?.conditions, type);

describe("the simulator's Azure KMS checks", () => {
  it("a key Key Vault holds: ValidAzureKMSConfig True; none configured: Unknown, as HyperShift says", () => {
    expect(cond(reconcile(encrypted(key(V1)), undefined).hc, "ValidAzureKMSConfig")).toMatchObject({
      status: "True",
      reason: "AsExpected",
      observedGeneration: 3,
    });
    const plain = hostedClusterFixture("ns", "plain");
    expect(cond(reconcile(plain, undefined).hc, "ValidAzureKMSConfig")).toMatchObject({
      status: "Unknown",
      message: "Azure KMS is not configured",
    });
    expect(cond(reconcile(plain, undefined).hc, "EtcdDataEncryptionUpToDate")).toBeUndefined();
  });

  it.each([
    [
      "a version Key Vault never gave",
      key("v1"),
      "(key: etcd/v1): ERROR CODE: KeyNotFound: A key with (name/id) etcd/v1 was not found",
    ],
    ["an empty key name", key(V1, ""), `(key: /${V1}): ERROR CODE: KeyNotFound`],
    [
      "a vault that is not a Key Vault host",
      key(V1, "etcd", "kv--x"),
      `(key: etcd/${V1}): dial tcp: lookup kv--x.vault.azure.net: no such host`,
    ],
  ])("refuses %s with AzureError and HyperShift's message", (_what, active, detail) => {
    const c = cond(reconcile(encrypted(active), undefined).hc, "ValidAzureKMSConfig");
    expect(c).toMatchObject({ status: "False", reason: "AzureError" });
    expect(c?.message).toContain(`failed to encrypt data using KMS ${detail}`);
  });
});

describe("the simulator's re-encryption after a key rotation", () => {
  it("takes the first key as is and records it", () => {
    const first = reconcile(encrypted(key(V1)), undefined);
    expect(first.out.migratedKeyHash).toBe(keyFingerprint(key(V1)));
    expect(cond(first.hc, "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "True",
      reason: "ReEncryptionCompleted",
    });
  });

  it("re-encrypts under a new active key while the old one is the backup, then records the new one", () => {
    const rotated = encrypted(key(V2), key(V1));
    const started = reconcile(rotated, keyFingerprint(key(V1)));
    expect(cond(started.hc, "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "False",
      reason: "ReEncryptionInProgress",
    });
    expect(started.out.migratedKeyHash).toBeUndefined();
    expect(started.out.requeueAfterMs).toBe(2_000);
    // Restarted half-way: the condition says when it began.
    const half = reconcile(started.hc, keyFingerprint(key(V1)), at(1_000));
    expect(half.out.requeueAfterMs).toBe(1_000);
    const done = reconcile(half.hc, keyFingerprint(key(V1)), at(2_000));
    expect(done.out.migratedKeyHash).toBe(keyFingerprint(key(V2)));
    expect(cond(done.hc, "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "True",
      reason: "ReEncryptionCompleted",
    });
  });

  it("cannot read data under a key that is neither active nor backup", () => {
    const dropped = reconcile(encrypted(key(V2)), keyFingerprint(key(V1)));
    expect(cond(dropped.hc, "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "False",
      reason: "ReEncryptionFailed",
    });
    expect(dropped.out.migratedKeyHash).toBeUndefined();
  });

  it("does not re-encrypt with a key Key Vault refuses", () => {
    const bad = reconcile(encrypted(key("v2"), key(V1)), keyFingerprint(key(V1)), at(60_000));
    expect(cond(bad.hc, "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "False",
      reason: "ReEncryptionInProgress",
    });
    expect(bad.out.migratedKeyHash).toBeUndefined();
  });
});
