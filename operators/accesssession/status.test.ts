import { describe, expect, it } from "vitest";
import type { AccessSession } from "../api/v1alpha1/accesssession.ts";
import { sessionPolicyFromFlags } from "./policy.ts";
import { composeSessionStatus, phaseOf, type SessionFacts } from "./status.ts";

const session = (over: Partial<AccessSession["spec"]> = {}): AccessSession => ({
  metadata: { name: "s1", generation: 2, uid: "u1" },
  spec: {
    owner: "alice@example.com",
    clusterRef: { namespace: "c", name: "demo" },
    level: "Admin",
    reason: "incident 42",
    ttlSeconds: 3600,
    ...over,
  },
});

const ready = (reason: string) => ({ state: "ready" as const, reason, message: reason });
const condition = (facts: SessionFacts, type: string) =>
  composeSessionStatus(facts, { succeeded: true }).conditions?.find((c) => c.type === type);

describe("session status", () => {
  it("waits for a person without saying it progresses", () => {
    const facts: SessionFacts = {
      session: session(),
      steps: {
        Approved: { state: "pending", reason: "PendingApproval", message: "Waiting for an approver" },
      },
    };
    expect(phaseOf(facts)).toBe("Pending");
    expect(condition(facts, "Progressing")?.status).toBe("False");
    expect(condition(facts, "Ready")).toMatchObject({ status: "False", reason: "PendingApproval" });
  });

  it("is Active once the kubeconfig is stored, with its expiry and Secret", () => {
    const facts: SessionFacts = {
      session: session(),
      steps: {
        Approved: ready("Approved"),
        ClusterReady: ready("ClusterReady"),
        CredentialIssued: ready("Issued"),
      },
      approvedAt: "2026-11-28T00:00:00Z",
      expiresAt: "2026-11-28T01:00:00Z",
      credentialSecret: "access-session-s1",
      credentialSubject: "system:sre-break-glass:alice@example.com:s1",
    };
    const status = composeSessionStatus(facts, { succeeded: true });
    expect(status).toMatchObject({
      phase: "Active",
      observedGeneration: 2,
      expiresAt: "2026-11-28T01:00:00Z",
      credentialSecret: "access-session-s1",
    });
    expect(condition(facts, "Active")?.status).toBe("True");
  });

  it("names no Secret once ended, and says why", () => {
    const s = session({ revocation: { by: "bob@example.com", reason: "done" } });
    const facts: SessionFacts = {
      session: s,
      steps: { Approved: ready("Approved") },
      end: "Revoked",
      credentialSecret: "access-session-s1",
      expiresAt: "2026-11-28T01:00:00Z",
    };
    const status = composeSessionStatus(facts, { succeeded: true });
    expect(status.phase).toBe("Revoked");
    expect(status.credentialSecret).toBeUndefined();
    expect(condition(facts, "Ready")).toMatchObject({
      status: "False",
      reason: "Revoked",
      message: "Revoked by bob@example.com: done",
    });
    expect(condition(facts, "CredentialIssued")).toMatchObject({
      status: "False",
      reason: "CredentialDeleted",
    });
  });

  it("is Failed and Degraded when the policy refuses its TTL", () => {
    const facts: SessionFacts = {
      session: session({ ttlSeconds: 43_200 }),
      steps: {
        Approved: {
          state: "failed",
          reason: "TTLExceedsPolicy",
          message: "spec.ttlSeconds 43200 exceeds",
          userActionRequired: true,
        },
      },
    };
    expect(phaseOf(facts)).toBe("Failed");
    expect(condition(facts, "Degraded")).toMatchObject({ status: "True", reason: "TTLExceedsPolicy" });
  });
});

describe("session policy flags", () => {
  it("defaults to policy approval of read-only sessions and a week's retention", () => {
    expect(sessionPolicyFromFlags({})).toEqual({
      maxTtlSeconds: { ReadOnly: 43_200, Admin: 14_400 },
      approveReadOnly: true,
      retentionMs: 604_800_000,
    });
  });

  it("refuses a bad value naming the flag", () => {
    expect(() => sessionPolicyFromFlags({ "session-admin-max-seconds": "60" })).toThrow(
      /--session-admin-max-seconds must be a whole number of seconds from 300 to 43200; got "60"/,
    );
    expect(() => sessionPolicyFromFlags({ "session-readonly-approval": "nobody" })).toThrow(
      /--session-readonly-approval must be "policy" or "person"/,
    );
    expect(() => sessionPolicyFromFlags({ "session-retention-seconds": "-1" })).toThrow(
      /--session-retention-seconds/,
    );
    expect(sessionPolicyFromFlags({ "session-readonly-approval": "person" }).approveReadOnly).toBe(false);
  });
});
