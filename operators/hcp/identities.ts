/**
 * Stand-ins for what Azure knows of a user-assigned managed identity. The real service reads an
 * identity's client and principal IDs from Microsoft.ManagedIdentity; stable UUIDs derived from
 * the identity's ARM ID keep the HostedCluster and the frontend's answers valid and the same on
 * every read without a read per identity. Shared by the cluster controller and the frontend, so
 * both give one identity the same IDs, and by the ARM emulator, whose identities have them too
 * (the frontend's checks read the principal ID from Azure itself, azure-checks.ts).
 */
import { createHash } from "node:crypto";

function stableUuid(seed: string): string {
  const h = createHash("sha256").update(seed).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The identity's client (application) ID. */
export function identityClientId(resourceId: string): string {
  return stableUuid(resourceId.toLowerCase());
}

/** The identity's principal (object) ID. */
export function identityPrincipalId(resourceId: string): string {
  return stableUuid(`principal:${resourceId.toLowerCase()}`);
}
