/**
 * AccessSession (hcp.aro.dev/v1alpha1, cluster-scoped): an SRE's time-limited access to one hosted
 * cluster's API, through the session gate only (issue 36; the model is ARO HCP's session gate).
 * The owner asks (the portal or hcpctl, with the name their sign-in gave); a read-only session may
 * be approved by policy, an admin one needs an approver who is not the owner; once approved the
 * session controller mints a client certificate through the hosted cluster's SRE break-glass
 * signer (the break-glass path, HyperShift's CSR approval) with the owner's name in it, and keeps
 * its key in the operators' namespace: it never leaves the service cluster. The gate forwards the
 * owner's requests with it until the session expires, is revoked or is deleted. Mirrors
 * crds/hcp.aro.dev_accesssessions.yaml.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import type { API_VERSION } from "./meta.ts";
import { GROUP, VERSION, type Condition } from "./meta.ts";

export const ACCESS_SESSION_KIND = "AccessSession";

export const AccessSessionResource = {
  group: GROUP,
  version: VERSION,
  kind: ACCESS_SESSION_KIND,
  plural: "accesssessions",
  namespaced: false,
} as const satisfies ResourceType;

/** Held by the session controller until the session's work and its key's Secret are gone. */
export const ACCESS_SESSION_FINALIZER = "hcp.aro.dev/access-session";

/**
 * Label on a session's credential Secret (value: the session's name): the gate's Secret informer
 * selects on it, so it caches sessions' kubeconfigs and nothing else of the namespace.
 */
export const ACCESS_SESSION_LABEL = "hcp.aro.dev/access-session";

/** The HyperShift signer class a session's certificate is signed by (HyperShift's SRE break-glass signer). */
export const SRE_BREAK_GLASS = "sre-break-glass";

export const ACCESS_LEVELS = ["ReadOnly", "Admin"] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/**
 * The CRD's bounds of spec.ttlSeconds; the region's policy (the session controller's flags) may
 * bound it tighter per level, and refuses a longer one with a condition naming the limit.
 */
export const ACCESS_SESSION_TTL_SECONDS = { min: 300, max: 43_200 } as const;

/**
 * Groups in the session certificate's subject (O=). The hosted cluster's RBAC grants ReadOnly's
 * group the `view` ClusterRole; Admin's is system:masters. The gate also refuses any verb but
 * get, list and watch on a ReadOnly session, so a mistaken binding cannot widen it.
 */
export const ACCESS_LEVEL_GROUPS: Record<AccessLevel, string> = {
  ReadOnly: "hcp:sre-readonly",
  Admin: "system:masters",
};

export interface AccessSession extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof ACCESS_SESSION_KIND;
  spec: AccessSessionSpec;
  status?: AccessSessionStatus;
}

/**
 * Immutable once created, but for approval and revocation, each set once (admission enforces it,
 * and that the approver is the user who sets it and not the owner).
 */
export interface AccessSessionSpec {
  /** Who may use it: the name the owner's sign-in gives (the OIDC email claim). */
  owner: string;
  /** The hosted cluster it opens. */
  clusterRef: { namespace: string; name: string };
  level: AccessLevel;
  /** Why; in every audit line of the session. */
  reason: string;
  /** How long it lasts from its approval. */
  ttlSeconds: number;
  /** Set once by an approver (never the owner), or by the session controller when policy approves. */
  approval?: AccessSessionDecision;
  /** Set once by the owner or an approver: the session ends now, on every gate replica. */
  revocation?: AccessSessionRevocation;
}

export interface AccessSessionDecision {
  decision: "Approved" | "Denied";
  /** Who decided: a person's sign-in name, or `policy` for read-only approval by policy. */
  by: string;
  reason?: string;
}

export interface AccessSessionRevocation {
  by: string;
  reason?: string;
}

/** Where a session stands: a summary for people; the gate reads conditions and expiresAt. */
export const ACCESS_SESSION_PHASES = [
  "Pending",
  "Approved",
  "Active",
  "Denied",
  "Expired",
  "Revoked",
  "Failed",
] as const;
export type AccessSessionPhase = (typeof ACCESS_SESSION_PHASES)[number];

export interface AccessSessionStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  phase?: AccessSessionPhase;
  /** When it was approved: its TTL counts from here. */
  approvedAt?: string;
  /** approvedAt + ttlSeconds: the gate refuses from this instant on. */
  expiresAt?: string;
  /**
   * The Secret in the operators' namespace with the session's kubeconfig (client certificate and
   * key, the hosted API's URL and CA). Only the session controller and the gate read it.
   */
  credentialSecret?: string;
  /** The certificate's subject common name (the owner's name in it), for audit. */
  credentialSubject?: string;
}

/** The session controller's conditions (Ready summarises them, as on every kind here). */
export const ACCESS_SESSION_CONDITIONS = {
  /** True once approved; False with reason Denied or PendingApproval. */
  approved: "Approved",
  /** True once the certificate is signed and its kubeconfig is in status.credentialSecret. */
  credentialIssued: "CredentialIssued",
  /** True while the gate may forward: approved, issued, not expired, not revoked. */
  active: "Active",
} as const;

/** Why a session cannot be used now, for the gate's 403 and the portal. */
export type SessionRefusal =
  "NotApproved" | "Denied" | "CredentialPending" | "Expired" | "Revoked" | "Deleting";

/**
 * Whether the gate may forward for `s` at `now`: the one rule the gate, the portal and hcpctl share.
 * Reads the spec's revocation and the status' expiry itself, so a gate replica whose cache has the
 * revocation refuses at once, before the controller has written any status.
 */
export function sessionUsable(
  s: AccessSession,
  now: number,
): { usable: true; credentialSecret: string; expiresAt: number } | { usable: false; why: SessionRefusal } {
  const refusal = decidedRefusal(s);
  if (refusal) return { usable: false, why: refusal };
  const expiresAt = Date.parse(s.status?.expiresAt ?? "");
  if (Number.isFinite(expiresAt) && now >= expiresAt) return { usable: false, why: "Expired" };
  const credentialSecret = s.status?.credentialSecret;
  if (!credentialSecret || !Number.isFinite(expiresAt)) return { usable: false, why: "CredentialPending" };
  return { usable: true, credentialSecret, expiresAt };
}

/** What the spec alone refuses: going, revoked, denied or not yet approved. */
function decidedRefusal(s: AccessSession): SessionRefusal | undefined {
  if (s.metadata.deletionTimestamp) return "Deleting";
  if (s.spec.revocation) return "Revoked";
  const decision = s.spec.approval?.decision;
  if (decision === "Denied") return "Denied";
  return decision === "Approved" ? undefined : "NotApproved";
}
