/**
 * The managed identities of a cluster, as ARO HCP checks and shows them. Every control plane
 * operator's identity and the service managed identity must be assigned to the cluster
 * (`identity.userAssignedIdentities`), each assigned identity used by exactly one of them, and no
 * data plane operator's identity assigned (those run in the customer's nodes, not as the
 * cluster). Identity resource IDs compare case-insensitively. Responses carry each assigned
 * identity's read-only principalId and clientId, and the tenant.
 */
import { identityClientId, identityPrincipalId } from "../../hcp/identities.ts";
import type { ClusterProperties } from "../api/internal.ts";
import { isObject, shorten, type JsonObject } from "../api/json.ts";
import type { FieldError } from "../errors.ts";

const OPERATORS = "properties.platform.operatorsAuthentication.userAssignedIdentities";

/** The identities assigned to a resource, by lower-cased ID, with the ID as sent. */
function assignedOf(identity: JsonObject | undefined): Map<string, string> {
  const assigned = identity?.["userAssignedIdentities"];
  const ids = isObject(assigned) ? Object.keys(assigned) : [];
  return new Map(ids.map((id) => [id.toLowerCase(), id]));
}

/** Assigned identities no operator uses, or more than one does. */
function unusedOrShared(assigned: Map<string, string>, uses: Map<string, string[]>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, id] of assigned) {
    const target = `identity.userAssignedIdentities.${id}`;
    const by = uses.get(key) ?? [];
    if (by.length === 0)
      errors.push({
        target,
        message: `The identity '${shorten(id, 256)}' is assigned to the cluster but no control plane operator nor the service managed identity uses it`,
      });
    if (by.length > 1)
      errors.push({
        target,
        message: `The identity '${shorten(id, 256)}' is used more than once (${by.join(", ")}); each operator needs its own`,
      });
  }
  return errors;
}

/** Field errors for a cluster whose operators' identities and assigned identities disagree. */
export function checkOperatorIdentities(
  identity: JsonObject | undefined,
  properties: ClusterProperties,
): FieldError[] {
  const errors: FieldError[] = [];
  const ids = properties.platform?.operatorsAuthentication?.userAssignedIdentities ?? {};
  const assigned = assignedOf(identity);
  const uses = new Map<string, string[]>();
  const use = (id: string | undefined, target: string): void => {
    if (id === undefined) return;
    const key = id.toLowerCase();
    if (!assigned.has(key))
      errors.push({
        target,
        message: `The identity '${shorten(id, 256)}' of '${target}' is not assigned to the cluster: add it to 'identity.userAssignedIdentities'`,
      });
    uses.set(key, [...(uses.get(key) ?? []), target]);
  };
  for (const [name, id] of Object.entries(ids.controlPlaneOperators ?? {}))
    use(id, `${OPERATORS}.controlPlaneOperators.${name}`);
  use(ids.serviceManagedIdentity, `${OPERATORS}.serviceManagedIdentity`);
  errors.push(...unusedOrShared(assigned, uses));
  for (const [name, id] of Object.entries(ids.dataPlaneOperators ?? {}))
    if (assigned.has(id.toLowerCase()))
      errors.push({
        target: `${OPERATORS}.dataPlaneOperators.${name}`,
        message: `The identity '${shorten(id, 256)}' of data plane operator '${name}' must not be assigned to the cluster ('identity.userAssignedIdentities'): data plane operators run in the cluster's nodes`,
      });
  return errors;
}

/** The stored identity block with its read-only fields filled: principal and client IDs, tenant. */
export function identityWithDetails(identity: JsonObject, tenantId: string | undefined): JsonObject {
  const assigned = identity["userAssignedIdentities"];
  return {
    ...identity,
    ...(tenantId ? { tenantId } : {}),
    ...(isObject(assigned)
      ? {
          userAssignedIdentities: Object.fromEntries(
            Object.keys(assigned).map((id) => [
              id,
              { principalId: identityPrincipalId(id), clientId: identityClientId(id) },
            ]),
          ),
        }
      : {}),
  };
}
