/** What `hcpctl cluster undelete` refuses, and the state `hcpctl cluster deleted` shows. */
import { describe, expect, it } from "vitest";
import type { DeletedClusterRecord } from "../../api/v1alpha1/deleted-cluster.ts";
import type { HcpClusterSpec } from "../../api/v1alpha1/index.ts";
import { recordState, undeleteRefusal } from "./cluster-undelete.ts";

const HOUR = 3_600_000;
const DELETED = Date.parse("2026-03-01T10:00:00Z");

const record = (done = true): DeletedClusterRecord => ({
  clusterID: "c0ffee",
  uid: "c0ffee",
  namespace: "sub-1",
  cluster: { name: "demo", spec: {} as HcpClusterSpec },
  nodePools: [],
  externalAuths: [],
  ...(done
    ? { deletedAt: new Date(DELETED).toISOString(), purgeAfter: new Date(DELETED + HOUR).toISOString() }
    : {}),
});

describe("cluster undelete", () => {
  it("refuses while the cluster is still being deleted", () => {
    expect(recordState(record(false), DELETED)).toBe("Deleting");
    expect(undeleteRefusal(record(false), DELETED)).toContain("still being deleted");
  });

  it("accepts within the retention", () => {
    expect(recordState(record(), DELETED + HOUR / 2)).toBe("Undeletable");
    expect(undeleteRefusal(record(), DELETED + HOUR / 2)).toBeUndefined();
  });

  it("refuses after the retention, saying when it ended", () => {
    expect(recordState(record(), DELETED + HOUR)).toBe("Purging");
    expect(undeleteRefusal(record(), DELETED + HOUR + 5)).toBe(
      "retention ended at 2026-03-01T11:00:00.000Z; the cluster is being purged",
    );
  });

  it("refuses in the last minute, when the purge is about to start", () => {
    expect(recordState(record(), DELETED + HOUR - 30_000)).toBe("Purging");
    expect(undeleteRefusal(record(), DELETED + HOUR - 30_000)).toContain("too late to undelete");
  });
});
