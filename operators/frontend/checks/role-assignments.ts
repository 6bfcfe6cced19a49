/**
 * The roles a cluster's identities must hold, and whether Azure's role assignments give them: each
 * operator's role (operator-identities.ts) on the customer's network resources it acts on (subnet,
 * virtual network, network security group) and on the key vault, the service managed identity's
 * over the network and every operator's identity; an assignment on a scope above counts.
 */
import type { ClusterProperties } from "../api/internal.ts";
import { shorten } from "../api/json.ts";
import type { FieldError } from "../errors.ts";
import { call, collect, NOT_FOUND, type Run } from "./azure-calls.ts";
import { OPERATORS } from "./identities.ts";
import {
  CONTROL_PLANE_OPERATORS,
  DATA_PLANE_OPERATORS,
  SERVICE_MANAGED_IDENTITY_ROLES,
  type RoleDefinition,
  type RoleScope,
} from "./operator-identities.ts";

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

/** The cluster's network resources (the VNet is its subnet's), and the key vault when known. */
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

/** A need by identity, role and scope: the same on an update when it was held before. */
export const needKey = (n: RoleNeed): string =>
  `${n.identity.toLowerCase()}\n${roleGuid(n.role.resourceId)}\n${n.scope.toLowerCase()}`;

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

/** Every principal's assignments in the subscriptions of the scopes it needs roles on; then what is missing. */
export async function readMissingRoles(
  run: Run,
  needs: RoleNeed[],
  principals: Map<string, string>,
): Promise<FieldError[]> {
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
      const client = run.clients.authorization(subscriptionId);
      const listed = await call(run, "list Microsoft.Authorization/roleAssignments", () =>
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
