/**
 * The region monitor (the ARO-RP Monitor's job, without its writes): Prometheus gauges computed
 * at scrape time from the caches the controllers of this process already hold, so watching the
 * region costs no apiserver request and no status write. It runs on the leader only (a follower
 * exports none of these series, so no alert sees a region twice):
 *
 *   hcp_nodepools{phase}                                        (hcp_clusters{phase} is the cluster controller's)
 *   hcp_status_stale{kind}                                      objects whose Ready is StatusStale
 *   hcp_operations_in_flight{kind,operation}                    creates, upgrades, deletes under way
 *   hcp_operation_oldest_seconds{kind,operation}                age of the oldest of each
 *   hcp_oldest_unreconciled_seconds{kind,hop}                   oldest generation waiting at each hop: its
 *                                                               controller (HcpCluster, NodePool), then for
 *                                                               a ManifestWork maestro-server's publish and
 *                                                               the agent's apply
 *   hcp_managementcluster_connected{management_cluster,status}  1 for the Connected status it has
 *   hcp_managementcluster_agent_last_heard_seconds{management_cluster}
 *   hcp_managementcluster_agent_certificate_expiry_timestamp_seconds{management_cluster}
 */
import type { Gauge } from "prom-client";
import {
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import {
  ManifestWorkResource,
  summariseWorkSpec,
  type CachedManifestWork,
  type ManifestWork,
  type ManifestWorkObject,
} from "../api/work/v1.ts";
import type { Cluster } from "../runtime/clusters.ts";
import type { Informer } from "../runtime/informer.ts";
import type { KubeObject } from "../runtime/kube.ts";
import type { Runnable } from "../runtime/manager.ts";
import { gauge, metricsRegistry } from "../runtime/metrics.ts";
import type { AgentLivenessSource } from "../api/v1alpha1/managementcluster.ts";
import { isStale, OPERATIONS, operationStats, UnreconciledAges, type Tracked } from "./operations.ts";

export interface RegionMonitorOptions {
  /** The service cluster. */
  cluster: Cluster;
  /** maestro-server's in-memory liveness, when it runs in this process: the exact last-heard times. */
  agents?: AgentLivenessSource;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
}

/** One hop a generation passes on its way (the kind whose objects carry it), and its waiting ages. */
interface HopAges {
  kind: "HcpCluster" | "NodePool" | "ManifestWork";
  hop: "controller" | "publish" | "agent";
  ages: UnreconciledAges<KubeObject>;
}

/** Monitors that run now; the gauges read them when scraped. */
const live = new Set<RegionMonitor>();

const observedGeneration = (o: Tracked): number | undefined => o.status?.observedGeneration;

const workCondition = (w: ManifestWorkObject, type: string) =>
  w.status?.conditions?.find((c) => c.type === type);

/** The generation the agent last reported on: its Applied condition's. */
const agentGeneration = (w: ManifestWorkObject): number | undefined =>
  workCondition(w, "Applied")?.observedGeneration;

/** The generation maestro-server last sent to the broker: its Published condition's, when True. */
const publishedGeneration = (w: ManifestWorkObject): number | undefined => {
  const published = workCondition(w, "Published");
  return published?.status === "True" ? published.observedGeneration : undefined;
};

function trackAges<T extends KubeObject>(
  informer: Pick<Informer<T>, "addEventHandler">,
  ages: UnreconciledAges<T>,
): void {
  informer.addEventHandler({
    onAdd: (o) => ages.observe(o),
    onUpdate: (_before, after) => ages.observe(after),
    onDelete: (o) => ages.forget(o),
  });
}

export class RegionMonitor implements Runnable {
  readonly needLeaderElection = true;
  readonly clusters: Informer<HcpCluster>;
  readonly pools: Informer<NodePool>;
  readonly managementClusters: Informer<ManagementCluster>;
  readonly works: Informer<CachedManifestWork, ManifestWork>;
  readonly agents?: AgentLivenessSource;
  readonly now: () => number;
  readonly unreconciled: HopAges[];

  constructor(opts: RegionMonitorOptions) {
    const { cluster } = opts;
    this.now = opts.now ?? Date.now;
    this.agents = opts.agents;
    // The process's shared informers: the controllers beside this one cache the same objects.
    this.clusters = cluster.informer<HcpCluster>(HcpClusterResource);
    this.pools = cluster.informer<NodePool>(NodePoolResource);
    this.managementClusters = cluster.informer<ManagementCluster>(ManagementClusterResource);
    this.works = cluster.informer<CachedManifestWork, ManifestWork>(ManifestWorkResource, {
      transform: summariseWorkSpec,
    });
    const clusterAges = new UnreconciledAges<HcpCluster>(observedGeneration, this.now);
    const poolAges = new UnreconciledAges<NodePool>(observedGeneration, this.now);
    const publishAges = new UnreconciledAges<CachedManifestWork>(publishedGeneration, this.now);
    const agentAges = new UnreconciledAges<CachedManifestWork>(
      agentGeneration,
      this.now,
      publishedGeneration,
    );
    trackAges(this.clusters, clusterAges);
    trackAges(this.pools, poolAges);
    trackAges(this.works, publishAges);
    trackAges(this.works, agentAges);
    this.unreconciled = [
      { kind: "HcpCluster", hop: "controller", ages: clusterAges as UnreconciledAges<KubeObject> },
      { kind: "NodePool", hop: "controller", ages: poolAges as UnreconciledAges<KubeObject> },
      { kind: "ManifestWork", hop: "publish", ages: publishAges as UnreconciledAges<KubeObject> },
      { kind: "ManifestWork", hop: "agent", ages: agentAges as UnreconciledAges<KubeObject> },
    ];
    registerRegionGauges();
  }

  async start(signal: AbortSignal): Promise<void> {
    const informers = [
      this.clusters,
      this.pools,
      this.managementClusters,
      this.works,
    ] as Informer<KubeObject>[];
    await Promise.all(informers.map((i) => i.waitForSync(signal)));
    live.add(this);
    try {
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener("abort", () => resolve(), { once: true });
      });
    } finally {
      live.delete(this);
    }
  }

  /** Seconds since the management cluster's agent was last heard: exact from memory, else as persisted. */
  lastHeardSeconds(mc: ManagementCluster): number | undefined {
    const persisted = Date.parse(mc.status?.agent?.lastHeardTime ?? "");
    const heard = this.agents?.snapshot(mc.spec.consumerName).agent?.lastHeardMs;
    const last = Math.max(heard ?? -Infinity, Number.isNaN(persisted) ? -Infinity : persisted);
    return Number.isFinite(last) ? Math.max(0, (this.now() - last) / 1000) : undefined;
  }
}

let registered: Gauge[] | undefined;

/** The gauges, registered once per process in the registry served on /metrics. */
function registerRegionGauges(): void {
  registered ??= [
    gauge(metricsRegistry, {
      name: "hcp_nodepools",
      help: "NodePools by phase",
      labelNames: ["phase"],
      collect() {
        this.reset();
        for (const m of live)
          for (const p of m.pools.list()) this.inc({ phase: p.status?.phase ?? "Pending" });
      },
    }),
    gauge(metricsRegistry, {
      name: "hcp_status_stale",
      help: "HcpClusters and NodePools whose Ready is Unknown because their management cluster's agent is not Connected (StatusStale)",
      labelNames: ["kind"],
      collect() {
        this.reset();
        for (const m of live) {
          this.set({ kind: "HcpCluster" }, m.clusters.list().filter(isStale).length);
          this.set({ kind: "NodePool" }, m.pools.list().filter(isStale).length);
        }
      },
    }),
    ...operationGauges(),
    gauge(metricsRegistry, {
      name: "hcp_oldest_unreconciled_seconds",
      help: "Seconds the oldest generation has waited at each hop: an HcpCluster's or NodePool's for its controller (hop controller), a ManifestWork's for maestro-server to publish it (publish), then for the agent to report applying it (agent); 0 when none waits",
      labelNames: ["kind", "hop"],
      collect() {
        this.reset();
        for (const m of live)
          for (const { kind, hop, ages } of m.unreconciled) this.set({ kind, hop }, ages.oldestSeconds());
      },
    }),
    ...managementClusterGauges(),
  ];
}

function operationGauges(): Gauge[] {
  const stats = (m: RegionMonitor) => [
    { kind: "HcpCluster", stats: operationStats(m.clusters.list(), m.now()) },
    { kind: "NodePool", stats: operationStats(m.pools.list(), m.now()) },
  ];
  return [
    gauge(metricsRegistry, {
      name: "hcp_operations_in_flight",
      help: "HcpClusters and NodePools in a create (no version reported yet), an upgrade (Progressing for Upgrading) or a delete, not waiting for the user",
      labelNames: ["kind", "operation"],
      collect() {
        this.reset();
        for (const m of live)
          for (const { kind, stats: s } of stats(m))
            for (const operation of OPERATIONS) this.set({ kind, operation }, s[operation].count);
      },
    }),
    gauge(metricsRegistry, {
      name: "hcp_operation_oldest_seconds",
      help: "Seconds the oldest create, upgrade or delete in flight has run (see hcp_operations_in_flight); 0 when none runs",
      labelNames: ["kind", "operation"],
      collect() {
        this.reset();
        for (const m of live)
          for (const { kind, stats: s } of stats(m))
            for (const operation of OPERATIONS) this.set({ kind, operation }, s[operation].oldestSeconds);
      },
    }),
  ];
}

const CONNECTED_STATUSES = ["True", "False", "Unknown"] as const;

function managementClusterGauges(): Gauge[] {
  return [
    gauge(metricsRegistry, {
      name: "hcp_managementcluster_connected",
      help: "1 for the status of each ManagementCluster's Connected condition (its agent heard within its bound), 0 for the others",
      labelNames: ["management_cluster", "status"],
      collect() {
        this.reset();
        for (const m of live)
          for (const mc of m.managementClusters.list()) {
            const connected = mc.status?.conditions?.find((c) => c.type === "Connected")?.status ?? "Unknown";
            for (const status of CONNECTED_STATUSES)
              this.set({ management_cluster: mc.metadata.name ?? "", status }, status === connected ? 1 : 0);
          }
      },
    }),
    gauge(metricsRegistry, {
      name: "hcp_managementcluster_agent_last_heard_seconds",
      help: "Seconds since maestro-server last heard the ManagementCluster's agent (absent if never)",
      labelNames: ["management_cluster"],
      collect() {
        this.reset();
        for (const m of live)
          for (const mc of m.managementClusters.list()) {
            const seconds = m.lastHeardSeconds(mc);
            if (seconds !== undefined) this.set({ management_cluster: mc.metadata.name ?? "" }, seconds);
          }
      },
    }),
    gauge(metricsRegistry, {
      name: "hcp_managementcluster_agent_certificate_expiry_timestamp_seconds",
      help: "When the broker client certificate the ManagementCluster's agent reports expires (seconds since the epoch; absent if it reports none)",
      labelNames: ["management_cluster"],
      collect() {
        this.reset();
        for (const m of live)
          for (const mc of m.managementClusters.list()) {
            const notAfter = Date.parse(mc.status?.agent?.brokerCertificate?.notAfter ?? "");
            if (Number.isFinite(notAfter))
              this.set({ management_cluster: mc.metadata.name ?? "" }, notAfter / 1000);
          }
      },
    }),
  ];
}
