import { describe, expect, it } from "vitest";
import { storedWritesIn, totalsBy, unstoredWrites } from "./apiserver-metrics.ts";

const metrics = (applies: number, stored: number): string =>
  [
    `apiserver_request_total{code="200",component="apiserver",group="work.open-cluster-management.io",resource="manifestworks",scope="resource",subresource="status",verb="APPLY",version="v1"} ${applies}`,
    `apiserver_request_total{code="201",component="apiserver",group="work.open-cluster-management.io",resource="manifestworks",scope="resource",subresource="",verb="APPLY",version="v1"} 10`,
    `apiserver_request_total{code="409",component="apiserver",group="work.open-cluster-management.io",resource="manifestworks",scope="resource",subresource="status",verb="APPLY",version="v1"} 7`,
    `apiserver_request_total{code="200",component="apiserver",group="work.open-cluster-management.io",resource="manifestworks",scope="resource",subresource="",verb="GET",version="v1"} 99`,
    `etcd_requests_total{group="work.open-cluster-management.io",operation="update",resource="manifestworks"} ${stored}`,
    `etcd_requests_total{group="work.open-cluster-management.io",operation="get",resource="manifestworks"} 99`,
    `etcd_requests_total{group="",operation="delete",resource="namespaces"} 5`,
  ].join("\n");

describe("writes that changed nothing", () => {
  it("counts successful writes answered against etcd writes made, by resource", () => {
    expect(storedWritesIn(metrics(40, 45))).toEqual(
      new Map([
        ["manifestworks", { answered: 50, stored: 45 }],
        ["namespaces", { answered: 0, stored: 5 }],
      ]),
    );
  });

  it("reports, between two readings of each apiserver, the writes not stored; never a negative count", () => {
    const before = [storedWritesIn(metrics(40, 45)), storedWritesIn(metrics(0, 0))];
    const after = [storedWritesIn(metrics(60, 62)), storedWritesIn(metrics(3, 13))];
    // 20 answered and 17 stored on the first; on the second more stored than answered (clamped).
    expect(unstoredWrites(after, before)).toEqual(new Map([["manifestworks", 3]]));
  });
});

describe("totalsBy", () => {
  const text = [
    "# HELP hcp_azure_arm_requests_total HTTP requests to ARM",
    'hcp_azure_arm_requests_total{operation="GET dnsZones",code="200"} 7',
    'hcp_azure_arm_requests_total{operation="GET dnsZones",code="404"} 3',
    'hcp_azure_arm_requests_total{code="201",operation="PUT dnsZones"} 2',
    'hcp_azure_arm_requests_total_other{operation="GET dnsZones",code="200"} 100',
    'controller_runtime_reconcile_total{controller="cluster-controller",result="success"} 5',
  ].join("\n");

  it("sums a counter over its other labels, whatever their order, and no other metric", () => {
    expect(totalsBy(text, "hcp_azure_arm_requests_total", "operation")).toEqual({
      "GET dnsZones": 10,
      "PUT dnsZones": 2,
    });
    expect(totalsBy(text, "controller_runtime_reconcile_total", "controller")).toEqual({
      "cluster-controller": 5,
    });
  });

  it("leaves out series without the label", () => {
    expect(totalsBy(text, "hcp_azure_arm_requests_total", "controller")).toEqual({});
  });
});
