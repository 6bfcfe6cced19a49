/**
 * What one HcpCluster reconcile works with: the dependencies (the world), the memory that outlives
 * a reconcile (user-error holds, placements not yet visible), and the scope the phases fill in.
 * Each scope field says which phase sets it; status.ts reads only `facts`.
 */
import {
  WORK_TEMPLATE_REVISION,
  type ExternalAuth,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
  originalUid,
} from "../api/v1alpha1/index.ts";
import type { CachedManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import { clusterNames, type RegionSettings } from "../api/v1alpha1/clusternames.ts";
import { isClusterWork } from "./wakes.ts";
import type { Release, ReleaseCatalog } from "../releases/catalog.ts";
import type { VersionPlan } from "../releases/plan.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import type { Logger } from "../runtime/logger.ts";
import type { ClusterInfraSpec, ClusterInfrastructure, IngressPlan, ParentZone } from "./infrastructure.ts";
import { ingressTypeOf } from "./networking.ts";
import type { ClusterOidc } from "./oidc.ts";
import type { DeletedClusterRecords } from "./soft-delete-records.ts";
import type { WorkWritten } from "./etcd-encryption.ts";
import type { ClusterFacts } from "./status.ts";
import type { RecheckBudget, UserErrorHold, VerifiedSteps } from "./holds.ts";

export { CLUSTER_UID_INDEX } from "../hcp/indexes.ts";
import { CLUSTER_UID_INDEX } from "../hcp/indexes.ts";

/** How soon to look again while an Azure operation runs. */
export const AZURE_POLL_MS = 5_000;
/** How soon to look again at a step only the user can fix (a quota raised out of band). */
export const USER_ACTION_RECHECK_MS = 300_000;
/** How often Azure resources found ready are read again to find drift (VerifiedSteps). */
export const INFRA_RECHECK_MS = 600_000;
/**
 * Rechecks per subscription: 5 steps a second (each one or two reads: at most 10 of the 25 reads a
 * second ARM refills), after a burst of 20 (four clusters' steps at once).
 */
export const INFRA_RECHECK_BUDGET = { perSecond: 5, burst: 20 };

export interface ClusterReconcilerDeps {
  /** Indexed by MANAGEMENT_CLUSTER_INDEX. */
  clusters: Lister<HcpCluster>;
  nodePools: Lister<NodePool>;
  externalAuths: Lister<ExternalAuth>;
  managementClusters: Lister<ManagementCluster>;
  /** ManifestWorks that carry a cluster label, indexed by CLUSTER_UID_INDEX. */
  works: Lister<CachedManifestWork>;
  /** The release catalog as it stands now. */
  releases: () => ReleaseCatalog;
  infra: ClusterInfrastructure;
  parentZone: ParentZone;
  region: RegionSettings;
  /** The issuers' base URL, signing keys and published documents. */
  oidc: ClusterOidc;
  writer: ObjectWriter;
  events: Pick<EventRecorder, "record">;
  /** How long a step that failed with a user error waits before it is tried again. Default 5 min. */
  userErrorRecheckMs?: number;
  /** How long an Azure step found ready is trusted without reading it again. Default 10 min. */
  infraRecheckMs?: number;
  /** Rechecks begun per second in one Azure subscription, after a burst (RecheckBudget). */
  infraRecheckBudget?: { perSecond: number; burst: number };
  /** The template revision works are built from (default WORK_TEMPLATE_REVISION; tests move it). */
  workTemplateRevision?: () => number;
  /**
   * Soft delete (soft-delete.ts): a deleted cluster's Azure resources, issuer and keyring are kept
   * for retentionMs, recorded in `records`. Unset (or 0): deletion removes everything at once.
   */
  softDelete?: { retentionMs: number; records: DeletedClusterRecords };
}

/** A placement made here, with the cluster it is for (to see when the informer shows it). */
export interface Reservation {
  managementCluster: string;
  namespace: string;
  name: string;
}

/** What the reconciler remembers between reconciles; every entry is dropped when its cluster goes. */
export interface ClusterMemory {
  /** Failures only the user can fix, not retried within the recheck interval. */
  holds: UserErrorHold;
  /**
   * uid → the ManagementCluster chosen, kept until the informer's copy of the cluster shows it in
   * its status (phases.ts placementLoad): the write returning is not enough, as the next
   * reconcile may still read the copy from before it.
   */
  reservations: Map<string, Reservation>;
  /** Azure steps found ready, trusted until their recheck. */
  verified: VerifiedSteps;
  /** When rechecks may begin, per subscription. */
  rechecks: RecheckBudget;
  /**
   * uid → the generation of the cluster's work this reconciler last wrote and the etcd keys it
   * recorded (etcd-encryption.ts). A cached work behind that is one the watch has not caught up
   * with: the key rotation, decided from what the work records, waits for it (applyWork).
   */
  worksWritten: Map<string, WorkWritten>;
}

export interface ClusterScope {
  deps: ClusterReconcilerDeps;
  memory: ClusterMemory;
  cluster: HcpCluster;
  /** Carries the ARM request IDs of the cluster, when the frontend set them. */
  log: Logger;
  facts: ClusterFacts;
  infraSpec: ClusterInfraSpec;
  /** The instant this reconcile judges ends of life at (milliseconds since the epoch). */
  now: number;
  /** Set by place: the chosen ManagementCluster's consumer name. */
  consumer?: string;
  /** Set by resolveRelease: the release the control plane is asked to run now (the plan's next). */
  release?: Release;
  /** Set by resolveRelease: where spec.version leads on the update graph. */
  plan?: VersionPlan;
  /** Set by resolveRelease: the event message of an upgrade it starts (version.ts upgradeStarted). */
  upgradeStarted?: string;
  /** Set by reconcileDnsZone: the zone's name servers, for the delegation. */
  nameServers?: string[];
  /** Set by reconcileIngress once the public IP has an address: the API's. */
  apiIp?: string;
  /** Set by reconcileIngress once the ingress has an address (never when Disabled). */
  ingressIp?: string;
  /** Set by reconcileOidcIssuer once the cluster's signing key is stored: the key (PEM). */
  signingKey?: string;
  /** Set by applyWork when it wrote the work in this reconcile (the informer lags behind). */
  appliedWork?: ManifestWorkObject;
}

export function newScope(
  base: Pick<ClusterScope, "deps" | "memory" | "log" | "now">,
  cluster: HcpCluster,
): ClusterScope {
  const names = clusterNames(cluster, base.deps.region);
  return {
    ...base,
    cluster,
    facts: { cluster, names, steps: {}, managementCluster: cluster.status?.managementCluster, azure: {} },
    infraSpec: infraSpecOf(cluster, names.zoneName),
  };
}

/** The cluster's Azure resources, named and tagged after its ID (a soft-deleted one's purge rebuilds it so). */
export function infraSpecOf(cluster: HcpCluster, zoneName: string): ClusterInfraSpec {
  const azure = cluster.spec.platform.azure;
  return {
    owner: originalUid(cluster),
    ownerName: `${cluster.metadata.namespace ?? ""}/${cluster.metadata.name ?? ""}`,
    subscriptionId: azure.subscriptionId,
    location: azure.location,
    managedResourceGroup: azure.managedResourceGroup,
    zoneName,
    delegationLabel: cluster.spec.dns.baseDomainPrefix,
    ingressName: `${cluster.spec.dns.baseDomainPrefix}-ingress`,
    ...publicAddressOf(cluster),
  };
}

/**
 * The public IP and the ingress plan. A Public ingress shares the public IP with the API, named for
 * the ingress as it always was; otherwise the IP is the API's alone and named for it.
 */
function publicAddressOf(cluster: HcpCluster): Pick<ClusterInfraSpec, "publicIpName" | "ingress"> {
  const prefix = cluster.spec.dns.baseDomainPrefix;
  const type = ingressTypeOf(cluster);
  if (type === "Public") return { publicIpName: `${prefix}-ingress-pip`, ingress: { type } };
  const ingress: IngressPlan =
    type === "Private" ? { type, subnetId: cluster.spec.platform.azure.subnetId } : { type };
  return { publicIpName: `${prefix}-api-pip`, ingress };
}

export function infraRecheckMs(scope: ClusterScope): number {
  return scope.deps.infraRecheckMs ?? INFRA_RECHECK_MS;
}

export function templateRevision(scope: ClusterScope): number {
  return scope.deps.workTemplateRevision?.() ?? WORK_TEMPLATE_REVISION;
}

export function recheckMs(scope: ClusterScope): number {
  return scope.deps.userErrorRecheckMs ?? USER_ACTION_RECHECK_MS;
}

/** The cluster's works: its own and its node pools'. */
export function worksOf(scope: ClusterScope): ManifestWorkObject[] {
  return scope.deps.works.byIndex(CLUSTER_UID_INDEX, scope.cluster.metadata.uid ?? "");
}

/** The cluster's own work (isClusterWork). */
export function clusterWork(scope: ClusterScope): ManifestWorkObject | undefined {
  return worksOf(scope).find(isClusterWork);
}

/** The cluster's ExternalAuths, deleting ones included. */
export function externalAuthsOf(scope: ClusterScope): ExternalAuth[] {
  const { cluster } = scope;
  return scope.deps.externalAuths
    .list(cluster.metadata.namespace)
    .filter((ea) => ea.spec.clusterRef.name === cluster.metadata.name);
}
