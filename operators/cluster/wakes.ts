/**
 * Which changes of a cluster's node pools and works wake the cluster. A cluster reads of its
 * node pools only that they exist (its deletion waits for them), and of its works its own work's
 * spec, metadata and status (the HostedCluster's feedback) and the others' existence. Every other
 * write (a pool's status, a node pool work's status, maestro-server's finalizer) would wake a full
 * reconcile that changes nothing, several times per pool in a create (docs/decisions/0008).
 * Additions and deletions always wake it (enqueueMapped).
 */
import type { NodePool } from "../api/v1alpha1/index.ts";
import type { ManifestWorkObject } from "../api/work/v1.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { workChangeWakesSender, workMetadataMoved } from "../hcp/work.ts";

/** The cluster's own work: node pool, break-glass and access session works carry its uid label and one of their own. */
export function isClusterWork(work: ManifestWorkObject): boolean {
  const labels = work.metadata.labels ?? {};
  return (
    !labels[WORK_LABELS.nodePool] && !labels[WORK_LABELS.breakglass] && !labels[WORK_LABELS.accessSession]
  );
}

/** Of the cluster's own work, what its sender reads; of the others, their spec, labels and deletion. */
export function workChangeWakesCluster(before: ManifestWorkObject, after: ManifestWorkObject): boolean {
  return isClusterWork(after) ? workChangeWakesSender(before, after) : workMetadataMoved(before, after);
}

export function poolChangeWakesCluster(before: NodePool, after: NodePool): boolean {
  return (
    before.metadata.deletionTimestamp !== after.metadata.deletionTimestamp ||
    before.spec.clusterRef.name !== after.spec.clusterRef.name
  );
}
