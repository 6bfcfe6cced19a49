/**
 * What a customer creates in Azure before asking for a cluster, made through ARM with the real SDK
 * clients (against the ARM emulator in tests and the local region): the resource groups of its
 * identities, the user-assigned identities a cluster body names, and every role assignment ARO HCP
 * wants of them (the frontend's own list, azure-checks.ts `roleNeeds`, so the two cannot drift);
 * with a customer-managed etcd key, the key vault and the key. Idempotent: a subscription set up
 * twice keeps what it has.
 */
import { createHash } from "node:crypto";
import type { AzureClients } from "../../operators/azure/clients.ts";
import type { ClusterProperties } from "../../operators/frontend/api/internal.ts";
import type { Identity } from "../../operators/frontend/api/arm-resource.ts";
import { identityUses, parseIdentityId } from "../../operators/frontend/checks/identities.ts";
import { kmsOf } from "../../operators/frontend/checks/key-vault.ts";
import { clusterScopes, roleNeeds, type RoleNeed } from "../../operators/frontend/checks/role-assignments.ts";

const ZERO_TENANT = "00000000-0000-0000-0000-000000000000";

/** The parts of a cluster body the customer's Azure has to back. */
export interface CustomerCluster {
  location?: string;
  identity?: Identity;
  properties?: ClusterProperties;
}

export interface CustomerAzure {
  /** The identities' principal IDs, by lower-cased resource ID. */
  principals: Map<string, string>;
  /** The role assignments made (or found), one per need. */
  assignments: number;
  /** The KMS key's vault ID and its version, when the body asks for one. */
  key?: { vaultId: string; version: string };
}

/** The role assignment's name: a GUID from what it grants, as templates name them (guid(...)). */
export function assignmentName(principalId: string, roleDefinitionId: string, scope: string): string {
  const h = createHash("sha256")
    .update(`${principalId}\n${roleDefinitionId}\n${scope}`.toLowerCase())
    .digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Creates the identities and roles (and KMS key) `cluster` relies on, in `subscriptionId` for the vault. */
export async function setUpCustomerAzure(
  azure: AzureClients,
  subscriptionId: string,
  cluster: CustomerCluster,
  opts: { tenantId?: string } = {},
): Promise<CustomerAzure> {
  const location = cluster.location ?? "eastus";
  const { properties } = cluster;
  // A body without properties has only the identities of its own `identity` to back.
  const uses = properties
    ? identityUses(cluster.identity, properties)
    : Object.keys(cluster.identity?.userAssignedIdentities ?? {}).map((id) => ({ id }));
  const principals = await createIdentities(azure, location, uses);
  if (!properties) return { principals, assignments: 0 };
  const kms = kmsOf(properties);
  const key = kms
    ? await createKey(azure, { subscriptionId, location, tenantId: opts.tenantId ?? ZERO_TENANT }, kms)
    : undefined;
  const needs = roleNeeds(properties, clusterScopes(properties, key?.vaultId));
  await Promise.all(needs.map((need) => assign(azure, need, principals)));
  return { principals, assignments: needs.length, ...(key ? { key } : {}) };
}

async function createIdentities(
  azure: AzureClients,
  location: string,
  uses: Array<{ id: string }>,
): Promise<Map<string, string>> {
  const principals = new Map<string, string>();
  const groups = new Set<string>();
  const parsed = uses.flatMap((u) => {
    const parts = parseIdentityId(u.id);
    return parts ? [{ id: u.id, ...parts }] : [];
  });
  for (const p of parsed) {
    const key = `${p.subscriptionId}/${p.resourceGroup}`.toLowerCase();
    if (groups.has(key)) continue;
    groups.add(key);
    await azure.resources(p.subscriptionId).resourceGroups.createOrUpdate(p.resourceGroup, { location });
  }
  await Promise.all(
    parsed.map(async (p) => {
      const made = await azure
        .identities(p.subscriptionId)
        .userAssignedIdentities.createOrUpdate(p.resourceGroup, p.name, { location });
      if (made.principalId) principals.set(p.id.toLowerCase(), made.principalId);
    }),
  );
  return principals;
}

async function assign(azure: AzureClients, need: RoleNeed, principals: Map<string, string>): Promise<void> {
  const principalId = principals.get(need.identity.toLowerCase());
  const subscriptionId = /^\/subscriptions\/([^/]+)/i.exec(need.scope)?.[1];
  if (!principalId || !subscriptionId) return;
  const roleDefinitionId = `/subscriptions/${subscriptionId}${need.role.resourceId}`;
  await azure
    .authorization(subscriptionId)
    .roleAssignments.create(need.scope, assignmentName(principalId, roleDefinitionId, need.scope), {
      roleDefinitionId,
      principalId,
      principalType: "ServicePrincipal",
    })
    .catch((err: unknown) => {
      // Made by an earlier set-up under the same name: what is wanted is there.
      if ((err as { code?: string }).code !== "RoleAssignmentExists") throw err;
    });
}

/** The vault (in resource group `kms`) and the key: the vault's ID and the key's current version, which a body names. */
async function createKey(
  azure: AzureClients,
  { subscriptionId, location, tenantId }: { subscriptionId: string; location: string; tenantId: string },
  kms: { vaultName: string; key: string },
): Promise<{ vaultId: string; version: string }> {
  const resourceGroup = "kms";
  await azure.resources(subscriptionId).resourceGroups.createOrUpdate(resourceGroup, { location });
  const client = azure.keyVault(subscriptionId);
  const vault = await client.vaults.createOrUpdate(resourceGroup, kms.vaultName, {
    location,
    properties: { tenantId, sku: { family: "A", name: "standard" }, enableRbacAuthorization: true },
  });
  const key = await client.keys.createIfNotExist(resourceGroup, kms.vaultName, kms.key, {
    properties: { kty: "RSA" },
  });
  return { vaultId: vault.id ?? "", version: key.keyUriWithVersion?.split("/").at(-1) ?? "" };
}
