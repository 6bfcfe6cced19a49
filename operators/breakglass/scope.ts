/**
 * What one BreakglassCredential reconcile works with: the dependencies and the scope the phases
 * fill in (each field says which phase sets it); status.ts reads only `facts`.
 */
import {
  originalUid,
  type BreakglassCredential,
  type BreakglassRevocation,
  type HcpCluster,
  type ManagementCluster,
} from "../api/v1alpha1/index.ts";
import type { CachedManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import type { ClusterNames, RegionSettings } from "../api/v1alpha1/clusternames.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import type { KubeClient } from "../runtime/kube.ts";
import type { Logger } from "../runtime/logger.ts";
import type { CredentialFacts } from "./status.ts";

export const BREAKGLASS_UID_INDEX = "breakglass-uid";

export interface BreakglassReconcilerDeps {
  credentials: Lister<BreakglassCredential>;
  revocations: Lister<BreakglassRevocation>;
  clusters: Lister<HcpCluster>;
  managementClusters: Lister<ManagementCluster>;
  /** Break-glass works, indexed by BREAKGLASS_UID_INDEX. */
  works: Lister<CachedManifestWork>;
  region: RegionSettings;
  /** The operators' own namespace: the service's keys wait there until their kubeconfig is out. */
  namespace: string;
  writer: ObjectWriter;
  /** For the key and kubeconfig Secrets and deleting credentials whose cluster goes or that expired. */
  client: KubeClient;
  events: Pick<EventRecorder, "record">;
  /** How long an expired credential stays (to say it expired) before it is deleted. */
  expiredRetentionMs: number;
  /** The clock (ms since the epoch). */
  now: () => number;
}

export interface CredentialScope {
  deps: BreakglassReconcilerDeps;
  credential: BreakglassCredential;
  log: Logger;
  facts: CredentialFacts;
  /** Set by findCluster. */
  cluster?: HcpCluster;
  /** Set by findCluster. */
  names?: ClusterNames;
  /** Set by findCluster: the consumer of the management cluster the cluster is placed on. */
  consumer?: string;
  /** Set by prepareRequest: the PEM request to send. */
  request?: string;
  /** Set by prepareRequest when the service made the key: the PEM key. */
  key?: string;
  /** Set by deleteWork: the work is still going. */
  deleting?: boolean;
  /** Set by applyWork when it wrote the work in this reconcile (the informer lags behind). */
  appliedWork?: ManifestWorkObject;
}

export function credentialWorkOf(scope: CredentialScope): ManifestWorkObject | undefined {
  return scope.deps.works.byIndex(BREAKGLASS_UID_INDEX, scope.credential.metadata.uid ?? "")[0];
}

/**
 * The Secret in the operators' namespace (deps.namespace) that holds the key the service made and
 * its request, until the kubeconfig that carries the key is written. Named by uid: credentials of
 * every namespace meet there.
 */
export function keySecretName(credential: BreakglassCredential): string {
  return `breakglass-key-${originalUid(credential)}`;
}

/** The Secret in the credential's namespace, owned by it, that holds the kubeconfig with the key. */
export function kubeconfigSecretName(credential: BreakglassCredential): string {
  return `${credential.metadata.name ?? ""}-kubeconfig`;
}
