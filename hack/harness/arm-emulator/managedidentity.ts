/**
 * Microsoft.ManagedIdentity user-assigned identities: PUT, GET, DELETE and list, answered at once
 * as the provider does. An identity's principal (object) and client IDs are the stable ones the
 * operators derive from its ARM ID (operators/hcp/identities.ts), so the frontend's answers and the
 * HostedCluster name the IDs Azure would; the tenant is the emulator's.
 */
import { identityClientId, identityPrincipalId } from "../../../operators/hcp/identities.ts";
import { cloudError } from "./http.ts";
import type { SyncKind } from "./synchronous.ts";

export const IDENTITY_TYPE = "Microsoft.ManagedIdentity/userAssignedIdentities";

const IDENTITY_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_-]{2,127}$/;

export const identityKind: SyncKind = {
  type: IDENTITY_TYPE,
  invalidName(name) {
    if (IDENTITY_NAME.test(name)) return undefined;
    return cloudError(
      400,
      "InvalidResourceName",
      `Resource name ${name} is invalid. The name can be 3-128 characters long; it must start with a letter or number and may contain letters, numbers, hyphens and underscores.`,
    );
  },
  build(t, { id }) {
    return {
      tenantId: t.ctx.tenantId,
      principalId: identityPrincipalId(id),
      clientId: identityClientId(id),
    };
  },
};
