/**
 * How long an ARM operation may run before ARM is told it Failed (ARO HCP's operation completion
 * deadlines; the bounds are ours). The deadline is fixed when the request starts the operation,
 * as its start time plus the bound of its class, and stored with it (the operation document and
 * the CR's `arm-operation-deadline` annotation), so a restarted frontend keeps it and a poll, a
 * GET and the notifier all judge by the same instant. It is an ARM verdict only: the controllers
 * go on reconciling, and a resource that settles later shows so on GET.
 */

import type { ResourceKind } from "../resource-id.ts";

/** Milliseconds each class of operation may run. */
export interface OperationDeadlines {
  clusterCreate: number;
  nodePoolCreate: number;
  externalAuthCreate: number;
  /** An Update that changes no version.id (a cluster's, a node pool's, an external auth's). */
  update: number;
  /** An Update that changes version.id of a cluster or a node pool. */
  upgrade: number;
  /** Any resource's DELETE. */
  delete: number;
  /** requestAdminCredential: one certificate signing request, approved and signed. */
  requestCredential: number;
  /** revokeCredentials: the signer rotated and every earlier certificate no longer trusted. */
  revokeCredentials: number;
}

const MINUTE = 60_000;

export const DEFAULT_DEADLINES: OperationDeadlines = {
  clusterCreate: 20 * MINUTE,
  nodePoolCreate: 20 * MINUTE,
  externalAuthCreate: 20 * MINUTE,
  update: 20 * MINUTE,
  upgrade: 45 * MINUTE,
  delete: 25 * MINUTE,
  requestCredential: 10 * MINUTE,
  revokeCredentials: 20 * MINUTE,
};

/** The bounds with every unset one defaulted; a bound that is not a positive number is refused. */
export function resolveDeadlines(given: Partial<OperationDeadlines> = {}): OperationDeadlines {
  const resolved = { ...DEFAULT_DEADLINES, ...given };
  for (const [name, ms] of Object.entries(resolved))
    if (!Number.isFinite(ms) || ms <= 0)
      throw new TypeError(`operation deadline ${name} must be a positive number of milliseconds`);
  return resolved;
}

/** What an operation does, as far as its bound goes. */
export interface DeadlineSubject {
  request: "Create" | "Update" | "Delete" | "RequestCredential" | "RevokeCredentials";
  kind: ResourceKind;
  /** An Update that changes version.id. */
  upgrade?: boolean;
}

export function boundOf(deadlines: OperationDeadlines, s: DeadlineSubject): number {
  switch (s.request) {
    case "Delete":
      return deadlines.delete;
    case "RequestCredential":
      return deadlines.requestCredential;
    case "RevokeCredentials":
      return deadlines.revokeCredentials;
    case "Update":
      return s.upgrade ? deadlines.upgrade : deadlines.update;
    case "Create":
      if (s.kind === "cluster") return deadlines.clusterCreate;
      return s.kind === "nodePool" ? deadlines.nodePoolCreate : deadlines.externalAuthCreate;
  }
}

/** The deadline of an operation that starts at `startTime` (ISO), as ISO. */
export function deadlineAfter(startTime: string, boundMs: number): string {
  return new Date(Date.parse(startTime) + boundMs).toISOString();
}
