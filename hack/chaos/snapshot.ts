/**
 * What a chaos run reads of the world (a snapshot) and how it tells whose a thing is: shared by
 * the invariants (invariants.ts) and a restore's own (restore-invariants.ts).
 */
import type { KubeObject } from "../../operators/api/meta/v1.ts";
import type { HcpCluster, ManagementCluster, NodePool } from "../../operators/api/v1alpha1/index.ts";
import type { ManifestWork } from "../../operators/api/work/v1.ts";
import { OWNER_TAG } from "../../operators/azure/ownership.ts";
import type { AppliedManifestWork } from "../../operators/maestro-agent/appliedwork.ts";
import type { ArmResourceRecord } from "../harness/arm-emulator/index.ts";
import type { MeteringWorld } from "./metering-invariants.ts";
import type { RolloutWorld } from "./rollout-invariants.ts";

/** The environment the operators run with (operators/main.ts's default): namespaces are `ocm-local-<uid>`. */
export const ENVIRONMENT = "local";

export interface ManagementSnapshot {
  name: string;
  namespaces: KubeObject[];
  hostedClusters: KubeObject[];
  nodePools: KubeObject[];
  applied: AppliedManifestWork[];
}

export interface Snapshot {
  clusters: HcpCluster[];
  /** The service cluster's ManagementCluster objects (their Connected condition). */
  managementClusters: ManagementCluster[];
  pools: NodePool[];
  works: ManifestWork[];
  management: ManagementSnapshot[];
  azure: ArmResourceRecord[];
  /** The owners whose Azure resources the orphan sweep reports (its ConfigMap); absent: not read. */
  azureOrphanOwners?: string[];
  /** Present once a fault has started a Rollout. */
  rollouts?: RolloutWorld;
  /** The usage ledger's rows and the metering API's accepted events, when the region meters. */
  metering?: MeteringWorld;
}

/** The owner tag of a resource: its tags, or a record set's metadata. */
export function azureOwner(r: ArmResourceRecord): string | undefined {
  const metadata = (r.properties["metadata"] ?? {}) as Record<string, unknown>;
  const all: Record<string, unknown> = { ...metadata, ...r.tags };
  const found = Object.entries(all).find(([k]) => k.toLowerCase() === OWNER_TAG.toLowerCase());
  return typeof found?.[1] === "string" ? found[1] : undefined;
}

/** The cluster uid a management-cluster namespace belongs to (`ocm-<env>-<uid>[-<name>]`). */
export function namespaceOwner(namespace: string): string | undefined {
  const m = new RegExp(
    `^ocm-${ENVIRONMENT}-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`,
  ).exec(namespace);
  return m?.[1];
}
