/** The cluster reconciler's deletion, on fakes: node pools, works, Azure, the issuer, then the finalizer. */
import { describe, expect, it } from "vitest";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { sampleFixedPool } from "../../test/support/samples.ts";
import { BlobStoreError } from "../azure/blob.ts";
import { cluster, condition, world } from "../../test/support/cluster-world.ts";

describe("ClusterReconciler", () => {
  describe("deletion", () => {
    const deleting = (c: HcpCluster): HcpCluster => ({
      ...c,
      metadata: { ...c.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
    });

    it("deletes the node pools first and waits for them", async () => {
      const pool = { ...sampleFixedPool(), metadata: { name: "workers", namespace: "default", uid: "p1" } };
      pool.spec.clusterRef = { name: "demo" };
      const w = world({ clusters: [deleting(cluster())], pools: [pool] });
      await w.reconcile();
      expect(w.writer.of("delete").map((d) => d.kind)).toEqual(["NodePool"]);
      expect(w.infra.total()).toBe(0);
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({ reason: "DeletingNodePools" });
    });

    it("does not go on to the works when deleting the node pools failed", async () => {
      const pool = { ...sampleFixedPool(), metadata: { name: "workers", namespace: "default", uid: "p1" } };
      pool.spec.clusterRef = { name: "demo" };
      const work = {
        apiVersion: "work.open-cluster-management.io/v1",
        kind: "ManifestWork",
        metadata: { name: "uid-demo", namespace: "mgmt-1", labels: { [WORK_LABELS.clusterUid]: "uid-demo" } },
        spec: { workload: { manifests: [] } },
      } as ManifestWork;
      const w = world({ clusters: [deleting(cluster())], pools: [pool], works: [work] });
      w.writer.delete = () => Promise.reject(new Error("apiserver unavailable"));
      await expect(w.reconcile()).rejects.toThrow("apiserver unavailable");
      expect(w.infra.total()).toBe(0);
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({ reason: "DeletingNodePools" });
    });

    it("removes Azure resources, then the finalizer, and forgets what it held for the cluster", async () => {
      const w = world();
      w.infra.script.ensureIngress = {
        state: "failed",
        reason: "QuotaExceeded",
        message: "no",
        userActionRequired: true,
      };
      await w.reconcile();
      expect(w.reconciler.memory.holds.size).toBe(1);
      // Three Azure steps and the issuer found ready; the ingress found not ready is remembered too
      // (never seeded from status).
      expect(w.reconciler.memory.verified.size).toBe(5);
      expect(w.blobs.blobs.size).toBe(2);
      w.clusters.set(deleting(w.clusters.get("default", "demo")!));
      expect(await w.reconcile()).toEqual({});
      expect(w.infra.calls.deleteAll).toBe(1);
      // The issuer's documents and its key go before the finalizer.
      expect(w.blobs.blobs.size).toBe(0);
      expect(w.keys.keys.size).toBe(0);
      expect(w.writer.of("removeFinalizer")).toHaveLength(1);
      expect(w.reconciler.memory.holds.size).toBe(0);
      expect(w.reconciler.memory.reservations.size).toBe(0);
      expect(w.reconciler.memory.verified.size).toBe(0);
      expect(w.events.reasons()).toContain("Deleted");
    });

    it("deletes the work it applied even when the informer has not shown it yet, and waits for it", async () => {
      const w = world();
      await w.reconcile();
      expect(w.writer.of("apply", "ManifestWork")).toHaveLength(1);
      // The works informer lags (a watch relisting after an apiserver restart): it shows none.
      expect(w.works.list()).toEqual([]);
      w.observeStatus();
      w.clusters.set(deleting(w.clusters.get("default", "demo")!));
      await w.reconcile();
      expect(w.writer.of("delete", "ManifestWork")).toMatchObject([
        { name: "uid-demo", namespace: "mgmt-1" },
      ]);
      expect(w.writer.of("removeFinalizer")).toEqual([]);
      expect(w.infra.calls.deleteAll).toBeUndefined();
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({ reason: "DeletingHostedCluster" });
      // The agent confirmed: the work is gone, and only then does the rest go.
      w.writer.vanish(ManifestWorkResource, { name: "uid-demo", namespace: "mgmt-1" });
      await w.reconcile();
      expect(w.infra.calls.deleteAll).toBe(1);
      expect(w.writer.of("removeFinalizer")).toHaveLength(1);
    });

    it("keeps the finalizer while the issuer's documents cannot be removed, and says why", async () => {
      const w = world({ clusters: [deleting(cluster())] });
      w.blobs.failure = new BlobStoreError(503, "ServerBusy", "could not delete: HTTP 503 ServerBusy");
      await expect(w.reconcile()).rejects.toThrow("ServerBusy");
      expect(w.writer.of("removeFinalizer")).toEqual([]);
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({ reason: "DeletingOidcIssuer" });
      w.blobs.failure = undefined;
      expect(await w.reconcile()).toEqual({});
      expect(w.writer.of("removeFinalizer")).toHaveLength(1);
    });

    it("keeps the finalizer while an Azure deletion runs", async () => {
      const w = world({ clusters: [deleting(cluster())] });
      w.infra.script.deleteAll = {
        state: "pending",
        reason: "InProgress",
        message: "deleting the zone",
        retryAfterMs: 2_000,
      };
      expect(await w.reconcile()).toEqual({ requeueAfterMs: 2_000 });
      expect(w.writer.of("removeFinalizer")).toEqual([]);
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({
        reason: "DeletingAzureResources",
      });
    });
  });
});
