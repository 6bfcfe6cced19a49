/**
 * What ARO HCP checks in the customer's Azure before it creates anything, read with the Azure SDK
 * clients under the frontend's own identity: a cluster's identities (identities.ts) and the roles
 * they hold (role-assignments.ts), its customer-managed etcd key (key-vault.ts), a node pool's VM
 * size and vCPU quota (compute.ts). A failure names the ARM field (one 400 for all of them); Azure
 * not answering in time, throttling or failing is a 503 with Retry-After (azure-calls.ts).
 */
import type { AzureClients } from "../../azure/clients.ts";
import type { Logger } from "../../runtime/logger.ts";
import type { Identity } from "../api/arm-resource.ts";
import type { ClusterProperties } from "../api/internal.ts";
import type { FieldError } from "../errors.ts";
import { checked, type Run, type RunOptions } from "./azure-calls.ts";
import { poolErrors, poolNeeds, readCompute, type NodePoolCheck } from "./compute.ts";
import { identityUses, OPERATORS, readIdentities, useKey, type IdentityUse } from "./identities.ts";
import { kmsIdentityErrors, kmsOf, readKms } from "./key-vault.ts";
import { clusterScopes, needKey, readMissingRoles, roleNeeds } from "./role-assignments.ts";

export { AzureCheckError } from "./azure-calls.ts";
export type { NodePoolCheck } from "./compute.ts";

export interface AzureChecksOptions {
  clients: AzureClients;
  log: Logger;
  /** How long one request's checks may take, all calls together. Default 20 s. */
  budgetMs?: number;
  /** Azure calls in flight at once for one request. Default 8. */
  concurrency?: number;
}

export interface ClusterCheck {
  subscriptionId: string;
  identity: Identity | undefined;
  properties: ClusterProperties;
  /** The stored properties on an update: only a changed KMS key is read again. */
  stored?: ClusterProperties;
}

/** Whether a cluster check has identities or a key to look at: a create has both, an update what it changes. */
export function clusterChange(c: ClusterCheck): { identities: boolean; key: boolean } {
  if (!c.stored) return { identities: true, key: true };
  const uses = (p: ClusterProperties): string => identityUses(undefined, p).map(useKey).sort().join("\n");
  const before = kmsOf(c.stored);
  const after = kmsOf(c.properties);
  const sameKey =
    before?.vaultName === after?.vaultName &&
    before?.key === after?.key &&
    before?.version === after?.version;
  return { identities: uses(c.stored) !== uses(c.properties), key: after !== undefined && !sameKey };
}

/** The identities, roles and key of a cluster that names identities anew (all of them on a create). */
async function identityErrors(run: Run, c: ClusterCheck, keyChanged: boolean): Promise<FieldError[]> {
  const before = new Set(c.stored ? identityUses(undefined, c.stored).map(useKey) : []);
  const isNew = (u: IdentityUse): boolean => !before.has(useKey(u));
  const [identities, kms] = await Promise.all([
    readIdentities(run, identityUses(c.identity, c.properties), isNew),
    readKms(run, c, keyChanged),
  ]);
  // A vault of access policies grants nothing by roles: kmsIdentityErrors checks its policies.
  const rbacVault = kms.vault?.properties?.enableRbacAuthorization !== false ? kms.vault?.id : undefined;
  const scopes = clusterScopes(c.properties, rbacVault);
  const held = new Set(c.stored ? roleNeeds(c.stored, scopes).map(needKey) : []);
  // A role over an identity that does not exist is not asked for: the identity is refused already.
  const needs = roleNeeds(c.properties, scopes).filter(
    (n) => !identities.missing.has(n.scope.toLowerCase()) && !held.has(needKey(n)),
  );
  const roles = await readMissingRoles(run, needs, identities.principals);
  const principalOf = (id: string): string | undefined => identities.principals.get(id.toLowerCase());
  const kmsTarget = `${OPERATORS}.controlPlaneOperators.kms`;
  const kmsChanged =
    keyChanged || identityUses(undefined, c.properties).some((u) => u.target === kmsTarget && isNew(u));
  const access = kms.vault && kmsChanged ? kmsIdentityErrors(c.properties, kms.vault, principalOf) : [];
  return [...identities.errors, ...kms.errors, ...roles, ...access];
}

export class AzureChecks {
  readonly #run: RunOptions;

  constructor(opts: AzureChecksOptions) {
    this.#run = {
      clients: opts.clients,
      log: opts.log,
      budgetMs: opts.budgetMs ?? 20_000,
      concurrency: opts.concurrency ?? 8,
    };
  }

  /**
   * Throws an AzureCheckError: 400 naming every field Azure does not back, or 503. An update is
   * checked for what it changes: identities it names anew and the roles they (or the service
   * managed identity over them) must hold, a new KMS key or version.
   */
  async cluster(c: ClusterCheck): Promise<void> {
    const change = clusterChange(c);
    if (!change.identities && !change.key) return;
    await checked(this.#run, async (run) =>
      change.identities ? identityErrors(run, c, change.key) : (await readKms(run, c, true)).errors,
    );
  }

  /** Throws an AzureCheckError: 400 naming the VM size, zone or node count Azure refuses, or 503. */
  async nodePool(p: NodePoolCheck): Promise<void> {
    const want = poolNeeds(p);
    if (!want) return;
    await checked(this.#run, async (run) =>
      poolErrors(want, await readCompute(run, p.subscriptionId, want.location)),
    );
  }
}
