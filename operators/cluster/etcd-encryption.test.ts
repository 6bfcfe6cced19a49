import { describe, expect, it } from "vitest";
import type { AzureKMSKey } from "../api/hypershift/v1beta1/index.ts";
import type { HostedClusterReport } from "../api/v1alpha1/feedback.ts";
import {
  carriedKeys,
  ETCD_KEYS_ANNOTATION,
  keysAnnotation,
  lagsBehind,
  planKeys,
  reEncrypted,
  writtenOf,
  type EtcdKeys,
} from "./etcd-encryption.ts";

const key = (keyVersion: string): AzureKMSKey => ({ keyVaultName: "kv", keyName: "etcd", keyVersion });
const [v1, v2, v3] = [key("1"), key("2"), key("3")];

/** HyperShift's feedback: the HostedCluster at `generation` carried `keys`, with this verdict. */
function report(
  keys: EtcdKeys,
  upToDate: "True" | "False" | undefined,
  opts: { generation?: number; observedGeneration?: number; reason?: string; message?: string } = {},
): HostedClusterReport {
  const generation = opts.generation ?? 5;
  return {
    conditions: [],
    generation,
    kmsKeys: keys,
    ...(upToDate
      ? {
          etcdDataEncryptionUpToDate: {
            type: "EtcdDataEncryptionUpToDate",
            status: upToDate,
            reason: opts.reason ?? (upToDate === "True" ? "ReEncryptionCompleted" : "ReEncryptionInProgress"),
            message: opts.message ?? "",
            lastTransitionTime: "2026-08-01T00:00:00Z",
            observedGeneration: opts.observedGeneration ?? generation,
          },
        }
      : {}),
  };
}

describe("the etcd keys the HostedCluster carries through a rotation", () => {
  it("a first key goes in alone, and is reported encrypting once HyperShift says so", () => {
    const first = planKeys(v1, undefined, undefined);
    expect(first.keys).toEqual({ active: v1 });
    expect(first.condition).toMatchObject({ status: "False", reason: "WaitingForHyperShift" });
    const done = planKeys(v1, { active: v1 }, report({ active: v1 }, "True"));
    expect(done.keys).toEqual({ active: v1 });
    expect(done.condition).toMatchObject({
      status: "True",
      message: "All etcd data is encrypted with kv/etcd version 1",
    });
  });

  it("a new version becomes active and the old one the backup, until HyperShift has re-encrypted", () => {
    const rotated = planKeys(v2, { active: v1 }, report({ active: v1 }, "True"));
    expect(rotated.keys).toEqual({ active: v2, backup: v1 });
    expect(rotated.condition).toMatchObject({ status: "False", reason: "ReEncryptionInProgress" });
    expect(rotated.condition?.message).toContain("kv/etcd version 1 stays the backup key until then");
    // HyperShift has not looked yet, or is still at it: nothing changes.
    for (const r of [
      report({ active: v1 }, "True"),
      report({ active: v2, backup: v1 }, "False"),
      report({ active: v2, backup: v1 }, "True", { observedGeneration: 4 }),
    ])
      expect(planKeys(v2, { active: v2, backup: v1 }, r).keys).toEqual({ active: v2, backup: v1 });
    // Re-encrypted with the new key: the backup goes.
    const settled = planKeys(v2, { active: v2, backup: v1 }, report({ active: v2, backup: v1 }, "True"));
    expect(settled.keys).toEqual({ active: v2 });
    expect(settled.condition).toMatchObject({ status: "True", reason: "AsExpected" });
  });

  it("a further version waits for the rotation under way (one backup key), then rotates in", () => {
    const waiting = planKeys(v3, { active: v2, backup: v1 }, report({ active: v2, backup: v1 }, "False"));
    expect(waiting.keys).toEqual({ active: v2, backup: v1 });
    expect(waiting.condition?.message).toContain("version 3 rotates in once it is done");
    const next = planKeys(v3, { active: v2, backup: v1 }, report({ active: v2, backup: v1 }, "True"));
    expect(next.keys).toEqual({ active: v3, backup: v2 });
  });

  it("a report about another rotation with the same active key does not drop the backup", () => {
    // v1 → v2 → back to v1: HyperShift's word about v1 alone (no backup) is not about this rotation.
    expect(planKeys(v1, { active: v1, backup: v2 }, report({ active: v1 }, "True")).keys).toEqual({
      active: v1,
      backup: v2,
    });
    expect(reEncrypted(report({ active: v1, backup: v2 }, "True"), { active: v1, backup: v2 })).toBe(true);
  });

  it("says HyperShift's ReEncryptionFailed with its message", () => {
    const failed = planKeys(
      v2,
      { active: v2, backup: v1 },
      report({ active: v2, backup: v1 }, "False", {
        reason: "ReEncryptionFailed",
        message: "migration failed",
      }),
    );
    expect(failed.condition).toMatchObject({ status: "False", reason: "ReEncryptionFailed" });
    expect(failed.condition?.message).toMatch(/: migration failed$/);
  });

  it("a key HyperShift refuses and never found usable gives way to the next; one it used becomes the backup", () => {
    const refused = (keys: EtcdKeys): HostedClusterReport => ({
      ...report(keys, undefined),
      validAzureKMSConfig: {
        type: "ValidAzureKMSConfig",
        status: "False" as const,
        reason: "AzureError",
        message: "failed to encrypt data using KMS",
        lastTransitionTime: "2026-08-01T00:00:00Z",
        observedGeneration: 5,
      },
    });
    expect(planKeys(v3, { active: v2, backup: v1 }, refused({ active: v2, backup: v1 })).keys).toEqual({
      active: v3,
      backup: v1,
    });
    expect(planKeys(v3, { active: v2 }, refused({ active: v2 })).keys).toEqual({ active: v3 });
    // Once HyperShift used it, data may be encrypted with it: it is kept.
    const used = { active: v2, backup: v1, activeUsable: true };
    expect(planKeys(v3, used, refused({ active: v2, backup: v1 })).keys).toEqual(used);
    // HyperShift's word is recorded with the keys.
    const valid = report({ active: v2, backup: v1 }, "False");
    valid.validAzureKMSConfig = { ...refused({ active: v2 }).validAzureKMSConfig!, status: "True" };
    expect(planKeys(v2, { active: v2, backup: v1 }, valid).keys).toEqual(used);
  });

  it("a cached work behind the controller's own last write of it is not decided from", () => {
    const work = (generation: number, keys?: EtcdKeys) => ({
      metadata: { generation, annotations: keysAnnotation(keys) },
    });
    const written = writtenOf(work(4, { active: v2, backup: v1, activeUsable: true }));
    expect(lagsBehind(work(3, { active: v2, backup: v1 }), written)).toBe(true);
    expect(lagsBehind(work(4, { active: v2, backup: v1 }), written)).toBe(true);
    expect(lagsBehind(work(4, { active: v2, backup: v1, activeUsable: true }), written)).toBe(false);
    expect(lagsBehind(work(5, { active: v3 }), written)).toBe(false);
    expect(lagsBehind(work(1), undefined)).toBe(false);
  });

  it("platform-managed keys: nothing to carry, no condition", () => {
    expect(planKeys(undefined, undefined, undefined)).toEqual({});
  });

  it("the record on the work reads back what was written, and nothing malformed", () => {
    const work = (annotations: Record<string, string>) => ({ metadata: { annotations } });
    expect(carriedKeys(work(keysAnnotation({ active: v2, backup: v1 })))).toEqual({ active: v2, backup: v1 });
    expect(carriedKeys(work(keysAnnotation({ active: v1 })))).toEqual({ active: v1 });
    expect(carriedKeys(work({ [ETCD_KEYS_ANNOTATION]: "{" }))).toBeUndefined();
    expect(carriedKeys(work({ [ETCD_KEYS_ANNOTATION]: '{"active":{"keyName":"etcd"}}' }))).toBeUndefined();
    expect(carriedKeys(undefined)).toBeUndefined();
  });
});
