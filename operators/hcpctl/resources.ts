/**
 * The kinds hcpctl reads, by every name a user may type for them, as kubectl resolves short names.
 */
import type { ResourceType } from "../api/meta/v1.ts";
import {
  ExternalAuthResource,
  HcpClusterResource,
  MANAGEMENT_CLUSTER_PHASES,
  ManagementClusterResource,
  NodePoolResource,
  PHASES,
} from "../api/v1alpha1/index.ts";
import { CliError } from "./errors.ts";

export type ResourceKey = "clusters" | "nodepools" | "externalauths" | "managementclusters";

export interface ResourceInfo {
  key: ResourceKey;
  type: ResourceType;
  /** Lower-case singular, as kubectl names an object: "hcpcluster.hcp.aro.dev/demo". */
  singular: string;
  aliases: readonly string[];
  phases: readonly string[];
}

export const RESOURCES: readonly ResourceInfo[] = [
  {
    key: "clusters",
    type: HcpClusterResource,
    singular: "hcpcluster",
    aliases: ["clusters", "cluster", "hcpclusters", "hcpcluster", "hcpc"],
    phases: PHASES,
  },
  {
    key: "nodepools",
    type: NodePoolResource,
    singular: "nodepool",
    aliases: ["nodepools", "nodepool", "np", "hnp"],
    phases: PHASES,
  },
  {
    key: "externalauths",
    type: ExternalAuthResource,
    singular: "externalauth",
    aliases: ["externalauths", "externalauth", "ea"],
    phases: PHASES,
  },
  {
    key: "managementclusters",
    type: ManagementClusterResource,
    singular: "managementcluster",
    aliases: ["managementclusters", "managementcluster", "mc", "mcs", "mgmt"],
    phases: MANAGEMENT_CLUSTER_PHASES,
  },
];

/** The resource a user named, by any alias, in any case, or with its group (`hcpclusters.hcp.aro.dev`). */
export function resolveResource(
  name: string,
  allowed: readonly ResourceKey[] = ["clusters", "nodepools", "externalauths", "managementclusters"],
): ResourceInfo {
  const wanted = name.toLowerCase().replace(/\.hcp\.aro\.dev$/, "");
  const found = RESOURCES.find((r) => allowed.includes(r.key) && r.aliases.includes(wanted));
  if (!found) throw new CliError(`unknown resource type "${name}": expected one of ${allowed.join(", ")}`);
  return found;
}

/** A phase as the resource spells it, matched without regard to case. */
export function resolvePhase(info: ResourceInfo, phase: string): string {
  const found = info.phases.find((p) => p.toLowerCase() === phase.toLowerCase());
  if (!found)
    throw new CliError(`unknown phase "${phase}" for ${info.key}: expected one of ${info.phases.join(", ")}`);
  return found;
}
