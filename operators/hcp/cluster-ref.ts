/**
 * The first phase of every controller whose objects name an HcpCluster (node pools, external
 * auths, break-glass credentials and revocations): the cluster must exist and not be going before
 * anything else is done for the object. What "ready" means past that differs by controller (placed
 * with its HostedCluster applied, a work written, Ready), so each gives its own judgement.
 */
import type { HcpCluster } from "../api/v1alpha1/index.ts";
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
