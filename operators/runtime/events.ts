/**
 * Kubernetes Events for meaningful transitions, visible in `kubectl describe`. Repeats of the same
 * event on the same object bump count and lastTimestamp on the existing Event instead of creating
 * a new one (a simple form of client-go's event correlator). Recording never throws: an event is
 * worth less than the reconcile that emits it.
 */
import { randomBytes } from "node:crypto";
import { conditionTime } from "./conditions.ts";
import {
  KubeApiError,
  type KubeClient,
  type KubeObject,
  type RequestOptions,
  type ResourceType,
} from "./kube.ts";
import { silentLogger, type Logger } from "./logger.ts";

export const eventType: ResourceType = {
  group: "",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
};

export type EventSeverity = "Normal" | "Warning";

interface Seen {
  name: string;
  namespace: string;
  count: number;
}

type CoreEvent = KubeObject & { count?: number };

/** One event; the signal abandons the write (a reconcile that is cancelled records nothing more). */
export interface EventInput extends RequestOptions {
  type: EventSeverity;
  reason: string;
  message: string;
}

export class EventRecorder {
  readonly #client: KubeClient;
  readonly #component: string;
  readonly #log: Logger;
  readonly #seen = new Map<string, Seen>();
  readonly #maxSeen = 4096;

  constructor(client: KubeClient, component: string, log: Logger = silentLogger) {
    this.#client = client;
    this.#component = component;
    this.#log = log;
  }

  /** Records an event; resolves when written (or when writing failed and was logged). */
  event(obj: KubeObject, type: EventSeverity, reason: string, message: string): Promise<void> {
    return this.record(obj, { type, reason, message });
  }

  /** Like event, with the options (the signal) beside the event's fields. */
  async record(obj: KubeObject, input: EventInput): Promise<void> {
    const { type, reason, message, signal } = input;
    const namespace = obj.metadata.namespace || "default";
    const key = [obj.metadata.uid, type, reason, message].join("\u0000");
    try {
      const seen = this.#seen.get(key);
      if (seen && (await this.#bump(seen, signal))) return;
      const created = await this.#client.create<CoreEvent>(
        eventType,
        this.#build(obj, { namespace, type, reason, message }),
        { signal },
      );
      this.#remember(key, { name: created.metadata.name ?? "", namespace, count: 1 });
    } catch (err) {
      if (signal?.aborted)
        this.#log.debug("Event not recorded: cancelled", { reason, object: obj.metadata.name });
      else this.#log.error("Failed to record event", err, { reason, object: obj.metadata.name });
    }
  }

  async #bump(seen: Seen, signal: AbortSignal | undefined): Promise<boolean> {
    seen.count++;
    try {
      await this.#client.mergePatch(
        eventType,
        { name: seen.name, namespace: seen.namespace },
        { count: seen.count, lastTimestamp: conditionTime(new Date()) },
        { signal },
      );
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return false;
      throw err;
    }
  }

  #remember(key: string, seen: Seen): void {
    if (this.#seen.size >= this.#maxSeen) {
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
    this.#seen.set(key, seen);
  }

  #build(
    obj: KubeObject,
    what: { namespace: string; type: EventSeverity; reason: string; message: string },
  ): CoreEvent {
    const { namespace, type, reason, message } = what;
    const now = conditionTime(new Date());
    return {
      metadata: { name: `${obj.metadata.name ?? "object"}.${randomBytes(8).toString("hex")}`, namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name,
        namespace: obj.metadata.namespace,
        uid: obj.metadata.uid,
        resourceVersion: obj.metadata.resourceVersion,
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: this.#component },
      reportingComponent: this.#component,
      reportingInstance: this.#component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
  }
}

/**
 * Which conditions make events, and how: `negative` types are bad when True (Degraded);
 * `quiet` types never make an event (Progressing restates what the step conditions say).
 */
export interface TransitionPolicy {
  negative: readonly string[];
  quiet: readonly string[];
  /**
   * An install told as one story: until the object's `ready` condition has been True, its `steps`
   * make an event only when they fail, and `ready` only when it turns True: a step turning True,
   * or a new reason Ready is held by, says nothing a failure or the end of the install does not,
   * and each event is a write (docs/decisions/0002-one-status-write-per-reconcile.md).
   */
  install?: { ready: string; steps: readonly string[] };
}

/** The reason of the event a negative condition (Degraded) makes when it turns good. */
export const RECOVERED = "Recovered";

interface ConditionLike {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/**
 * The events a status change deserves: one per condition that changed status or reason. A
 * condition's first appearance is news only when it is good (True), bad for a negative one
 * (Degraded True), or a step that failed: a fresh object's "not yet" states are not events. An
 * install is quieter still (TransitionPolicy.install). The event's reason is the condition type
 * when good (`Recovered` for a negative one: "Degraded" read as the news it ends), the condition's
 * reason when bad; a bad negative condition is a Warning. Conditions that change for one cause
 * in one status change (Degraded, Ready and the failed step, all
 * `HostedClusterEtcdQuorumLost`) make one event, the Warning if there is one, else the first in
 * the conditions' order (Ready, which names the step, leads).
 */
export function conditionTransitions(
  before: readonly ConditionLike[],
  after: readonly ConditionLike[],
  policy: TransitionPolicy,
  failedSteps: ReadonlySet<string> = new Set(),
): Array<{ type: EventSeverity; reason: string; message: string }> {
  const out: Array<{ type: EventSeverity; reason: string; message: string }> = [];
  const { install } = policy;
  const installing =
    install !== undefined && !before.some((b) => b.type === install.ready && b.status === "True");
  for (const c of after) {
    if (policy.quiet.includes(c.type)) continue;
    if (!isNews(c, before, failedSteps)) continue;
    if (installing && !newsWhileInstalling(c, install, failedSteps)) continue;
    out.push(eventOf(c, policy.negative.includes(c.type)));
  }
  return onePerReason(out);
}

/** The event of a condition that is news: a bad negative one is a Warning; see conditionTransitions. */
function eventOf(
  c: ConditionLike,
  negative: boolean,
): { type: EventSeverity; reason: string; message: string } {
  const bad = negative ? c.status === "True" : c.status !== "True";
  if (bad) return { type: negative ? "Warning" : "Normal", reason: c.reason, message: c.message };
  return { type: "Normal", reason: negative ? RECOVERED : c.type, message: c.message };
}

/** One event per reason, the Warning where there is one, in the order the reasons first came. */
function onePerReason<E extends { type: EventSeverity; reason: string }>(events: E[]): E[] {
  const kept = new Map<string, E>();
  for (const e of events) {
    const seen = kept.get(e.reason);
    if (!seen || (e.type === "Warning" && seen.type !== "Warning")) kept.set(e.reason, e);
  }
  return [...kept.values()];
}

function isNews(
  c: ConditionLike,
  before: readonly ConditionLike[],
  failedSteps: ReadonlySet<string>,
): boolean {
  const old = before.find((b) => b.type === c.type);
  if (old) return old.status !== c.status || old.reason !== c.reason;
  return c.status === "True" || failedSteps.has(c.type);
}

function newsWhileInstalling(
  c: ConditionLike,
  install: NonNullable<TransitionPolicy["install"]>,
  failedSteps: ReadonlySet<string>,
): boolean {
  if (c.type === install.ready) return c.status === "True";
  return !install.steps.includes(c.type) || failedSteps.has(c.type);
}

/** Records the events of a status change (see conditionTransitions); `failedSteps` are the steps that failed in it. */
export async function recordTransitions(
  recorder: Pick<EventRecorder, "record">,
  obj: KubeObject,
  change: {
    before: readonly ConditionLike[];
    after: readonly ConditionLike[];
    failedSteps?: ReadonlySet<string>;
    signal?: AbortSignal;
  },
  policy: TransitionPolicy,
): Promise<void> {
  for (const e of conditionTransitions(change.before, change.after, policy, change.failedSteps))
    await recorder.record(obj, { ...e, signal: change.signal });
}
