/**
 * What `hcpctl trace` prints, as data (the hops of one ARM operation), and the small rules every
 * kind of hop shares: times compared at the apiserver's precision, hops the objects no longer
 * tell, hops waiting for an earlier one.
 */
import type { HcpCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import { ARM_ANNOTATIONS } from "../api/v1alpha1/index.ts";
import type { OperationDoc } from "../api/v1alpha1/index.ts";
import type { MatchedBy, OperationMatch } from "./trace-find.ts";

export type HopName =
  | "Accepted"
  | "Written"
  | "Observed"
  | "Published"
  | "Applied"
  | "Reported"
  | "Deleting"
  | "WorksRemoved"
  | "Removed"
  | "Result";

export type HopState = "Done" | "Pending" | "Failed" | "Unknown";

export interface ObjectRef {
  kind: string;
  namespace?: string;
  name: string;
}

export interface Hop {
  hop: HopName;
  /** The object that records the hop. */
  object: ObjectRef;
  state: HopState;
  /** When the hop was reached (RFC 3339), as far as the objects record it. */
  time?: string;
  /** The objects record only that the hop was reached by `time`, not when. */
  upperBound?: boolean;
  /** The field `time` was read from. */
  timeFrom?: string;
  /**
   * Reached before the request: the request did not change the generation this hop is about
   * (a change of tags), so the hop has no time of its own for it.
   */
  beforeRequest?: boolean;
  /** Seconds since the previous hop that has a time. */
  sincePreviousSeconds?: number;
  message: string;
  /** For a Pending hop: what it waits for. */
  waitingFor?: string;
}

export interface OperationTrace {
  operation: OperationDoc;
  matchedBy: MatchedBy;
  recordedIn: OperationMatch["recordedIn"];
  target: ObjectRef;
  hops: Hop[];
}

/** The document `trace -o json|yaml` prints. */
export interface RequestTrace {
  apiVersion: "hcpctl.hcp.aro.dev/v1alpha1";
  kind: "RequestTrace";
  /** The correlation or client request ID asked for. */
  id: string;
  /** When the objects were read (RFC 3339). */
  observedAt: string;
  operations: OperationTrace[];
}

/** What one operation's hops are read from. */
export interface TraceInput {
  match: OperationMatch;
  /** The CR's own works (a cluster's without its pools'; a pool's). */
  works: readonly ManifestWork[];
  /** When the objects were read (RFC 3339). */
  now: string;
}

/** Kubernetes keeps times in whole seconds: compare at that precision. */
export const seconds = (t: string | undefined): number => (t ? Math.floor(Date.parse(t) / 1000) : Number.NaN);
export const notBefore = (t: string | undefined, after: string | undefined): boolean =>
  !(seconds(t) < seconds(after));

export const refOf = (
  o: { kind?: string; metadata: { namespace?: string; name?: string } },
  kind?: string,
): ObjectRef => ({
  kind: kind ?? o.kind ?? "",
  ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  name: o.metadata.name ?? "",
});

/** The hops the objects no longer tell, and why. */
export function unknownHops(names: HopName[], target: ObjectRef, why: string): Hop[] {
  return names.map((hop) => ({ hop, object: target, state: "Unknown" as const, message: why }));
}

/** A hop that waits for an earlier one. */
export function pending(hop: HopName, object: ObjectRef, waitingFor: string): Hop {
  return { hop, object, state: "Pending", message: "not reached", waitingFor };
}

/** Why the CR no longer tells this operation's story: a later operation is on it. */
export function supersededBy(cr: HcpCluster | NodePool, doc: OperationDoc): string | undefined {
  const current = cr.metadata.annotations?.[ARM_ANNOTATIONS.operation];
  if (current?.toLowerCase() === doc.id.toLowerCase()) return undefined;
  const request = cr.metadata.annotations?.[ARM_ANNOTATIONS.operationRequest] ?? "operation";
  return `superseded: the CR now carries a later ${request} (operation ${current ?? "unknown"})`;
}
