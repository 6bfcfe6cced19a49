/**
 * A restored cluster (RESTORED_WORK_FINALIZER) writes its work again before anything else is done
 * to it, and keeps the HostedCluster's steps as the backup recorded them until the agent answers.
 */
import { describe, expect, it } from "vitest";
import {
  CLUSTER_FINALIZER,
  RESTORED_WORK_FINALIZER,
  type HcpCluster,
  type HcpClusterStatus,
} from "../api/v1alpha1/index.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import { summariseWorkSpec } from "../api/work/v1.ts";
import { cluster, condition, world } from "../../test/support/cluster-world.ts";
import { workAppliedCondition } from "../../test/support/samples.ts";

const T = "2026-11-01T00:00:00Z";
const trueCondition = (type: string, reason: string) => ({
  type,
  status: "True" as const,
  reason,
  message: `${type} as backed up`,
  lastTransitionTime: T,
  observedGeneration: 1,
});

/** A cluster as a region restore creates it: placed, Ready, and awaiting its work. */
function restored(opts: { deleting?: boolean; placed?: boolean } = {}): HcpCluster {
  const status: HcpClusterStatus = {
    observedGeneration: 1,
    ...(opts.placed === false ? {} : { managementCluster: "mgmt-1" }),
    conditions: [
      trueCondition("HostedClusterApplied", "Applied"),
      trueCondition("HostedClusterValid", "AsExpected"),
      trueCondition("HostedClusterAvailable", "Available"),
      trueCondition("DnsRecordsReady", "AsExpected"),
      trueCondition("Ready", "Succeeded"),
    ],
  };
  const c = cluster({ status });
  c.metadata.finalizers = [CLUSTER_FINALIZER, RESTORED_WORK_FINALIZER];
  if (opts.deleting) c.metadata.deletionTimestamp = T;
  return c;
}

/** The work as the agent reports it applied at its generation. */
function applied(work: ManifestWork): ManifestWork {
  return {
    ...work,
    metadata: { ...work.metadata, generation: 1 },
    status: {
      conditions: [workAppliedCondition(1, T)],
    },
  };
}

const lastWork = (w: ReturnType<typeof world>) =>
  w.writer.of("apply", "ManifestWork").at(-1)?.body as ManifestWork;

describe("a restored cluster's work", () => {
  it("is written again before a deletion, which waits for the agent to apply it", async () => {
    const w = world({ clusters: [restored({ deleting: true })] });
    await w.reconcile();
    expect(lastWork(w)).toMatchObject({ metadata: { name: "uid-demo", namespace: "mgmt-1" } });
    expect(w.writer.of("delete")).toEqual([]);
    expect(w.writer.of("removeFinalizer")).toEqual([]);
    expect(w.infra.calls.deleteAll).toBeUndefined();
    expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({
      reason: "ReplacingRestoredWork",
      message: expect.stringContaining("Waiting for the agent of mgmt-1"),
    });

    // Once the agent has applied it (and so replaced its copy from before the restore), the
    // restore's finalizer goes, and nothing else in that reconcile.
    w.works.set(summariseWorkSpec(applied(lastWork(w))));
    await w.reconcile();
    expect(w.writer.of("removeFinalizer")).toMatchObject([
      { kind: "HcpCluster", body: RESTORED_WORK_FINALIZER },
    ]);
    expect(w.writer.of("delete")).toEqual([]);

    // The next reconcile deletes as always: the work goes first.
    const c = w.clusters.get("default", "demo")!;
    w.clusters.set({ ...c, metadata: { ...c.metadata, finalizers: [CLUSTER_FINALIZER] } });
    await w.reconcile();
    expect(w.writer.of("delete", "ManifestWork")).toMatchObject([{ name: "uid-demo", namespace: "mgmt-1" }]);
  });

  it("is not written for a cluster that was never placed: the finalizer just goes", async () => {
    const w = world({ clusters: [restored({ deleting: true, placed: false })] });
    await w.reconcile();
    expect(w.writer.of("apply", "ManifestWork")).toEqual([]);
    expect(w.writer.of("removeFinalizer")).toMatchObject([{ body: RESTORED_WORK_FINALIZER }]);
  });

  it("keeps Ready while the agent has not answered for it, and lets the finalizer go once it has", async () => {
    const w = world({ clusters: [restored()] });
    await w.reconcile();
    expect(lastWork(w)).toBeDefined();
    const kept = w.writer.lastStatus<HcpClusterStatus>();
    expect(condition(kept, "HostedClusterApplied")).toMatchObject({ status: "True", reason: "Applied" });
    expect(condition(kept, "HostedClusterAvailable")).toMatchObject({ status: "True" });
    expect(condition(kept, "Ready")).toMatchObject({ status: "True" });
    expect(w.writer.of("removeFinalizer")).toEqual([]);

    w.works.set(summariseWorkSpec(applied(lastWork(w))));
    await w.reconcile();
    expect(w.writer.of("removeFinalizer")).toMatchObject([{ body: RESTORED_WORK_FINALIZER }]);
    // Now the work's own report decides: it says nothing of the HostedCluster's availability yet.
    expect(condition(w.writer.lastStatus(), "HostedClusterAvailable")).toMatchObject({ status: "False" });
  });

  it("does not keep the steps of a cluster the backup did not record as applied", async () => {
    const c = restored();
    c.status!.conditions = [];
    const w = world({ clusters: [c] });
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "HostedClusterApplied")).toMatchObject({ status: "False" });
  });
});
