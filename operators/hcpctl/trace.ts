/**
 * The hops of one ARM operation, read from object state only (no log store):
 *
 *   Accepted    the frontend's operation document: when the request came
 *   Written     the CR the request wrote, at generation G
 *   Observed    the controller got through G (status.observedGeneration)
 *   Published   maestro-server sent the work's generation W that carries the request (Published)
 *   Applied     the agent applied W (Applied, observedGeneration)
 *   Reported    HyperShift's HostedCluster or NodePool, as the work's feedback carries it back
 *   Result      the operation's state, as a poll of the operation would answer it
 *
 * A Delete goes Accepted → Deleting → WorksRemoved → Removed → Result. Conditions keep the time
 * they last changed status, so a hop's time is exact when its condition changed after the
 * request, and otherwise only a bound (the last status write, `upperBound`). A hop not reached
 * yet is Pending with what it waits for; one the objects no longer tell (a later operation
 * replaced this one's annotations, or the CR is gone) is Unknown, with why. Pure.
 */
import type { Condition, ManagedFieldsEntry } from "../api/meta/v1.ts";
import type { HcpCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { Manifest, ManifestWork } from "../api/work/v1.ts";
import { ANNOTATIONS } from "../frontend/names.ts";
import { settle, type OperationDoc } from "../frontend/operations.ts";
import { isTerminal } from "../frontend/provisioning-state.ts";
import { feedbackOf, hostedReport, poolReport } from "../hcp/feedback.ts";
import { REQUEST_ID_ANNOTATIONS } from "../hcp/requests.ts";
import { find } from "./conditions.ts";
import { workDeletionWhy } from "./blockers.ts";
import type { CRKind, MatchedBy, OperationMatch } from "./trace-find.ts";
import { specWrittenAt } from "./stale.ts";
import { statusWrittenAt } from "./tree.ts";

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

const CONTROLLER: Record<CRKind, string> = { HcpCluster: "cluster", NodePool: "node pool" };
const REPORTED_KIND: Record<CRKind, string> = { HcpCluster: "HostedCluster", NodePool: "NodePool" };

/** Kubernetes keeps times in whole seconds: compare at that precision. */
const seconds = (t: string | undefined): number => (t ? Math.floor(Date.parse(t) / 1000) : Number.NaN);
const notBefore = (t: string | undefined, after: string | undefined): boolean =>
  !(seconds(t) < seconds(after));

const refOf = (
  o: { kind?: string; metadata: { namespace?: string; name?: string } },
  kind?: string,
): ObjectRef => ({
  kind: kind ?? o.kind ?? "",
  ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  name: o.metadata.name ?? "",
});

/** The newest time of the managedFields entries that pass `keep`. */
function managedTime(
  entries: readonly ManagedFieldsEntry[] | undefined,
  keep: (m: ManagedFieldsEntry) => boolean,
): string | undefined {
  return (entries ?? [])
    .filter((m) => m.time && keep(m))
    .map((m) => m.time ?? "")
    .sort()
    .at(-1);
}

/** When the manager that wrote the operation annotation last wrote the CR (not its status). */
function requestWrittenAt(cr: HcpCluster | NodePool): string | undefined {
  const field = `"f:${ANNOTATIONS.operation}"`;
  return managedTime(
    cr.metadata.managedFields,
    (m) => !m.subresource && JSON.stringify(m.fieldsV1 ?? {}).includes(field),
  );
}

type HopTime = Pick<Hop, "time" | "upperBound" | "timeFrom" | "beforeRequest">;

/**
 * A hop's time from a condition: exact when it changed status at or after `after` (this request's
 * write), else only the bound `fallback` (a later status write); when even that write came before
 * the request, the hop was reached before it, for a generation the request did not change.
 */
function conditionTime(
  c: { lastTransitionTime?: string; type: string } | undefined,
  after: string | undefined,
  fallback: { time: string | undefined; from: string },
): HopTime {
  if (c?.lastTransitionTime && notBefore(c.lastTransitionTime, after))
    return { time: c.lastTransitionTime, timeFrom: `${c.type} condition lastTransitionTime` };
  if (fallback.time && !notBefore(fallback.time, after)) return { beforeRequest: true };
  return fallback.time ? { time: fallback.time, upperBound: true, timeFrom: fallback.from } : {};
}

/** The message of a hop reached before the request. */
const BEFORE = " before the request (its generation was not changed by it)";

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

/** The hops the objects no longer tell, and why. */
function unknownHops(names: HopName[], target: ObjectRef, why: string): Hop[] {
  return names.map((hop) => ({ hop, object: target, state: "Unknown" as const, message: why }));
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

/** Whether the work was written from the CR as this request left it (the work carries its IDs). */
function carriesRequest(work: ManifestWork, doc: OperationDoc): boolean {
  const a = work.metadata.annotations ?? {};
  const [correlation, client] = REQUEST_ID_ANNOTATIONS;
  const wanted: Array<[string, string | undefined]> = [
    [correlation, doc.correlationRequestId],
    [client, doc.clientRequestId],
  ];
  return wanted.every(([key, value]) => !value || a[key] === value);
}

interface Flow {
  m: OperationMatch;
  cr: HcpCluster | NodePool;
  target: ObjectRef;
  generation: number;
  /** When the request wrote the CR: what changed at or after it changed for this request. */
  writtenAt: string | undefined;
  /** The CR's work that carries its HostedCluster or HyperShift NodePool. */
  work: ManifestWork | undefined;
}

function writtenHop(f: Flow): Hop {
  const created = f.m.doc.request === "Create" ? f.cr.metadata.creationTimestamp : undefined;
  const written = requestWrittenAt(f.cr);
  const time = created ?? written;
  return {
    hop: "Written",
    object: f.target,
    state: "Done",
    ...(time
      ? {
          time,
          timeFrom: created ? "metadata.creationTimestamp" : "managedFields time of the request's writer",
        }
      : {}),
    message: `generation ${f.generation}`,
  };
}

function observedHop(f: Flow): Hop {
  const observed = f.cr.status?.observedGeneration;
  const conditions: Condition[] = f.cr.status?.conditions ?? [];
  if (observed === undefined || observed < f.generation) {
    const ready = find(conditions, "Ready");
    const now = ready ? `; Ready ${ready.status} ${ready.reason}: ${ready.message}` : "";
    return {
      hop: "Observed",
      object: f.target,
      state: "Pending",
      message: `observedGeneration ${observed ?? "none"} of ${f.generation}`,
      waitingFor: `the ${CONTROLLER[f.m.crKind]} controller to get through generation ${f.generation}${now}`,
    };
  }
  const time = observedTime(f);
  const before = time.beforeRequest ? BEFORE : "";
  return {
    hop: "Observed",
    object: f.target,
    state: "Done",
    ...time,
    message: `observedGeneration ${observed}${before}`,
  };
}

/**
 * When the controller first acted on the generation: its first condition change at it (or later)
 * after the write, or its write of the work for this request if that came first (the status is
 * written at the end of the reconcile that wrote the work); else the CR's last status write bounds it.
 */
function observedTime(f: Flow): HopTime {
  const first = (f.cr.status?.conditions ?? [])
    .filter(
      (c) => (c.observedGeneration ?? 0) >= f.generation && notBefore(c.lastTransitionTime, f.writtenAt),
    )
    .sort((a, b) => a.lastTransitionTime.localeCompare(b.lastTransitionTime))[0];
  const workAt = f.work && carriesRequest(f.work, f.m.doc) ? specWrittenAt(f.work) : undefined;
  if (
    workAt &&
    notBefore(workAt, f.writtenAt) &&
    !(first && seconds(first.lastTransitionTime) <= seconds(workAt))
  )
    return { time: workAt, timeFrom: "the controller's write of the ManifestWork for this request" };
  const statusAt = managedTime(f.cr.metadata.managedFields, (m) => m.subresource === "status");
  return conditionTime(first, f.writtenAt, { time: statusAt, from: "the CR's last status write" });
}

/** The CR's work that carries what the request asked for (its HostedCluster or HyperShift NodePool). */
function workOf(crKind: CRKind, works: readonly ManifestWork[]): ManifestWork | undefined {
  const kind = REPORTED_KIND[crKind];
  return works.find((w) => (w.spec?.workload?.manifests ?? []).some((x) => x.kind === kind)) ?? works[0];
}

/** A hop that waits for an earlier one. */
function pending(hop: HopName, object: ObjectRef, waitingFor: string): Hop {
  return { hop, object, state: "Pending", message: "not reached", waitingFor };
}

/** A work's Published for its current generation: sent, refused for good (False), or not yet. */
function publishedHop(f: Flow, work: ManifestWork): Hop {
  const generation = work.metadata.generation ?? 0;
  const published = find(work.status?.conditions, "Published");
  const object = refOf(work, "ManifestWork");
  const sent = published?.status === "True" && (published.observedGeneration ?? 0) >= generation;
  if (sent) {
    const time = conditionTime(published, f.writtenAt, lastStatusWrite(work));
    const before = time.beforeRequest ? BEFORE : "";
    const message = `generation ${generation} sent to ${object.namespace ?? ""}${before}`;
    return { hop: "Published", object, state: "Done", ...time, message };
  }
  if (published?.status === "False")
    return {
      hop: "Published",
      object,
      state: "Failed",
      message: `${published.reason}: ${published.message}`,
    };
  return unpublishedHop(work, published);
}

function unpublishedHop(work: ManifestWork, published: Condition | undefined): Hop {
  const generation = work.metadata.generation ?? 0;
  const why = published?.status === "Unknown" ? `: ${published.reason}: ${published.message}` : "";
  const at = published ? String(published.observedGeneration ?? 0) : "none";
  return {
    hop: "Published",
    object: refOf(work, "ManifestWork"),
    state: "Pending",
    message: `generation ${generation} written, ${at} published`,
    waitingFor: `maestro-server to publish generation ${generation} to ${work.metadata.namespace ?? ""}${why}`,
  };
}

const lastStatusWrite = (work: ManifestWork): { time: string | undefined; from: string } => ({
  time: statusWrittenAt(work),
  from: "the work's last status write",
});

function appliedHop(f: Flow, work: ManifestWork): Hop {
  const generation = work.metadata.generation ?? 0;
  const applied = find(work.status?.conditions, "Applied");
  const object = refOf(work, "ManifestWork");
  const at = applied?.status === "True" ? (applied.observedGeneration ?? 0) : undefined;
  if (at !== undefined && at >= generation) {
    const time = conditionTime(applied, f.writtenAt, lastStatusWrite(work));
    const before = time.beforeRequest ? BEFORE : "";
    const message = `generation ${generation} applied by the agent of ${object.namespace ?? ""}${before}`;
    return { hop: "Applied", object, state: "Done", ...time, message };
  }
  return unappliedHop(work, applied, at);
}

function unappliedHop(work: ManifestWork, applied: Condition | undefined, at: number | undefined): Hop {
  const generation = work.metadata.generation ?? 0;
  const failed = applied?.status === "False" ? `: ${applied.reason}: ${applied.message}` : "";
  return {
    hop: "Applied",
    object: refOf(work, "ManifestWork"),
    state: "Pending",
    message: `generation ${generation} sent, ${at ?? "none"} applied`,
    waitingFor: `the agent of ${work.metadata.namespace ?? ""} to apply generation ${generation}${failed}`,
  };
}

type Reported = { conditions: Condition[]; summary: string; facts: string };

function reportedOf(kind: CRKind, work: ManifestWork, m: Manifest): Reported {
  const match = { kind: m.kind, name: m.metadata?.name ?? "" };
  if (kind === "HcpCluster") {
    const r = hostedReport(feedbackOf(work, match));
    const facts = [
      r.completedVersion && `version ${r.completedVersion}`,
      r.updatingTo && `updating to ${r.updatingTo}`,
    ];
    return { conditions: r.conditions, summary: "Available", facts: facts.filter(Boolean).join(", ") };
  }
  const r = poolReport(feedbackOf(work, match));
  const conditions = r.conditions.map((c) => c as Condition);
  const facts = [r.version && `version ${r.version}`, r.replicas !== undefined && `${r.replicas} replicas`];
  return { conditions, summary: "Ready", facts: facts.filter(Boolean).join(", ") };
}

/** What the report waits for, or why it failed; undefined when HyperShift is done. */
function reportBlocker(r: Reported): { state: HopState; why: string } | undefined {
  const summary = find(r.conditions, r.summary);
  const degraded = find(r.conditions, "Degraded");
  const progressing = find(r.conditions, "Progressing");
  if (!summary) return { state: "Pending", why: "the agent to carry back HyperShift's status" };
  if (degraded?.status === "True")
    return { state: "Failed", why: `Degraded ${degraded.reason}: ${degraded.message}` };
  if (summary.status !== "True")
    return {
      state: "Pending",
      why: `HyperShift: ${summary.type} ${summary.status} ${summary.reason}: ${summary.message}`,
    };
  if (progressing?.status === "True")
    return { state: "Pending", why: `HyperShift to finish rolling out: ${progressing.message}` };
  return undefined;
}

/** The HostedCluster or HyperShift NodePool the work carries, as the hop's object. */
function reportedManifest(f: Flow, work: ManifestWork): { manifest?: Manifest; object: ObjectRef } {
  const kind = REPORTED_KIND[f.m.crKind];
  const manifest = (work.spec?.workload?.manifests ?? []).find((x) => x.kind === kind);
  if (!manifest) return { object: { kind, name: "" } };
  return { manifest, object: refOf({ kind, metadata: manifest.metadata ?? {} }) };
}

/** The report's facts: the generation HyperShift observed, its version, replicas. */
function reportFacts(f: Flow, r: Reported): string {
  const generation = find(r.conditions, r.summary)?.observedGeneration;
  const kind = REPORTED_KIND[f.m.crKind];
  return [generation !== undefined && `${kind} generation ${generation}`, r.facts].filter(Boolean).join(", ");
}

function reportedHop(f: Flow, work: ManifestWork): Hop {
  const { manifest, object } = reportedManifest(f, work);
  if (!manifest)
    return { hop: "Reported", object, state: "Unknown", message: `the work carries no ${object.kind}` };
  const r = reportedOf(f.m.crKind, work, manifest);
  const facts = reportFacts(f, r);
  const blocker = reportBlocker(r);
  if (blocker?.state === "Pending")
    return {
      hop: "Reported",
      object,
      state: "Pending",
      message: facts || "nothing reported yet",
      waitingFor: blocker.why,
    };
  if (blocker) return { hop: "Reported", object, state: blocker.state, message: blocker.why };
  // The last change HyperShift reported since the request is when it settled; none: nothing to roll out.
  const changed = r.conditions
    .filter((c) => c.lastTransitionTime && notBefore(c.lastTransitionTime, f.writtenAt))
    .sort((a, b) => a.lastTransitionTime.localeCompare(b.lastTransitionTime))
    .at(-1);
  const settled = changed
    ? `${r.summary} True`
    : `${r.summary} True since before the request: nothing changed`;
  return {
    hop: "Reported",
    object,
    state: "Done",
    ...(changed
      ? { time: changed.lastTransitionTime, timeFrom: `${object.kind} ${changed.type} lastTransitionTime` }
      : {}),
    message: [settled, facts].filter(Boolean).join("; "),
  };
}

function workHops(f: Flow): Hop[] {
  const { work } = f;
  const controller = `the ${CONTROLLER[f.m.crKind]} controller`;
  const none: ObjectRef = { kind: "ManifestWork", name: "" };
  if (!work || !carriesRequest(work, f.m.doc)) {
    const which = work ? `ManifestWork ${work.metadata.name ?? ""}` : "a ManifestWork";
    const why = `${controller} to write ${which} for this request`;
    return (["Published", "Applied", "Reported"] as const).map((hop) =>
      pending(hop, work ? refOf(work, "ManifestWork") : none, why),
    );
  }
  const published = publishedHop(f, work);
  const applied = appliedHop(f, work);
  if (applied.state !== "Done") {
    const generation = work.metadata.generation ?? 0;
    const { object } = reportedManifest(f, work);
    return [published, applied, pending("Reported", object, `the agent to apply generation ${generation}`)];
  }
  return [published, applied, reportedHop(f, work)];
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

/** Why the CR no longer tells this operation's story: a later operation is on it. */
function supersededBy(cr: HcpCluster | NodePool, doc: OperationDoc): string | undefined {
  const current = cr.metadata.annotations?.[ANNOTATIONS.operation];
  if (current?.toLowerCase() === doc.id.toLowerCase()) return undefined;
  const request = cr.metadata.annotations?.[ANNOTATIONS.operationRequest] ?? "operation";
  return `superseded: the CR now carries a later ${request} (operation ${current ?? "unknown"})`;
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

function changeHops(m: OperationMatch, works: readonly ManifestWork[]): Hop[] {
  const target: ObjectRef = { kind: m.crKind, namespace: m.namespace, name: m.doc.target };
  const later: HopName[] = ["Written", "Observed", "Published", "Applied", "Reported"];
  const cr = m.cr;
  if (!cr) return unknownHops(later, target, "the CR is gone");
  const superseded = supersededBy(cr, m.doc);
  if (superseded) return unknownHops(later, target, superseded);
  const generation = cr.metadata.generation ?? 1;
  const flow: Flow = { m, cr, target, generation, writtenAt: undefined, work: workOf(m.crKind, works) };
  const written = writtenHop(flow);
  // Without a recorded write, the request's own start is when the CR changed.
  const withTime: Flow = { ...flow, writtenAt: written.time ?? m.doc.startTime };
  return [written, observedHop(withTime), ...workHops(withTime)];
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
