import { describe, expect, it } from "vitest";
import type { NodePool } from "../api/v1alpha1/index.ts";
import type { StepState } from "../hcp/steps.ts";
import {
  composePoolStatus,
  degradedCondition,
  deletingCondition,
  phaseOf,
  POOL_STEPS,
  progressingCondition,
  readyCondition,
  type PoolFacts,
} from "./status.ts";

const pool = {
  metadata: { name: "workers", namespace: "ns", uid: "p", generation: 4 },
  spec: {},
} as unknown as NodePool;
const ready: StepState = { state: "ready", message: "ok" };
const allReady = Object.fromEntries(POOL_STEPS.map((t) => [t, ready])) as PoolFacts["steps"];
const facts = (extra: Partial<PoolFacts> = {}): PoolFacts => ({ pool, steps: allReady, ...extra });
const waitingNodes: StepState = {
  state: "pending",
  reason: "WaitingForNodes",
  message: "1 of 3 node(s) ready",
};
const badVmSize: StepState = {
  state: "failed",
  reason: "NodePoolInvalidVMSize",
  message: "no such size",
  userActionRequired: true,
};
const deleting = { reason: "DeletingNodePool", message: "waiting for the agent" };

describe("node pool conditions", () => {
  it.each<[string, PoolFacts, { status: string; reason: string }]>([
    ["all steps ready", facts(), { status: "False", reason: "AsExpected" }],
    [
      "a step waiting",
      facts({ steps: { ...allReady, NodesReady: waitingNodes } }),
      { status: "False", reason: "AsExpected" },
    ],
    [
      "a user failure",
      facts({ steps: { ...allReady, NodesReady: badVmSize } }),
      { status: "True", reason: "NodePoolInvalidVMSize" },
    ],
  ])("Degraded with %s", (_what, f, want) => {
    expect(degradedCondition(f)).toMatchObject(want);
  });

  it.each<[string, PoolFacts, { status: string; reason: string }]>([
    ["all steps ready", facts(), { status: "True", reason: "AsExpected" }],
    [
      "the nodes waiting",
      facts({ steps: { ...allReady, NodesReady: waitingNodes } }),
      { status: "False", reason: "WaitingForNodes" },
    ],
    ["a step not reached", facts({ steps: { ClusterReady: ready } }), { status: "False", reason: "Pending" }],
    ["deletion", facts({ deleting }), { status: "False", reason: "Deleting" }],
  ])("Ready with %s", (_what, f, want) => {
    expect(readyCondition(f)).toMatchObject(want);
  });

  it.each<[string, PoolFacts, { status: string; reason: string }]>([
    ["nothing to do", facts(), { status: "False", reason: "AsExpected" }],
    [
      "the nodes waiting",
      facts({ steps: { ...allReady, NodesReady: waitingNodes } }),
      { status: "True", reason: "WaitingForNodes" },
    ],
    ["an upgrade", facts({ updatingTo: "4.20.2" }), { status: "True", reason: "Upgrading" }],
    [
      "a user failure",
      facts({ steps: { ...allReady, NodesReady: badVmSize } }),
      { status: "False", reason: "UserActionRequired" },
    ],
    ["deletion", facts({ deleting }), { status: "True", reason: "DeletingNodePool" }],
  ])("Progressing with %s", (_what, f, want) => {
    expect(progressingCondition(f, degradedCondition(f))).toMatchObject(want);
  });

  it("Deleting appears only with deletion", () => {
    expect(deletingCondition(facts())).toBeUndefined();
    expect(deletingCondition(facts({ deleting }))).toMatchObject({
      status: "True",
      reason: "DeletingNodePool",
    });
  });

  it.each<[string, PoolFacts, string]>([
    ["ready", facts(), "Ready"],
    ["waiting", facts({ steps: { ...allReady, NodesReady: waitingNodes } }), "Provisioning"],
    ["upgrading", facts({ updatingTo: "4.20.2" }), "Updating"],
    ["failed", facts({ steps: { ...allReady, NodesReady: badVmSize } }), "Degraded"],
    ["deleting", facts({ deleting }), "Deleting"],
  ])("phase when %s", (_what, f, phase) => {
    expect(composePoolStatus(f, { succeeded: true }).phase).toBe(phase);
    expect(phaseOf(f, composePoolStatus(f, { succeeded: true }).conditions ?? [])).toBe(phase);
  });

  it("moves observedGeneration only when the reconcile succeeded", () => {
    const seen = { ...pool, status: { observedGeneration: 3 } } as NodePool;
    expect(composePoolStatus(facts({ pool: seen }), { succeeded: true }).observedGeneration).toBe(4);
    expect(composePoolStatus(facts({ pool: seen }), { succeeded: false }).observedGeneration).toBe(3);
  });

  it("counts ready nodes only when HyperShift says the pool is Ready", () => {
    const report = { replicas: 3, version: "4.19.7", conditions: [{ type: "Ready", status: "False" }] };
    expect(composePoolStatus(facts({ report }), { succeeded: true })).toMatchObject({
      replicas: 3,
      readyReplicas: 0,
      version: "4.19.7",
    });
    const readyReport = { ...report, conditions: [{ type: "Ready", status: "True" }] };
    expect(composePoolStatus(facts({ report: readyReport }), { succeeded: true })).toMatchObject({
      readyReplicas: 3,
    });
  });
});

describe("node pool status while the management cluster's agent is not Connected", () => {
  const stale = {
    managementCluster: "mgmt-2",
    since: "2026-01-01T00:00:00Z",
    reason: "SourceDisconnected",
  };

  it.each<[string, PoolFacts, { status: string; reason: string }, string]>([
    ["ready nodes", facts(), { status: "Unknown", reason: "StatusStale" }, "Ready"],
    [
      "nodes coming up",
      facts({ steps: { ...allReady, NodesReady: waitingNodes } }),
      { status: "Unknown", reason: "StatusStale" },
      "Provisioning",
    ],
    [
      "a cluster not ready for pools",
      facts({ steps: { ClusterReady: { state: "pending", reason: "WaitingForCluster", message: "w" } } }),
      { status: "False", reason: "WaitingForCluster" },
      "Provisioning",
    ],
    [
      "a user failure",
      facts({ steps: { ...allReady, NodesReady: badVmSize } }),
      { status: "False", reason: "NodePoolInvalidVMSize" },
      "Degraded",
    ],
    ["deletion", facts({ deleting }), { status: "False", reason: "Deleting" }, "Deleting"],
  ])("with %s: Ready %o, phase %s", (_what, f, want, phase) => {
    const s = composePoolStatus(f, { succeeded: true, stale });
    expect(s.conditions?.find((c) => c.type === "Ready")).toMatchObject(want);
    expect(s.phase).toBe(phase);
  });

  it("says which management cluster and since when", () => {
    const s = composePoolStatus(facts(), { succeeded: true, stale });
    expect(s.conditions?.find((c) => c.type === "Ready")?.message).toMatch(
      /^No status from management cluster mgmt-2 since 2026-01-01T00:00:00Z \(SourceDisconnected\); last reported Ready True, AsExpected: The nodes are ready$/,
    );
  });
});
