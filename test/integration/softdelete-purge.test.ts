/**
 * The soft-delete purge (operators/softdelete) against the service cluster's kube-apiserver: a
 * record past purgeAfter is purged (what it kept removed, then the record); one whose ID an
 * HcpCluster has again (undeleted) loses only its record, its resources untouched; one within its
 * retention is kept and its due time reported; one that cannot be read is never purged; a purge
 * still waiting on Azure keeps its record for the next pass. Counted by the metrics. The region's
 * HcpClusters are listed only by a pass that has a record due.
 */
import { load } from "js-yaml";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigMapResource } from "../../operators/api/core.ts";
import {
  DELETED_CLUSTER_LABEL,
  deletedClusterRecordName,
  encodeDeletedCluster,
  type DeletedClusterRecord,
  type PurgeStep,
} from "../../operators/api/v1alpha1/deleted-cluster.ts";
import {
  HcpClusterResource,
  ORIGINAL_UID_ANNOTATION,
  type HcpCluster,
} from "../../operators/api/v1alpha1/index.ts";
import { SoftDeletePurge } from "../../operators/softdelete/controller.ts";
import { ClusterRegistry, type Cluster } from "../../operators/runtime/clusters.ts";
import { clientFor, tempNamespace } from "../support/fixtures.ts";
import { clusterInfo } from "../support/region.ts";

const HOUR = 3_600_000;
const NOW = Date.parse("2026-11-28T12:00:00Z");
const client = clientFor("service");
const sample = load(
  await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8"),
) as HcpCluster;
const clusters = new ClusterRegistry();
let ns: { name: string; remove(): Promise<void> };

const ids = { due: randomUUID(), undeleted: randomUUID(), kept: randomUUID(), pending: randomUUID() };

function record(clusterID: string, purgeAfter: number): DeletedClusterRecord {
  return {
    clusterID,
    uid: clusterID,
    namespace: ns.name,
    cluster: { name: `c-${clusterID.slice(0, 8)}`, spec: sample.spec },
    nodePools: [],
    externalAuths: [],
    deletedAt: new Date(purgeAfter - HOUR).toISOString(),
    purgeAfter: new Date(purgeAfter).toISOString(),
  };
}

/** Purges by answer: done unless the record is the pending one. */
const purged: string[] = [];
const retained = {
  purge(r: DeletedClusterRecord): Promise<PurgeStep> {
    purged.push(r.clusterID);
    return Promise.resolve(
      r.clusterID === ids.pending
        ? { done: false, message: "deleting the resource group" }
        : { done: true, message: "gone" },
    );
  },
};

const exists = async (id: string) =>
  (await client.find(ConfigMapResource, deletedClusterRecordName(id), ns.name)) !== undefined;

beforeAll(async () => {
  ns = await tempNamespace(client, "sdp");
  clusters.add("service", { path: clusterInfo("service").kubeconfigPath });
  for (const [id, due] of [
    [ids.due, NOW - 1],
    [ids.undeleted, NOW - 1],
    [ids.kept, NOW + HOUR],
    [ids.pending, NOW - 1],
  ] as const)
    await client.create(ConfigMapResource, encodeDeletedCluster(record(id, due), ns.name));
  await client.create(ConfigMapResource, {
    metadata: {
      name: "hcp-deleted-broken",
      namespace: ns.name,
      labels: { [DELETED_CLUSTER_LABEL]: "broken" },
    },
    data: { "record.json": "{" },
  });
  // The undeleted one: an HcpCluster under its ID (as hcpctl cluster undelete creates it).
  await client.create(HcpClusterResource, {
    ...sample,
    metadata: {
      name: "undeleted",
      namespace: ns.name,
      annotations: { [ORIGINAL_UID_ANNOTATION]: ids.undeleted },
    },
  });
});

afterAll(async () => {
  clusters.stopAll();
  await ns?.remove();
});

describe("the soft-delete purge", () => {
  it("purges what is due, drops an undeleted cluster's record only, keeps the rest", async () => {
    const registry = new Registry();
    const purge = new SoftDeletePurge({
      cluster: clusters.get("service"),
      namespace: ns.name,
      retained,
      now: () => NOW,
      registry,
    });
    const pass = await purge.pass();
    expect(pass).toEqual({
      retained: 1,
      purged: [ids.due],
      undeleted: [ids.undeleted],
      pending: [{ clusterID: ids.pending, message: "deleting the resource group" }],
      broken: ["hcp-deleted-broken"],
      nextDueAt: NOW + HOUR,
    });
    expect(purged.sort()).toEqual([ids.due, ids.pending].sort());
    expect(await exists(ids.due)).toBe(false);
    expect(await exists(ids.undeleted)).toBe(false);
    expect(await exists(ids.kept)).toBe(true);
    expect(await exists(ids.pending)).toBe(true);
    expect(await client.find(ConfigMapResource, "hcp-deleted-broken", ns.name)).toBeDefined();

    const count = async (name: string, label: string, value: string) =>
      (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels[label] === value)?.value;
    expect(await count("hcp_soft_delete_purges_total", "result", "purged")).toBe(1);
    expect(await count("hcp_soft_delete_purges_total", "result", "undeleted")).toBe(1);
    expect(await count("hcp_soft_delete_purges_total", "result", "pending")).toBe(1);
    expect(await count("hcp_soft_deleted_clusters", "state", "retained")).toBe(1);
    expect(await count("hcp_soft_deleted_clusters", "state", "due")).toBe(1);
    expect(await count("hcp_soft_deleted_clusters", "state", "broken")).toBe(1);
  });

  it("lists the region's HcpClusters only when a record is due", async () => {
    const service = clusters.get("service");
    const listed: string[] = [];
    const counting = new Proxy(service.client, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (prop === "listAll" || prop === "list") listed.push((args[0] as { plural: string }).plural);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const at = (now: number) =>
      new SoftDeletePurge({
        cluster: { ...service, client: counting } as unknown as Cluster,
        namespace: ns.name,
        retained,
        now: () => now,
        registry: new Registry(),
      }).pass();
    // Left by the test above: the kept record (due in an hour) and the pending one (due now).
    const early = await at(NOW - 2 * HOUR);
    expect(early).toMatchObject({ retained: 2, purged: [], pending: [] });
    expect(listed.filter((p) => p === HcpClusterResource.plural)).toEqual([]);
    const due = await at(NOW);
    expect(due.pending.map((p) => p.clusterID)).toEqual([ids.pending]);
    expect(listed.filter((p) => p === HcpClusterResource.plural).length).toBeGreaterThan(0);
  });
});
