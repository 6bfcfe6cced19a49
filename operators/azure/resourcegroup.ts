/** The cluster's resource group: created with owner tags, deleted (with its contents) only if ours. */
import type { ResourceGroup } from "@azure/arm-resources";
import type { AzureCallOptions } from "./cancel.ts";
import type { AzureClients } from "./clients.ts";
import { hasOwnerTags, withOwnerTags, type Owner } from "./ownership.ts";
import {
  deleteOwned,
  ensureSync,
  lroOptions,
  type DeleteResult,
  type Outcome,
  type Ready,
} from "./reconcile.ts";

export interface ResourceGroupParams {
  subscriptionId: string;
  name: string;
  location: string;
  owner: Owner;
}

/** ARM writes locations as "westus" whatever the input ("West US"). */
export function sameLocation(a: string | undefined, b: string): boolean {
  const norm = (s: string): string => s.replace(/\s+/g, "").toLowerCase();
  return a !== undefined && norm(a) === norm(b);
}

export function resourceGroupId(subscriptionId: string, name: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${name}`;
}

/**
 * Creates the group, or adds our tags to one we own. A group in another location fails with ARM's
 * InvalidResourceGroupLocation (a user error); a group being deleted with a conflict (retry later).
 */
export async function ensureResourceGroup(
  azure: AzureClients,
  p: ResourceGroupParams,
  opts: AzureCallOptions = {},
): Promise<Ready<{ id: string }>> {
  const groups = azure.resources(p.subscriptionId).resourceGroups;
  return ensureSync<ResourceGroup, { id: string }>({
    azure,
    what: `resource group ${p.name}`,
    owner: p.owner,
    signal: opts.signal,
    get: (o) => groups.get(p.name, o),
    tags: (g) => g.tags,
    matches: (g) =>
      sameLocation(g.location, p.location) &&
      hasOwnerTags(g.tags, p.owner) &&
      g.properties?.provisioningState !== "Deleting",
    put: (g, o) =>
      groups.createOrUpdate(p.name, { location: p.location, tags: withOwnerTags(g?.tags, p.owner) }, o),
    value: (g) => ({ id: g.id ?? resourceGroupId(p.subscriptionId, p.name) }),
  });
}

/** Deletes the group and everything in it, if the group is ours. Long-running. */
export async function deleteResourceGroup(
  azure: AzureClients,
  p: Omit<ResourceGroupParams, "location">,
  opts: AzureCallOptions = {},
): Promise<Outcome<DeleteResult>> {
  const groups = azure.resources(p.subscriptionId).resourceGroups;
  return deleteOwned<ResourceGroup>({
    azure,
    what: `resource group ${p.name}`,
    owner: p.owner,
    signal: opts.signal,
    get: (o) => groups.get(p.name, o),
    tags: (g) => g.tags,
    state: (g) => g.properties?.provisioningState,
    begin: {
      key: resourceGroupId(p.subscriptionId, p.name),
      start: (resumeFrom, o) => groups.beginDelete(p.name, lroOptions(azure, resumeFrom, o)),
    },
  });
}
