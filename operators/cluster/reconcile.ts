/**
 * Reconciles one HcpCluster: finalizer, then the phases in order (place, resolve the release,
 * provision Azure, apply the HostedCluster work, publish DNS records), observing the HostedCluster
 * through the work's feedback, and one status write at the end. Deletion runs the other way:
 * node pools, the HostedCluster (the agent confirms), Azure resources, then the finalizer.
 *
 * Every phase reads the world before it writes, so a crash at any line and a restart converge:
 * placement is recovered from an existing work, Azure resources are found by name and owner tag,
 * the work is applied server-side.
 */
import type { HcpCluster, ManagementCluster, NodePool } from "../api/v1alpha1/index.ts";
import { HcpClusterResource, NodePoolResource } from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import { compareVersions, type Release, type Resolution } from "../releases/catalog.ts";
import type { Applier } from "../runtime/apply.ts";
import { failpoint } from "../runtime/failpoints.ts";
import type { Condition } from "../runtime/conditions.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Informer } from "../runtime/informer.ts";
import type { Logger } from "../runtime/logger.ts";
import {
  clusterNames,
  feedbackOf,
  FEEDBACK,
  hostedClusterWork,
  LABELS,
  requestIdAnnotations,
  type RegionSettings,
} from "./hostedcluster.ts";
import type { ClusterInfraSpec, ClusterInfrastructure, InfraResult, ParentZone } from "./infrastructure.ts";
import { place } from "./placement.ts";
import {
  composeStatus,
  CONDITIONS,
  type ClusterFacts,
  type StepCondition,
  type HostedClusterReport,
  type StepState,
} from "./status.ts";

export const CLUSTER_FINALIZER = "hcp.aro.dev/cluster";
export const CLUSTER_UID_INDEX = "cluster-uid";

/** How soon to look again while an Azure operation runs. */
export const AZURE_POLL_MS = 5_000;
/** How soon to look again at a step only the user can fix (a quota raised out of band). */
export const USER_ACTION_RECHECK_MS = 300_000;

export interface ClusterReconcilerDeps {
  clusters: Informer<HcpCluster>;
  nodePools: Informer<NodePool>;
  managementClusters: Informer<ManagementCluster>;
  /** ManifestWorks that carry a cluster label, indexed by CLUSTER_UID_INDEX. */
  works: Informer<ManifestWork>;
  /** The release catalog as it stands now. */
  releases: () => { resolve(spec: HcpCluster["spec"]["version"]): Resolution };
  infra: ClusterInfrastructure;
  parentZone: ParentZone;
  region: RegionSettings;
  applier: Applier;
  events: EventRecorder;
  /** How long a step that failed with a user error waits before it is tried again. Default 5 min. */
  userErrorRecheckMs?: number;
}

/** Thrown after the status write so the queue retries with backoff. */
export class RetryableStepError extends Error {}

interface Scope {
  cluster: HcpCluster;
  /** Carries the ARM request IDs of the cluster, when the frontend set them. */
  log: Logger;
  facts: ClusterFacts;
  infraSpec: ClusterInfraSpec;
  /** Set by resolveRelease. */
  release?: Release;
  /** Set by applyWork when it wrote the work in this reconcile. */
  appliedWork?: ManifestWork;
  /** Set by ensureInfrastructure once the public IP has an address. */
  ingressIp?: string;
  requeueAfterMs?: number;
  retry?: string;
}

/** A step of the reconcile; false stops the ones after it. */
type Phase = (scope: Scope) => boolean | Promise<boolean>;

export class ClusterReconciler implements Reconciler {
  readonly #d: ClusterReconcilerDeps;
  /** uid/step → a failure only the user can fix, and when it was seen. */
  readonly #userErrors = new Map<string, { step: StepState; generation: number; at: number }>();
  /** uid → ManagementCluster chosen but maybe not yet visible in the informer's status. */
  readonly #reservations = new Map<string, string>();

  constructor(deps: ClusterReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const cluster = this.#d.clusters.get(req.namespace, req.name);
    if (!cluster?.metadata.uid) return {};
    const scope = this.#scope(cluster, requestLog(ctx, cluster));
    if (cluster.metadata.deletionTimestamp) return this.#reconcileDelete(scope);
    if (await this.#d.applier.addFinalizer(HcpClusterResource, cluster, CLUSTER_FINALIZER)) return {};
    try {
      const phases: Phase[] = [
        (s) => this.#place(s),
        (s) => this.#resolveRelease(s),
        (s) => this.#ensureInfrastructure(s),
        (s) => this.#applyWork(s),
      ];
      for (const phase of phases) if (!(await phase(scope))) break;
      this.#observeHostedCluster(scope);
      await this.#ensureRecords(scope);
    } finally {
      await this.#writeStatus(scope);
    }
    return this.#result(scope);
  }

  #scope(cluster: HcpCluster, log: Logger): Scope {
    const names = clusterNames(cluster, this.#d.region);
    const azure = cluster.spec.platform.azure;
    return {
      cluster,
      log,
      facts: { cluster, names, steps: {}, managementCluster: cluster.status?.managementCluster },
      infraSpec: {
        owner: cluster.metadata.uid ?? "",
        ownerName: `${cluster.metadata.namespace ?? ""}/${cluster.metadata.name ?? ""}`,
        subscriptionId: azure.subscriptionId,
        location: azure.location,
        managedResourceGroup: azure.managedResourceGroup,
        zoneName: names.zoneName,
        delegationLabel: cluster.spec.dns.baseDomainPrefix,
        ingressName: `${cluster.spec.dns.baseDomainPrefix}-ingress`,
      },
    };
  }

  #worksOf(cluster: HcpCluster): ManifestWork[] {
    return this.#d.works.byIndex(CLUSTER_UID_INDEX, cluster.metadata.uid ?? "");
  }

  /** The cluster's own work (node pool works carry the same uid label and a node pool label). */
  #clusterWork(cluster: HcpCluster): ManifestWork | undefined {
    return this.#worksOf(cluster).find((w) => !w.metadata.labels?.[LABELS.nodePool]);
  }

  // ---- phases ----------------------------------------------------------------------------

  /** Keeps a placement; recovers one from an existing work; otherwise places now. */
  async #place(scope: Scope): Promise<boolean> {
    const { cluster, facts } = scope;
    const uid = cluster.metadata.uid ?? "";
    const mcs = this.#d.managementClusters.list();
    const byConsumer = (consumer: string) => mcs.find((m) => m.spec.consumerName === consumer);
    const existing = this.#clusterWork(cluster);
    let chosen =
      cluster.status?.managementCluster ??
      (existing ? byConsumer(existing.metadata.namespace ?? "")?.metadata.name : undefined) ??
      this.#reservations.get(uid);
    if (!chosen) {
      const placement = place(mcs, this.#load(), cluster.spec.placement?.managementClusterSelector);
      if (!placement.placed) {
        facts.steps[CONDITIONS.Placed] = {
          state: "failed",
          reason: placement.reason,
          message: placement.message,
          userActionRequired: false,
        };
        return false;
      }
      chosen = placement.managementCluster.metadata.name ?? "";
      this.#reservations.set(uid, chosen);
      await this.#d.events.event(cluster, "Normal", "Placed", `Placed on ManagementCluster ${chosen}`);
    }
    facts.managementCluster = chosen;
    const mc = mcs.find((m) => m.metadata.name === chosen);
    if (!mc) {
      facts.steps[CONDITIONS.Placed] = {
        state: "pending",
        reason: "ManagementClusterMissing",
        message: `ManagementCluster ${chosen} the cluster is placed on does not exist (yet)`,
      };
      return false;
    }
    facts.steps[CONDITIONS.Placed] = { state: "ready", reason: "Placed", message: `Placed on ${chosen}` };
    return true;
  }

  /** Control planes per ManagementCluster, counting choices the informer may not show yet. */
  #load(): Map<string, number> {
    const load = new Map<string, number>();
    for (const c of this.#d.clusters.list()) {
      const mc = c.status?.managementCluster ?? this.#reservations.get(c.metadata.uid ?? "");
      if (mc) load.set(mc, (load.get(mc) ?? 0) + 1);
    }
    return load;
  }

  #resolveRelease(scope: Scope): boolean {
    const { cluster, facts } = scope;
    const resolution = this.#d.releases().resolve(cluster.spec.version);
    if (!resolution.ok) {
      facts.steps[CONDITIONS.ValidVersion] = {
        state: "failed",
        reason: resolution.reason,
        message: resolution.message,
        userActionRequired: resolution.reason === "UnknownVersion",
      };
      return false;
    }
    const running = cluster.status?.version;
    if (running && compareVersions(resolution.release.version, running) < 0) {
      facts.steps[CONDITIONS.ValidVersion] = {
        state: "failed",
        reason: "DowngradeRefused",
        message: `spec.version ${cluster.spec.version.id} resolves to ${resolution.release.version}, older than the running ${running}; OpenShift does not downgrade`,
        userActionRequired: true,
      };
      return false;
    }
    scope.release = resolution.release;
    facts.steps[CONDITIONS.ValidVersion] = {
      state: "ready",
      reason: "VersionResolved",
      message: `${cluster.spec.version.id} resolves to ${resolution.release.version} (${resolution.release.image})`,
    };
    return true;
  }

  async #ensureInfrastructure(scope: Scope): Promise<boolean> {
    const { facts, infraSpec, cluster } = scope;
    if (cluster.spec.paused) return true;
    const { infra, parentZone } = this.#d;
    if (!(await this.#step(scope, CONDITIONS.ResourceGroupReady, () => infra.ensureResourceGroup(infraSpec))))
      return false;
    const zone = await this.#step(scope, CONDITIONS.DnsZoneReady, () => infra.ensureDnsZone(infraSpec));
    if (!zone) return false;
    failpoint("cluster/after-dns-zone");
    if (facts.names.baseDomain.toLowerCase() !== parentZone.name.toLowerCase()) {
      return this.#record(scope, CONDITIONS.DnsDelegated, {
        state: "failed",
        reason: "UnknownBaseDomain",
        message: `spec.dns.baseDomain ${facts.names.baseDomain} is not a zone of this region; use ${parentZone.name} or leave it empty`,
        userActionRequired: true,
      });
    }
    const nameServers = zone.nameServers ?? [];
    if (
      !(await this.#step(scope, CONDITIONS.DnsDelegated, () =>
        infra.ensureDelegation(infraSpec, nameServers),
      ))
    )
      return false;
    const ingress = await this.#step(scope, CONDITIONS.IngressReady, () => infra.ensureIngress(infraSpec));
    scope.ingressIp = ingress?.ingressIp;
    return ingress !== undefined;
  }

  /**
   * Runs one Azure step unless it failed with an error only the user can fix, for this
   * generation, less than the recheck interval ago: then the failure stands without another call,
   * so that status events cannot turn a quota error into a stream of requests. Resolves the
   * step's result when it is ready.
   */
  async #step<R extends InfraResult>(
    scope: Scope,
    type: StepCondition,
    call: () => Promise<R>,
  ): Promise<R | undefined> {
    const key = `${scope.cluster.metadata.uid ?? ""}/${type}`;
    const generation = scope.cluster.metadata.generation ?? 0;
    const held = this.#userErrors.get(key);
    if (held && held.generation === generation && Date.now() - held.at < this.#recheckMs) {
      this.#record(scope, type, held.step);
      return undefined;
    }
    const result = await call();
    if (result.step.state === "failed" && result.step.userActionRequired)
      this.#userErrors.set(key, { step: result.step, generation, at: Date.now() });
    else this.#userErrors.delete(key);
    return this.#record(scope, type, result.step) ? result : undefined;
  }

  get #recheckMs(): number {
    return this.#d.userErrorRecheckMs ?? USER_ACTION_RECHECK_MS;
  }

  /** Records a step; true when it is ready and the next one may run. */
  #record(scope: Scope, type: StepCondition, step: StepState): boolean {
    scope.facts.steps[type] = step;
    if (step.state === "pending") {
      const after = step.retryAfterMs ?? AZURE_POLL_MS;
      scope.requeueAfterMs = Math.min(scope.requeueAfterMs ?? after, after);
    }
    if (step.state === "failed") {
      if (step.userActionRequired)
        scope.requeueAfterMs = Math.min(scope.requeueAfterMs ?? this.#recheckMs, this.#recheckMs);
      else scope.retry = `${type}: ${step.message}`;
    }
    return step.state === "ready";
  }

  async #applyWork(scope: Scope): Promise<boolean> {
    const { cluster, facts, release } = scope;
    const consumer = this.#d.managementClusters
      .list()
      .find((m) => m.metadata.name === facts.managementCluster)?.spec.consumerName;
    if (!release || !consumer) return false;
    const desired = hostedClusterWork(cluster, facts.names, release, this.#d.region, consumer);
    const current = this.#clusterWork(cluster);
    if (cluster.spec.paused && current) return true;
    // The informer has not seen a write yet; observe what was written (its new generation).
    scope.appliedWork = await this.#d.applier.applyIfChanged<ManifestWork>(
      ManifestWorkResource,
      desired,
      current,
    );
    if (scope.appliedWork) {
      scope.log.info("Applied the HostedCluster ManifestWork", {
        work: `${consumer}/${facts.names.workName}`,
      });
      if (!current)
        await this.#d.events.event(
          cluster,
          "Normal",
          "HostedClusterCreated",
          `ManifestWork ${consumer}/${facts.names.workName} created`,
        );
    }
    return true;
  }

  /** Turns the work's status and the HostedCluster's feedback into steps. */
  #observeHostedCluster(scope: Scope): void {
    const { cluster, facts } = scope;
    const work = scope.appliedWork ?? this.#clusterWork(cluster);
    if (!work) return;
    facts.steps[CONDITIONS.HostedClusterApplied] = workApplied(work);
    const fb = feedbackOf(work, { kind: "HostedCluster", name: facts.names.hostedClusterName });
    const report = hostedReport(fb);
    // The release was applied but HyperShift has not started on it yet: that is an upgrade too.
    const wanted = scope.release?.version;
    if (wanted && !report.updatingTo && report.completedVersion && report.completedVersion !== wanted)
      report.updatingTo = wanted;
    facts.hosted = report;
    const available = report.conditions.find((c) => c.type === "Available");
    facts.steps[CONDITIONS.HostedClusterAvailable] =
      available?.status === "True"
        ? {
            state: "ready",
            reason: "Available",
            message: available.message || "The HostedCluster is available",
          }
        : {
            state: "pending",
            reason: available ? `HostedCluster${available.reason}` : "WaitingForHostedCluster",
            message: available?.message || "Waiting for the HostedCluster to report its conditions",
          };
  }

  async #ensureRecords(scope: Scope): Promise<void> {
    const { facts, infraSpec, cluster } = scope;
    if (cluster.spec.paused || facts.steps[CONDITIONS.IngressReady]?.state !== "ready") return;
    if (!facts.hosted?.endpoint || !scope.ingressIp) {
      facts.steps[CONDITIONS.DnsRecordsReady] = {
        state: "pending",
        reason: "WaitingForEndpoint",
        message: "The api and *.apps records are written once the HostedCluster reports its endpoint",
      };
      return;
    }
    this.#record(
      scope,
      CONDITIONS.DnsRecordsReady,
      (await this.#d.infra.ensureRecords(infraSpec, scope.ingressIp)).step,
    );
  }

  // ---- deletion --------------------------------------------------------------------------

  async #reconcileDelete(scope: Scope): Promise<Result> {
    const { cluster, facts } = scope;
    if (!cluster.metadata.finalizers?.includes(CLUSTER_FINALIZER)) return {};
    try {
      const steps: Phase[] = [
        (s) => this.#deleteNodePools(s),
        (s) => this.#deleteWorks(s),
        (s) => this.#deleteInfrastructure(s),
      ];
      for (const step of steps) if (!(await step(scope))) return this.#result(scope);
      await this.#d.applier.removeFinalizer(HcpClusterResource, cluster, CLUSTER_FINALIZER);
      this.#reservations.delete(cluster.metadata.uid ?? "");
      await this.#d.events.event(
        cluster,
        "Normal",
        "Deleted",
        "Node pools, HostedCluster and Azure resources are gone",
      );
      facts.deleting = undefined;
      return {};
    } finally {
      if (facts.deleting) await this.#writeStatus(scope);
    }
  }

  /** Node pools go first: their works reference the HostedCluster. */
  async #deleteNodePools(scope: Scope): Promise<boolean> {
    const { cluster } = scope;
    const pools = this.#d.nodePools
      .list(cluster.metadata.namespace)
      .filter((p) => p.spec.clusterRef.name === cluster.metadata.name);
    if (pools.length === 0) return true;
    for (const p of pools.filter((p) => !p.metadata.deletionTimestamp))
      await this.#d.applier.client.delete(NodePoolResource, {
        name: p.metadata.name ?? "",
        namespace: p.metadata.namespace,
      });
    scope.facts.deleting = {
      reason: "DeletingNodePools",
      message: `Waiting for ${pools.length} node pool(s) to be deleted: ${pools.map((p) => p.metadata.name).join(", ")}`,
    };
    return false;
  }

  /** The works go next; maestro-server holds each until the agent confirms Deleted. */
  async #deleteWorks(scope: Scope): Promise<boolean> {
    const works = this.#worksOf(scope.cluster);
    if (works.length === 0) return true;
    for (const w of works.filter((w) => !w.metadata.deletionTimestamp)) {
      const ref = { name: w.metadata.name ?? "", namespace: w.metadata.namespace };
      await this.#d.applier.client.delete(ManifestWorkResource, ref);
      this.#d.applier.forget(ManifestWorkResource, ref);
    }
    scope.facts.deleting = {
      reason: "DeletingHostedCluster",
      message: `Waiting for the agent of ${works[0]?.metadata.namespace ?? ""} to confirm the HostedCluster is deleted`,
    };
    return false;
  }

  async #deleteInfrastructure(scope: Scope): Promise<boolean> {
    const { step } = await this.#d.infra.deleteAll(scope.infraSpec);
    if (step.state === "ready") return true;
    scope.facts.deleting = { reason: "DeletingAzureResources", message: step.message };
    if (step.state === "pending") scope.requeueAfterMs = step.retryAfterMs ?? AZURE_POLL_MS;
    else if (step.userActionRequired) scope.requeueAfterMs = this.#recheckMs;
    else scope.retry = step.message;
    return false;
  }

  // ---- status ----------------------------------------------------------------------------

  async #writeStatus(scope: Scope): Promise<void> {
    const { cluster } = scope;
    const status = composeStatus(scope.facts);
    const written = await this.#d.applier.applyStatus(HcpClusterResource, cluster, status);
    if (!written) return;
    this.#reservations.delete(cluster.metadata.uid ?? "");
    await this.#recordTransitions(cluster, cluster.status?.conditions ?? [], status.conditions ?? []);
  }

  /**
   * One event per condition that changed status or reason: the transitions an SRE wants to see.
   * A condition's first appearance is news only when it is good, or when Degraded is True.
   */
  async #recordTransitions(cluster: HcpCluster, before: Condition[], after: Condition[]): Promise<void> {
    for (const c of after) {
      const old = before.find((b) => b.type === c.type);
      const degraded = c.type === CONDITIONS.Degraded;
      const news = old
        ? old.status !== c.status || old.reason !== c.reason
        : degraded
          ? c.status === "True"
          : c.status === "True";
      if (!news) continue;
      const bad = degraded ? c.status === "True" : c.status !== "True";
      await this.#d.events.event(
        cluster,
        degraded && bad ? "Warning" : "Normal",
        bad ? c.reason : c.type,
        c.message,
      );
    }
  }

  #result(scope: Scope): Result {
    if (scope.retry) throw new RetryableStepError(scope.retry);
    return scope.requeueAfterMs ? { requeueAfterMs: scope.requeueAfterMs } : {};
  }
}

/** The work as a step: published and applied at the current generation, or why not. */
function workApplied(work: ManifestWork): StepState {
  const conditions = work.status?.conditions ?? [];
  const published = conditions.find((c) => c.type === "Published");
  if (published?.status === "False")
    return {
      state: "failed",
      reason: published.reason,
      message: published.message,
      userActionRequired: true,
    };
  const applied = conditions.find((c) => c.type === "Applied");
  const generation = work.metadata.generation;
  if (applied?.status === "True" && applied.observedGeneration === generation)
    return { state: "ready", reason: "Applied", message: `Applied on ${work.metadata.namespace ?? ""}` };
  if (applied?.status === "False")
    return { state: "pending", reason: applied.reason, message: applied.message };
  return {
    state: "pending",
    reason: published?.reason === "BrokerNotConnected" ? "BrokerNotConnected" : "WaitingForAgent",
    message:
      published?.message ??
      `Waiting for the agent of ${work.metadata.namespace ?? ""} to apply generation ${generation ?? 0}`,
  };
}

/** Parses the HostedCluster feedback defensively: the agent sends what it read, or nothing. */
export function hostedReport(fb: Record<string, unknown>): HostedClusterReport {
  const conditions = [FEEDBACK.available, FEEDBACK.progressing, FEEDBACK.degraded]
    .map((name) => fb[name])
    .filter(
      (c): c is Condition => typeof c === "object" && c !== null && typeof (c as Condition).type === "string",
    );
  const latest = fb[FEEDBACK.latestUpdate] as { state?: unknown; version?: unknown } | undefined;
  const completed = fb[FEEDBACK.completedVersion];
  const host = fb[FEEDBACK.endpointHost];
  const port = fb[FEEDBACK.endpointPort];
  return {
    conditions,
    completedVersion: typeof completed === "string" && completed ? completed : undefined,
    updatingTo:
      latest?.state === "Partial" && typeof latest.version === "string" ? latest.version : undefined,
    endpoint: typeof host === "string" && host && typeof port === "number" ? { host, port } : undefined,
  };
}

/** The reconcile's logger with the ARM request IDs the object carries, so one request can be traced. */
export function requestLog(
  ctx: ReconcileContext,
  obj: { metadata: { annotations?: Record<string, string> } },
): Logger {
  const ids = requestIdAnnotations(obj);
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(ids)) fields[key.replace("hcp.aro.dev/", "")] = value;
  return Object.keys(fields).length > 0 ? ctx.log.child(fields) : ctx.log;
}
