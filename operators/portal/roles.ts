/**
 * Roles from the sign-in's groups (decision 0014), and what each role may do. The server checks
 * every route with `allowed`; pages only hide what it would refuse.
 */
export const PORTAL_ROLES = ["viewer", "operator", "approver"] as const;
export type PortalRole = (typeof PORTAL_ROLES)[number];

export type PortalAction =
  | "view"
  | "session.request"
  | "session.revoke"
  | "session.decide"
  | "managementcluster.cordon"
  | "operation.retry";

const ACTIONS_BY_ROLE: Record<PortalRole, readonly PortalAction[]> = {
  viewer: ["view"],
  operator: ["view", "session.request", "session.revoke", "managementcluster.cordon", "operation.retry"],
  approver: ["view", "session.decide", "session.revoke"],
};

/** Parses `group=role` pairs (the --portal-role flag, repeatable); refuses an unknown role. */
export function parseRoleMap(pairs: readonly string[]): Map<string, PortalRole[]> {
  const map = new Map<string, PortalRole[]>();
  for (const pair of pairs) {
    const at = pair.lastIndexOf("=");
    const group = pair.slice(0, at).trim();
    const role = pair.slice(at + 1).trim();
    if (at <= 0 || !group) throw new Error(`portal role "${pair}": want group=role`);
    if (!(PORTAL_ROLES as readonly string[]).includes(role)) {
      throw new Error(`portal role "${pair}": role must be one of ${PORTAL_ROLES.join(", ")}`);
    }
    map.set(group, [...(map.get(group) ?? []), role as PortalRole]);
  }
  return map;
}

export function rolesOf(groups: readonly string[], map: Map<string, PortalRole[]>): PortalRole[] {
  const roles = new Set<PortalRole>();
  for (const g of groups) for (const r of map.get(g) ?? []) roles.add(r);
  return PORTAL_ROLES.filter((r) => roles.has(r));
}

export function allowed(roles: readonly PortalRole[], action: PortalAction): boolean {
  return roles.some((r) => ACTIONS_BY_ROLE[r].includes(action));
}
