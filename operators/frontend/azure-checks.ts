/**
 * What ARO HCP checks in the customer's Azure before it creates anything, read with the Azure SDK
 * clients under the frontend's own identity:
 * - a cluster's user-assigned identities (each operator's, the service managed identity, those
 *   assigned to the cluster) exist, and each holds its operator's role (operator-identities.ts) on
 *   the customer's resources it acts on (subnet, virtual network, network security group, key
 *   vault), or on a scope above them;
 * - a customer-managed etcd key: its vault, the key and its version exist and are enabled, and the
 *   KMS identity may use them (Key Vault Crypto User, or an access policy that lets it encrypt and
 *   decrypt);
 * - a node pool's VM size is offered to the subscription in its location and zone, and the
 *   subscription's vCPU quota there (its family and total regional vCPUs) covers the nodes a new
 *   pool, or a pool that grows, asks for.
 * A failure names the ARM field (one 400 for all of them, fieldErrors). Azure not answering in
 * time, throttling or failing is a 503 with Retry-After: never a refusal, never a pass.
 */
import type { AzureClients } from "../azure/clients.ts";
import { classifyAzureError, type AzureError } from "../azure/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import type { ClusterProperties, NodePoolProperties } from "./api/internal.ts";
import type { Identity } from "./api/arm-resource.ts";
import { shorten } from "./api/json.ts";
import { CloudError, CODES, fieldErrors, type FieldError } from "./errors.ts";
import {
  CONTROL_PLANE_OPERATORS,
  DATA_PLANE_OPERATORS,
  SERVICE_MANAGED_IDENTITY_ROLES,
  type RoleDefinition,
  type RoleScope,
} from "./operator-identities.ts";

const OPERATORS = "properties.platform.operatorsAuthentication.userAssignedIdentities";
const KMS = "properties.etcd.dataEncryption.customerManaged.kms";
/** What the KMS plugin does with the key, when a vault authorizes by access policies. */
const KMS_KEY_PERMISSIONS = ["encrypt", "decrypt"];

/** A refusal or an outage found by the checks (a CloudError the handlers pass on as it is). */
export class AzureCheckError extends CloudError {}

// ---------------------------------------------------------------------------------------------
// What a cluster needs: pure, from the hub properties.

/** One identity the request names, at the first field that names it. */
export interface IdentityUse {
  id: string;
  target: string;
}

/** A role an identity must hold on a scope (or above it). */
export interface RoleNeed {
  /** The identity's resource ID. */
  identity: string;
  /** The field that names the identity. */
  target: string;
  role: RoleDefinition;
  /** The resource the role is held on, and what it is in words (e.g. "subnet"). */
  scope: string;
  scopeKind: string;
}

const SCOPE_WORDS: Record<RoleScope, string> = {
  subnet: "subnet",
  vnet: "virtual network",
  networkSecurityGroup: "network security group",
  keyVault: "key vault",
};

/** The customer's resources a cluster's roles are held on (the key vault once it is found). */
export interface ClusterScopes {
  subnet?: string;
  vnet?: string;
  networkSecurityGroup?: string;
  keyVault?: string;
}

export function clusterScopes(properties: ClusterProperties, keyVault?: string): ClusterScopes {
  const subnet = properties.platform?.subnetId;
  const vnet = subnet ? /^(.*\/virtualNetworks\/[^/]+)\/subnets\/[^/]+$/i.exec(subnet)?.[1] : undefined;
  const nsg = properties.platform?.networkSecurityGroupId;
  return {
    ...(subnet ? { subnet } : {}),
    ...(vnet ? { vnet } : {}),
    ...(nsg ? { networkSecurityGroup: nsg } : {}),
    ...(keyVault ? { keyVault } : {}),
  };
}

/** Every identity the cluster names, operators first, each once (IDs compare case-insensitively). */
export function identityUses(identity: Identity | undefined, properties: ClusterProperties): IdentityUse[] {
  const ids = properties.platform?.operatorsAuthentication?.userAssignedIdentities ?? {};
  const uses = [
    ...Object.entries(ids.controlPlaneOperators ?? {}).map(([name, id]) => ({
      id,
      target: `${OPERATORS}.controlPlaneOperators.${name}`,
    })),
    ...Object.entries(ids.dataPlaneOperators ?? {}).map(([name, id]) => ({
      id,
      target: `${OPERATORS}.dataPlaneOperators.${name}`,
    })),
    ...(ids.serviceManagedIdentity
      ? [{ id: ids.serviceManagedIdentity, target: `${OPERATORS}.serviceManagedIdentity` }]
      : []),
    ...Object.keys(identity?.userAssignedIdentities ?? {}).map((id) => ({
      id,
      target: `identity.userAssignedIdentities.${id}`,
    })),
  ];
  const seen = new Set<string>();
  return uses.filter((u) => !seen.has(u.id.toLowerCase()) && seen.add(u.id.toLowerCase()));
}

/** The roles each named identity must hold, on the scopes known. */
export function roleNeeds(properties: ClusterProperties, scopes: ClusterScopes): RoleNeed[] {
  const ids = properties.platform?.operatorsAuthentication?.userAssignedIdentities ?? {};
  const needs: RoleNeed[] = [];
  const add = (identity: string, target: string, role: RoleDefinition, on: readonly RoleScope[]): void => {
    for (const kind of on) {
      const scope = scopes[kind];
      if (scope) needs.push({ identity, target, role, scope, scopeKind: SCOPE_WORDS[kind] });
    }
  };
  const operatorRoles = (
    list: typeof CONTROL_PLANE_OPERATORS,
    named: Record<string, string> | undefined,
    field: string,
  ): void => {
    for (const [name, id] of Object.entries(named ?? {})) {
      const operator = list.find((o) => o.name === name);
      if (operator) add(id, `${OPERATORS}.${field}.${name}`, operator.role, operator.scopes);
    }
  };
  operatorRoles(CONTROL_PLANE_OPERATORS, ids.controlPlaneOperators, "controlPlaneOperators");
  operatorRoles(DATA_PLANE_OPERATORS, ids.dataPlaneOperators, "dataPlaneOperators");
  const service = ids.serviceManagedIdentity;
  if (service === undefined) return needs;
  const target = `${OPERATORS}.serviceManagedIdentity`;
  const smi = SERVICE_MANAGED_IDENTITY_ROLES;
  add(service, target, smi.network.role, smi.network.scopes);
  const over = (role: RoleDefinition, named: Record<string, string> | undefined, what: string): void => {
    for (const id of Object.values(named ?? {}))
      needs.push({ identity: service, target, role, scope: id, scopeKind: what });
  };
  over(smi.controlPlaneIdentities, ids.controlPlaneOperators, "control plane operator's identity");
  over(smi.dataPlaneIdentities, ids.dataPlaneOperators, "data plane operator's identity");
  return needs;
}

/** A role assignment as ARM lists it. */
export interface Assignment {
  scope: string;
  roleDefinitionId: string;
}

const roleGuid = (roleDefinitionId: string): string =>
  roleDefinitionId.split("/").at(-1)?.toLowerCase() ?? "";

/** Whether an assignment on `held` reaches `scope`: the same resource or one of its parents. */
export function covers(held: string, scope: string): boolean {
  const h = held.toLowerCase().replace(/\/+$/, "");
  const s = scope.toLowerCase();
  return h === s || s.startsWith(`${h}/`);
}

/**
 * Field errors for the needs no assignment meets, one per identity and role (naming every scope
 * it lacks); `assignmentsOf` gives an identity's assignments, undefined when it could not be
 * read (it does not exist: reported elsewhere).
 */
export function missingRoles(
  needs: RoleNeed[],
  assignmentsOf: (identity: string) => Assignment[] | undefined,
): FieldError[] {
  const missing = new Map<string, { need: RoleNeed; scopes: string[] }>();
  for (const need of needs) {
    const held = assignmentsOf(need.identity);
    if (held === undefined) continue;
    const guid = roleGuid(need.role.resourceId);
    if (held.some((a) => roleGuid(a.roleDefinitionId) === guid && covers(a.scope, need.scope))) continue;
    const key = `${need.target}\n${guid}`;
    const entry = missing.get(key) ?? { need, scopes: [] };
    entry.scopes.push(`the ${need.scopeKind} '${shorten(need.scope, 200)}'`);
    missing.set(key, entry);
  }
  return [...missing.values()].map(({ need, scopes }) => ({
    target: need.target,
    message: `The identity '${shorten(need.identity, 256)}' does not hold the role '${need.role.name}' (${roleGuid(need.role.resourceId)}) on ${joinWords(scopes)}: assign it there, or on a scope above, before creating the cluster`,
  }));
}

function joinWords(items: string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1) ?? ""}`;
}

/** The parts of a user-assigned identity's resource ID, or undefined when it is not one. */
export function parseIdentityId(
  id: string,
): { subscriptionId: string; resourceGroup: string; name: string } | undefined {
  const m =
    /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/([^/]+)$/i.exec(
      id,
    );
  return m?.[1] && m[2] && m[3] ? { subscriptionId: m[1], resourceGroup: m[2], name: m[3] } : undefined;
}

// ---------------------------------------------------------------------------------------------
// What a node pool needs: pure, from the SKUs and usages Azure lists.

/** A VM size as Microsoft.Compute/skus lists it (the fields read). */
export interface VmSku {
  resourceType?: string;
  name?: string;
  family?: string;
  locationInfo?: Array<{ location?: string; zones?: string[] }>;
  capabilities?: Array<{ name?: string; value?: string }>;
  restrictions?: Array<{
    type?: string;
    reasonCode?: string;
    restrictionInfo?: { locations?: string[]; zones?: string[] };
  }>;
}

/** A usage line as Microsoft.Compute/locations/{l}/usages lists it. */
export interface VcpuUsage {
  name?: { value?: string; localizedValue?: string };
  currentValue?: number;
  limit?: number;
}

const sameName = (a: string | undefined, b: string): boolean => a?.toLowerCase() === b.toLowerCase();

/** The VM size of a pool in its location and zone: found and usable, or the field errors why not. */
export function checkVmSize(
  skus: VmSku[],
  want: { vmSize: string; location: string; zone?: string | undefined },
): { sku: VmSku } | { errors: FieldError[] } {
  const { vmSize, location, zone } = want;
  const sku = skus.find((s) => sameName(s.resourceType, "virtualMachines") && sameName(s.name, vmSize));
  const info = sku?.locationInfo?.find((l) => sameName(l.location, location));
  const target = "properties.platform.vmSize";
  if (!sku || !info)
    return {
      errors: [
        { target, message: `The VM size '${shorten(vmSize, 64)}' is not offered in location '${location}'` },
      ],
    };
  const restrictions = sku.restrictions ?? [];
  const whole = restrictions.find(
    (r) =>
      sameName(r.type, "Location") && (r.restrictionInfo?.locations ?? []).some((l) => sameName(l, location)),
  );
  if (whole)
    return {
      errors: [
        {
          target,
          message: `The VM size '${vmSize}' is not available to this subscription in location '${location}' (${whole.reasonCode ?? "restricted"})`,
        },
      ],
    };
  if (zone === undefined) return { sku };
  const blocked = new Set(
    restrictions
      .filter((r) => sameName(r.type, "Zone"))
      .filter((r) => (r.restrictionInfo?.locations ?? [location]).some((l) => sameName(l, location)))
      .flatMap((r) => r.restrictionInfo?.zones ?? []),
  );
  const offered = (info.zones ?? []).filter((z) => !blocked.has(z)).sort();
  if (offered.includes(zone)) return { sku };
  const where = offered.length > 0 ? `zones ${offered.join(", ")}` : "no zone";
  return {
    errors: [
      {
        target: "properties.platform.availabilityZone",
        message: `The VM size '${vmSize}' is not offered to this subscription in zone '${shorten(zone, 16)}' of location '${location}' (it is in ${where})`,
      },
    ],
  };
}

/** The vCPUs of one VM of a size. */
export function vcpusOf(sku: VmSku): number {
  const value = Number(sku.capabilities?.find((c) => sameName(c.name, "vCPUs"))?.value);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** The nodes a pool may run: its replicas, or its autoscaling maximum (and the field that says so). */
export function nodesOf(p: NodePoolProperties | undefined): { nodes: number; target: string } {
  const max = p?.autoScaling?.max;
  if (max !== undefined)
    return { nodes: Math.max(max, p?.replicas ?? 0), target: "properties.autoScaling.max" };
  return { nodes: p?.replicas ?? 0, target: "properties.replicas" };
}

/** Field errors for `more` vCPUs of a family the subscription's quota in the location cannot hold. */
export function checkQuota(
  usages: VcpuUsage[],
  want: { family: string; more: number; location: string; target: string; what: string },
): FieldError[] {
  const lines = [want.family, "cores"];
  return lines.flatMap((name) => {
    const usage = usages.find((u) => sameName(u.name?.value, name));
    if (!usage || usage.limit === undefined) return [];
    const current = usage.currentValue ?? 0;
    if (current + want.more <= usage.limit) return [];
    const label = usage.name?.localizedValue ?? name;
    return [
      {
        target: want.target,
        message: `${want.what} needs ${want.more} more vCPUs of '${label}' in location '${want.location}', but the subscription uses ${current} of its quota of ${usage.limit}: ask for a larger quota or fewer nodes`,
      },
    ];
  });
}

// ---------------------------------------------------------------------------------------------
// Reading Azure.

export interface AzureChecksOptions {
  clients: AzureClients;
  log: Logger;
  /** How long one request's checks may take, all calls together. Default 20 s. */
  budgetMs?: number;
  /** Azure calls in flight at once for one request. Default 8. */
  concurrency?: number;
}

/** Something Azure said is not there (404): the customer's to fix. */
const NOT_FOUND = Symbol("not found");
type Found<T> = T | typeof NOT_FOUND;

/** The facts of one request's checks, read under one deadline. */
interface Run {
  signal: AbortSignal;
  limit: <T>(fn: () => Promise<T>) => Promise<T>;
}

export interface ClusterCheck {
  subscriptionId: string;
  identity: Identity | undefined;
  properties: ClusterProperties;
  /** The stored properties on an update: only a changed KMS key is read again. */
  stored?: ClusterProperties;
}

export interface NodePoolCheck {
  subscriptionId: string;
  location: string;
  properties: NodePoolProperties;
  /** The stored properties on an update: only more nodes are checked against the quota. */
  stored?: NodePoolProperties;
}

export class AzureChecks {
  readonly #clients: AzureClients;
  readonly #log: Logger;
  readonly #budgetMs: number;
  readonly #concurrency: number;

  constructor(opts: AzureChecksOptions) {
    this.#clients = opts.clients;
    this.#log = opts.log;
    this.#budgetMs = opts.budgetMs ?? 20_000;
    this.#concurrency = opts.concurrency ?? 8;
  }

  /**
   * Throws an AzureCheckError: 400 naming every field Azure does not back, or 503. An update is
   * checked for what it changes: identities it names anew and the roles they (or the service
   * managed identity over them) must hold, a new KMS key or version.
   */
  async cluster(c: ClusterCheck): Promise<void> {
    const change = clusterChange(c);
    if (!change.identities && !change.key) return;
    await this.#checked(async (run) => {
      if (!change.identities) return (await this.#kms(run, c, true)).errors;
      const before = new Set(c.stored ? identityUses(undefined, c.stored).map(useKey) : []);
      const isNew = (u: IdentityUse): boolean => !before.has(useKey(u));
      const [identities, kms] = await Promise.all([
        this.#identities(run, c, isNew),
        this.#kms(run, c, change.key),
      ]);
      // A vault of access policies grants nothing by roles: kmsIdentityErrors checks its policies.
      const rbacVault = kms.vault?.properties?.enableRbacAuthorization !== false ? kms.vault?.id : undefined;
      const scopes = clusterScopes(c.properties, rbacVault);
      const held = new Set(c.stored ? roleNeeds(c.stored, scopes).map(needKey) : []);
      // A role over an identity that does not exist is not asked for: the identity is refused already.
      const needs = roleNeeds(c.properties, scopes).filter(
        (n) => !identities.missing.has(n.scope.toLowerCase()) && !held.has(needKey(n)),
      );
      const roles = await this.#roles(run, needs, identities.principals);
      const principalOf = (id: string): string | undefined => identities.principals.get(id.toLowerCase());
      const kmsTarget = `${OPERATORS}.controlPlaneOperators.kms`;
      const kmsChanged =
        change.key || identityUses(undefined, c.properties).some((u) => u.target === kmsTarget && isNew(u));
      const access = kms.vault && kmsChanged ? kmsIdentityErrors(c.properties, kms.vault, principalOf) : [];
      return [...identities.errors, ...kms.errors, ...roles, ...access];
    });
  }

  /** Throws an AzureCheckError: 400 naming the VM size, zone or node count Azure refuses, or 503. */
  async nodePool(p: NodePoolCheck): Promise<void> {
    const want = poolNeeds(p);
    if (!want) return;
    await this.#checked(async (run) => {
      const { skus, usages } = await this.#compute(run, p.subscriptionId, want.location);
      const found = checkVmSize(skus, want);
      // A pool that grows keeps its size and zone: Azure may have stopped offering them since.
      if ("errors" in found) return want.isNew ? found.errors : [];
      return checkQuota(usages, {
        family: found.sku.family ?? "",
        more: want.moreNodes * vcpusOf(found.sku),
        location: want.location,
        target: want.target,
        what: `The node pool (${want.nodes} × ${want.vmSize})`,
      });
    });
  }

  async #compute(
    run: Run,
    subscriptionId: string,
    location: string,
  ): Promise<{ skus: VmSku[]; usages: VcpuUsage[] }> {
    const compute = this.#clients.compute(subscriptionId);
    const [skus, usages] = await Promise.all([
      this.#call(run, "list Microsoft.Compute/skus", () =>
        collect(compute.resourceSkus.list({ filter: `location eq '${location}'`, abortSignal: run.signal })),
      ),
      this.#call(run, "list Microsoft.Compute/locations/usages", () =>
        collect(compute.usage.list(location, { abortSignal: run.signal })),
      ),
    ]);
    if (skus === NOT_FOUND || usages === NOT_FOUND) throw unavailable(undefined);
    return { skus, usages };
  }

  async #checked(check: (run: Run) => Promise<FieldError[]>): Promise<void> {
    const signal = AbortSignal.timeout(this.#budgetMs);
    const errors = await check({ signal, limit: limiter(this.#concurrency) });
    if (errors.length === 0) return;
    const refused = fieldErrors(errors);
    throw new AzureCheckError(refused.status, refused.body, refused.headers);
  }

  /** One Azure call: its value, NOT_FOUND on a 404, or an AzureCheckError 503 for anything else. */
  async #call<T>(run: Run, operation: string, fn: () => Promise<T>): Promise<Found<T>> {
    try {
      return await run.limit(fn);
    } catch (err) {
      const e = classifyAzureError(err, operation);
      if (e.statusCode === 404) return NOT_FOUND;
      this.#log.error("Checking the customer's Azure resources failed", e);
      throw unavailable(e);
    }
  }

  /** Each identity read once: its principal ID, or a field error when it does not exist. */
  async #identities(
    run: Run,
    c: ClusterCheck,
    reported: (use: IdentityUse) => boolean,
  ): Promise<{ principals: Map<string, string>; missing: Set<string>; errors: FieldError[] }> {
    const uses = identityUses(c.identity, c.properties);
    const principals = new Map<string, string>();
    const errors: FieldError[] = [];
    await Promise.all(
      uses.map(async (use) => {
        const parts = parseIdentityId(use.id);
        if (!parts) {
          errors.push({
            target: use.target,
            message: `'${shorten(use.id, 256)}' is not the resource ID of a user-assigned managed identity`,
          });
          return;
        }
        const client = this.#clients.identities(parts.subscriptionId);
        const found = await this.#call(run, "read Microsoft.ManagedIdentity/userAssignedIdentities", () =>
          client.userAssignedIdentities.get(parts.resourceGroup, parts.name, { abortSignal: run.signal }),
        );
        if (found === NOT_FOUND || !found.principalId)
          errors.push({
            target: use.target,
            message: `The user-assigned identity '${shorten(use.id, 256)}' does not exist`,
          });
        else principals.set(use.id.toLowerCase(), found.principalId);
      }),
    );
    const missing = new Set(uses.map((u) => u.id.toLowerCase()).filter((id) => !principals.has(id)));
    const shown = new Set(uses.filter(reported).map((u) => u.target));
    return { principals, missing, errors: sortByTarget(errors.filter((e) => shown.has(e.target))) };
  }

  /** Every principal's assignments in the subscriptions of the scopes it needs roles on; then what is missing. */
  async #roles(run: Run, needs: RoleNeed[], principals: Map<string, string>): Promise<FieldError[]> {
    const wanted = new Map<string, { principal: string; subscriptionId: string }>();
    for (const need of needs) {
      const principal = principals.get(need.identity.toLowerCase());
      const subscriptionId = /^\/subscriptions\/([^/]+)/i.exec(need.scope)?.[1];
      if (principal && subscriptionId)
        wanted.set(`${principal}\n${subscriptionId.toLowerCase()}`, { principal, subscriptionId });
    }
    const held = new Map<string, Assignment[]>();
    await Promise.all(
      [...wanted.values()].map(async ({ principal, subscriptionId }) => {
        const client = this.#clients.authorization(subscriptionId);
        const listed = await this.#call(run, "list Microsoft.Authorization/roleAssignments", () =>
          collect(
            client.roleAssignments.listForScope(`/subscriptions/${subscriptionId}`, {
              filter: `principalId eq '${principal}'`,
              abortSignal: run.signal,
            }),
          ),
        );
        const assignments = (listed === NOT_FOUND ? [] : listed).map((a) => ({
          scope: a.scope ?? "",
          roleDefinitionId: a.roleDefinitionId ?? "",
        }));
        held.set(principal, [...(held.get(principal) ?? []), ...assignments]);
      }),
    );
    return missingRoles(needs, (identity) => {
      const principal = principals.get(identity.toLowerCase());
      return principal === undefined ? undefined : (held.get(principal) ?? []);
    });
  }

  /**
   * A customer-managed etcd key: its vault (found by name in the cluster's subscription), the key
   * and the version, enabled. Whether the KMS identity may use them is checked with the other
   * identities' roles (kmsIdentityErrors).
   */
  async #kms(
    run: Run,
    c: ClusterCheck,
    checkKey: boolean,
  ): Promise<{ vault?: VaultAccess & { id: string }; errors: FieldError[] }> {
    const kms = kmsOf(c.properties);
    if (!kms) return { errors: [] };
    const vault = await this.#vault(run, c.subscriptionId, kms.vaultName);
    // An unchanged key is not judged again; its vault is still the KMS identity's scope.
    if (!checkKey) return vault ? { vault, errors: [] } : { errors: [] };
    if (!vault)
      return {
        errors: [
          {
            target: `${KMS}.vaultName`,
            message: `The key vault '${shorten(kms.vaultName, 64)}' does not exist in subscription '${c.subscriptionId}'`,
          },
        ],
      };
    const client = this.#clients.keyVault(c.subscriptionId);
    const [key, version] = await Promise.all([
      this.#call(run, "read Microsoft.KeyVault/vaults/keys", () =>
        client.keys.get(vault.resourceGroup, kms.vaultName, kms.key, { abortSignal: run.signal }),
      ),
      this.#call(run, "read Microsoft.KeyVault/vaults/keys/versions", () =>
        client.keys.getVersion(vault.resourceGroup, kms.vaultName, kms.key, kms.version, {
          abortSignal: run.signal,
        }),
      ),
    ]);
    return { vault, errors: keyErrors(kms, found(key), found(version)) };
  }

  /** A vault of the subscription by name (names are unique across Azure), with its resource group. */
  async #vault(
    run: Run,
    subscriptionId: string,
    name: string,
  ): Promise<(VaultAccess & { id: string; resourceGroup: string }) | undefined> {
    const client = this.#clients.keyVault(subscriptionId);
    const vaults = await this.#call(run, "list Microsoft.KeyVault/vaults", () =>
      collect(client.vaults.listBySubscription({ abortSignal: run.signal })),
    );
    const vault = vaults === NOT_FOUND ? undefined : vaults.find((v) => sameName(v.name, name));
    const resourceGroup = vault?.id ? /\/resourceGroups\/([^/]+)\//i.exec(vault.id)?.[1] : undefined;
    return vault?.id && resourceGroup ? { ...vault, id: vault.id, resourceGroup } : undefined;
  }
}

/** What a node pool asks of Azure; undefined when nothing (no more nodes than before). */
export function poolNeeds(p: NodePoolCheck):
  | {
      vmSize: string;
      location: string;
      zone?: string;
      isNew: boolean;
      nodes: number;
      moreNodes: number;
      target: string;
    }
  | undefined {
  const before = p.stored ? nodesOf(p.stored).nodes : 0;
  const after = nodesOf(p.properties);
  const vmSize = p.properties.platform?.vmSize;
  if (!vmSize || (p.stored && after.nodes <= before)) return undefined;
  const zone = p.stored ? undefined : p.properties.platform?.availabilityZone;
  return {
    vmSize,
    location: p.location.toLowerCase().replace(/\s+/g, ""),
    ...(zone !== undefined ? { zone } : {}),
    isNew: !p.stored,
    nodes: after.nodes,
    moreNodes: after.nodes - before,
    target: after.target,
  };
}

/** A key or version as read: whether it exists and is enabled. */
type KeyState = "missing" | "disabled" | "enabled";

function found(x: typeof NOT_FOUND | { attributes?: { enabled?: boolean } }): KeyState {
  if (x === NOT_FOUND) return "missing";
  return x.attributes?.enabled === false ? "disabled" : "enabled";
}

/** The field error for a customer-managed key or version that is missing or disabled. */
export function keyErrors(kms: KmsKey, key: KeyState, version: KeyState): FieldError[] {
  const where = `in key vault '${kms.vaultName}'`;
  const keyName = shorten(kms.key, 64);
  const versionName = shorten(kms.version, 64);
  if (key === "missing")
    return [{ target: `${KMS}.activeKey.name`, message: `The key '${keyName}' does not exist ${where}` }];
  if (key === "disabled")
    return [{ target: `${KMS}.activeKey.name`, message: `The key '${keyName}' ${where} is disabled` }];
  if (version === "missing")
    return [
      {
        target: `${KMS}.activeKey.version`,
        message: `The key '${keyName}' ${where} has no version '${versionName}'`,
      },
    ];
  if (version === "disabled")
    return [
      {
        target: `${KMS}.activeKey.version`,
        message: `Version '${versionName}' of the key '${keyName}' ${where} is disabled`,
      },
    ];
  return [];
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

const useKey = (u: IdentityUse): string => `${u.target}\n${u.id.toLowerCase()}`;
const needKey = (n: RoleNeed): string =>
  `${n.identity.toLowerCase()}\n${roleGuid(n.role.resourceId)}\n${n.scope.toLowerCase()}`;

export interface KmsKey {
  vaultName: string;
  key: string;
  version: string;
}

/** The customer-managed key of the hub properties, when etcd is to be encrypted with one. */
export function kmsOf(properties: ClusterProperties): KmsKey | undefined {
  const encryption = properties.etcd?.dataEncryption;
  if (encryption?.keyManagementMode !== "CustomerManaged") return undefined;
  const kms = encryption.customerManaged?.kms;
  if (!kms || !("vaultName" in kms)) return undefined;
  const { vaultName } = kms;
  const { name: key, version } = kms.activeKey ?? {};
  return vaultName && key && version ? { vaultName, key, version } : undefined;
}

type VaultAccess = {
  name?: string;
  properties?: {
    enableRbacAuthorization?: boolean;
    accessPolicies?: Array<{ objectId?: string; permissions?: { keys?: string[] } }>;
  };
};

/**
 * The KMS operator's identity must be named. A vault that authorizes by Azure RBAC is a scope of
 * its role (roleNeeds); one of access policies must have a policy letting its principal encrypt
 * and decrypt with keys.
 */
export function kmsIdentityErrors(
  properties: ClusterProperties,
  vault: VaultAccess,
  principalOf: (identity: string) => string | undefined,
): FieldError[] {
  const id =
    properties.platform?.operatorsAuthentication?.userAssignedIdentities?.controlPlaneOperators?.["kms"];
  const target = `${OPERATORS}.controlPlaneOperators.kms`;
  if (!id)
    return [
      {
        target,
        message:
          "A cluster whose etcd is encrypted with a customer-managed key needs the 'kms' operator's identity",
      },
    ];
  const principal = principalOf(id);
  if (vault.properties?.enableRbacAuthorization !== false || principal === undefined) return [];
  const allowed = (vault.properties.accessPolicies ?? []).some(
    (p) =>
      sameName(p.objectId, principal) &&
      KMS_KEY_PERMISSIONS.every((want) =>
        (p.permissions?.keys ?? []).some((k) => sameName(k, want) || sameName(k, "all")),
      ),
  );
  if (allowed) return [];
  return [
    {
      target,
      message: `The key vault '${vault.name ?? ""}' has no access policy letting the identity '${shorten(id, 256)}' (principal ${principal}) ${KMS_KEY_PERMISSIONS.join(" and ")} with its keys`,
    },
  ];
}

function sortByTarget(errors: FieldError[]): FieldError[] {
  return errors.sort((a, b) => a.target.localeCompare(b.target));
}

/** A 503 that tells ARM when to try again. */
function unavailable(e: AzureError | undefined): AzureCheckError {
  const retryAfterMs = e && "retryAfterMs" in e ? e.retryAfterMs : undefined;
  const seconds = Math.max(1, Math.ceil((retryAfterMs ?? 10_000) / 1000));
  return new AzureCheckError(
    503,
    {
      code: CODES.ServiceUnavailable,
      message: "The customer's Azure resources could not be checked right now; try again later.",
    },
    { "retry-after": String(seconds) },
  );
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Runs at most `n` of the functions given to it at once. */
function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
