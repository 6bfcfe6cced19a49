/** The soft-deleted cluster's record: its ConfigMap, what makes one unreadable, the purge's decision, the undelete's deadline. */
import { describe, expect, it } from "vitest";
import {
  DELETED_CLUSTER_DATA_KEY,
  DELETED_CLUSTER_LABEL,
  UNDELETE_MARGIN_MS,
  decodeDeletedCluster,
  encodeDeletedCluster,
  purgeDecision,
  undeleteDeadline,
  type DeletedClusterRecord,
} from "./deleted-cluster.ts";
import type { HcpClusterSpec } from "./hcpcluster.ts";

const HOUR = 3_600_000;
const DELETED = Date.parse("2026-03-01T10:00:00Z");

function record(overrides: Partial<DeletedClusterRecord> = {}): DeletedClusterRecord {
  return {
    clusterID: "c0ffee",
    uid: "c0ffee",
    namespace: "sub-1",
    cluster: {
      name: "demo",
      labels: { team: "a" },
      spec: { dns: { baseDomainPrefix: "demo" } } as HcpClusterSpec,
    },
    nodePools: [],
    externalAuths: [],
    lastBackup: "c0ffee-backup-20260301090000",
    managementCluster: "mgmt-1",
    deletedAt: new Date(DELETED).toISOString(),
    purgeAfter: new Date(DELETED + HOUR).toISOString(),
    ...overrides,
  };
}

describe("deleted cluster records", () => {
  it("round-trips through its ConfigMap, named and labelled by the cluster's ID and name", () => {
    const cm = encodeDeletedCluster(record(), "hcp-system");
    expect(cm.metadata).toEqual({
      name: "hcp-deleted-c0ffee",
      namespace: "hcp-system",
      labels: {
        [DELETED_CLUSTER_LABEL]: "c0ffee",
        "hcp.aro.dev/cluster-namespace": "sub-1",
        "hcp.aro.dev/cluster-name": "demo",
      },
    });
    expect(decodeDeletedCluster(cm)).toEqual(record());
  });

  it.each([
    ["not JSON", (data: string) => data.slice(1), "is not JSON"],
    [
      "no clusterID",
      (data: string) => JSON.stringify({ ...JSON.parse(data), clusterID: "" }),
      "no clusterID",
    ],
    [
      "another ID than its label",
      (data: string) => JSON.stringify({ ...JSON.parse(data), clusterID: "other" }),
      "is not its label",
    ],
    [
      "no spec",
      (data: string) => JSON.stringify({ ...JSON.parse(data), cluster: { name: "demo" } }),
      "no cluster spec",
    ],
    [
      "a bad time",
      (data: string) => JSON.stringify({ ...JSON.parse(data), purgeAfter: "soon" }),
      "is not a time",
    ],
    [
      "purgeAfter without deletedAt",
      (data: string) => JSON.stringify({ ...JSON.parse(data), deletedAt: undefined }),
      "go together",
    ],
  ])("refuses a record with %s, naming the ConfigMap and why", (_what, spoil, why) => {
    const cm = encodeDeletedCluster(record(), "hcp-system");
    const data = { [DELETED_CLUSTER_DATA_KEY]: spoil(cm.data?.[DELETED_CLUSTER_DATA_KEY] ?? "") };
    expect(() => decodeDeletedCluster({ ...cm, data })).toThrow(
      new RegExp(`ConfigMap hcp-system/hcp-deleted-c0ffee: .*${why}`),
    );
  });

  it("keeps a record while its cluster is being deleted or within its retention", () => {
    const deleting = record({ deletedAt: undefined, purgeAfter: undefined });
    expect(purgeDecision(deleting, DELETED + 10 * HOUR, new Set())).toEqual({ action: "keep" });
    expect(purgeDecision(record(), DELETED + HOUR - 1, new Set())).toEqual({
      action: "keep",
      until: DELETED + HOUR,
    });
  });

  it("purges after the retention, unless a cluster has its ID again (undeleted): then only the record goes", () => {
    expect(purgeDecision(record(), DELETED + HOUR, new Set(["other"]))).toEqual({ action: "purge" });
    expect(purgeDecision(record(), DELETED + HOUR, new Set(["c0ffee"]))).toEqual({ action: "dropRecord" });
  });

  it("accepts an undelete until a minute before purgeAfter, or a tenth of a short retention", () => {
    expect(undeleteDeadline(record())).toBe(DELETED + HOUR - UNDELETE_MARGIN_MS);
    const short = record({ purgeAfter: new Date(DELETED + 30_000).toISOString() });
    expect(undeleteDeadline(short)).toBe(DELETED + 27_000);
    expect(undeleteDeadline(record({ deletedAt: undefined, purgeAfter: undefined }))).toBeUndefined();
  });
});
