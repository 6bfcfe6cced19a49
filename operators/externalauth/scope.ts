/**
 * What one ExternalAuth reconcile works with: the dependencies and the scope the phases fill in.
 * Each field says which phase sets it; status.ts reads only `facts`.
 */
import type { ExternalAuth, HcpCluster } from "../api/v1alpha1/index.ts";
import type { CachedManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import { CLUSTER_UID_INDEX } from "../hcp/indexes.ts";
import type { RegionSettings } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import type { Logger } from "../runtime/logger.ts";
import type { AuthFacts } from "./status.ts";

export interface ExternalAuthReconcilerDeps {
  externalAuths: Lister<ExternalAuth>;
  clusters: Lister<HcpCluster>;
  /** ManifestWorks indexed by CLUSTER_UID_INDEX. */
  works: Lister<CachedManifestWork>;
  region: RegionSettings;
  writer: ObjectWriter;
  events: Pick<EventRecorder, "record">;
}

export interface AuthScope {
  deps: ExternalAuthReconcilerDeps;
  auth: ExternalAuth;
  log: Logger;
  facts: AuthFacts;
  /** Set by findCluster. */
  cluster?: HcpCluster;
  /** Set by findCluster: the cluster's own work, when it has one. */
  work?: ManifestWorkObject;
}

/** A cluster's own work (its node pools' works carry the same uid label and a node pool label). */
export function clusterWorkOf(
  deps: ExternalAuthReconcilerDeps,
  cluster: HcpCluster,
): ManifestWorkObject | undefined {
  return deps.works
    .byIndex(CLUSTER_UID_INDEX, cluster.metadata.uid ?? "")
    .find((w) => !w.metadata.labels?.[WORK_LABELS.nodePool]);
}
