import { describe, expect, it } from "vitest";
import { ARM_LABELS } from "./arm.ts";
import { breakglassCredential, breakglassRevocation } from "./breakglasscredential.ts";
import type { HcpCluster } from "./hcpcluster.ts";

const cluster = {
  metadata: { name: "demo", namespace: "team-a", uid: "uid-demo" },
} as HcpCluster;

describe("break-glass objects", () => {
  it("a credential is labelled with its cluster, owned by it, and carries what was asked", () => {
    expect(
      breakglassCredential({
        cluster,
        name: "demo-abc123",
        requester: "sre@example.com",
        reason: "incident 42",
        expirationSeconds: 3600,
      }),
    ).toEqual({
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "BreakglassCredential",
      metadata: {
        name: "demo-abc123",
        namespace: "team-a",
        labels: { [ARM_LABELS.cluster]: "demo" },
        ownerReferences: [
          { apiVersion: "hcp.aro.dev/v1alpha1", kind: "HcpCluster", name: "demo", uid: "uid-demo" },
        ],
      },
      spec: {
        clusterRef: { name: "demo" },
        requester: "sre@example.com",
        reason: "incident 42",
        expirationSeconds: 3600,
      },
    });
  });

  it("a credential carries the client's request only when there is one", () => {
    const ask = { cluster, name: "c", requester: "r", reason: "why" };
    expect(breakglassCredential({ ...ask, certificateSigningRequest: undefined }).spec).toEqual({
      clusterRef: { name: "demo" },
      requester: "r",
      reason: "why",
    });
    expect(
      breakglassCredential({ ...ask, certificateSigningRequest: "PEM" }).spec.certificateSigningRequest,
    ).toBe("PEM");
  });

  it("a revocation is labelled and owned the same way", () => {
    const revocation = breakglassRevocation({
      cluster,
      name: "demo-revoke-1",
      requester: "r",
      reason: "why",
    });
    expect(revocation).toMatchObject({
      kind: "BreakglassRevocation",
      metadata: {
        namespace: "team-a",
        labels: { [ARM_LABELS.cluster]: "demo" },
        ownerReferences: [{ uid: "uid-demo" }],
      },
      spec: { clusterRef: { name: "demo" }, requester: "r", reason: "why" },
    });
  });
});
