/**
 * The cluster controller: HcpClusters of the service cluster, from apply to Ready and back to
 * nothing. Wiring only: informers for the clusters and everything that decides their state (node
 * pools, management clusters, the cluster's ManifestWorks, the release catalog) feed one
 * controller whose reconciler is in reconcile.ts.
 */
import { isDeepStrictEqual } from "node:util";
import type { Gauge } from "prom-client";
import {
  ExternalAuthResource,
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  type ExternalAuth,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, summariseWorkSpec } from "../api/work/v1.ts";
import { CATALOG_CONFIGMAP, catalogSource } from "../releases/catalog.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { Controller } from "../runtime/controller.ts";
import { EventRecorder } from "../runtime/events.ts";
import type { Informer } from "../runtime/informer.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { gauge, metricsRegistry } from "../runtime/metrics.ts";
import { enqueueForObject, enqueueMapped } from "../runtime/source.ts";
import type { RegionSettings } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { staleness } from "../hcp/staleness.ts";
import type { ClusterInfrastructure, ParentZone } from "./infrastructure.ts";
import { SecretSigningKeys, type ClusterOidc } from "./oidc.ts";
import { SigningKeyRotation, type SigningKeyRotationOptions } from "./signing-key-rotation.ts";
import { mayMakeRoom } from "./placement.ts";
import { ClusterReconciler } from "./reconcile.ts";
import { ClusterRetainedResources } from "./soft-delete.ts";
import { ConfigMapDeletedClusterRecords } from "./soft-delete-records.ts";
import type { RecheckBudget } from "./holds.ts";
import { poolChangeWakesCluster, workChangeWakesCluster } from "./wakes.ts";
import {
  CLUSTER_UID_INDEX,
  MANAGEMENT_CLUSTER_INDEX,
  byClusterUid,
  byManagementCluster,
} from "../hcp/indexes.ts";

export const CLUSTER_CONTROLLER = "cluster-controller";

export interface ClusterControllerOptions {
  /** The service cluster. */
  cluster: Cluster;
  /** The operators' namespace: where the release catalog ConfigMap lives. */
  namespace: string;
  region: RegionSettings;
  parentZone: ParentZone;
  infra: ClusterInfrastructure;
  /**
   * The issuers: their common base URL and where their documents are published. Signing keys are
   * kept as Secrets in `namespace`.
   */
  oidc: Pick<ClusterOidc, "issuerBaseURL" | "documents">;
  /**
   * Default 16: a reconcile mostly waits on ARM and the apiserver, so few workers keep new
   * clusters queued (docs/decisions/0008).
   */
  workers?: number;
  /** How long a step that failed with a user error (quota, permissions) waits before it is tried again. Default 5 min. */
  userErrorRecheckMs?: number;
  /** How long a rotated-out signing key still verifies (signing-key-rotation.ts has the defaults and why). */
  signingKeys?: Pick<SigningKeyRotationOptions, "maxTokenLifetimeMs" | "rolloutAllowanceMs">;
  /** The template revision works are built from (default WORK_TEMPLATE_REVISION; tests move it). */
  workTemplateRevision?: () => number;
  /**
   * How long a deleted cluster's Azure resources, OIDC issuer and signing keys are kept for an
   * undelete (soft-delete.ts; records in `namespace`). Default 0: deletion removes them at once.
   */
  softDeleteRetentionMs?: number;
  log?: Logger;
}

/** Live controllers, read by the phase gauge at scrape time. */
const live = new Set<Informer<HcpCluster>>();
let phases: Gauge<"phase"> | undefined;
/** Live reconcilers' recheck budgets, read by the backlog gauge at scrape time. */
const budgets = new Set<RecheckBudget>();
let backlog: Gauge | undefined;

function registerBacklogGauge(): void {
  backlog ??= gauge(metricsRegistry, {
    name: "hcp_cluster_azure_recheck_backlog_seconds",
    help: "How long a recheck of a ready Azure step due now would wait for its subscription's read budget (the busiest subscription)",
    collect() {
      let most = 0;
      for (const b of budgets) most = Math.max(most, b.backlogMs());
      this.set(most / 1000);
    },
  });
}

function registerPhaseGauge(): void {
  phases ??= gauge(metricsRegistry, {
    name: "hcp_clusters",
    help: "HcpClusters by phase",
    labelNames: ["phase"],
    collect() {
      this.reset();
      for (const informer of live)
        for (const c of informer.list()) this.inc({ phase: c.status?.phase ?? "Pending" });
    },
  });
}

export class ClusterController implements Runnable {
  readonly needLeaderElection = true;
  readonly #clusters: Informer<HcpCluster>;
  readonly #controller: Controller;
  readonly #reconciler: ClusterReconciler;
  readonly #keys: SecretSigningKeys;
  /**
   * The signing-key rotation's steps on this controller's key store, so that the keyrings it
   * reconciles from are the ones the steps wrote; each change wakes the cluster to publish it.
   */
  readonly signingKeyRotation: SigningKeyRotation;
  /** What a soft-deleted cluster kept, purged through this controller's Azure client and key store. */
  readonly retainedResources: ClusterRetainedResources;
  readonly #log: Logger;
  readonly #informers: Informer<KubeObject>[];

  constructor(opts: ClusterControllerOptions) {
    const log = (opts.log ?? silentLogger).child({ component: CLUSTER_CONTROLLER });
    const { cluster } = opts;
    this.#clusters = cluster.informer<HcpCluster>(HcpClusterResource, {
      indexers: { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster },
    });
    const nodePools = cluster.informer<NodePool>(NodePoolResource);
    const externalAuths = cluster.informer<ExternalAuth>(ExternalAuthResource);
    const managementClusters = cluster.informer<ManagementCluster>(ManagementClusterResource);
    // The one ManifestWork informer of the process (maestro-server and node pools share it): a
    // label selector here would cache every work a second time.
    const works = cluster.informer(ManifestWorkResource, {
      transform: summariseWorkSpec,
      indexers: { [CLUSTER_UID_INDEX]: byClusterUid },
    });
    const catalog = catalogSource(cluster, opts.namespace);
    const client = cluster.client;
    this.#keys = new SecretSigningKeys(client, opts.namespace);
    this.#log = log;
    this.signingKeyRotation = new SigningKeyRotation({
      ...opts.signingKeys,
      keys: this.#keys,
      documents: opts.oidc.documents,
      wake: (c) =>
        this.#controller.enqueue({
          cluster: cluster.name,
          namespace: c.metadata.namespace ?? "",
          name: c.metadata.name ?? "",
        }),
    });
    this.#reconciler = new ClusterReconciler({
      clusters: this.#clusters,
      nodePools,
      externalAuths,
      managementClusters,
      works,
      releases: () => catalog.current(),
      infra: opts.infra,
      parentZone: opts.parentZone,
      region: opts.region,
      oidc: { ...opts.oidc, keys: this.#keys },
      writer: new Applier(client, CLUSTER_CONTROLLER),
      events: new EventRecorder(client, CLUSTER_CONTROLLER, log),
      userErrorRecheckMs: opts.userErrorRecheckMs,
      workTemplateRevision: opts.workTemplateRevision,
      softDelete: {
        retentionMs: opts.softDeleteRetentionMs ?? 0,
        records: new ConfigMapDeletedClusterRecords(client, opts.namespace, CLUSTER_CONTROLLER),
      },
    });
    this.retainedResources = new ClusterRetainedResources({
      infra: opts.infra,
      oidc: { documents: opts.oidc.documents, keys: this.#keys },
      region: opts.region,
    });
    this.#controller = new Controller({
      name: CLUSTER_CONTROLLER,
      maxConcurrentReconciles: opts.workers ?? 16,
      log,
      reconciler: this.#reconciler,
    });
    const req = (namespace: string | undefined, name: string | undefined) => ({
      cluster: cluster.name,
      namespace: namespace ?? "",
      name: name ?? "",
    });
    enqueueForObject(this.#clusters, this.#controller);
    enqueueMapped(
      nodePools,
      this.#controller,
      (p) => [req(p.metadata.namespace, p.spec.clusterRef.name)],
      poolChangeWakesCluster,
    );
    // What the HostedCluster carries of an ExternalAuth: its spec (generation) and whether it is
    // going; its own status writes wake no cluster.
    enqueueMapped(
      externalAuths,
      this.#controller,
      (ea) => [req(ea.metadata.namespace, ea.spec.clusterRef.name)],
      (before, after) =>
        before.metadata.generation !== after.metadata.generation ||
        before.metadata.deletionTimestamp !== after.metadata.deletionTimestamp,
    );
    enqueueMapped(
      works,
      this.#controller,
      (w) => {
        const labels = w.metadata.labels ?? {};
        const name = labels[WORK_LABELS.clusterName];
        return name ? [req(labels[WORK_LABELS.clusterNamespace], name)] : [];
      },
      workChangeWakesCluster,
    );
    // Room on a management cluster or a new release: every cluster still waiting may go on.
    const all = () => this.#clusters.list().map((c) => req(c.metadata.namespace, c.metadata.name));
    const unplaced = () =>
      this.#clusters
        .byIndex(MANAGEMENT_CLUSTER_INDEX, "")
        .map((c) => req(c.metadata.namespace, c.metadata.name));
    // Only a change that can make room: each placement rewrites a management cluster's load, and
    // waking every waiting cluster for each would make a create of N clusters cost N² enqueues.
    enqueueMapped(managementClusters, this.#controller, unplaced, mayMakeRoom);
    // A management cluster's agent lost or back: the clusters placed there show it (hcp/staleness.ts).
    enqueueMapped(
      managementClusters,
      this.#controller,
      (mc) =>
        this.#clusters
          .byIndex(MANAGEMENT_CLUSTER_INDEX, mc.metadata.name ?? "")
          .map((c) => req(c.metadata.namespace, c.metadata.name)),
      (before, after) => !isDeepStrictEqual(staleness(before), staleness(after)),
    );
    enqueueMapped(catalog.informer, this.#controller, (cm) =>
      cm.metadata.name === CATALOG_CONFIGMAP ? all() : [],
    );
    this.#informers = [
      this.#clusters,
      nodePools,
      externalAuths,
      managementClusters,
      works,
      catalog.informer,
    ] as Informer<KubeObject>[];
    registerPhaseGauge();
    registerBacklogGauge();
  }

  /** One list of the signing keys before the first reconcile; failing that, each cluster reads its own. */
  async #primeKeys(signal: AbortSignal): Promise<void> {
    try {
      const keys = await this.#keys.prime({ signal });
      this.#log.info("Read the clusters' signing keys", { keys });
    } catch (err) {
      if (signal.aborted) throw err;
      this.#log.error("Could not list the signing keys; each cluster reads its own", err);
    }
  }

  async start(signal: AbortSignal): Promise<void> {
    live.add(this.#clusters);
    budgets.add(this.#reconciler.memory.rechecks);
    try {
      await Promise.all(this.#informers.map((i) => i.waitForSync(signal)));
      await this.#primeKeys(signal);
      await this.#controller.start(signal);
    } finally {
      live.delete(this.#clusters);
      budgets.delete(this.#reconciler.memory.rechecks);
    }
  }
}
