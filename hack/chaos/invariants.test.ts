import { describe, expect, it } from "vitest";
import type { HcpCluster, ManagementCluster, NodePool } from "../../operators/api/v1alpha1/index.ts";
import type { ManifestWork } from "../../operators/api/work/v1.ts";
import { CLUSTER_TAG, OWNER_TAG } from "../../operators/azure/ownership.ts";
import { WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import type { ArmResourceRecord } from "../harness/arm-emulator/index.ts";
import { judge, namespaceOwner, type Snapshot } from "./invariants.ts";
import type { Expected } from "./workload.ts";

const UID = "0b7c1a52-1f0e-4c8e-9d3b-5a2f6e7d8c90";
const GONE = "9f1e2d3c-4b5a-4697-8877-665544332211";
const ready = [{ type: "Ready", status: "True" }];

function cluster(uid = UID): HcpCluster {
  return {
    metadata: { name: "c0", namespace: "chaos-0", uid, generation: 1 },
    status: { observedGeneration: 1, conditions: ready, managementCluster: "mgmt-1" },
  } as unknown as HcpCluster;
}

const POOL_UID = "5e4d3c2b-1a09-4876-9543-210fedcba987";

function pool(replicas = 2): NodePool {
  return {
    metadata: { name: "c0-workers", namespace: "chaos-0", generation: 1, uid: POOL_UID },
    spec: { clusterRef: { name: "c0" }, replicas },
    status: { observedGeneration: 1, conditions: ready, replicas },
  } as unknown as NodePool;
}

function managementCluster(name: string, connected = "True", reason = "AgentConnected"): ManagementCluster {
  return {
    metadata: { name },
    spec: { consumerName: name, capacity: { maxHostedClusters: 10 } },
    status: { conditions: [{ type: "Connected", status: connected, reason }] },
  } as unknown as ManagementCluster;
}

/** Ready as the cluster and node pool controllers write it while their management cluster is unheard. */
const stale = [{ type: "Ready", status: "Unknown", reason: "StatusStale" }];

/** A work named after its uid, as the controllers name theirs and the agent its copy. */
function work(uid: string, owner = UID, nodePool?: string): ManifestWork {
  const labels: Record<string, string> = {
    [WORK_LABELS.clusterUid]: owner,
    [WORK_LABELS.clusterNamespace]: "chaos-0",
  };
  if (nodePool) labels[WORK_LABELS.nodePool] = nodePool;
  return { metadata: { name: uid, uid, namespace: "mgmt-1", labels } };
}

function arm(type: string, name: string, owner = UID, asMetadata = false): ArmResourceRecord {
  const tags = { [OWNER_TAG]: owner, [CLUSTER_TAG]: "chaos-0/c0" };
  return {
    id: `/subscriptions/s/resourceGroups/rg/providers/${type}/${name}`,
    name,
    type,
    subscriptionId: "s",
    resourceGroup: "rg",
    tags: asMetadata ? {} : tags,
    properties: asMetadata ? { metadata: tags } : {},
  };
}

/** Everything one Ready cluster with one pool has, in the right number. */
function world(): Snapshot {
  const ns = `ocm-local-${UID}`;
  return {
    clusters: [cluster()],
    managementClusters: [managementCluster("mgmt-1"), managementCluster("mgmt-2")],
    pools: [pool()],
    works: [work(UID), work(`${UID}-c0-workers`, UID, POOL_UID)],
    management: [
      {
        name: "mgmt-1",
        namespaces: [{ metadata: { name: ns } }, { metadata: { name: `${ns}-c0` } }],
        hostedClusters: [{ metadata: { name: "c0", namespace: ns } }],
        nodePools: [{ metadata: { name: "c0-c0-workers", namespace: ns } }],
        applied: [
          { metadata: { name: `h-${UID}` }, spec: { hubHash: "h", manifestWorkName: UID } },
          { metadata: { name: `h-${UID}-w` }, spec: { hubHash: "h", manifestWorkName: `${UID}-c0-workers` } },
        ],
      },
      {
        name: "mgmt-2",
        namespaces: [{ metadata: { name: "default" } }],
        hostedClusters: [],
        nodePools: [],
        applied: [],
      },
    ],
    azure: [
      arm("Microsoft.Resources/resourceGroups", "rg"),
      arm("Microsoft.Network/dnszones", "c0.hcp.example.com"),
      arm("Microsoft.Network/dnszones/NS", "c0", UID, true),
      arm("Microsoft.Network/publicIPAddresses", "c0-ingress-pip"),
      arm("Microsoft.Network/loadBalancers", "c0-ingress-lb"),
      arm("Microsoft.Network/dnszones/A", "api", UID, true),
      arm("Microsoft.Network/dnszones/A", "*.apps", UID, true),
      arm("Microsoft.Network/dnszones", "hcp.example.com", "hcp-service"),
    ],
  };
}

const wanted: Expected[] = [
  { namespace: "chaos-0", name: "c0", pool: "c0-workers", present: true, replicas: 2 },
];
const deleted: Expected[] = [{ ...wanted[0]!, present: false }];

describe("judge", () => {
  it("finds a converged world clean", () => {
    expect(judge(world(), wanted)).toEqual({
      converged: true,
      pending: [],
      lost: [],
      duplicated: [],
      orphaned: [],
      reported: [],
    });
  });

  it("is not converged while a pool has not reached its new size", () => {
    const w = world();
    w.pools = [{ ...pool(2), spec: { ...pool(2).spec, replicas: 3 } }];
    const v = judge(w, [{ ...wanted[0]!, replicas: 3 }]);
    expect(v.converged).toBe(false);
    expect(v.pending).toEqual(["chaos-0/c0-workers not Ready at 3 replicas"]);
  });

  it("counts what a Ready cluster lacks as lost", () => {
    const w = world();
    w.azure = w.azure.filter((r) => r.name !== "*.apps" && r.name !== "c0-ingress-lb");
    w.management[0]!.hostedClusters = [];
    w.works = w.works.filter((x) => !x.metadata.labels?.[WORK_LABELS.nodePool]);
    const v = judge(w, wanted);
    expect(v.lost).toEqual([
      "ManifestWork of the NodePool of chaos-0/c0",
      "HostedCluster of chaos-0/c0",
      "microsoft.network/loadbalancers of chaos-0/c0 (0 of 1)",
      "microsoft.network/dnszones/a of chaos-0/c0 (1 of 2)",
    ]);
  });

  it("counts a cluster that vanished as lost and not converged", () => {
    const w = world();
    w.clusters = [];
    const v = judge(w, wanted);
    expect(v.converged).toBe(false);
    expect(v.lost).toContain("HcpCluster chaos-0/c0");
  });

  it("counts two of anything a cluster should have one of as duplicated", () => {
    const w = world();
    w.works.push(work("second"));
    w.azure.push(arm("Microsoft.Network/publicIPAddresses", "other-pip"));
    w.management[1]!.hostedClusters = [{ metadata: { name: "c0", namespace: `ocm-local-${UID}` } }];
    const v = judge(w, wanted);
    expect(v.duplicated).toEqual([
      "ManifestWork of HcpCluster chaos-0/c0 ×2",
      "HostedCluster of chaos-0/c0 ×2",
      "microsoft.network/publicipaddresses of chaos-0/c0 ×2",
    ]);
  });

  it("counts what a deleted cluster left behind as orphaned", () => {
    const w = world();
    w.clusters = [];
    w.pools = [];
    const v = judge(w, deleted);
    expect(v.converged).toBe(true);
    expect(v.lost).toEqual([]);
    // 2 works, 7 Azure resources, 2 namespaces, a HostedCluster, a NodePool (the records' works still exist)
    expect(v.orphaned).toHaveLength(13);
    expect(v.orphaned).toContain("ManifestWork mgmt-1/" + UID + " of a deleted cluster");
  });

  it("counts objects held by finalizers, works without owners and records of deleted works", () => {
    const w = world();
    w.clusters = [
      { ...cluster(), metadata: { ...cluster().metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } },
    ];
    w.pools = [];
    w.works.push({ metadata: { name: "stray", namespace: "mgmt-1" } });
    w.management[0]!.applied.push({
      metadata: { name: "h-gone" },
      spec: { hubHash: "h", manifestWorkName: GONE },
    });
    const v = judge(w, deleted);
    expect(v.converged).toBe(false);
    expect(v.orphaned).toEqual([
      "HcpCluster chaos-0/c0 held by a finalizer",
      "ManifestWork mgmt-1/" + UID + "-c0-workers of a deleted NodePool",
      "ManifestWork mgmt-1/stray without an owner",
      "mgmt-1 AppliedManifestWork h-gone of a deleted work",
    ]);
  });
});

describe("judge, while an agent is unheard (StatusStale)", () => {
  /** The world during a fault that silenced mgmt-1's agent beyond the monitor's bound. */
  function silenced(): Snapshot {
    const w = world();
    w.managementClusters[0] = managementCluster("mgmt-1", "False", "AgentNotHeard");
    w.clusters = [{ ...cluster(), status: { ...cluster().status, conditions: stale } } as HcpCluster];
    w.pools = [{ ...pool(), status: { ...pool().status, conditions: stale } } as NodePool];
    return w;
  }

  it("holds StatusStale for pending, named as such, and never for lost", () => {
    const v = judge(silenced(), wanted);
    expect(v).toEqual({
      converged: false,
      pending: [
        "chaos-0/c0 Ready Unknown (StatusStale)",
        "chaos-0/c0-workers Ready Unknown (StatusStale) at 2 replicas",
        "ManagementCluster mgmt-1 not Connected (AgentNotHeard)",
      ],
      lost: [],
      duplicated: [],
      orphaned: [],
      reported: [],
    });
  });

  it("is converged once the agent is heard again and Ready is back", () => {
    const w = silenced();
    w.managementClusters[0] = managementCluster("mgmt-1");
    w.clusters = [cluster()];
    w.pools = [pool()];
    expect(judge(w, wanted)).toMatchObject({ converged: true, pending: [] });
  });

  it("is not converged while a cluster stays StatusStale after its agent is heard again", () => {
    const w = silenced();
    w.managementClusters[0] = managementCluster("mgmt-1");
    w.pools = [pool()];
    const v = judge(w, wanted);
    expect(v.converged).toBe(false);
    expect(v.pending).toEqual(["chaos-0/c0 Ready Unknown (StatusStale)"]);
  });

  it("is not converged while a management cluster stays unheard, even with every cluster Ready", () => {
    const w = world();
    w.managementClusters[1] = managementCluster("mgmt-2", "False", "SourceDisconnected");
    const v = judge(w, wanted);
    expect(v.converged).toBe(false);
    expect(v.pending).toEqual(["ManagementCluster mgmt-2 not Connected (SourceDisconnected)"]);
  });

  it("does not hold an agent the service cannot judge (Connected Unknown) against convergence", () => {
    const w = world();
    w.managementClusters[1] = managementCluster("mgmt-2", "Unknown", "WaitingForAgent");
    expect(judge(w, wanted).converged).toBe(true);
  });
});

describe("namespaceOwner", () => {
  it("reads the cluster uid from a HostedCluster or control-plane namespace", () => {
    expect(namespaceOwner(`ocm-local-${UID}`)).toBe(UID);
    expect(namespaceOwner(`ocm-local-${UID}-c0`)).toBe(UID);
    expect(namespaceOwner("kube-system")).toBeUndefined();
  });
});
