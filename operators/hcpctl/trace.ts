/**
 * The hops of one ARM operation, read from object state only (no log store):
 *
 *   Accepted    the frontend's operation document: when the request came
 *   Written … Reported   for a Create or Update (trace-change.ts)
 *   Deleting → WorksRemoved → Removed   for a Delete
 *   Result      the operation's state, as a poll of the operation would answer it
 *
 * Each with its time and the seconds since the previous hop with one. A hop not reached yet is
 * Pending with what it waits for; one the objects no longer tell (a later operation replaced this
 * one's annotations) is Unknown, with why. Pure.
 */
import type { ManifestWork } from "../api/work/v1.ts";
import { isTerminal, settle } from "../api/v1alpha1/index.ts";
import { find } from "./conditions.ts";
import { workDeletionWhy } from "./blockers.ts";
import { changeHops } from "./trace-change.ts";
import type { OperationMatch } from "./trace-find.ts";
import {
  seconds,
  supersededBy,
  unknownHops,
  type Hop,
  type HopName,
  type ObjectRef,
  type OperationTrace,
  type TraceInput,
} from "./trace-hop.ts";

export type {
  Hop,
  HopName,
  HopState,
  ObjectRef,
  OperationTrace,
  RequestTrace,
  TraceInput,
} from "./trace-hop.ts";

function acceptedHop(m: OperationMatch): Hop {
  const d = m.doc;
  const version = d.apiVersion ? ` (api-version ${d.apiVersion})` : "";
  return {
    hop: "Accepted",
    object: { kind: "Operation", namespace: m.namespace, name: d.id },
    state: "Done",
    ...(d.startTime ? { time: d.startTime, timeFrom: "operation startTime" } : {}),
    message: d.startTime
      ? `${d.request} of ${d.resourceId || d.target}${version}`
      : `${d.request}: the operation's document was not found; the CR's annotations name it`,
  };
}

function resultHop(m: OperationMatch, now: string): Hop {
  const settled = settle(m.doc, m.cr, now);
  const state = settled.status;
  const error = settled.error ? `: ${settled.error.code}: ${settled.error.message}` : "";
  // An end time stands when stored, or when computed from the CR; with the CR gone it is "now".
  const timed = settled.endTime && (isTerminal(m.doc.status) || m.cr);
  const hopState = state === "Succeeded" ? "Done" : isTerminal(state) ? "Failed" : "Pending";
  return {
    hop: "Result",
    object: { kind: "Operation", namespace: m.namespace, name: m.doc.id },
    state: hopState,
    ...(timed ? { time: settled.endTime, timeFrom: "operation endTime" } : {}),
    message: `${state}${error}`,
    ...(hopState === "Pending"
      ? {
          waitingFor:
            m.doc.request === "Delete" ? "the CR to be gone" : "Ready and not Progressing, or Degraded",
        }
      : {}),
  };
}

/** A deleted CR is gone only after its works and finalizers: each hop came, when is not recorded. */
function goneHops(target: ObjectRef): Hop[] {
  const done = (hop: HopName, message: string): Hop => ({ hop, object: target, state: "Done", message });
  return [
    done("Deleting", "the CR is gone (when its deletion began is not recorded)"),
    done("WorksRemoved", "the CR is gone, and it goes only once its works are (when is not recorded)"),
    done("Removed", "the CR is gone (when is not recorded)"),
  ];
}

function deleteHops(m: OperationMatch, works: readonly ManifestWork[]): Hop[] {
  const target: ObjectRef = { kind: m.crKind, namespace: m.namespace, name: m.doc.target };
  const cr = m.cr;
  if (!cr) return goneHops(target);
  const superseded = supersededBy(cr, m.doc);
  if (superseded) return unknownHops(["Deleting", "WorksRemoved", "Removed"], target, superseded);
  const since = cr.metadata.deletionTimestamp;
  const finalizers = (cr.metadata.finalizers ?? []).join(", ") || "none";
  const deleting: Hop = since
    ? {
        hop: "Deleting",
        object: target,
        state: "Done",
        time: since,
        timeFrom: "metadata.deletionTimestamp",
        message: `finalizers: ${finalizers}`,
      }
    : {
        hop: "Deleting",
        object: target,
        state: "Pending",
        message: "no deletionTimestamp",
        waitingFor: "the frontend's delete",
      };
  const left = works.map((w) => `${w.metadata.name ?? ""} (${workDeletionWhy(w)})`);
  const worksHop: Hop =
    left.length > 0
      ? {
          hop: "WorksRemoved",
          object: { kind: "ManifestWork", name: works[0]?.metadata.name ?? "" },
          state: "Pending",
          message: `${left.length} ManifestWork(s) left`,
          waitingFor: `the works to go: ${left.join("; ")}`,
        }
      : {
          hop: "WorksRemoved",
          object: { kind: "ManifestWork", name: "" },
          state: "Done",
          message: "no ManifestWork left (when is not recorded)",
        };
  const why = find(cr.status?.conditions, "Deleting")?.message;
  return [
    deleting,
    worksHop,
    {
      hop: "Removed",
      object: target,
      state: "Pending",
      message: `finalizers: ${finalizers}`,
      waitingFor: `the finalizers ${finalizers} to be removed${why ? ` (${why})` : ""}`,
    },
  ];
}

/** Each hop's seconds since the previous hop with a time. */
function withIntervals(hops: Hop[]): Hop[] {
  let previous: string | undefined;
  return hops.map((h) => {
    if (!h.time) return h;
    const since = previous ? seconds(h.time) - seconds(previous) : undefined;
    previous = h.time;
    return since === undefined || Number.isNaN(since) ? h : { ...h, sincePreviousSeconds: since };
  });
}

export function traceOperation(input: TraceInput): OperationTrace {
  const { match: m } = input;
  const middle = m.doc.request === "Delete" ? deleteHops(m, input.works) : changeHops(m, input.works);
  return {
    operation: m.doc,
    matchedBy: m.matchedBy,
    recordedIn: m.recordedIn,
    target: { kind: m.crKind, namespace: m.namespace, name: m.doc.target },
    hops: withIntervals([acceptedHop(m), ...middle, resultHop(m, input.now)]),
  };
}
