/** Soft delete on fakes: the record first, the Azure resources, issuer and keys kept, the record completed last. */
import { describe, expect, it } from "vitest";
import type { DeletedClusterRecord } from "../api/v1alpha1/deleted-cluster.ts";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { sampleFixedPool } from "../../test/support/samples.ts";
import { cluster, world } from "../../test/support/cluster-world.ts";
import { ClusterRetainedResources, clusterOfRecord } from "./soft-delete.ts";
import type { DeletedClusterRecords } from "./soft-delete-records.ts";

const RETENTION_MS = 3_600_000;

/** Records in memory, each write kept in order. */
class MemoryRecords implements DeletedClusterRecords {
  readonly records = new Map<string, DeletedClusterRecord>();
  readonly writes: DeletedClusterRecord[] = [];
  find(id: string): Promise<DeletedClusterRecord | undefined> {
    return Promise.resolve(this.records.get(id));
  }
  write(record: DeletedClusterRecord): Promise<void> {
    this.records.set(record.clusterID, structuredClone(record));
    this.writes.push(structuredClone(record));
    return Promise.resolve();
  }
}

const deleting = (c: HcpCluster): HcpCluster => ({
  ...c,
  metadata: { ...c.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
});

function readyCluster(): HcpCluster {
  return cluster({
    status: {
      managementCluster: "mgmt-1",
      backup: { paused: false, recent: ["uid-demo-backup-20260101000000", "uid-demo-backup-20251231230000"] },
    },
  });
}

function pool() {
  const p = { ...sampleFixedPool(), metadata: { name: "workers", namespace: "default", uid: "p1" } };
  p.spec.clusterRef = { name: "demo" };
  return p;
}

describe("soft delete", () => {
  it("records the cluster and its node pools before deleting them, keeps Azure, issuer and keys, and completes the record before the finalizer goes", async () => {
    const records = new MemoryRecords();
    const w = world({ pools: [pool()], softDelete: { retentionMs: RETENTION_MS, records } });
    await w.reconcile();
    const blobs = w.blobs.blobs.size;
    expect(blobs).toBeGreaterThan(0);
    w.clusters.set(deleting({ ...w.clusters.get("default", "demo")!, status: readyCluster().status }));
    await w.reconcile();
    expect(w.writer.of("delete").map((d) => d.kind)).toEqual(["NodePool"]);
    expect(records.writes).toHaveLength(1);
    expect(records.writes[0]).toMatchObject({
      clusterID: "uid-demo",
      uid: "uid-demo",
      namespace: "default",
      cluster: {
        name: "demo",
        spec: { dns: { baseDomainPrefix: w.clusters.get("default", "demo")!.spec.dns.baseDomainPrefix } },
      },
      nodePools: [{ name: "workers", spec: { clusterRef: { name: "demo" } } }],
      externalAuths: [],
      lastBackup: "uid-demo-backup-20260101000000",
      managementCluster: "mgmt-1",
    });
    expect(records.writes[0]?.deletedAt).toBeUndefined();

    // The pool is gone: the record keeps it (a crash here finds it), and the deletion goes on.
    w.pools.delete("default", "workers");
    // ...and the work with its HostedCluster (the agent confirmed it deleted).
    const remove = w.writer.delete.bind(w.writer);
    w.writer.delete = (type, ref) =>
      type.kind === "ManifestWork" ? Promise.resolve(false) : remove(type, ref);
    expect(await w.reconcile()).toEqual({});
    expect(w.infra.calls.deleteAll).toBeUndefined();
    expect(w.blobs.blobs.size).toBe(blobs);
    expect(w.keys.keys.size).toBe(1);
    expect(w.writer.of("removeFinalizer")).toHaveLength(1);
    const done = records.records.get("uid-demo");
    expect(done?.nodePools.map((p) => p.name)).toEqual(["workers"]);
    expect(Date.parse(done?.purgeAfter ?? "") - Date.parse(done?.deletedAt ?? "")).toBe(RETENTION_MS);
    expect(w.events.events.find((e) => e.reason === "Deleted")?.message).toContain("kept for an undelete");
  });

  it("keeps a completed record of this object when a reconcile runs again before the finalizer went", async () => {
    const records = new MemoryRecords();
    const w = world({
      clusters: [deleting(readyCluster())],
      softDelete: { retentionMs: RETENTION_MS, records },
    });
    await w.reconcile();
    const first = records.records.get("uid-demo");
    w.tick(10_000);
    await w.reconcile();
    expect(records.records.get("uid-demo")).toEqual(first);
    expect(records.writes).toHaveLength(2);
  });

  it("replaces a record left of an earlier object under the same ID (an undeleted cluster deleted again)", async () => {
    const records = new MemoryRecords();
    await records.write({
      clusterID: "uid-demo",
      uid: "an-earlier-object",
      namespace: "default",
      cluster: { name: "demo", spec: readyCluster().spec },
      nodePools: [{ name: "old", spec: pool().spec }],
      externalAuths: [],
      deletedAt: "2025-01-01T00:00:00Z",
      purgeAfter: "2025-01-01T01:00:00Z",
    });
    const w = world({
      clusters: [deleting(readyCluster())],
      softDelete: { retentionMs: RETENTION_MS, records },
    });
    await w.reconcile();
    const now = records.records.get("uid-demo");
    expect(now?.uid).toBe("uid-demo");
    expect(now?.nodePools).toEqual([]);
    expect(now?.deletedAt).not.toBe("2025-01-01T00:00:00Z");
  });

  it("deletes everything at once with a retention of 0, and writes no record", async () => {
    const records = new MemoryRecords();
    const w = world({ clusters: [deleting(readyCluster())], softDelete: { retentionMs: 0, records } });
    await w.reconcile();
    expect(w.infra.calls.deleteAll).toBe(1);
    expect(records.writes).toEqual([]);
  });

  it("purges what a record kept: Azure resources by its ID, then the issuer's documents, then the keys", async () => {
    const w = world();
    await w.reconcile();
    expect(w.blobs.blobs.size).toBeGreaterThan(0);
    expect(w.keys.keys.size).toBe(1);
    const c = w.clusters.get("default", "demo")!;
    const record: DeletedClusterRecord = {
      clusterID: "uid-demo",
      uid: "uid-demo",
      namespace: "default",
      cluster: { name: "demo", spec: c.spec },
      nodePools: [],
      externalAuths: [],
    };
    expect(clusterOfRecord(record).metadata.annotations).toEqual({ "hcp.aro.dev/original-uid": "uid-demo" });
    const { BlobIssuerDocuments } = await import("./oidc.ts");
    const retained = new ClusterRetainedResources({
      infra: w.infra,
      oidc: { documents: new BlobIssuerDocuments(w.blobs), keys: w.keys },
      region: (await import("../../test/support/samples.ts")).sampleRegion(),
    });
    w.infra.script.deleteAll = {
      state: "pending",
      reason: "Deleting",
      message: "deleting the resource group",
    };
    expect(await retained.purge(record, {})).toEqual({ done: false, message: "deleting the resource group" });
    expect(w.blobs.blobs.size).toBeGreaterThan(0);
    delete w.infra.script.deleteAll;
    expect((await retained.purge(record, {})).done).toBe(true);
    expect(w.blobs.blobs.size).toBe(0);
    expect(w.keys.keys.size).toBe(0);
  });
});
