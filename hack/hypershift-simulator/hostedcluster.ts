/**
 * Reconciles one HostedCluster the way the HyperShift operator appears to from outside: its
 * finalizer first, the control-plane namespace, once the control plane is "up" the admin
 * kubeconfig Secret, and one status write (status.ts). Deletion removes the NodePools, waits
 * `deleteDelayMs`, deletes the control-plane namespace, waits for it to be gone, and only then
 * releases the finalizer.
 */
import {
  ADMIN_KUBECONFIG_KEY,
  HOSTED_CLUSTER_KIND,
  HYPERSHIFT_API_VERSION,
  HYPERSHIFT_FINALIZER,
  HostedClusterResource,
  NodePoolResource,
  adminKubeconfigSecretName,
  controlPlaneNamespaceName,
  type HostedCluster,
  type HostedClusterStatus,
  type NodePool,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import type { Applier } from "../../operators/runtime/apply.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../../operators/runtime/controller.ts";
import type { EventRecorder } from "../../operators/runtime/events.ts";
import { isNotFound } from "../../operators/runtime/errors.ts";
import type { Informer, Lister } from "../../operators/runtime/informer.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { hostedClusterTransitions, type Transition } from "./events.ts";
import { NamespaceResource, SecretResource } from "../../operators/api/core.ts";
import type { SimulatorMetrics } from "./metrics.ts";
import { failureOf } from "./release.ts";
import { computeHostedClusterStatus } from "./status.ts";
import { azureKMS, ENCRYPTION_CONFIG_SECRET, MIGRATED_KEY_HASH_ANNOTATION } from "./etcd-encryption.ts";
import { ensureRootCA } from "./signer.ts";

export const namespaceType = NamespaceResource;

export const secretType = SecretResource;

/** HyperShift's marks on a control-plane namespace: what it is, and whose. */
export const CONTROL_PLANE_LABEL = "hypershift.openshift.io/hosted-control-plane";
export const CLUSTER_ANNOTATION = "hypershift.openshift.io/cluster";

/** How often to look for a control-plane namespace the informer does not see (it lacks our label). */
const NAMESPACE_POLL_MS = 1_000;

export interface HostedClusterReconcilerDeps {
  /** The management cluster's name (metrics label). */
  cluster: string;
  hostedClusters: Informer<HostedCluster>;
  nodePools: Informer<NodePool>;
  /** Control-plane namespaces (label CONTROL_PLANE_LABEL). */
  namespaces: Informer;
  /** The cluster's Secrets, metadata at least (secret-cache.ts): HyperShift reads them from its cache. */
  secrets: Lister<KubeObject>;
  applier: Applier;
  events: EventRecorder;
  metrics: SimulatorMetrics;
  provisionDelayMs: number;
  deleteDelayMs: number;
}

/** The NodePools of a HostedCluster: same namespace, spec.clusterName = its name. */
export function nodePoolsOf(nodePools: Informer<NodePool>, hc: HostedCluster): NodePool[] {
  return nodePools.list(hc.metadata.namespace).filter((np) => np.spec.clusterName === hc.metadata.name);
}

function controlPlaneNamespaceOf(hc: HostedCluster): string {
  return controlPlaneNamespaceName(hc.metadata.namespace ?? "", hc.metadata.name ?? "");
}

/**
 * A kubeconfig for the simulated API server; it points at the published endpoint, trusts the
 * control plane's root CA as HyperShift's does, and holds no real credential.
 */
function adminKubeconfig(hc: HostedCluster, status: HostedClusterStatus, rootCA: string): string {
  const endpoint = status.controlPlaneEndpoint;
  const name = hc.metadata.name ?? "cluster";
  const server = `https://${endpoint?.host ?? ""}:${endpoint?.port ?? 443}`;
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name, cluster: { server, "certificate-authority-data": Buffer.from(rootCA).toString("base64") } },
    ],
    users: [{ name: "admin", user: { token: "simulated" } }],
    contexts: [{ name: "admin", context: { cluster: name, user: "admin" } }],
    "current-context": "admin",
  });
}

export class HostedClusterReconciler implements Reconciler {
  readonly #d: HostedClusterReconcilerDeps;

  /** UIDs of HostedClusters whose admin kubeconfig exists: its root CA is not made again. */
  readonly #kubeconfigMade = new Set<string>();

  /**
   * The key hash this process recorded per HostedCluster (by uid) until the cache shows it: a
   * status computed from a cache behind that write would start the re-encryption over.
   */
  readonly #recordedKeyHash = new Map<string, string>();

  constructor(deps: HostedClusterReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    try {
      return await this.#reconcile(ctx, req);
    } catch (err) {
      // Deleted under us (the cache lags behind a finalizer we just released): nothing left to do.
      if (isNotFound(err)) return {};
      throw err;
    }
  }

  async #reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const hc = this.#d.hostedClusters.get(req.namespace, req.name);
    if (!hc) return {};
    if (hc.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, hc);
    // Finalizer first, so a deletion racing the creation still finds it; the update wakes us again.
    if (await this.#d.applier.addFinalizer(HostedClusterResource, hc, HYPERSHIFT_FINALIZER)) return {};
    if (!(await this.#reconcileNamespace(ctx, hc))) return {};
    const outcome = computeHostedClusterStatus(hc, {
      now: new Date(),
      provisionDelayMs: this.#d.provisionDelayMs,
      failure: failureOf(hc.metadata.annotations),
      migratedKeyHash: azureKMS(hc) ? this.#migratedKeyHash(hc) : undefined,
    });
    // The key the data is under is recorded before the status says so: a crash in between
    // re-encrypts nothing twice.
    if (outcome.migratedKeyHash) await this.#recordMigratedKeyHash(ctx, hc, outcome.migratedKeyHash);
    if (outcome.status.kubeconfig) await this.#reconcileKubeconfig(ctx, hc, outcome.status);
    await this.#writeStatus(hc, outcome.status);
    return outcome.requeueAfterMs === undefined ? {} : { requeueAfterMs: outcome.requeueAfterMs };
  }

  /**
   * Creates the control-plane namespace if missing. False while a namespace of that name is
   * still terminating (an earlier HostedCluster of the same name); its deletion wakes us.
   */
  async #reconcileNamespace(ctx: ReconcileContext, hc: HostedCluster): Promise<boolean> {
    const name = controlPlaneNamespaceOf(hc);
    const existing = this.#d.namespaces.get("", name);
    if (existing?.metadata.deletionTimestamp) {
      ctx.log.info("Waiting for the previous control-plane namespace to go", { Namespace: name });
      return false;
    }
    if (existing) return true;
    ctx.log.info("Creating the control-plane namespace", { Namespace: name });
    const marks = {
      labels: { [CONTROL_PLANE_LABEL]: "true" },
      annotations: { [CLUSTER_ANNOTATION]: `${hc.metadata.namespace ?? ""}/${hc.metadata.name ?? ""}` },
    };
    // Absent from the informer may still exist: it has not seen our earlier create yet, or someone
    // made it first without our marks (a work's Swift objects live there), which HyperShift's
    // create-or-update adds.
    const client = this.#d.applier.client;
    if (!(await client.createIfAbsent(namespaceType, { metadata: { name, ...marks } })))
      await client.mergePatch(namespaceType, { name }, { metadata: marks });
    return true;
  }

  /**
   * The control plane's root CA (the ConfigMap root-ca in its namespace) and the admin kubeconfig
   * Secret that trusts it, owned by the HostedCluster as HyperShift's is.
   */
  async #reconcileKubeconfig(
    ctx: ReconcileContext,
    hc: HostedCluster,
    status: HostedClusterStatus,
  ): Promise<void> {
    const client = this.#d.applier.client;
    const name = adminKubeconfigSecretName(hc.metadata.name ?? "");
    const namespace = hc.metadata.namespace;
    const uid = hc.metadata.uid ?? "";
    if (this.#kubeconfigMade.has(uid)) return;
    const rootCA = (await ensureRootCA(client, controlPlaneNamespaceOf(hc))).certificate;
    if (this.#d.secrets.get(namespace ?? "", name)) {
      this.#kubeconfigMade.add(uid);
      return;
    }
    ctx.log.info("Creating the admin kubeconfig", { Secret: name });
    const secret: KubeObject = {
      metadata: {
        name,
        namespace,
        ownerReferences: [
          {
            apiVersion: HYPERSHIFT_API_VERSION,
            kind: HOSTED_CLUSTER_KIND,
            name: hc.metadata.name ?? "",
            uid: hc.metadata.uid ?? "",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      type: "Opaque",
      stringData: { [ADMIN_KUBECONFIG_KEY]: adminKubeconfig(hc, status, rootCA) },
    };
    // Absent from the cache may still exist (the cache is behind): created if absent.
    await client.createIfAbsent(secretType, secret);
    this.#kubeconfigMade.add(uid);
  }

  /** The fingerprint of the key all etcd data is encrypted with, from the control plane's Secret. */
  #migratedKeyHash(hc: HostedCluster): string | undefined {
    const secret = this.#d.secrets.get(controlPlaneNamespaceOf(hc), ENCRYPTION_CONFIG_SECRET);
    const cached = secret?.metadata.annotations?.[MIGRATED_KEY_HASH_ANNOTATION];
    const uid = hc.metadata.uid ?? "";
    const recorded = this.#recordedKeyHash.get(uid);
    if (recorded === undefined || recorded === cached) {
      this.#recordedKeyHash.delete(uid);
      return cached;
    }
    return recorded;
  }

  async #recordMigratedKeyHash(ctx: ReconcileContext, hc: HostedCluster, hash: string): Promise<void> {
    const namespace = controlPlaneNamespaceOf(hc);
    ctx.log.info("Recording the key etcd data is encrypted with", {
      Secret: ENCRYPTION_CONFIG_SECRET,
      Namespace: namespace,
    });
    const secret: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: ENCRYPTION_CONFIG_SECRET,
        namespace,
        annotations: { [MIGRATED_KEY_HASH_ANNOTATION]: hash },
      },
      type: "Opaque",
    };
    await this.#d.applier.apply(secretType, secret, { signal: ctx.signal });
    this.#recordedKeyHash.set(hc.metadata.uid ?? "", hash);
  }

  /** Deletes the control-plane namespace unless it is going already; true while it still exists. */
  async #controlPlaneNamespaceRemains(ctx: ReconcileContext, hc: HostedCluster): Promise<boolean> {
    const name = controlPlaneNamespaceOf(hc);
    const client = this.#d.applier.client;
    const namespace = this.#d.namespaces.get("", name) ?? (await client.find(namespaceType, name));
    if (!namespace) return false;
    if (!namespace.metadata.deletionTimestamp) {
      ctx.log.info("Deleting the control-plane namespace", { Namespace: name });
      await client.delete(namespaceType, { name });
    }
    return true;
  }

  /** What this process remembers of a HostedCluster that is gone. */
  #forget(uid: string | undefined): void {
    this.#kubeconfigMade.delete(uid ?? "");
    this.#recordedKeyHash.delete(uid ?? "");
  }

  async #writeStatus(hc: HostedCluster, status: HostedClusterStatus): Promise<void> {
    const written = await this.#d.applier.applyStatus(HostedClusterResource, hc, status);
    if (!written) return;
    await this.#record(hc, hostedClusterTransitions(hc.status ?? {}, status));
  }

  async #record(hc: HostedCluster, transitions: Transition[]): Promise<void> {
    for (const t of transitions) {
      this.#d.metrics.transitions.inc({
        cluster: this.#d.cluster,
        kind: HOSTED_CLUSTER_KIND,
        reason: t.reason,
      });
      await this.#d.events.event(hc, t.type, t.reason, t.message);
    }
  }

  /**
   * NodePools first (HyperShift deletes them with the cluster), then after the delay the
   * control-plane namespace; the finalizer goes last, once nothing of the cluster is left.
   */
  async #reconcileDelete(ctx: ReconcileContext, hc: HostedCluster): Promise<Result> {
    if (!hc.metadata.finalizers?.includes(HYPERSHIFT_FINALIZER)) return {};
    const pools = nodePoolsOf(this.#d.nodePools, hc);
    for (const np of pools.filter((p) => !p.metadata.deletionTimestamp)) {
      ctx.log.info("Deleting NodePool", { NodePool: np.metadata.name });
      await this.#d.applier.client.delete(NodePoolResource, {
        name: np.metadata.name ?? "",
        namespace: np.metadata.namespace,
      });
    }
    // Each NodePool's deletion enqueues its HostedCluster.
    if (pools.length > 0) return {};
    const remainingMs = Date.parse(hc.metadata.deletionTimestamp ?? "") + this.#d.deleteDelayMs - Date.now();
    if (remainingMs > 0) return { requeueAfterMs: remainingMs };
    if (await this.#controlPlaneNamespaceRemains(ctx, hc)) {
      // A labelled namespace's disappearance from the informer wakes us; one someone else made is polled.
      return this.#d.namespaces.get("", controlPlaneNamespaceOf(hc))
        ? {}
        : { requeueAfterMs: NAMESPACE_POLL_MS };
    }
    await this.#d.applier.client.delete(secretType, {
      name: adminKubeconfigSecretName(hc.metadata.name ?? ""),
      namespace: hc.metadata.namespace,
    });
    await this.#record(hc, [
      { type: "Normal", reason: "Deleted", message: "The hosted control plane is gone" },
    ]);
    await this.#d.applier.removeFinalizer(HostedClusterResource, hc, HYPERSHIFT_FINALIZER);
    this.#forget(hc.metadata.uid);
    this.#d.metrics.deletions.inc({ cluster: this.#d.cluster, kind: HOSTED_CLUSTER_KIND });
    return {};
  }
}
