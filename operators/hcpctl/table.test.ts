import { describe, expect, it } from "vitest";
import { NOW, clusterWork, managementCluster, readySnapshot } from "../../test/support/hcpctl-objects.ts";
import type { KubeObject } from "../api/meta/v1.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import { printData } from "./output.ts";
import { resolveResource } from "./resources.ts";
import { staleOf, workLag } from "./stale.ts";
import { renderObjects, type RowContext } from "./table.ts";

function context(works: ManifestWork[] = []): RowContext {
  const s = readySnapshot();
  return { now: NOW, worksOf: () => works, clusterOf: () => s.cluster };
}

const lines = (s: string): string[] => s.trimEnd().split("\n");

describe("get tables", () => {
  it("prints a cluster's name, version, phase, readiness, management cluster and age", () => {
    const out = renderObjects("clusters", [readySnapshot().cluster], context(), {
      wide: false,
      namespaceColumn: false,
    });
    expect(lines(out)).toEqual([
      "NAME   VERSION   PHASE   READY   MANAGEMENT CLUSTER   AGE",
      "demo   4.19.7    Ready   True    mgmt-1               10m",
    ]);
  });

  it("adds the namespace with -A, and reason, generations, URL, ID and staleness with -o wide", () => {
    const [header, row] = lines(
      renderObjects("clusters", [readySnapshot().cluster], context([clusterWork()]), {
        wide: true,
        namespaceColumn: true,
      }),
    );
    expect(header).toMatch(
      /^NAMESPACE\s+NAME\s+VERSION\s+PHASE\s+READY\s+MANAGEMENT CLUSTER\s+AGE\s+REASON\s+OBSERVED\s+API URL\s+CLUSTER ID\s+STALE$/,
    );
    expect(row).toMatch(
      /^customer\s+demo\s+.*AsExpected\s+1\/1\s+https:\/\/api.demo.hcp.example.com:443\s+0b8e1c2a-1111-4aaa-8bbb-000000000001\s+-$/,
    );
  });

  it("prints node pools with their nodes and management cluster and <none> for what is missing", () => {
    const [workers] = readySnapshot().nodePools;
    const auto = structuredClone(workers!);
    auto.metadata.name = "auto";
    auto.spec.replicas = undefined;
    auto.spec.autoScaling = { min: 1, max: 5 };
    delete auto.status;
    const out = renderObjects("nodepools", [workers!, auto], context(), {
      wide: true,
      namespaceColumn: false,
    });
    expect(lines(out)[1]).toMatch(
      /^workers\s+demo\s+4\.19\.7\s+Ready\s+True\s+2\/2\s+10m\s+AsExpected\s+1\/1\s+Standard_D8s_v3\s+mgmt-1\s+-$/,
    );
    expect(lines(out)[2]).toMatch(
      /^auto\s+demo\s+<none>\s+<none>\s+<none>\s+0 \(1-5\)\s+10m\s+<none>\s+-\/1\s+Standard_D8s_v3\s+mgmt-1\s+no status yet$/,
    );
  });

  it("prints external auths with their cluster, issuer and state, and clients and placement with -o wide", () => {
    const [entra] = readySnapshot().externalAuths;
    const fresh = structuredClone(entra!);
    fresh.metadata.name = "fresh";
    fresh.metadata.generation = 2;
    fresh.status = {
      phase: "Provisioning",
      observedGeneration: 1,
      conditions: [
        {
          type: "Ready",
          status: "False",
          reason: "WaitingForHyperShift",
          message: "Waiting for HyperShift to accept the provider",
          lastTransitionTime: "2026-09-01T11:59:00Z",
        },
      ],
    };
    const narrow = renderObjects("externalauths", [entra!], context(), {
      wide: false,
      namespaceColumn: false,
    });
    expect(lines(narrow)).toEqual([
      "NAME    CLUSTER   ISSUER                                          PHASE   READY   AGE",
      "entra   demo      https://login.microsoftonline.com/tenant/v2.0   Ready   True    8m20s",
    ]);
    const wide = renderObjects("externalauths", [entra!, fresh], context(), {
      wide: true,
      namespaceColumn: false,
    });
    expect(lines(wide)[0]).toMatch(/\sREASON\s+OBSERVED\s+CLIENTS\s+MANAGEMENT CLUSTER\s+STALE$/);
    expect(lines(wide)[2]).toMatch(
      /^fresh\s+demo\s+\S+\s+Provisioning\s+False\s+\S+\s+WaitingForHyperShift\s+1\/2\s+openshift-console\/console\s+mgmt-1\s+status at generation 1 of 2$/,
    );
  });

  it("resolves the external auth kind by its names", () => {
    expect(resolveResource("ea").key).toBe("externalauths");
    expect(resolveResource("ExternalAuths.hcp.aro.dev").key).toBe("externalauths");
  });

  it("prints a management cluster's agent: Connected, when last heard, and why with -o wide", () => {
    const mc = managementCluster();
    mc.status!.agent = { lastHeardTime: new Date(NOW - 40_000).toISOString() };
    mc.status!.conditions!.push({
      type: "Connected",
      status: "False",
      reason: "AgentNotHeard",
      message: "m",
      lastTransitionTime: new Date(NOW - 10_000).toISOString(),
    });
    const out = renderObjects("managementclusters", [mc], context(), { wide: true, namespaceColumn: false });
    expect(lines(out)[0]).toMatch(
      /^NAME\s+CONSUMER\s+PHASE\s+SCHEDULABLE\s+LOAD\s+CONNECTED\s+LAST HEARD\s+AGE\s+AGENT\s+REGION/,
    );
    expect(lines(out)[1]).toMatch(
      /^mgmt-1\s+mgmt-1\s+Ready\s+true\s+1\/50\s+False\s+40s\s+60m\s+AgentNotHeard\s+eastus/,
    );
  });

  it("says an agent Connected was heard within its bound", () => {
    const mc = managementCluster();
    mc.status!.agent = { lastHeardTime: new Date(NOW - 200_000).toISOString(), heartbeatSeconds: 10 };
    mc.status!.conditions!.push({
      type: "Connected",
      status: "True",
      reason: "AgentConnected",
      message: "m",
      lastTransitionTime: new Date(NOW - 300_000).toISOString(),
    });
    const out = renderObjects("managementclusters", [mc], context(), { wide: false, namespaceColumn: false });
    expect(lines(out)[1]).toMatch(/^mgmt-1\s+mgmt-1\s+Ready\s+true\s+1\/50\s+True\s+<30s\s+60m$/);
  });

  it("prints management clusters with their load against capacity", () => {
    const out = renderObjects("managementclusters", [managementCluster()], context(), {
      wide: false,
      namespaceColumn: false,
    });
    expect(lines(out)).toEqual([
      "NAME     CONSUMER   PHASE   SCHEDULABLE   LOAD   CONNECTED   LAST HEARD   AGE",
      "mgmt-1   mgmt-1     Ready   true          1/50   <none>      <none>       60m",
    ]);
  });
});

describe("staleness", () => {
  it("names a stale Ready and a management cluster whose agent is not connected", () => {
    const s = readySnapshot();
    const ready = s.cluster.status!.conditions!.find((c) => c.type === "Ready")!;
    Object.assign(ready, {
      status: "Unknown",
      reason: "StatusStale",
      lastTransitionTime: new Date(NOW - 45_000).toISOString(),
    });
    expect(staleOf(s.cluster, s.works, NOW)).toEqual(["Ready StatusStale for 45s"]);
    const mc = managementCluster();
    mc.status!.conditions!.push({
      type: "Connected",
      status: "False",
      reason: "AgentNotHeard",
      message: "m",
      lastTransitionTime: new Date(NOW - 90_000).toISOString(),
    });
    expect(staleOf(mc, [], NOW)).toEqual(["agent not connected for 90s (AgentNotHeard)"]);
  });

  it("is nothing for an object whose status and works are current", () => {
    const s = readySnapshot();
    expect(staleOf(s.cluster, s.works, NOW)).toEqual([]);
  });

  it("names the controller hop when the status is behind the generation", () => {
    const s = readySnapshot();
    s.cluster.metadata.generation = 2;
    expect(staleOf(s.cluster, [], NOW)).toEqual(["status at generation 1 of 2"]);
  });

  it("names the agent hop with how long ago the generation was sent", () => {
    const work = clusterWork();
    work.metadata.generation = 2;
    expect(workLag(work, NOW)).toEqual([
      `work ${work.metadata.name}: generation 2 sent 8m20s ago, 1 applied`,
    ]);
  });

  it("names the publish hop when maestro-server cannot send", () => {
    const work = clusterWork();
    const published = work.status!.conditions!.find((c) => c.type === "Published")!;
    Object.assign(published, { status: "Unknown", reason: "BrokerNotConnected" });
    expect(workLag(work, NOW)).toEqual([
      `work ${work.metadata.name}: not published: BrokerNotConnected`.replace(": not", " not"),
    ]);
  });
});

describe("data output", () => {
  const clusters = resolveResource("hcpc");
  const objects: KubeObject[] = [readySnapshot().cluster];

  it("prints a List, or the one object asked for by name, without managedFields", () => {
    const work = clusterWork();
    const list = JSON.parse(printData(resolveResource("clusters"), [work], "json", false)) as {
      kind: string;
      items: KubeObject[];
    };
    expect(list.kind).toBe("List");
    expect(list.items[0]?.metadata.managedFields).toBeUndefined();
    const one = JSON.parse(printData(clusters, objects, "json", true)) as KubeObject;
    expect(one).toMatchObject({ kind: "HcpCluster", metadata: { name: "demo" } });
    expect(printData(clusters, objects, "yaml", true)).toMatch(
      /^apiVersion: hcp.aro.dev\/v1alpha1\nkind: HcpCluster\n/,
    );
  });

  it("prints kubectl's -o name", () => {
    expect(printData(clusters, objects, "name", false)).toBe("hcpcluster.hcp.aro.dev/demo\n");
    expect(printData(resolveResource("mgmt"), [managementCluster()], "name", false)).toBe(
      "managementcluster.hcp.aro.dev/mgmt-1\n",
    );
  });
});
