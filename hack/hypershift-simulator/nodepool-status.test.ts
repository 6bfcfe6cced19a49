import { describe, expect, it } from "vitest";
import { hostedClusterFixture, nodePoolFixture } from "../../test/support/hypershift.ts";
import type { HostedCluster, NodePool } from "../../operators/api/hypershift/v1beta1/index.ts";
import { computeNodePoolStatus, type NodePoolFacts } from "./nodepool-status.ts";

const t0 = new Date("2026-01-01T00:00:00Z");
const at = (ms: number): Date => new Date(t0.getTime() + ms);

function availableCluster(since: string | undefined): HostedCluster {
  const hc = hostedClusterFixture("ns", "demo");
  const status = since ? "True" : "False";
  hc.status = {
    conditions: [
      { type: "Available", status, reason: "AsExpected", message: "", lastTransitionTime: since ?? "" },
    ],
    ...(since ? { ignitionEndpoint: "ignition.demo.example.com" } : {}),
  };
  return hc;
}

function step(
  np: NodePool,
  f: Partial<NodePoolFacts> & { now: Date },
): { np: NodePool; requeueAfterMs?: number } {
  const { status, requeueAfterMs } = computeNodePoolStatus(np, {
    provisionDelayMs: 2_000,
    hostedCluster: availableCluster("2026-01-01T00:00:00Z"),
    failure: undefined,
    ...f,
  });
  return { np: { ...np, status }, requeueAfterMs };
}

const condition = (np: NodePool, type: string) => np.status?.conditions?.find((c) => c.type === type);
const pool = (replicas: number): NodePool =>
  nodePoolFixture("ns", "demo-workers", { clusterName: "demo", replicas });

describe("computeNodePoolStatus", () => {
  it("waits for the HostedCluster, then converges after the delay from when it became Available", () => {
    const waiting = step(pool(2), { now: t0, hostedCluster: availableCluster(undefined) });
    expect(waiting.requeueAfterMs).toBeUndefined();
    expect(condition(waiting.np, "Ready")).toMatchObject({ status: "False", reason: "WaitingForAvailable" });
    expect(condition(waiting.np, "IgnitionEndpointAvailable")?.reason).toBe("IgnitionEndpointMissing");
    expect(condition(waiting.np, "UpdatingVersion")?.status).toBe("True");

    const hc = availableCluster("2026-01-01T00:00:10Z");
    const started = step(waiting.np, { now: at(10_500), hostedCluster: hc });
    expect(started.requeueAfterMs).toBe(1_500);
    expect(started.np.status?.replicas).toBe(0);
    const ready = step(started.np, { now: at(12_000), hostedCluster: hc }).np;
    expect(ready.status).toMatchObject({ replicas: 2, version: "4.19.7" });
    expect(condition(ready, "Ready")?.status).toBe("True");
    expect(condition(ready, "UpdatingVersion")?.status).toBe("False");
    expect(condition(ready, "IgnitionEndpointAvailable")).toBeUndefined();
  });

  it("starts the clock for a scale when Ready turns False", () => {
    const ready = step(step(pool(2), { now: t0 }).np, { now: at(2_000) }).np;
    const scaling = step({ ...ready, spec: { ...ready.spec, replicas: 0 } }, { now: at(60_000) });
    expect(scaling.requeueAfterMs).toBe(2_000);
    expect(condition(scaling.np, "Ready")).toMatchObject({
      status: "False",
      lastTransitionTime: "2026-01-01T00:01:00Z",
    });
    const scaled = step(scaling.np, { now: at(62_000) }).np;
    expect(scaled.status?.replicas).toBe(0);
    expect(condition(scaled, "Ready")?.status).toBe("True");
    expect(condition(scaled, "AllMachinesReady")).toMatchObject({
      status: "False",
      message: "NodePool set to no replicas",
    });
  });

  it("converges autoscaled pools to their minimum", () => {
    const np = nodePoolFixture("ns", "auto", { clusterName: "demo", autoScaling: { min: 2, max: 5 } });
    const done = step(step(np, { now: t0 }).np, { now: at(2_000) }).np;
    expect(done.status?.replicas).toBe(2);
    expect(condition(done, "AutoscalingEnabled")).toMatchObject({
      status: "True",
      message: "Maximum nodes: 5, Minimum nodes: 2",
    });
  });

  it("is not Ready with the injected reason and does not converge", () => {
    const failure = { reason: "InstanceTerminated", message: "VM deleted" };
    const failing = step(pool(1), { now: at(5_000), failure });
    expect(failing.requeueAfterMs).toBeUndefined();
    expect(failing.np.status?.replicas).toBe(0);
    expect(condition(failing.np, "Ready")).toMatchObject({ status: "False", ...failure });
  });
});
