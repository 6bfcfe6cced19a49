/**
 * What a region restore adds to the invariants (the service-cluster-loss fault). Pure, like
 * invariants.ts, and read from two snapshots: one just before the loss, one now.
 *
 *  - lost beyond the recovery point: what the workload asked for after the backup was taken (a
 *    cluster created, a deletion, a scale); no restore can bring it back, so it is counted on its
 *    own (workload.ts rebase) and never as lost. Lost stays "a cluster the backup holds that
 *    does not converge".
 *  - reported: what such a cluster left on a management cluster or in Azure, when the region
 *    says so: its ManagementCluster's status.agent.unclaimedWorks lists a work of it
 *    (docs/decisions/0012-never-delete-the-unknown.md), or the orphan sweep's report lists its
 *    Azure resources (one that never reached a management cluster has no work to list). Anything
 *    else left behind is orphaned.
 *  - duplicated: a backed-up cluster's HostedCluster, HyperShift NodePool or namespace with
 *    another uid than before the loss, or a public IP with another address: made a second time.
 */
import type { KubeObject } from "../../operators/api/meta/v1.ts";
import { ORIGINAL_UID_ANNOTATION, originalUid } from "../../operators/api/v1alpha1/labels.ts";
import { WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import type { ArmResourceRecord } from "../harness/arm-emulator/index.ts";
import type { BackupDocument } from "../../operators/regionbackup/document.ts";
import { azureOwner, namespaceOwner, type ManagementSnapshot, type Snapshot } from "./snapshot.ts";

/** What was made for each cluster, by its original uid: where → identity (a uid, or a resource ID and address). */
export interface Identities {
  /** Each cluster's original uid by `namespace/name`, with whether it was being deleted. */
  clusters: Map<string, { uid: string; deleting: boolean; createdAt: string }>;
  /** The cluster (original uid) of each work, by the work's uid: the resource ID an agent knows. */
  workOwners: Map<string, string>;
  /** By cluster: `<place> <kind> <name>` → identity. */
  made: Map<string, Map<string, string>>;
}

export interface RestoreContext {
  before: Identities;
  /** Original uids of the clusters the backup held. */
  backedUp: Set<string>;
  /** Original uids of clusters created after the backup was taken, there when the region was lost. */
  beyondRpo: Set<string>;
}

const where = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

function add(made: Identities["made"], owner: string | undefined, place: string, identity: string): void {
  if (!owner) return;
  const m = made.get(owner) ?? new Map<string, string>();
  made.set(owner, m);
  m.set(place, identity);
}

/** A resource's identity: its ID, and the address a public IP got when it was made. */
function azureIdentity(r: ArmResourceRecord): string {
  const ip = r.properties["ipAddress"];
  return typeof ip === "string" ? `${r.id.toLowerCase()} ${ip}` : r.id.toLowerCase();
}

function managementMade(made: Identities["made"], m: ManagementSnapshot): void {
  for (const n of m.namespaces)
    add(
      made,
      namespaceOwner(n.metadata.name ?? ""),
      `${m.name} namespace ${n.metadata.name}`,
      n.metadata.uid ?? "",
    );
  for (const [kind, list] of [
    ["HostedCluster", m.hostedClusters],
    ["NodePool", m.nodePools],
  ] as const)
    for (const o of list)
      add(
        made,
        namespaceOwner(o.metadata.namespace ?? ""),
        `${m.name} ${kind} ${where(o)}`,
        o.metadata.uid ?? "",
      );
}

export function identities(s: Snapshot): Identities {
  const clusters = new Map(
    s.clusters.map((c) => [
      where(c),
      {
        uid: originalUid(c),
        deleting: c.metadata.deletionTimestamp !== undefined,
        createdAt: c.metadata.creationTimestamp ?? "",
      },
    ]),
  );
  const byUid = new Map(s.clusters.map((c) => [c.metadata.uid ?? "", originalUid(c)]));
  const workOwners = new Map<string, string>();
  for (const w of s.works) {
    const owner = byUid.get(w.metadata.labels?.[WORK_LABELS.clusterUid] ?? "");
    if (owner && w.metadata.uid) workOwners.set(w.metadata.uid, owner);
  }
  const made: Identities["made"] = new Map();
  for (const m of s.management) managementMade(made, m);
  for (const r of s.azure) add(made, azureOwner(r), `Azure ${r.id.toLowerCase()}`, azureIdentity(r));
  return { clusters, workOwners, made };
}

/** The original uids of the HcpClusters a backup holds live (one being deleted is deleted again). */
export function backedUpClusters(doc: BackupDocument): Set<string> {
  return new Set(
    doc.objects
      .filter((o) => o.type === "hcp.aro.dev/HcpCluster" && !o.deleting)
      .map((o) => o.object.metadata.annotations?.[ORIGINAL_UID_ANNOTATION] || o.uid),
  );
}

/** Clusters there at the loss, created after the backup was taken (`takenAt`, RFC 3339), so not in it. */
export function createdAfter(before: Identities, backedUp: Set<string>, takenAt: string): Set<string> {
  // creationTimestamp has whole seconds: a cluster made in the backup's second but not in it counts.
  const second = takenAt.replace(/\.\d+Z$/, "Z");
  return new Set(
    [...before.clusters.values()]
      .filter((c) => !backedUp.has(c.uid) && !c.deleting && c.createdAt >= second)
      .map((c) => c.uid),
  );
}

/** Clusters created after the backup whose works or Azure resources the region lists: what they left is reported. */
export function reportedOwners(s: Snapshot, r: RestoreContext): Set<string> {
  const owners = new Set<string>();
  for (const mc of s.managementClusters)
    for (const id of mc.status?.agent?.unclaimedWorks?.resourceIDs ?? []) {
      const owner = r.before.workOwners.get(id);
      if (owner && r.beyondRpo.has(owner)) owners.add(owner);
    }
  for (const owner of s.azureOrphanOwners ?? []) if (r.beyondRpo.has(owner)) owners.add(owner);
  return owners;
}

/** What was made again for a backed-up cluster: the same place, another identity than before the loss. */
export function remade(s: Snapshot, r: RestoreContext): string[] {
  const now = identities(s).made;
  const found: string[] = [];
  for (const uid of r.backedUp) {
    const before = r.before.made.get(uid);
    const after = now.get(uid);
    if (!before || !after) continue;
    for (const [place, identity] of before) {
      const current = after.get(place);
      if (current !== undefined && current !== identity)
        found.push(`${place} of cluster ${uid} made again (${identity} → ${current})`);
    }
  }
  return found;
}
