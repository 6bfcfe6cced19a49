/**
 * What a chaos run checks once a fault is gone, read from the world rather than from any
 * component: the service cluster (HcpClusters, NodePools, ManifestWorks), every management
 * cluster (namespaces, HostedClusters, HyperShift NodePools, AppliedManifestWorks) and the ARM
 * emulator's inventory. `judge` is pure: it compares a snapshot with what the workload asked for.
 *
 *  - converged: every wanted cluster and pool Ready at its generation (the pool at its replicas),
 *    every deleted one gone, and no ManagementCluster's agent unheard (Connected=False). A fault
 *    that silences an agent beyond the monitor's bound (30 s: the broker cut off, a management
 *    cluster away) makes the ManagementCluster Connected=False and Ready of what is placed there
 *    Unknown with reason StatusStale; that is expected while it lasts and is pending, named as
 *    such, never lost. Once the fault is gone it must clear: still there at the deadline, it is
 *    a run that did not converge;
 *  - lost: something a wanted cluster should have and does not (the object itself, its works,
 *    its HostedCluster, its Azure resources once Ready);
 *  - duplicated: two of something a cluster or pool should have one of;
 *  - orphaned: anything of a cluster that no longer exists (Azure resources by owner tag,
 *    management-cluster namespaces and HyperShift objects, ManifestWorks, AppliedManifestWorks),
 *    a work without an owner, and any object still held by a finalizer after its deletion.
 *
 * Namespaces and Azure resources are named after a cluster's original uid (the one a region
 * restore keeps, labels.ts originalUid), its works after its uid now. A run that started a fleet
 * rollout adds the rollout's own checks (rollout-invariants.ts); one that restored the region
 * adds what a restore must keep (restore-invariants.ts).
 */
import { judgeMetering } from "./metering-invariants.ts";
import type { KubeObject } from "../../operators/api/meta/v1.ts";
import type { HcpCluster, ManagementCluster, NodePool } from "../../operators/api/v1alpha1/index.ts";
import type { ManifestWork } from "../../operators/api/work/v1.ts";
import { CLUSTER_TAG } from "../../operators/azure/ownership.ts";
import { originalUid, WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import { CONNECTED, STATUS_STALE } from "../../operators/api/v1alpha1/managementcluster.ts";
import { remade, reportedOwners, type RestoreContext } from "./restore-invariants.ts";
import { judgeRollouts } from "./rollout-invariants.ts";
import {
  azureOwner,
  ENVIRONMENT,
  namespaceOwner,
  type ManagementSnapshot,
  type Snapshot,
} from "./snapshot.ts";
import type { Expected } from "./workload.ts";

export {
  azureOwner,
  ENVIRONMENT,
  namespaceOwner,
  type ManagementSnapshot,
  type Snapshot,
} from "./snapshot.ts";

/** The owner id of the region's own Azure resources (the parent zone). */
const SERVICE_OWNER_ID = "hcp-service";

export interface Verdict {
  converged: boolean;
  /** Why not converged yet, in a few words each. */
  pending: string[];
  lost: string[];
  duplicated: string[];
  orphaned: string[];
  /**
   * Left behind by a cluster created after the restored backup, and shown by the region as an
   * agent's unclaimed works: known, for an SRE to judge, not orphaned. Empty without a restore.
   */
  reported: string[];
}

/** Every kind of Azure resource a Ready cluster owns, and how many of each. */
const AZURE_KINDS: Array<{ type: string; count: number }> = [
  { type: "microsoft.resources/resourcegroups", count: 1 },
  { type: "microsoft.network/dnszones", count: 1 },
  { type: "microsoft.network/dnszones/ns", count: 1 },
  { type: "microsoft.network/publicipaddresses", count: 1 },
  { type: "microsoft.network/loadbalancers", count: 1 },
  { type: "microsoft.network/dnszones/a", count: 2 },
];

const key = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;
type Conditions = Array<{ type: string; status: string; reason?: string }> | undefined;
const isTrue = (conditions: Conditions, type: string): boolean =>
  conditions?.some((c) => c.type === type && c.status === "True") ?? false;

/** Why an object is not Ready, in a few words: a stale report says so, anything else is "not Ready". */
function notReady(conditions: Conditions): string {
  const ready = conditions?.find((c) => c.type === "Ready");
  return ready?.reason === STATUS_STALE ? `Ready ${ready.status} (${STATUS_STALE})` : "not Ready";
}

class Findings {
  readonly pending: string[] = [];
  readonly lost: string[] = [];
  readonly duplicated: string[] = [];
  readonly orphaned: string[] = [];
  readonly reported: string[] = [];
  /** Original uids whose leftovers the region reports (a restore's clusters created after its backup). */
  reportedOwners = new Set<string>();

  /** What `owner` left behind: reported when the region reports it, else orphaned. */
  leftover(owner: string | undefined, what: string): void {
    if (owner !== undefined && this.reportedOwners.has(owner)) this.reported.push(what);
    else this.orphaned.push(what);
  }

  /** One of `what` is wanted: none is lost, more than one duplicated. */
  exactlyOne(what: string, count: number): void {
    if (count === 0) this.lost.push(what);
    else if (count > 1) this.duplicated.push(`${what} ×${count}`);
  }
}

export function judge(snapshot: Snapshot, expected: Expected[], restore?: RestoreContext): Verdict {
  const f = new Findings();
  if (restore) {
    f.reportedOwners = reportedOwners(snapshot, restore);
    f.duplicated.push(...remade(snapshot, restore));
  }
  const clusters = new Map(snapshot.clusters.map((c) => [key(c), c]));
  const pools = new Map(snapshot.pools.map((p) => [key(p), p]));
  for (const e of expected) {
    const found = {
      cluster: clusters.get(`${e.namespace}/${e.name}`),
      pool: pools.get(`${e.namespace}/${e.pool}`),
    };
    if (e.present) checkWanted(f, snapshot, e, found);
    else checkDeleted(f, found);
  }
  checkConnected(f, snapshot.managementClusters);
  const live = {
    uids: new Set(snapshot.clusters.map((c) => c.metadata.uid ?? "")),
    ids: new Set(snapshot.clusters.map((c) => originalUid(c))),
  };
  checkOrphans(f, snapshot, live, restore?.before.workOwners);
  if (snapshot.rollouts) {
    const r = judgeRollouts(snapshot.rollouts, snapshot.clusters);
    f.pending.push(...r.pending);
    f.lost.push(...r.lost);
    f.duplicated.push(...r.duplicated);
    f.orphaned.push(...r.orphaned);
  }
  if (snapshot.metering) {
    const m = judgeMetering(snapshot.metering);
    f.pending.push(...m.pending);
    f.lost.push(...m.lost);
    f.duplicated.push(...m.duplicated);
  }
  return {
    converged: f.pending.length === 0,
    pending: f.pending,
    lost: f.lost,
    duplicated: f.duplicated,
    orphaned: f.orphaned,
    reported: f.reported,
  };
}

interface Found {
  cluster: HcpCluster | undefined;
  pool: NodePool | undefined;
}

function checkWanted(f: Findings, snapshot: Snapshot, e: Expected, { cluster, pool }: Found): void {
  const name = `${e.namespace}/${e.name}`;
  if (!cluster) {
    f.lost.push(`HcpCluster ${name}`);
    f.pending.push(`${name} missing`);
    return;
  }
  if (!pool) {
    f.lost.push(`NodePool ${e.namespace}/${e.pool}`);
    f.pending.push(`${e.namespace}/${e.pool} missing`);
  }
  const ready =
    isTrue(cluster.status?.conditions, "Ready") &&
    cluster.status?.observedGeneration === cluster.metadata.generation;
  if (!ready) f.pending.push(`${name} ${notReady(cluster.status?.conditions)}`);
  if (pool) checkPool(f, e, pool);
  checkWorks(f, snapshot, cluster.metadata.uid ?? "", { name, pool: pool?.metadata.uid });
  const id = originalUid(cluster);
  checkManagement(f, snapshot, id, name);
  if (ready) checkAzure(f, snapshot, id, name);
}

function checkPool(f: Findings, e: Expected, pool: NodePool): void {
  const name = `${e.namespace}/${e.pool}`;
  const ready =
    isTrue(pool.status?.conditions, "Ready") &&
    pool.status?.observedGeneration === pool.metadata.generation &&
    pool.status?.replicas === e.replicas;
  if (pool.spec.replicas !== e.replicas) f.lost.push(`NodePool ${name} scale to ${e.replicas}`);
  if (!ready) f.pending.push(`${name} ${notReady(pool.status?.conditions)} at ${e.replicas} replicas`);
}

/**
 * Every agent heard again: a ManagementCluster still Connected=False has not recovered from the
 * fault, even where nothing placed on it shows yet (Unknown is a state the service cannot judge,
 * as hcp/staleness.ts has it, and not one these agents, which beat, end in).
 */
function checkConnected(f: Findings, managementClusters: ManagementCluster[]): void {
  for (const mc of managementClusters) {
    const connected = mc.status?.conditions?.find((c) => c.type === CONNECTED);
    if (connected?.status === "False")
      f.pending.push(`ManagementCluster ${mc.metadata.name ?? ""} not Connected (${connected.reason})`);
  }
}

/**
 * A cluster's works: one of its own, one per pool (labelled with the pool's uid). The agent names
 * its copy of a work, and so its AppliedManifestWork, after the work's uid (the resource ID).
 */
function checkWorks(f: Findings, snapshot: Snapshot, uid: string, of: { name: string; pool?: string }): void {
  const works = snapshot.works.filter((w) => w.metadata.labels?.[WORK_LABELS.clusterUid] === uid);
  const clusterWorks = works.filter((w) => !w.metadata.labels?.[WORK_LABELS.nodePool]);
  f.exactlyOne(`ManifestWork of HcpCluster ${of.name}`, clusterWorks.length);
  const poolWorks = of.pool ? works.filter((w) => w.metadata.labels?.[WORK_LABELS.nodePool] === of.pool) : [];
  if (of.pool) f.exactlyOne(`ManifestWork of the NodePool of ${of.name}`, poolWorks.length);
  for (const w of [...clusterWorks, ...poolWorks]) {
    const records = snapshot.management
      .flatMap((m) => m.applied)
      .filter((a) => a.spec?.manifestWorkName === w.metadata.uid);
    if (records.length > 1) f.duplicated.push(`AppliedManifestWork of ${key(w)} ×${records.length}`);
  }
}

function checkManagement(f: Findings, snapshot: Snapshot, id: string, name: string): void {
  const ns = `ocm-${ENVIRONMENT}-${id}`;
  const hosted = snapshot.management.flatMap((m) =>
    m.hostedClusters.filter((h) => h.metadata.namespace === ns),
  );
  const namespaces = snapshot.management.flatMap((m) => m.namespaces.filter((n) => n.metadata.name === ns));
  const pools = snapshot.management.flatMap((m) => m.nodePools.filter((p) => p.metadata.namespace === ns));
  f.exactlyOne(`HostedCluster of ${name}`, hosted.length);
  f.exactlyOne(`namespace ${ns} of ${name}`, namespaces.length);
  f.exactlyOne(`HyperShift NodePool of ${name}`, pools.length);
}

function checkAzure(f: Findings, snapshot: Snapshot, id: string, name: string): void {
  const owned = snapshot.azure.filter((r) => azureOwner(r) === id);
  for (const { type, count } of AZURE_KINDS) {
    const found = owned.filter((r) => r.type.toLowerCase() === type).length;
    if (found < count) f.lost.push(`${type} of ${name} (${found} of ${count})`);
    if (found > count) f.duplicated.push(`${type} of ${name} ×${found}`);
  }
}

function checkDeleted(f: Findings, { cluster, pool }: Found): void {
  for (const [kind, obj] of [
    ["HcpCluster", cluster],
    ["NodePool", pool],
  ] as const) {
    if (!obj) continue;
    f.pending.push(`${kind} ${key(obj)} not gone`);
    f.orphaned.push(
      `${kind} ${key(obj)} ${obj.metadata.deletionTimestamp ? "held by a finalizer" : "not deleted"}`,
    );
  }
}

/** The clusters there are: by uid now (what their works are labelled with) and by original uid (what else is named after). */
interface Live {
  uids: Set<string>;
  ids: Set<string>;
}

function checkOrphans(
  f: Findings,
  snapshot: Snapshot,
  live: Live,
  workOwners: Map<string, string> = new Map(),
): void {
  const workNames = new Set(
    snapshot.works.map((w) => `${w.metadata.namespace ?? ""}/${w.metadata.uid ?? ""}`),
  );
  const pools = new Set(snapshot.pools.map((p) => p.metadata.uid ?? ""));
  for (const w of snapshot.works) orphanWork(f, w, live.uids, pools);
  for (const r of snapshot.azure) {
    const owner = azureOwner(r);
    if (owner === undefined || owner === SERVICE_OWNER_ID || live.ids.has(owner)) continue;
    const cluster = r.tags[CLUSTER_TAG] ?? "";
    f.leftover(owner, `${r.type} ${r.id} of deleted ${cluster || owner}`);
  }
  for (const m of snapshot.management) orphanOnManagement(f, m, live.ids, { workNames, workOwners });
}

function orphanWork(f: Findings, w: ManifestWork, live: Set<string>, pools: Set<string>): void {
  const labels = w.metadata.labels ?? {};
  const owner = labels[WORK_LABELS.clusterUid];
  const pool = labels[WORK_LABELS.nodePool];
  if (w.metadata.deletionTimestamp) f.orphaned.push(`ManifestWork ${key(w)} held by a finalizer`);
  else if (!owner) f.orphaned.push(`ManifestWork ${key(w)} without an owner`);
  else if (!live.has(owner)) f.orphaned.push(`ManifestWork ${key(w)} of a deleted cluster`);
  else if (pool && !pools.has(pool)) f.orphaned.push(`ManifestWork ${key(w)} of a deleted NodePool`);
}

function orphanOnManagement(
  f: Findings,
  m: ManagementSnapshot,
  live: Set<string>,
  works: { workNames: Set<string>; workOwners: Map<string, string> },
): void {
  const owned = (namespace: string): boolean => {
    const owner = namespaceOwner(namespace);
    return owner === undefined || live.has(owner);
  };
  orphanNamespaces(f, m, owned);
  orphanHyperShift(f, m, owned);
  for (const a of m.applied) {
    const id = a.spec?.manifestWorkName ?? "";
    if (!works.workNames.has(`${m.name}/${id}`))
      f.leftover(
        works.workOwners.get(id),
        `${m.name} AppliedManifestWork ${a.metadata.name ?? ""} of a deleted work`,
      );
  }
}

function orphanNamespaces(f: Findings, m: ManagementSnapshot, owned: (namespace: string) => boolean): void {
  for (const n of m.namespaces) {
    const name = n.metadata.name ?? "";
    if (!owned(name)) f.leftover(namespaceOwner(name), `${m.name} namespace ${name} of a deleted cluster`);
    else if (n.metadata.deletionTimestamp && namespaceOwner(name))
      f.orphaned.push(`${m.name} namespace ${name} Terminating`);
  }
}

function orphanHyperShift(f: Findings, m: ManagementSnapshot, owned: (namespace: string) => boolean): void {
  for (const [kind, list] of [
    ["HostedCluster", m.hostedClusters],
    ["NodePool", m.nodePools],
  ] as const) {
    for (const o of list) {
      const namespace = o.metadata.namespace ?? "";
      if (!owned(namespace))
        f.leftover(namespaceOwner(namespace), `${m.name} ${kind} ${key(o)} of a deleted cluster`);
      else if (o.metadata.deletionTimestamp)
        f.orphaned.push(`${m.name} ${kind} ${key(o)} held by a finalizer`);
    }
  }
}
