import { describe, expect, it } from "vitest";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import type { StepState } from "../hcp/steps.ts";
import { composeStatus as compose, STEP_CONDITIONS, type ClusterFacts } from "./status.ts";

const composeStatus = (f: ClusterFacts) => compose(f, { succeeded: true });

const cluster = {
  metadata: { name: "c", namespace: "ns", uid: "9a3d5e6f-0000-4000-8000-000000000001", generation: 3 },
  spec: { dns: { baseDomainPrefix: "c" }, version: { id: "4.19" } },
} as unknown as HcpCluster;
const names = clusterNames(cluster, {
  environment: "t",
  baseDomain: "example.com",
  managedIdentitiesKeyVault: "kv",
  pullSecret: "{}",
});

function facts(steps: ClusterFacts["steps"], extra: Partial<ClusterFacts> = {}): ClusterFacts {
  return { cluster, names, steps, managementCluster: "mgmt-1", azure: {}, ...extra };
}

const allReady = Object.fromEntries(
  STEP_CONDITIONS.map((t) => [t, { state: "ready", message: "ok" } satisfies StepState]),
) as ClusterFacts["steps"];

const byType = (s: ReturnType<typeof composeStatus>) =>
  Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c]));

describe("composeStatus", () => {
  it("is Ready when every step is, and stamps observedGeneration", () => {
    const s = composeStatus(facts(allReady));
    expect(byType(s)["Ready"]).toMatchObject({ status: "True", observedGeneration: 3 });
    expect(byType(s)["Degraded"]?.status).toBe("False");
    expect(s).toMatchObject({ phase: "Ready", observedGeneration: 3, managementCluster: "mgmt-1" });
  });

  it("names the first step that holds the cluster back", () => {
    const s = composeStatus(
      facts({
        ...allReady,
        DnsDelegated: { state: "pending", reason: "InProgress", message: "NS record" },
        IngressReady: undefined,
      }),
    );
    expect(byType(s)["Ready"]).toMatchObject({
      status: "False",
      reason: "InProgress",
      message: "DnsDelegated: NS record",
    });
    expect(byType(s)["Progressing"]).toMatchObject({ status: "True", reason: "InProgress" });
    expect(s.phase).toBe("Provisioning");
  });

  it("is Degraded with the ARM code when the user must act, and not Progressing", () => {
    const s = composeStatus(
      facts({
        ...allReady,
        IngressReady: {
          state: "failed",
          reason: "QuotaExceeded",
          message: "quota",
          userActionRequired: true,
        },
      }),
    );
    expect(byType(s)["Degraded"]).toMatchObject({
      status: "True",
      reason: "QuotaExceeded",
      message: "IngressReady: quota",
    });
    expect(byType(s)["Progressing"]).toMatchObject({ status: "False", reason: "UserActionRequired" });
    expect(s.phase).toBe("Degraded");
  });

  it("carries HyperShift's Degraded reason", () => {
    const hosted = {
      conditions: [
        {
          type: "Degraded",
          status: "True" as const,
          reason: "EtcdQuorumLost",
          message: "lost",
          lastTransitionTime: "",
        },
      ],
    };
    const s = composeStatus(facts(allReady, { hosted }));
    expect(byType(s)["Degraded"]).toMatchObject({ reason: "HostedClusterEtcdQuorumLost" });
    expect(byType(s)["Ready"]?.status).toBe("False");
  });

  const waitingForHostedCluster = {
    ...allReady,
    HostedClusterAvailable: {
      state: "pending",
      reason: "HostedClusterWaitingForAvailable",
      message: "Waiting for hosted control plane to be healthy",
    },
    DnsRecordsReady: undefined,
  } satisfies ClusterFacts["steps"];

  it.each<{ name: string; f: ClusterFacts; phase: string; progressing: object }>([
    {
      name: "a first install HyperShift has begun",
      f: facts(waitingForHostedCluster, { hosted: { conditions: [], installing: "4.19.7" } }),
      phase: "Provisioning",
      progressing: { status: "True", reason: "HostedClusterWaitingForAvailable" },
    },
    {
      name: "a first install whose control plane is available before HyperShift completes it",
      f: facts(allReady, { hosted: { conditions: [], installing: "4.19.7" } }),
      phase: "Provisioning",
      progressing: { status: "True", reason: "Installing", message: "Installing the control plane, 4.19.7" },
    },
    {
      name: "an upgrade",
      f: facts(allReady, { hosted: { conditions: [], completedVersion: "4.19.7", updatingTo: "4.20.2" } }),
      phase: "Updating",
      progressing: { status: "True", reason: "Upgrading", message: "Upgrading the control plane to 4.20.2" },
    },
    {
      name: "an upgrade while the control plane is not available",
      f: facts(waitingForHostedCluster, {
        hosted: { conditions: [], completedVersion: "4.19.7", updatingTo: "4.20.2" },
      }),
      phase: "Updating",
      progressing: { status: "True", reason: "Upgrading" },
    },
  ])("$name: phase $phase", ({ f, phase, progressing }) => {
    const s = composeStatus(f);
    expect(s.phase).toBe(phase);
    expect(byType(s)["Progressing"]).toMatchObject(progressing);
  });

  it("says Deleting while deletion runs", () => {
    const s = composeStatus(
      facts(allReady, { deleting: { reason: "DeletingNodePools", message: "2 left" } }),
    );
    expect(byType(s)["Deleting"]).toMatchObject({ status: "True", reason: "DeletingNodePools" });
    expect(byType(s)["Ready"]).toMatchObject({ status: "False", reason: "Deleting" });
    expect(s.phase).toBe("Deleting");
  });
});

describe("composeStatus while the management cluster's agent is not Connected", () => {
  const stale = {
    managementCluster: "mgmt-1",
    since: "2026-01-01T00:00:00Z",
    reason: "AgentNotHeard",
  };
  const staleCompose = (f: ClusterFacts) => compose(f, { succeeded: true, stale });

  it.each<{ name: string; f: ClusterFacts; status: string; reason: string; phase: string }>([
    { name: "a Ready cluster", f: facts(allReady), status: "Unknown", reason: "StatusStale", phase: "Ready" },
    {
      name: "one waiting for its HostedCluster",
      f: facts({
        ...allReady,
        HostedClusterAvailable: { state: "pending", reason: "WaitingForAgent", message: "not yet" },
        DnsRecordsReady: undefined,
      }),
      status: "Unknown",
      reason: "StatusStale",
      phase: "Provisioning",
    },
    {
      name: "one HyperShift calls Degraded",
      f: facts(allReady, {
        hosted: {
          conditions: [
            { type: "Degraded", status: "True", reason: "X", message: "x", lastTransitionTime: "" },
          ],
        },
      }),
      status: "Unknown",
      reason: "StatusStale",
      phase: "Degraded",
    },
    {
      name: "one held by an Azure step",
      f: facts({ ...allReady, DnsDelegated: { state: "pending", reason: "InProgress", message: "NS" } }),
      status: "False",
      reason: "InProgress",
      phase: "Provisioning",
    },
    {
      name: "one the user must fix",
      f: facts({
        ...allReady,
        ValidVersion: { state: "failed", reason: "VersionNotFound", message: "no", userActionRequired: true },
      }),
      status: "False",
      reason: "VersionNotFound",
      phase: "Degraded",
    },
    {
      name: "one being deleted",
      f: facts(allReady, { deleting: { reason: "DeletingHostedCluster", message: "waiting" } }),
      status: "False",
      reason: "Deleting",
      phase: "Deleting",
    },
  ])("$name: Ready $status ($reason), phase $phase", ({ f, status, reason, phase }) => {
    const s = staleCompose(f);
    expect(byType(s)["Ready"]).toMatchObject({ status, reason, observedGeneration: 3 });
    expect(s.phase).toBe(phase);
  });

  it("names the management cluster, since when, and what was last reported", () => {
    expect(byType(staleCompose(facts(allReady)))["Ready"]?.message).toBe(
      "No status from management cluster mgmt-1 since 2026-01-01T00:00:00Z (AgentNotHeard); " +
        "last reported Ready True, AsExpected: The cluster is ready on mgmt-1",
    );
  });

  it("goes back to what the feedback says once the agent is Connected", () => {
    const before = staleCompose(facts(allReady));
    const after = compose(
      { ...facts(allReady), cluster: { ...cluster, status: before } },
      { succeeded: true },
    );
    expect(byType(after)["Ready"]).toMatchObject({ status: "True", reason: "AsExpected" });
  });
});

describe("the signing keys' IDs in status", () => {
  it("takes each key ID this reconcile saw and keeps what the status said of the others", () => {
    const before = {
      ...cluster,
      status: {
        serviceAccountSigningKey: { activeKeyId: "k1", publishedKeyIds: ["k1"], appliedKeyId: "k1" },
      },
    } as HcpCluster;
    const s = composeStatus(
      facts(allReady, { cluster: before, signingKeys: { activeKeyId: "k2", publishedKeyIds: ["k2", "k1"] } }),
    );
    expect(s.serviceAccountSigningKey).toEqual({
      activeKeyId: "k2",
      publishedKeyIds: ["k2", "k1"],
      appliedKeyId: "k1",
    });
    const applied = composeStatus(facts(allReady, { cluster: before, signingKeys: { appliedKeyId: "k2" } }));
    expect(applied.serviceAccountSigningKey?.appliedKeyId).toBe("k2");
    expect(composeStatus(facts(allReady)).serviceAccountSigningKey).toBeUndefined();
  });
});
