/**
 * The first phase of every controller whose objects name an HcpCluster (node pools, external
 * auths, break-glass credentials and revocations): the cluster must exist and not be going before
 * anything else is done for the object. What "ready" means past that differs by controller (placed
 * with its HostedCluster applied, a work written, Ready), so each gives its own judgement.
 */
import type { HcpCluster, ManagementCluster } from "../api/v1alpha1/index.ts";
import { clusterNames, type ClusterNames, type RegionSettings } from "../api/v1alpha1/clusternames.ts";
import { isTrue } from "../runtime/conditions.ts";
import type { Lister } from "../runtime/informer.ts";
import type { Phase } from "../runtime/phases.ts";
import type { StepState } from "./steps.ts";

/** An object that names its cluster in the same namespace. */
export interface ClusterReferrer {
  metadata: { namespace?: string };
  spec: { clusterRef: { name: string } };
}

export interface FindClusterOptions<S> {
  /** The object being reconciled. */
  referrer(scope: S): ClusterReferrer;
  /** Records the ClusterReady step. */
  record(scope: S, step: StepState): void;
  /**
   * The cluster exists and is not being deleted: the step (ready, or what it waits for), having
   * put what the later phases need of the cluster into the scope.
   */
  judge(scope: S, cluster: HcpCluster): StepState;
  /** Whether the object is judged even while its cluster is being deleted. Default never. */
  evenWhileDeleting?(scope: S): boolean;
}

/** The phase `findCluster`: ClusterNotFound, ClusterDeleting, or the controller's judgement. */
export function findClusterPhase<S extends { deps: { clusters: Pick<Lister<HcpCluster>, "get"> } }>(
  opts: FindClusterOptions<S>,
): Phase<S> {
  const findCluster: Phase<S> = (_ctx, scope) => {
    const referrer = opts.referrer(scope);
    const ref = referrer.spec.clusterRef.name;
    const namespace = referrer.metadata.namespace ?? "";
    const cluster = scope.deps.clusters.get(namespace, ref);
    opts.record(scope, cluster ? stepOf(opts, scope, cluster) : notFound(ref, namespace));
    return {};
  };
  return findCluster;
}

function stepOf<S>(opts: FindClusterOptions<S>, scope: S, cluster: HcpCluster): StepState {
  if (!cluster.metadata.deletionTimestamp || opts.evenWhileDeleting?.(scope))
    return opts.judge(scope, cluster);
  return {
    state: "pending",
    reason: "ClusterDeleting",
    message: `HcpCluster ${cluster.metadata.name ?? ""} is being deleted`,
  };
}

function notFound(ref: string, namespace: string): StepState {
  return {
    state: "failed",
    reason: "ClusterNotFound",
    message: `HcpCluster ${ref} does not exist in namespace ${namespace}`,
    userActionRequired: true,
  };
}

/** Where a Ready cluster's control plane is reached: its derived names and its management cluster's consumer. */
export interface ServingCluster {
  cluster: HcpCluster;
  names: ClusterNames;
  consumer: string;
}

/**
 * The judgement of controllers that talk to the hosted API through its control plane (break-glass
 * credentials, access sessions): the cluster must be Ready, placed and serving at its apiURL.
 */
export function servingCluster(
  cluster: HcpCluster,
  managementClusters: Pick<Lister<ManagementCluster>, "get">,
  region: RegionSettings,
): { step: StepState; serving?: ServingCluster } {
  const ref = cluster.metadata.name ?? "";
  const mc = managementClusters.get("", cluster.status?.managementCluster ?? "");
  const apiURL = cluster.status?.apiURL;
  if (!mc || !apiURL || !isTrue(cluster.status?.conditions, "Ready"))
    return {
      step: {
        state: "pending",
        reason: "WaitingForCluster",
        message: `Waiting for HcpCluster ${ref} to be Ready`,
      },
    };
  return {
    step: { state: "ready", reason: "ClusterReady", message: `HcpCluster ${ref} serves at ${apiURL}` },
    serving: { cluster, names: clusterNames(cluster, region), consumer: mc.spec.consumerName },
  };
}
