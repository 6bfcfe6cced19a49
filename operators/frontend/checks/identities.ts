/**
 * A cluster's user-assigned identities (each operator's, the service managed identity, those
 * assigned to the cluster): which the request names, and that each exists in Azure, read once with
 * its principal ID for the role checks (role-assignments.ts).
 */
import type { Identity } from "../api/arm-resource.ts";
import type { ClusterProperties } from "../api/internal.ts";
import { shorten } from "../api/json.ts";
import type { FieldError } from "../errors.ts";
import { call, NOT_FOUND, type Run } from "./azure-calls.ts";

export const OPERATORS = "properties.platform.operatorsAuthentication.userAssignedIdentities";

/** One identity the request names, at the first field that names it. */
export interface IdentityUse {
  id: string;
  target: string;
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

/** A use's identity at its field: the same on an update when neither changed. */
export const useKey = (u: IdentityUse): string => `${u.target}\n${u.id.toLowerCase()}`;

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

/** The identities read: principal IDs by lower-cased ID, those missing, and the errors to report. */
export interface IdentitiesRead {
  principals: Map<string, string>;
  missing: Set<string>;
  errors: FieldError[];
}

/** Reads one identity: its principal ID, or the field error why it cannot be used. */
async function readIdentity(run: Run, use: IdentityUse): Promise<{ principal: string } | FieldError> {
  const parts = parseIdentityId(use.id);
  if (!parts)
    return {
      target: use.target,
      message: `'${shorten(use.id, 256)}' is not the resource ID of a user-assigned managed identity`,
    };
  const client = run.clients.identities(parts.subscriptionId);
  const found = await call(run, "read Microsoft.ManagedIdentity/userAssignedIdentities", () =>
    client.userAssignedIdentities.get(parts.resourceGroup, parts.name, { abortSignal: run.signal }),
  );
  if (found === NOT_FOUND || !found.principalId)
    return {
      target: use.target,
      message: `The user-assigned identity '${shorten(use.id, 256)}' does not exist`,
    };
  return { principal: found.principalId };
}

/** Each identity read once; errors only for the uses `reported` picks (an update's new ones). */
export async function readIdentities(
  run: Run,
  uses: IdentityUse[],
  reported: (use: IdentityUse) => boolean,
): Promise<IdentitiesRead> {
  const principals = new Map<string, string>();
  const errors: FieldError[] = [];
  await Promise.all(
    uses.map(async (use) => {
      const read = await readIdentity(run, use);
      if ("principal" in read) principals.set(use.id.toLowerCase(), read.principal);
      else errors.push(read);
    }),
  );
  const missing = new Set(uses.map((u) => u.id.toLowerCase()).filter((id) => !principals.has(id)));
  const shown = new Set(uses.filter(reported).map((u) => u.target));
  return { principals, missing, errors: sortByTarget(errors.filter((e) => shown.has(e.target))) };
}

function sortByTarget(errors: FieldError[]): FieldError[] {
  return errors.sort((a, b) => a.target.localeCompare(b.target));
}
