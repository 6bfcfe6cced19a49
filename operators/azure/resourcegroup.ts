/** The cluster's resource group: created with owner tags, deleted (with its contents) only if ours. */
import type { ResourceGroup } from "@azure/arm-resources";
import type { AzureClients } from "./clients.ts";
import { hasOwnerTags, withOwnerTags, type Owner } from "./ownership.ts";
import { deleteOwned, ensureSync, type DeleteResult, type Outcome, type Ready } from "./reconcile.ts";

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
): Promise<Ready<{ id: string }>> {
  const groups = azure.resources(p.subscriptionId).resourceGroups;
  return ensureSync<ResourceGroup, { id: string }>({
    azure,
    what: `resource group ${p.name}`,
    owner: p.owner,
    get: () => groups.get(p.name),
    tags: (g) => g.tags,
    matches: (g) =>
      sameLocation(g.location, p.location) &&
      hasOwnerTags(g.tags, p.owner) &&
      g.properties?.provisioningState !== "Deleting",
    put: (g) =>
      groups.createOrUpdate(p.name, { location: p.location, tags: withOwnerTags(g?.tags, p.owner) }),
    value: (g) => ({ id: g.id ?? resourceGroupId(p.subscriptionId, p.name) }),
  });
}

/** Deletes the group and everything in it, if the group is ours. Long-running. */
export async function deleteResourceGroup(
  azure: AzureClients,
  p: Omit<ResourceGroupParams, "location">,
): Promise<Outcome<DeleteResult>> {
  const groups = azure.resources(p.subscriptionId).resourceGroups;
  return deleteOwned<ResourceGroup>({
    azure,
    what: `resource group ${p.name}`,
    owner: p.owner,
    get: () => groups.get(p.name),
    tags: (g) => g.tags,
    state: (g) => g.properties?.provisioningState,
    begin: {
      key: resourceGroupId(p.subscriptionId, p.name),
      start: (resumeFrom) =>
        groups.beginDelete(p.name, {
          updateIntervalInMs: azure.config.pollIntervalMs,
          ...(resumeFrom ? { resumeFrom } : {}),
        }),
    },
  });
}
