import { describe, expect, it } from "vitest";
import type { HcpCluster, ManagementCluster, NodePool } from "../../operators/api/v1alpha1/index.ts";
import type { ManifestWork } from "../../operators/api/work/v1.ts";
import { CLUSTER_TAG, OWNER_TAG } from "../../operators/azure/ownership.ts";
import { ORIGINAL_UID_ANNOTATION, WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import type { ArmResourceRecord } from "../harness/arm-emulator/index.ts";
import { judge, namespaceOwner, type Snapshot } from "./invariants.ts";
import { createdAfter, identities, type RestoreContext } from "./restore-invariants.ts";
import { formatTable } from "./table.ts";
import { Workload, type Expected } from "./workload.ts";

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

const NEW_UID = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
const NEW_POOL_UID = "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e";
/** Created after the backup: not in it, gone from the restored region. */
const LATE = "3c4d5e6f-7a8b-4c9d-8e0f-2a3b4c5d6e7f";

/** The world after a restore: the cluster and pool made again under new uids, named by the old. */
function restoredWorld(): Snapshot {
  const w = world();
  const c = w.clusters[0]!;
  c.metadata.uid = NEW_UID;
  c.metadata.annotations = { [ORIGINAL_UID_ANNOTATION]: UID };
  w.pools[0]!.metadata.uid = NEW_POOL_UID;
  w.pools[0]!.metadata.annotations = { [ORIGINAL_UID_ANNOTATION]: POOL_UID };
  // The controllers wrote the works again: new uids, labelled with the cluster's uid now.
  const cw = work("w-new", NEW_UID);
  const pw = work("w-new-pool", NEW_UID, NEW_POOL_UID);
  w.works = [cw, pw];
  w.management[0]!.applied = [
    { metadata: { name: "h-w-new" }, spec: { hubHash: "h", manifestWorkName: "w-new" } },
    { metadata: { name: "h-w-new-pool" }, spec: { hubHash: "h", manifestWorkName: "w-new-pool" } },
  ];
  return w;
}

/** The world just before the loss: the restored cluster as it was, and one created after the backup. */
function beforeLoss(): Snapshot {
  const w = world();
  w.management[0]!.hostedClusters[0]!.metadata.uid = "hc-1";
  w.management[0]!.namespaces[0]!.metadata.uid = "ns-1";
  const late = cluster(LATE);
  late.metadata.name = "c9";
  late.metadata.creationTimestamp = "2026-11-28T10:00:05Z";
  w.clusters.push(late);
  w.works.push(work(`w-${LATE}`, LATE));
  return w;
}

/** What cluster LATE left behind on mgmt-1 and in Azure once the region forgot it. */
function withLateLeftovers(w: Snapshot, unclaimed: string[]): Snapshot {
  const ns = `ocm-local-${LATE}`;
  const m = w.management[0]!;
  m.namespaces.push({ metadata: { name: ns } });
  m.hostedClusters.push({ metadata: { name: "c9", namespace: ns } });
  m.applied.push({ metadata: { name: `h-${LATE}` }, spec: { hubHash: "h", manifestWorkName: `w-${LATE}` } });
  w.azure.push(arm("Microsoft.Resources/resourceGroups", "rg-late", LATE));
  w.managementClusters[0]!.status!.agent = {
    unclaimedWorks: { count: unclaimed.length, resourceIDs: unclaimed },
  };
  return w;
}

function restoreContext(): RestoreContext {
  const before = identities(beforeLoss());
  const backedUp = new Set([UID]);
  return { before, backedUp, beyondRpo: createdAfter(before, backedUp, "2026-11-28T10:00:05.400Z") };
}

describe("judge, after a region restore", () => {
  it("judges a restored cluster by its original uid: its namespaces and Azure resources are its own", () => {
    const w = restoredWorld();
    w.management[0]!.hostedClusters[0]!.metadata.uid = "hc-1";
    w.management[0]!.namespaces[0]!.metadata.uid = "ns-1";
    expect(judge(w, wanted, restoreContext())).toEqual({
      converged: true,
      pending: [],
      lost: [],
      duplicated: [],
      orphaned: [],
      reported: [],
    });
  });

  it("counts a cluster created after the backup (and seconds before it, not held) apart from the backed-up ones", () => {
    const r = restoreContext();
    expect([...r.beyondRpo]).toEqual([LATE]);
    // Created in an earlier second than the backup: it should have been held; not beyond the RPO.
    expect([...createdAfter(r.before, r.backedUp, "2026-11-28T10:00:06.000Z")]).toEqual([]);
  });

  it("reports what a cluster created after the backup left behind when the region lists its work as unclaimed", () => {
    const w = withLateLeftovers(restoredWorld(), [`w-${LATE}`]);
    const v = judge(w, wanted, restoreContext());
    expect(v.orphaned).toEqual([]);
    expect(v.reported).toEqual([
      `Microsoft.Resources/resourceGroups /subscriptions/s/resourceGroups/rg/providers/Microsoft.Resources/resourceGroups/rg-late of deleted chaos-0/c0`,
      `mgmt-1 namespace ocm-local-${LATE} of a deleted cluster`,
      `mgmt-1 HostedCluster ocm-local-${LATE}/c9 of a deleted cluster`,
      `mgmt-1 AppliedManifestWork h-${LATE} of a deleted work`,
    ]);
  });

  it("reports the Azure resources of one that never reached a management cluster when the orphan sweep lists them", () => {
    const w = restoredWorld();
    w.azure.push(arm("Microsoft.Resources/resourceGroups", "rg-late", LATE));
    expect(judge(w, wanted, restoreContext()).orphaned).toHaveLength(1);
    w.azureOrphanOwners = [LATE, "someone-else"];
    const v = judge(w, wanted, restoreContext());
    expect(v.orphaned).toEqual([]);
    expect(v.reported).toEqual([expect.stringContaining("rg-late")]);
  });

  it("counts those leftovers as orphaned when the region does not list them", () => {
    const v = judge(withLateLeftovers(restoredWorld(), []), wanted, restoreContext());
    expect(v.reported).toEqual([]);
    expect(v.orphaned).toHaveLength(4);
  });

  it("counts what a backed-up cluster has with another uid or address than before the loss as made again", () => {
    const r = restoreContext();
    const pip = "Microsoft.Network/publicIPAddresses";
    r.before.made.get(UID)!.set(`Azure ${arm(pip, "c0-ingress-pip").id.toLowerCase()}`, "old 10.0.0.4");
    const w = restoredWorld();
    w.management[0]!.hostedClusters[0]!.metadata.uid = "hc-2";
    w.management[0]!.namespaces[0]!.metadata.uid = "ns-1";
    const v = judge(w, wanted, r);
    expect(v.duplicated).toEqual([
      `mgmt-1 HostedCluster ocm-local-${UID}/c0 of cluster ${UID} made again (hc-1 → hc-2)`,
      expect.stringMatching(
        /^Azure .*publicipaddresses\/c0-ingress-pip of cluster .* made again \(old 10\.0\.0\.4 → /,
      ),
    ]);
  });
});

describe("Workload.rebase", () => {
  const service = {
    createIfAbsent: () => Promise.resolve(true),
    delete: () => Promise.resolve(true),
    mergePatch: () => Promise.resolve({}),
  } as unknown as KubeClient;

  it("undoes what was asked after the backup and expects what the backup holds", async () => {
    const workload = new Workload(service);
    const batch = await workload.createBatch(4);
    const [kept, deleted, scaled] = [batch.all[0]!, batch.all[1]!, batch.all[2]!];
    await workload.delete([deleted]);
    await workload.scale([scaled]);
    const late = await workload.createOne();
    const held = new Map<string, number | undefined>([
      [`${kept.namespace}/${kept.name}`, 2],
      [`${deleted.namespace}/${deleted.name}`, 2],
      [`${scaled.namespace}/${scaled.name}`, 2],
    ]);
    expect(workload.rebase(held)).toEqual([
      `deletion of ${deleted.namespace}/${deleted.name}`,
      `scale of ${scaled.namespace}/${scaled.pool} to 3`,
      `creation of ${batch.all[3]!.namespace}/${batch.all[3]!.name}`,
      `creation of ${late.namespace}/${late.name}`,
    ]);
    const byName = new Map(workload.expected().map((e) => [e.name, e]));
    expect(byName.get(deleted.name)).toMatchObject({ present: true, replicas: 2 });
    expect(byName.get(scaled.name)).toMatchObject({ present: true, replicas: 2 });
    expect(byName.get(late.name)).toMatchObject({ present: false });
  });
});

describe("formatTable", () => {
  const row = {
    fault: "broker-kill",
    runs: 1,
    converged: 1,
    convergeSeconds: 2,
    lost: 0,
    duplicated: 0,
    orphaned: 0,
  };

  it("adds a lost-beyond-RPO column only when a row restored the region", () => {
    expect(formatTable([row]).split("\n")[0]).toBe(
      "| fault | runs | converged | time to converge | lost | duplicated | orphaned |",
    );
    const lines = formatTable([row, { ...row, fault: "service-cluster-loss", lostBeyondRpo: 3 }]).split("\n");
    expect(lines).toEqual([
      "| fault | runs | converged | time to converge | lost | lost beyond RPO | duplicated | orphaned |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      "| broker-kill | 1 | 1/1 | 2 s | 0 | – | 0 | 0 |",
      "| service-cluster-loss | 1 | 1/1 | 2 s | 0 | 3 | 0 | 0 |",
    ]);
  });
});
