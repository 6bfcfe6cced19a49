import { describe, expect, it } from "vitest";
import { hostedClusterFixture, RELEASE_4_19_8 } from "../../test/support/hypershift.ts";
import type { HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import { getCondition } from "../../operators/runtime/conditions.ts";
import { computeHostedClusterStatus, type HostedClusterFacts } from "./status.ts";

const t0 = new Date("2026-01-01T00:00:00Z");
const at = (ms: number): Date => new Date(t0.getTime() + ms);
const facts = (now: Date, failure?: HostedClusterFacts["failure"]): HostedClusterFacts => ({
  now,
  provisionDelayMs: 2_000,
  failure,
});

/** Runs the status computation and stores the result, as the apiserver would. */
function step(hc: HostedCluster, f: HostedClusterFacts): { hc: HostedCluster; requeueAfterMs?: number } {
  const { status, requeueAfterMs } = computeHostedClusterStatus(hc, f);
  return { hc: { ...hc, status }, requeueAfterMs };
}

function fresh(): HostedCluster {
  const hc = hostedClusterFixture("ns", "demo");
  hc.metadata.generation = 1;
  return hc;
}

describe("computeHostedClusterStatus", () => {
  it("starts a rollout: a Partial history entry, Progressing, not yet Available", () => {
    const first = step(fresh(), facts(t0));
    expect(first.requeueAfterMs).toBe(2_000);
    expect(first.hc.status?.version?.history).toEqual([
      {
        state: "Partial",
        startedTime: "2026-01-01T00:00:00Z",
        completionTime: null,
        version: "4.19.7",
        image: first.hc.spec.release.image,
        verified: false,
      },
    ]);
    expect(getCondition(first.hc.status?.conditions, "Available")?.reason).toBe("WaitingForAvailable");
    expect(getCondition(first.hc.status?.conditions, "Progressing")?.status).toBe("True");
    expect(first.hc.status?.controlPlaneEndpoint).toBeUndefined();
    const early = step(first.hc, facts(at(1_500)));
    expect(early.requeueAfterMs).toBe(500);
    expect(early.hc.status).toEqual(first.hc.status);
  });

  it("completes the rollout once the delay since startedTime has passed", () => {
    const done = step(step(fresh(), facts(t0)).hc, facts(at(2_000))).hc.status;
    expect(done?.version?.history?.[0]).toMatchObject({
      state: "Completed",
      completionTime: "2026-01-01T00:00:02Z",
    });
    expect(done?.controlPlaneVersion?.history?.[0]).toMatchObject({ state: "Completed", version: "4.19.7" });
    expect(getCondition(done?.conditions, "Available")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-01-01T00:00:02Z",
    });
    expect(done?.controlPlaneEndpoint).toEqual({ host: "api.demo.example.com", port: 443 });
    expect(done?.kubeconfig).toEqual({ name: "demo-admin-kubeconfig" });
  });

  it("is idempotent once converged", () => {
    const done = step(step(fresh(), facts(t0)).hc, facts(at(3_000))).hc;
    const again = step(done, facts(at(60_000)));
    expect(again.hc.status).toEqual(done.status);
    expect(again.requeueAfterMs).toBeUndefined();
  });

  it("treats a new release image as an upgrade and stays Available", () => {
    const done = step(step(fresh(), facts(t0)).hc, facts(at(3_000))).hc;
    const upgrading = step(
      { ...done, spec: { ...done.spec, release: { image: RELEASE_4_19_8 } } },
      facts(at(10_000)),
    );
    const status = upgrading.hc.status;
    expect(status?.version?.history?.map((h) => [h.version, h.state])).toEqual([
      ["4.19.8", "Partial"],
      ["4.19.7", "Completed"],
    ]);
    expect(status?.version?.desired.version).toBe("4.19.8");
    expect(getCondition(status?.conditions, "Available")?.status).toBe("True");
    expect(getCondition(status?.conditions, "Progressing")?.status).toBe("True");
  });

  it("stalls and reports Degraded while failing", () => {
    const failure = { reason: "EtcdQuorumLost", message: "etcd lost quorum" };
    const failing = step(step(fresh(), facts(t0)).hc, facts(at(5_000), failure));
    expect(failing.requeueAfterMs).toBeUndefined();
    expect(failing.hc.status?.version?.history?.[0]?.state).toBe("Partial");
    expect(getCondition(failing.hc.status?.conditions, "Degraded")).toMatchObject({
      status: "True",
      ...failure,
    });
    expect(getCondition(failing.hc.status?.conditions, "Available")).toMatchObject({
      status: "False",
      ...failure,
    });
  });

  it("blocks on a release image without a version tag", () => {
    const hc = fresh();
    hc.spec.release.image = "quay.io/openshift-release-dev/ocp-release@sha256:0123";
    const status = step(hc, facts(t0)).hc.status;
    expect(status?.version).toBeUndefined();
    expect(getCondition(status?.conditions, "ValidReleaseImage")).toMatchObject({
      status: "False",
      reason: "InvalidImage",
    });
    expect(getCondition(status?.conditions, "Progressing")).toMatchObject({
      status: "False",
      reason: "Blocked",
    });
  });
});
