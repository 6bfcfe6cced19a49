import { describe, expect, it } from "vitest";
import type { BreakglassCredential } from "../api/v1alpha1/index.ts";
import type { StepState } from "../hcp/steps.ts";
import { getCondition } from "../runtime/conditions.ts";
import { CREDENTIAL_CONDITIONS as C, composeCredentialStatus, type CredentialFacts } from "./status.ts";

const credential: BreakglassCredential = {
  metadata: { name: "sre", namespace: "ns", generation: 1, uid: "u" },
  spec: { clusterRef: { name: "c" }, requester: "sre@example.com" },
};

const ready: StepState = { state: "ready", message: "ok" };
const issued = { certificate: "CERT", expirationTimestamp: "2026-11-27T00:00:00Z", serverCA: "CA" };
const expiry = (expired: boolean) => ({
  expired,
  at: "2026-11-27T00:00:00Z",
  deleteAt: "2026-11-28T00:00:00Z",
});

function facts(extra: Partial<CredentialFacts>): CredentialFacts {
  return {
    credential,
    steps: { [C.ClusterReady]: ready, [C.RequestValid]: ready, [C.CertificateIssued]: ready },
    issued,
    ...extra,
  };
}

describe("composeCredentialStatus", () => {
  it.each([
    ["issued and valid", facts({ expiry: expiry(false) }), { ready: "True", expired: "False" }],
    ["issued and expired", facts({ expiry: expiry(true) }), { ready: "False", expired: "True" }],
    [
      "revoked before it expired: revoked says more",
      facts({ expiry: expiry(true), revoked: { before: "2026-11-26T12:00:00Z" } }),
      { ready: "False", expired: "True", reason: "Revoked" },
    ],
    ["not issued yet: no Expired", facts({ issued: undefined }), { ready: "True", expired: undefined }],
  ])("%s", (_name, f, want) => {
    const status = composeCredentialStatus(f, { succeeded: true });
    const readyCondition = getCondition(status.conditions, "Ready");
    expect(readyCondition?.status).toBe(want.ready);
    expect(getCondition(status.conditions, C.Expired)?.status).toBe(want.expired);
    if ("reason" in want) expect(readyCondition?.reason).toBe(want.reason);
  });

  it("says when an expired credential goes, and that nothing is left to do or fix", () => {
    const status = composeCredentialStatus(facts({ expiry: expiry(true) }), { succeeded: true });
    for (const type of ["Ready", "Progressing", "Degraded"])
      expect(getCondition(status.conditions, type)).toMatchObject({ status: "False", reason: "Expired" });
    expect(getCondition(status.conditions, C.Expired)?.message).toBe(
      "The certificate expired at 2026-11-27T00:00:00Z; the credential is deleted at 2026-11-28T00:00:00Z",
    );
  });

  it("keeps the server's CA beside the certificate", () => {
    const status = composeCredentialStatus(facts({}), { succeeded: true });
    expect(status).toMatchObject({
      certificate: "CERT",
      serverCA: "CA",
      expirationTimestamp: "2026-11-27T00:00:00Z",
    });
  });
});
