/**
 * The hops of a Create or Update, after the frontend accepted it:
 *
 *   Written     the CR the request wrote, at generation G
 *   Observed    the controller got through G (status.observedGeneration)
 *   Published   maestro-server sent the work's generation W that carries the request (Published)
 *   Applied     the agent applied W (Applied, observedGeneration)
 *   Reported    HyperShift's HostedCluster or NodePool, as the work's feedback carries it back
 *
 * Conditions keep the time they last changed status, so a hop's time is exact when its condition
 * changed after the request, otherwise only a bound (the last status write, `upperBound`), and a
 * hop whose generation the request did not change was reached before it (`beforeRequest`). Pure.
 */
import type { Condition, ManagedFieldsEntry } from "../api/meta/v1.ts";
import type { HcpCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { Manifest, ManifestWork } from "../api/work/v1.ts";
import { ARM_ANNOTATIONS } from "../api/v1alpha1/index.ts";
import type { OperationDoc } from "../api/v1alpha1/index.ts";
import { feedbackOf, hostedReport, poolReport } from "../api/v1alpha1/feedback.ts";
import { REQUEST_ID_ANNOTATIONS } from "../api/v1alpha1/labels.ts";
import { find } from "./conditions.ts";
import { specWrittenAt } from "./stale.ts";
import type { CRKind, OperationMatch } from "./trace-find.ts";
import {
  notBefore,
  pending,
  refOf,
  seconds,
  supersededBy,
  unknownHops,
  type Hop,
  type HopName,
  type HopState,
  type ObjectRef,
} from "./trace-hop.ts";
import { statusWrittenAt } from "./tree-works.ts";

const CONTROLLER: Record<CRKind, string> = { HcpCluster: "cluster", NodePool: "node pool" };
const REPORTED_KIND: Record<CRKind, string> = { HcpCluster: "HostedCluster", NodePool: "NodePool" };

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
  const field = `"f:${ARM_ANNOTATIONS.operation}"`;
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

/** A request writes its CR within seconds; a later write by the same manager is someone else's. */
const REQUEST_WRITE_SECONDS = 5;

function writtenHop(f: Flow): Hop {
  const created = f.m.doc.request === "Create" ? f.cr.metadata.creationTimestamp : undefined;
  const written = requestWrittenAt(f.cr);
  const base: Hop = {
    hop: "Written",
    object: f.target,
    state: "Done",
    message: `generation ${f.generation}`,
  };
  if (created) return { ...base, time: created, timeFrom: "metadata.creationTimestamp" };
  if (!written) return base;
  // The manager that wrote the operation annotation may have written the CR again since.
  const later = seconds(written) - seconds(f.m.doc.startTime) > REQUEST_WRITE_SECONDS;
  return {
    ...base,
    time: written,
    timeFrom: "managedFields time of the request's writer",
    ...(later ? { upperBound: true } : {}),
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
      r.installing && `installing ${r.installing}`,
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

export function changeHops(m: OperationMatch, works: readonly ManifestWork[]): Hop[] {
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
