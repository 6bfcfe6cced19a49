import { describe, expect, it } from "vitest";
import {
  NOW,
  blockedSnapshot,
  clusterWork,
  externalAuth,
  pool,
  readySnapshot,
} from "../../test/support/hcpctl-objects.ts";
import type { TreeNode } from "./model.ts";
import { assemble } from "./snapshot.ts";
import { buildTree } from "./tree.ts";

const tree = (s = readySnapshot()) => buildTree(s, new Date(NOW)).root;

/** The node at a path of "Kind/name" (or heading name) steps. */
function at(root: TreeNode, ...path: string[]): TreeNode {
  let node = root;
  for (const step of path) {
    const next = node.children.find((c) => (c.kind ? `${c.kind}/${c.name}` : c.name) === step);
    if (!next)
      throw new Error(
        `no ${step} under ${node.kind}/${node.name}: ${node.children.map((c) => `${c.kind}/${c.name}`).join(", ")}`,
      );
    node = next;
  }
  return node;
}

const UID = "0b8e1c2a-1111-4aaa-8bbb-000000000001";

describe("buildTree of a Ready cluster", () => {
  it("spans the cluster, its pools, the management cluster, the works, HyperShift's objects and Azure", () => {
    const root = tree();
    expect(root).toMatchObject({ kind: "HcpCluster", name: "demo", namespace: "customer" });
    expect(root.summary).toMatchObject({
      ready: "True",
      condition: "Ready",
      severity: "",
      reason: "AsExpected",
    });
    expect(root.children.map((c) => c.name)).toEqual(["NodePools", "ExternalAuths", "mgmt-1", "Azure"]);
    expect(at(root, "NodePools").children.map((c) => c.name)).toEqual(["workers", "batch"]);
    const mc = at(root, "ManagementCluster/mgmt-1");
    expect(mc.details).toMatchObject({ consumer: "mgmt-1", hostedClusters: 1, capacity: 50 });
    expect(mc.children.map((c) => c.name)).toEqual([UID, `${UID}-workers`, `${UID}-batch`]);
  });

  it("shows a work's generation sent and applied, and when its status and spec were written", () => {
    const work = at(tree(), "ManagementCluster/mgmt-1", `ManifestWork/${UID}`);
    expect(work.summary).toMatchObject({
      ready: "True",
      reason: "Applied",
      message: "generation 1 sent, 1 applied",
    });
    expect(work.details).toMatchObject({
      generation: 1,
      publishedGeneration: 1,
      appliedGeneration: 1,
      statusWrittenAt: "2026-09-01T11:57:50Z",
      specWrittenAt: "2026-09-01T11:51:40Z",
    });
  });

  it("carries the HostedCluster's conditions and version from the work's feedback", () => {
    const hc = at(tree(), "ManagementCluster/mgmt-1", `ManifestWork/${UID}`, "HostedCluster/demo");
    expect(hc.apiGroup).toBe("hypershift.openshift.io");
    expect(hc.summary).toMatchObject({ ready: "True", condition: "Available" });
    expect(hc.conditions.map((c) => c.type)).toEqual(["Available", "Progressing", "Degraded"]);
    expect(hc.details).toEqual({ version: "4.19.7", endpoint: "api.demo.hcp.example.com:443" });
    const np = at(tree(), "ManagementCluster/mgmt-1", `ManifestWork/${UID}-workers`, "NodePool/demo-workers");
    expect(np).toMatchObject({
      apiGroup: "hypershift.openshift.io",
      details: { replicas: 2, version: "4.19.7" },
    });
  });

  it("lists the cluster's external auths with their state, issuer and clients", () => {
    const auth = at(tree(), "ExternalAuths", "ExternalAuth/entra");
    expect(auth).toMatchObject({ apiGroup: "hcp.aro.dev", namespace: "customer" });
    expect(auth.summary).toMatchObject({
      ready: "True",
      condition: "Ready",
      message: "HyperShift accepted the provider",
    });
    expect(auth.details).toEqual({
      phase: "Ready",
      issuer: "https://login.microsoftonline.com/tenant/v2.0",
      audiences: "console-app",
      clients: "openshift-console/console",
      generation: 1,
      observedGeneration: 1,
    });
  });

  it("shows an external auth HyperShift refused, and one being deleted with what holds it", () => {
    const s = readySnapshot();
    const refused = externalAuth("refused");
    refused.status = {
      phase: "Failed",
      observedGeneration: 1,
      conditions: [
        {
          type: "Ready",
          status: "False",
          reason: "ProviderRejected",
          message: "HyperShift rejected the provider: issuer unreachable",
          lastTransitionTime: "2026-09-01T11:59:00Z",
        },
      ],
    };
    const going = externalAuth("going");
    going.metadata.deletionTimestamp = "2026-09-01T11:59:30Z";
    going.status = {
      conditions: [
        {
          type: "Deleting",
          status: "True",
          reason: "RemovingProvider",
          message: "Waiting for the cluster controller to remove the OIDC provider from the HostedCluster",
          lastTransitionTime: "2026-09-01T11:59:30Z",
        },
      ],
    };
    s.externalAuths.push(refused, going);
    const root = tree(s);
    expect(at(root, "ExternalAuths", "ExternalAuth/refused").summary).toMatchObject({
      ready: "False",
      reason: "ProviderRejected",
    });
    expect(at(root, "ExternalAuths", "ExternalAuth/going").deletion).toEqual({
      since: "2026-09-01T11:59:30Z",
      finalizers: ["hcp.aro.dev/externalauth"],
      blockedBy: [
        {
          kind: "Finalizer",
          name: "hcp.aro.dev/externalauth",
          why: "Waiting for the cluster controller to remove the OIDC provider from the HostedCluster",
        },
      ],
    });
  });

  it("names the Azure resources the conditions record", () => {
    const azure = at(tree(), "Azure").children;
    expect(azure.map((n) => `${n.kind}/${n.name}`)).toEqual([
      "ResourceGroup/arohcp-demo-managed",
      "DnsZone/demo.hcp.example.com",
      "NsDelegation/demo",
      "Ingress/demo-ingress",
      "DnsRecords/{api,*.apps}.demo.hcp.example.com",
    ]);
    expect(azure.every((n) => n.summary?.ready === "True")).toBe(true);
    expect(azure[1]?.details).toEqual({ condition: "DnsZoneReady" });
    expect(azure[3]?.details).toEqual({
      condition: "IngressReady",
      type: "Public",
      publicIp: "demo-ingress-pip",
      loadBalancer: "demo-ingress-lb",
    });
  });

  it("names what a private ingress and no ingress have instead: the API's public IP, no load balancer or *.apps", () => {
    const azureOf = (type: "Private" | "Disabled") => {
      const s = readySnapshot();
      s.cluster.spec.ingress = { type };
      return at(tree(s), "Azure").children;
    };
    expect(azureOf("Private")[3]?.details).toEqual({
      condition: "IngressReady",
      type: "Private",
      publicIp: "demo-api-pip",
      loadBalancer: "demo-ingress-lb",
    });
    const none = azureOf("Disabled");
    expect(none[3]?.details).toEqual({
      condition: "IngressReady",
      type: "Disabled",
      publicIp: "demo-api-pip",
    });
    expect(none[4]?.name).toBe("api.demo.hcp.example.com");
  });
});

describe("buildTree of works that are not applied", () => {
  it("waits for the agent while the applied generation is behind the one sent", () => {
    const s = readySnapshot();
    const work = s.works[0]!;
    work.metadata.generation = 2;
    const node = at(tree(s), "ManagementCluster/mgmt-1", `ManifestWork/${UID}`);
    expect(node.summary).toMatchObject({
      ready: "False",
      severity: "Info",
      reason: "WaitingForAgent",
      message: "generation 2 sent, 1 applied",
    });
  });

  it("is an Error when the work cannot be published", () => {
    const s = readySnapshot();
    const published = s.works[0]!.status!.conditions!.find((c) => c.type === "Published")!;
    Object.assign(published, {
      status: "False",
      reason: "BundleTooLarge",
      message: "Not published: too large",
    });
    const node = at(tree(s), "ManagementCluster/mgmt-1", `ManifestWork/${UID}`);
    expect(node.summary).toMatchObject({ ready: "False", severity: "Error", reason: "BundleTooLarge" });
  });

  it("says the agent has reported nothing before the first status", () => {
    const s = readySnapshot();
    delete s.works[0]!.status;
    const hc = at(tree(s), "ManagementCluster/mgmt-1", `ManifestWork/${UID}`, "HostedCluster/demo");
    expect(hc.summary).toMatchObject({ ready: "Unknown", reason: "NotReported" });
  });
});

describe("buildTree of a deletion", () => {
  it("names the node pool that holds the cluster and the finalizer that holds the pool", () => {
    const root = tree(blockedSnapshot());
    expect(root.deletion).toEqual({
      since: "2026-09-01T11:59:20Z",
      finalizers: ["hcp.aro.dev/cluster"],
      blockedBy: [
        {
          kind: "NodePool",
          name: "workers",
          namespace: "customer",
          why: "being deleted; finalizers example.com/hold",
        },
      ],
    });
    expect(at(root, "NodePools", "NodePool/workers").deletion?.blockedBy).toEqual([
      { kind: "Finalizer", name: "example.com/hold", why: "no controller of this service removes it" },
    ]);
  });

  it("names the works when the pools are gone, and the agent's Deleted a deleted work awaits", () => {
    const s = blockedSnapshot();
    s.nodePools = [];
    const work = s.works[0]!;
    work.metadata.deletionTimestamp = "2026-09-01T11:59:50Z";
    const published = work.status!.conditions!.find((c) => c.type === "Published")!;
    Object.assign(published, { reason: "DeletePublished", message: "The deletion was published" });
    const root = tree(s);
    expect(root.deletion?.blockedBy).toEqual([
      {
        kind: "ManifestWork",
        name: UID,
        namespace: "mgmt-1",
        why: "awaiting the agent's Deleted: the deletion was published to mgmt-1",
      },
    ]);
    const node = at(root, "ManagementCluster/mgmt-1", `ManifestWork/${UID}`);
    expect(node.summary).toMatchObject({ ready: "False", reason: "Deleting" });
    expect(node.deletion?.blockedBy).toEqual([
      {
        kind: "Agent",
        name: "mgmt-1",
        why: "awaiting the agent's Deleted: the deletion was published to mgmt-1",
      },
    ]);
  });

  it("names the controller's own finalizer when nothing it waited for is left", () => {
    const s = blockedSnapshot();
    s.nodePools = [];
    s.works = [];
    expect(tree(s).deletion?.blockedBy).toEqual([
      {
        kind: "Finalizer",
        name: "hcp.aro.dev/cluster",
        why: "the cluster controller has not released it yet; its last word: Waiting for 1 node pool(s) to be deleted: workers",
      },
    ]);
  });

  it("names Azure when only the cloud resources are left", () => {
    const s = blockedSnapshot();
    s.nodePools = [];
    s.works = [];
    const deleting = s.cluster.status!.conditions!.find((c) => c.type === "Deleting")!;
    Object.assign(deleting, {
      reason: "DeletingAzureResources",
      message: "Deleting DNS zone demo.hcp.example.com: in progress",
    });
    expect(tree(s).deletion?.blockedBy).toEqual([
      {
        kind: "Azure",
        name: "arohcp-demo-managed",
        why: "Deleting DNS zone demo.hcp.example.com: in progress",
      },
    ]);
  });
});

describe("assemble", () => {
  it("keeps the cluster's own pools and works, sorted, and leaves out an earlier cluster's of the same name", () => {
    const s = readySnapshot();
    const older = clusterWork();
    older.metadata.name = "old";
    older.metadata.labels = { ...older.metadata.labels, "hcp.aro.dev/cluster-uid": "older-uid" };
    const other = pool("other", "other-uid");
    other.spec.clusterRef.name = "another";
    const otherAuth = externalAuth("other");
    otherAuth.spec.clusterRef.name = "another";
    const a = assemble({
      cluster: s.cluster,
      pools: [...s.nodePools, other],
      externalAuths: [externalAuth("zeta"), otherAuth, ...s.externalAuths],
      managementCluster: s.managementCluster,
      works: [...s.works, older],
    });
    expect(a.nodePools.map((p) => p.metadata.name)).toEqual(["batch", "workers"]);
    expect(a.externalAuths.map((e) => e.metadata.name)).toEqual(["entra", "zeta"]);
    expect(a.works.map((w) => w.metadata.name)).toEqual([UID, `${UID}-batch`, `${UID}-workers`]);
  });
});

describe("buildTree while the management cluster's agent is not connected", () => {
  function staleSnapshot() {
    const s = readySnapshot();
    const mc = s.managementCluster!;
    mc.status!.phase = "Unavailable";
    mc.status!.agent = { lastHeardTime: new Date(NOW - 40_000).toISOString(), heartbeatSeconds: 10 };
    mc.status!.conditions!.push({
      type: "Connected",
      status: "False",
      reason: "AgentNotHeard",
      message: "No heartbeat from the agent for more than 30s",
      lastTransitionTime: new Date(NOW - 10_000).toISOString(),
    });
    return s;
  }

  it("shows Connected on the management cluster's row, and when its agent was last heard", () => {
    const mc = at(tree(staleSnapshot()), "ManagementCluster/mgmt-1");
    expect(mc.summary).toMatchObject({ ready: "False", condition: "Connected", reason: "AgentNotHeard" });
    expect(mc.details).toMatchObject({ agentHeartbeatSeconds: 10, phase: "Unavailable" });
    expect(typeof mc.details.agentLastHeard).toBe("string");
  });

  it("shows Schedulable while the agent is connected", () => {
    const s = staleSnapshot();
    s.managementCluster!.status!.conditions!.find((c) => c.type === "Connected")!.status = "True";
    expect(at(tree(s), "ManagementCluster/mgmt-1").summary).toMatchObject({ condition: "Schedulable" });
  });
});
