import { describe, expect, it } from "vitest";
import {
  appliedSigningKeyId,
  hostedReport,
  isProgressReason,
  poolReport,
  SIGNING_KEY_FEEDBACK_PATHS,
} from "./feedback.ts";

describe("hostedReport", () => {
  it("reads small feedback values and ignores malformed ones", () => {
    const r = hostedReport({
      available: { type: "Available", status: "True", reason: "AsExpected", message: "ok" },
      degraded: "not an object",
      completedVersion: "4.19.7",
      latestUpdate: { state: "Partial", version: "4.20.2" },
      endpointHost: "api.c.example.com",
      endpointPort: 443,
    });
    expect(r.conditions.map((c) => c.type)).toEqual(["Available"]);
    expect(r).toMatchObject({
      completedVersion: "4.19.7",
      updatingTo: "4.20.2",
      endpoint: { host: "api.c.example.com", port: 443 },
    });
    expect(hostedReport({ endpointHost: "h", endpointPort: "443" }).endpoint).toBeUndefined();
  });

  it("reads the KMS conditions and the keys the HostedCluster carries, and no malformed key", () => {
    const upToDate = { type: "EtcdDataEncryptionUpToDate", status: "True", reason: "ReEncryptionCompleted" };
    const active = { keyVaultName: "kv", keyName: "etcd", keyVersion: "2" };
    const backup = { keyVaultName: "kv", keyName: "etcd", keyVersion: "1" };
    expect(
      hostedReport({ etcdDataEncryptionUpToDate: upToDate, kmsActiveKey: active, kmsBackupKey: backup }),
    ).toMatchObject({
      etcdDataEncryptionUpToDate: upToDate,
      kmsKeys: { active, backup },
    });
    const bad = hostedReport({ kmsActiveKey: { keyName: "etcd" }, validAzureKMSConfig: "False" });
    expect(bad.kmsKeys).toBeUndefined();
    expect(bad.validAzureKMSConfig).toBeUndefined();
    expect(hostedReport({ kmsActiveKey: active, kmsBackupKey: 7 }).kmsKeys).toEqual({ active });
  });

  it("reads HyperShift's ValidConfiguration and the generation it is about, and nothing malformed", () => {
    const valid = {
      type: "ValidConfiguration",
      status: "True",
      reason: "AsExpected",
      message: "",
      observedGeneration: 4,
    };
    expect(hostedReport({ generation: 4, validConfiguration: valid })).toMatchObject({
      generation: 4,
      validConfiguration: valid,
    });
    const bad = hostedReport({ generation: "4", validConfiguration: "True" });
    expect(bad.generation).toBeUndefined();
    expect(bad.validConfiguration).toBeUndefined();
  });

  it("tells a first install (no Completed version yet) from an upgrade", () => {
    const install = hostedReport({ latestUpdate: { state: "Partial", version: "4.19.7" } });
    expect(install).toMatchObject({ installing: "4.19.7" });
    expect(install.updatingTo).toBeUndefined();
    const done = hostedReport({
      completedVersion: "4.19.7",
      latestUpdate: { state: "Completed", version: "4.19.7" },
    });
    expect(done.installing).toBeUndefined();
    expect(done.updatingTo).toBeUndefined();
  });
});

describe("node pool feedback", () => {
  it("tells HyperShift's progress reasons from failures", () => {
    for (const r of ["WaitingForAvailable", "WaitingForAvailableMachines", "WaitingForNodeRef", "ScalingUp"])
      expect(isProgressReason(r), r).toBe(true);
    for (const r of ["ValidationFailed", "InvalidVMSize", "IgnitionEndpointMissing"])
      expect(isProgressReason(r), r).toBe(false);
  });

  it("reads replicas, version and the Ready condition, ignoring malformed values", () => {
    expect(
      poolReport({
        replicas: 3,
        version: "4.19.7",
        ready: { type: "Ready", status: "True", reason: "AsExpected" },
      }),
    ).toEqual({
      replicas: 3,
      version: "4.19.7",
      conditions: [{ type: "Ready", status: "True", reason: "AsExpected" }],
    });
    expect(poolReport({ replicas: "3", version: "", ready: "yes" })).toEqual({
      replicas: undefined,
      version: undefined,
      conditions: [],
    });
  });
});

describe("signing key feedback", () => {
  it("reads the key ID the Secret's annotation carried back, and nothing malformed", () => {
    expect(appliedSigningKeyId({ signingKeyId: "kid-1" })).toBe("kid-1");
    expect(appliedSigningKeyId({ signingKeyId: "" })).toBeUndefined();
    expect(appliedSigningKeyId({ signingKeyId: 7 })).toBeUndefined();
    expect(appliedSigningKeyId({})).toBeUndefined();
  });

  it("asks for the annotation alone, never the Secret's data", () => {
    expect(SIGNING_KEY_FEEDBACK_PATHS.map((p) => p.path)).toEqual([
      ".metadata.annotations['hcp.aro.dev/signing-key-id']",
    ]);
  });
});
