/**
 * Every break-glass issue, expiry and revocation is an Event on the cluster and one audit line
 * (`audit: "breakglass"`), once: the first reconcile that sees it says so, later ones do not.
 */
import { describe, expect, it } from "vitest";
import type { BreakglassCredential, BreakglassRevocation, HcpCluster } from "../api/v1alpha1/index.ts";
import type { CachedManifestWork } from "../api/work/v1.ts";
import type { LogValues, Logger } from "../runtime/logger.ts";
import { RecordingEvents, RecordingWriter, testContext } from "../../test/support/fakes.ts";
import { FakeLister } from "../../test/support/lister.ts";
import { sampleCluster, sampleManagementCluster, sampleRegion } from "../../test/support/samples.ts";
import { observeExpiry } from "./expiry.ts";
import { recordIssue } from "./phases.ts";
import { REVOCATION_FINALIZER } from "../api/v1alpha1/index.ts";
import { RevocationReconciler } from "./revocation.ts";
import { BREAKGLASS_UID_INDEX, type BreakglassReconcilerDeps, type CredentialScope } from "./scope.ts";

/** A logger that keeps its info lines. */
class AuditLog implements Logger {
  readonly lines: Array<{ msg: string; values: LogValues }> = [];
  info(msg: string, values: LogValues = {}): void {
    this.lines.push({ msg, values });
  }
  debug(): void {}
  error(): void {}
  child(): Logger {
    return this;
  }
  audit(): LogValues[] {
    return this.lines.filter((l) => l.values["audit"] === "breakglass").map((l) => l.values);
  }
}

const NOW = Date.parse("2026-11-26T06:00:00Z");

const cluster: HcpCluster = {
  ...sampleCluster(),
  metadata: { name: "demo", namespace: "default", uid: "uid-demo" },
  status: {
    managementCluster: "mgmt-1",
    conditions: [
      {
        type: "HostedClusterApplied",
        status: "True",
        reason: "Applied",
        message: "",
        lastTransitionTime: "2026-11-26T05:00:00Z",
      },
    ],
  },
};

const credential: BreakglassCredential = {
  apiVersion: "hcp.aro.dev/v1alpha1",
  kind: "BreakglassCredential",
  metadata: { name: "sre", namespace: "default", uid: "0123456789abcdef" },
  spec: { clusterRef: { name: "demo" }, requester: "sre@example.com", reason: "incident 42" },
};

function depsWith(
  events: RecordingEvents,
  extra: Partial<BreakglassReconcilerDeps> = {},
): BreakglassReconcilerDeps {
  return {
    clusters: new FakeLister([cluster]),
    managementClusters: new FakeLister([sampleManagementCluster("mgmt-1")]),
    works: new FakeLister([], { [BREAKGLASS_UID_INDEX]: () => [] }),
    region: sampleRegion(),
    writer: new RecordingWriter(),
    events,
    expiredRetentionMs: 3_600_000,
    now: () => NOW,
    ...extra,
  } as unknown as BreakglassReconcilerDeps;
}

function credentialScope(events: RecordingEvents, log: AuditLog, c: BreakglassCredential): CredentialScope {
  return { deps: depsWith(events), credential: c, cluster, log, facts: { credential: c, steps: {} } };
}

describe("break-glass audit", () => {
  it("records an issue once: an Event naming the requester and an audit line", async () => {
    const events = new RecordingEvents();
    const log = new AuditLog();
    const issued = { certificate: "PEM", expirationTimestamp: "2026-11-27T06:00:00Z" };
    const first = credentialScope(events, log, credential);
    first.facts.issued = issued;
    await recordIssue(testContext(), first);
    expect(log.audit()).toEqual([
      {
        audit: "breakglass",
        action: "issue",
        credential: "sre",
        cluster: "demo",
        requester: "sre@example.com",
        reason: "incident 42",
        expires: issued.expirationTimestamp,
      },
    ]);
    expect(events.events).toMatchObject([{ object: "demo", reason: "BreakglassCredentialIssued" }]);
    expect(events.events[0]?.message).toContain("sre@example.com");

    // A later reconcile of the issued credential says nothing more.
    const later = credentialScope(events, log, { ...credential, status: issued });
    later.facts.issued = issued;
    await recordIssue(testContext(), later);
    expect(log.audit()).toHaveLength(1);
    expect(events.events).toHaveLength(1);
  });

  it("records an expiry once: an Event and an audit line", async () => {
    const events = new RecordingEvents();
    const log = new AuditLog();
    const expired = {
      ...credential,
      status: { certificate: "PEM", expirationTimestamp: "2026-11-26T05:00:00Z" },
    };
    await observeExpiry(testContext(), credentialScope(events, log, expired));
    expect(log.audit()).toMatchObject([
      { action: "expire", credential: "sre", requester: "sre@example.com" },
    ]);
    expect(events.reasons()).toEqual(["BreakglassCredentialExpired"]);
  });

  it("records a revocation once HyperShift reports it: an Event and an audit line", async () => {
    const revocation: BreakglassRevocation = {
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "BreakglassRevocation",
      metadata: {
        name: "arm-op",
        namespace: "default",
        uid: "fedcba9876543210",
        generation: 1,
        finalizers: [REVOCATION_FINALIZER],
      },
      spec: { clusterRef: { name: "demo" }, requester: "admin@contoso.com", reason: "ARM revokeCredentials" },
    };
    const revokedAt = "2026-11-26T05:59:00Z";
    // The revocation's work as the agent reports it: HyperShift's PreviousCertificatesRevoked and its timestamp.
    const work = {
      metadata: { name: "w", namespace: "mgmt-1", labels: {} },
      status: {
        resourceStatus: {
          manifests: [
            {
              resourceMeta: {
                kind: "CertificateRevocationRequest",
                name: `breakglass-revoke-${revocation.metadata.uid}`,
              },
              statusFeedback: {
                values: [
                  { name: "revocationTimestamp", fieldValue: { type: "String", string: revokedAt } },
                  {
                    name: "revoked",
                    fieldValue: {
                      type: "JsonRaw",
                      jsonRaw: JSON.stringify({ type: "PreviousCertificatesRevoked", status: "True" }),
                    },
                  },
                ],
              },
            },
          ],
        },
      },
    } as unknown as CachedManifestWork;
    const events = new RecordingEvents();
    const log = new AuditLog();
    const deps = depsWith(events, {
      revocations: new FakeLister([revocation]),
      works: new FakeLister([work], { [BREAKGLASS_UID_INDEX]: () => [revocation.metadata.uid ?? ""] }),
    });
    const reconciler = new RevocationReconciler(deps);
    const ctx = { ...testContext(), log };
    const request = { cluster: "service", namespace: "default", name: "arm-op" };
    // The first reconcile writes the work (its answer has no feedback yet); the next reads the agent's.
    await reconciler.reconcile(ctx, request);
    await reconciler.reconcile(ctx, request);
    expect(log.audit()).toEqual([
      {
        audit: "breakglass",
        action: "revoke",
        revocation: "arm-op",
        cluster: "demo",
        requester: "admin@contoso.com",
        reason: "ARM revokeCredentials",
        revokedBefore: revokedAt,
      },
    ]);
    expect(events.reasons()).toEqual(["BreakglassCredentialsRevoked"]);

    // Once the status carries the timestamp, nothing more is said.
    (deps.revocations as FakeLister<BreakglassRevocation>).set({
      ...revocation,
      status: { revocationTimestamp: revokedAt },
    });
    await reconciler.reconcile(ctx, request);
    expect(log.audit()).toHaveLength(1);
    expect(events.events).toHaveLength(1);
  });
});
