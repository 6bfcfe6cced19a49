/**
 * Reconciles one ManifestWork of the service cluster: finalizer first, then either publish the
 * current generation or publish the deletion and wait for the agent's `Deleted`, and one status
 * write at the end, except right after a new generation is sent: that status waits briefly for the
 * agent's report, so that one write carries both. Level-triggered: what was published is
 * remembered per connection only to avoid resending; losing that memory (a restart) just resends,
 * which agents apply idempotently.
 */
import {
  MANIFEST_WORK_CLEANUP_FINALIZER,
  ManifestWorkResource,
  type CachedManifestWork,
  type ManifestWork,
  type ManifestWorkObject,
} from "../api/work/v1.ts";
import { isPublishRefused } from "../cloudevents/client/errors.ts";
import type { SourceClient } from "../cloudevents/client/source.ts";
import { bundleProblems } from "../cloudevents/codec/manifestbundle.ts";
import type { StatusStore } from "../cloudevents/store/status.ts";
import { Action } from "../cloudevents/types.ts";
import { requestLog } from "../hcp/requests.ts";
import type { Applier } from "../runtime/apply.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import { apiStatusCode, errorMessage } from "../runtime/errors.ts";
import { failpoint } from "../runtime/failpoints.ts";
import type { DeletedWorks } from "./deleted-works.ts";
import { composeStatus, deliveredBefore, type PublishFacts } from "./status.ts";
import { WrittenStatuses } from "./written.ts";

/** The reason of AgentStatusAccepted=False when the apiserver refused the agent's report. */
export const STATUS_INVALID = "AgentStatusInvalid";

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** What the reconciler publishes through: the source client's spec side. */
export type SpecPublisher = Pick<SourceClient, "publishSpec" | "publishDeletion" | "requestStatus">;
/** The work with its manifests, from the apiserver; undefined when no object of that uid is there. */
export type WorkFetcher = (work: ManifestWorkObject) => Promise<ManifestWork | undefined>;
/** The writes the reconciler makes to a ManifestWork. */
export type WorkWriter = Pick<Applier, "addFinalizer" | "removeFinalizer" | "applyStatus">;
export type EventSink = Pick<EventRecorder, "event">;

export interface ServerReconcilerDeps {
  /** The cached works, without their manifests. */
  works: Lister<CachedManifestWork>;
  /** Reads a work's manifests when a generation is to be sent. */
  fetch: WorkFetcher;
  client: SpecPublisher;
  statuses: StatusStore;
  applier: WorkWriter;
  events: EventSink;
  /** Release the finalizer of a deletion no agent confirmed after this long. */
  staleDeleteMs: number;
  /** Where such a deletion is remembered first, so the agent's resync is answered with it. */
  deletedWorks?: Pick<DeletedWorks, "record">;
  /** Publish again when no agent reported on the published generation after this long. */
  redeliverAfterMs: number;
  /**
   * How long the status write of a freshly published generation waits for the agent's first
   * report, so that one write carries Published and the agent's conditions (the report usually
   * comes within milliseconds; each write also wakes every controller watching the work). After
   * this, Published is written alone.
   */
  publishedStatusDelayMs: number;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
}

/** Filled by the phases, read by the status computation. */
interface Scope {
  req: Request;
  /** The cached copy, with this reconciler's own status write if the watch has not brought it. */
  work: CachedManifestWork;
  /** The cached copy as the informer holds it. */
  cached: CachedManifestWork;
  uid: string;
  consumer: string;
  /** Set by publish or publishDelete. */
  facts?: PublishFacts;
  /**
   * Set by publish: milliseconds until the status of a just-sent generation is written even
   * without the agent's report; until then no status is written.
   */
  statusHeldMs?: number;
  /** Set by publish: the apiserver has a newer generation or no such work; its watch event comes next. */
  superseded?: boolean;
}

export class ManifestWorkReconciler implements Reconciler {
  readonly #d: ServerReconcilerDeps;
  /** uid → what was last published for it ("<generation>" or "delete"). */
  readonly #published = new Map<string, string>();
  /** uid → when the current generation was last published. */
  readonly #publishedAt = new Map<string, number>();
  /**
   * uid → the generation whose report was last asked for instead of sending it again: the work
   * showed it applied, so what is missing is the agent's report, not the spec.
   */
  readonly #reportAskedFor = new Map<string, number>();
  /** uid → the generation whose manifests cannot be sent, and why (so that they are not read again). */
  readonly #refused = new Map<string, { generation: number; facts: PublishFacts }>();
  /** uid → when a new generation was sent whose status is not written yet. */
  readonly #statusHeldSince = new Map<string, number>();
  /**
   * uid → the resourceVersion of the copy this reconciler added the finalizer to. A cached copy
   * still at that version is one the watch has not caught up with, not one without the finalizer:
   * adding it again would only meet a conflict (the agent's report can come back before the
   * finalizer's watch event).
   */
  readonly #finalizerAddedTo = new Map<string, string>();
  /**
   * uid → the request of a work whose spec or deletion found no broker connection. A (re)connect
   * enqueues these, not every work: a start already queues every work.
   */
  readonly #unsent = new Map<string, Request>();
  /** What this reconciler last wrote to each work's status. */
  readonly #writes: WrittenStatuses;

  readonly #now: () => number;

  constructor(deps: ServerReconcilerDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
    this.#writes = new WrittenStatuses(deps.statuses);
  }

  /** The works whose spec or deletion found no broker connection since the last call; forgets them. */
  takeUnsent(): Request[] {
    const unsent = [...this.#unsent.values()];
    this.#unsent.clear();
    return unsent;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const cached = this.#d.works.get(req.namespace, req.name);
    if (!cached?.metadata.uid) return {};
    this.#writes.confirm(cached);
    const work = this.#writes.withWritten(cached);
    requestLog(ctx, work);
    const scope: Scope = { req, work, cached, uid: cached.metadata.uid, consumer: req.namespace };
    if (work.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, scope);
    await this.#recoverOverwrittenStatus(scope);
    // The finalizer is on the work before anything is published, so a deletion always waits for
    // the agent. Publishing goes on in the same reconcile, not after the finalizer's watch event,
    // which would take each new work through the queue twice.
    await this.#ensureFinalizer(scope);
    try {
      await this.#publish(ctx, scope);
    } finally {
      if (!scope.statusHeldMs && !scope.superseded) await this.#writeStatus(scope);
    }
    return this.#requeue(scope);
  }

  /**
   * The work's status is not the one written last, and the agent's report it carried is no longer
   * held here: ask the agent to send it again. Meanwhile the status written keeps Published.
   */
  async #recoverOverwrittenStatus({ work, uid, consumer }: Scope): Promise<void> {
    if (this.#writes.reportLost(work, uid)) await this.#d.client.requestStatus(consumer, uid);
  }

  async #ensureFinalizer({ work, uid }: Scope): Promise<void> {
    if (work.metadata.finalizers?.includes(MANIFEST_WORK_CLEANUP_FINALIZER)) {
      this.#finalizerAddedTo.delete(uid);
      return;
    }
    const version = work.metadata.resourceVersion ?? "";
    if (this.#finalizerAddedTo.get(uid) === version) return;
    await this.#d.applier.addFinalizer(ManifestWorkResource, work, MANIFEST_WORK_CLEANUP_FINALIZER);
    this.#finalizerAddedTo.set(uid, version);
  }

  async #publish(ctx: ReconcileContext, scope: Scope): Promise<void> {
    const { work, uid, consumer } = scope;
    const generation = work.metadata.generation ?? 0;
    const refused = this.#refused.get(uid);
    if (refused?.generation === generation) {
      scope.facts = refused.facts;
      return;
    }
    this.#trustAfterRestart(scope, generation);
    const isNew = this.#published.get(uid) !== String(generation);
    const delivery = await this.#delivery(scope, generation, isNew);
    if (delivery === "report-asked") {
      scope.facts = { outcome: "published", generation, consumer };
      return;
    }
    if (delivery === "send") {
      const sent = await this.#sendGeneration(ctx, scope, generation);
      if (!sent) return;
      if (isNew) this.#statusHeldSince.set(uid, this.#now());
      // An event only when publishing recovers (the work showed Published False or Unknown): the
      // Published condition already tells of every generation sent, and each event is a write
      // (docs/decisions/0002-one-status-write-per-reconcile.md).
      if (isNew && recovered(work))
        await this.#d.events.event(
          work,
          "Normal",
          "Published",
          `Generation ${generation} sent to ${consumer}`,
        );
    }
    scope.facts = { outcome: "published", generation, consumer };
    scope.statusHeldMs = this.#statusHeld(uid, generation);
  }

  /**
   * Reads the work whole (the cache has no manifests) and sends it; false, with the reason in the
   * scope, when it is not sent: refused, superseded by a newer generation, or the broker away.
   */
  async #sendGeneration(ctx: ReconcileContext, scope: Scope, generation: number): Promise<boolean> {
    const whole = await this.#d.fetch(scope.work);
    if (whole?.metadata.generation !== generation) {
      scope.superseded = true;
      return false;
    }
    const problems = bundleProblems(whole.spec?.workload?.manifests);
    if (problems.length > 0) {
      await this.#refuse(scope, generation, problems);
      return false;
    }
    if (!(await this.#send(ctx, scope, whole))) return false;
    failpoint("maestro-server/after-publish");
    this.#published.set(scope.uid, String(generation));
    this.#publishedAt.set(scope.uid, this.#now());
    return true;
  }

  /**
   * A restart: the work itself says this generation was published and applied. Sending it again,
   * an event and a status write per work would be a restart's only effect.
   */
  #trustAfterRestart(scope: Scope, generation: number): void {
    if (this.#published.get(scope.uid) !== undefined || !deliveredBefore(scope.work, generation)) return;
    this.#published.set(scope.uid, String(generation));
    this.#publishedAt.set(scope.uid, this.#now());
  }

  /** A bundle that cannot be sent: said on the work, with one Warning per generation. */
  async #refuse(scope: Scope, generation: number, problems: string[]): Promise<void> {
    const { work, uid } = scope;
    const facts: PublishFacts = {
      outcome: "invalid",
      problems,
      tooLarge: problems.some((p) => p.includes("-byte limit")),
    };
    scope.facts = facts;
    this.#published.set(uid, `invalid:${generation}`);
    await this.#d.events.event(work, "Warning", "NotPublished", problems.join("; "));
    this.#refused.set(uid, { generation, facts });
  }

  /**
   * Milliseconds the status of a generation sent by this reconciler still waits for the agent's
   * report (whichever reconcile comes first: the report's, the finalizer's watch event, the delay);
   * 0 once the report is there or the wait is over, and from then on.
   */
  #statusHeld(uid: string, generation: number): number {
    const since = this.#statusHeldSince.get(uid);
    if (since === undefined) return 0;
    const leftMs = this.#d.publishedStatusDelayMs - (this.#now() - since);
    if (leftMs > 0 && !this.#reported(uid, generation)) return leftMs;
    this.#statusHeldSince.delete(uid);
    return 0;
  }

  /**
   * True when the agent has not reported on this generation for redeliverAfterMs: the event may
   * have met an agent that was between connections (clean sessions keep nothing), and the
   * agent's own resync may have gone out before this server subscribed. Maestro's undelivered
   * detector covers the same gap.
   */
  #undelivered(scope: Scope, generation: number): boolean {
    if (this.#reported(scope.uid, generation)) return false;
    return this.#now() - (this.#publishedAt.get(scope.uid) ?? 0) >= this.#d.redeliverAfterMs;
  }

  /**
   * Whether to send the current generation (new, or unreported for the redelivery period), ask
   * the agent for its report instead, or do nothing. A generation the work shows applied, with no
   * report of it held (as after a restart whose status resync lost answers: a broker drops what a
   * busy subscriber cannot take): the agent is asked for its report, and the spec goes again only
   * if that brings nothing either: an agent that finds nothing to change does not answer the same
   * spec sent again (decision record 0007).
   */
  async #delivery(
    scope: Scope,
    generation: number,
    isNew: boolean,
  ): Promise<"send" | "report-asked" | "none"> {
    if (isNew) return "send";
    if (!this.#undelivered(scope, generation)) return "none";
    const { uid, consumer, work } = scope;
    if (!deliveredBefore(work, generation) || this.#reportAskedFor.get(uid) === generation) {
      this.#reportAskedFor.delete(uid);
      return "send";
    }
    await this.#d.client.requestStatus(consumer, uid);
    this.#reportAskedFor.set(uid, generation);
    this.#publishedAt.set(uid, this.#now());
    return "report-asked";
  }

  #reported(uid: string, generation: number): boolean {
    return this.#d.statuses.get(uid)?.resourceVersion === generation;
  }

  /**
   * How soon to look again: just published, when the status is due (the agent's report enqueues
   * the work sooner); while no status of the current generation arrived, at redelivery time.
   */
  #requeue(scope: Scope): Result {
    if (scope.statusHeldMs) return { requeueAfterMs: scope.statusHeldMs };
    if (scope.facts?.outcome !== "published") return {};
    if (this.#reported(scope.uid, scope.facts.generation)) {
      this.#reportAskedFor.delete(scope.uid);
      return {};
    }
    return { requeueAfterMs: this.#d.redeliverAfterMs };
  }

  /** Publishes; records why not in the scope when the broker is away or refuses the size. */
  async #send(ctx: ReconcileContext, scope: Scope, whole: ManifestWork): Promise<boolean> {
    try {
      await this.#d.client.publishSpec(whole, Action.update);
      this.#unsent.delete(scope.uid);
      return true;
    } catch (err) {
      if (isPublishRefused(err, "not-connected")) {
        this.#unsent.set(scope.uid, scope.req);
        scope.facts = { outcome: "not-connected" };
        return false;
      }
      if (isPublishRefused(err, "too-large")) {
        scope.facts = { outcome: "invalid", problems: [err.message], tooLarge: true };
        return false;
      }
      ctx.log.error("Failed to publish", err);
      throw err;
    }
  }

  async #reconcileDelete(ctx: ReconcileContext, scope: Scope): Promise<Result> {
    const { work, uid } = scope;
    if (!work.metadata.finalizers?.includes(MANIFEST_WORK_CLEANUP_FINALIZER)) return {};
    if (this.#d.statuses.get(uid)?.deleted)
      return this.#finishDelete(scope, "Deleted", "The agent deleted the work");
    const sinceMs = this.#now() - Date.parse(work.metadata.deletionTimestamp ?? "");
    if (sinceMs > this.#d.staleDeleteMs) {
      await this.#d.deletedWorks?.record(scope.consumer, uid);
      return this.#finishDelete(
        scope,
        "DeleteUnconfirmed",
        `No agent confirmed the deletion within ${this.#d.staleDeleteMs} ms`,
      );
    }
    if (this.#published.get(uid) !== "delete") {
      try {
        await this.#d.client.publishDeletion(work);
        failpoint("maestro-server/after-delete-published");
        this.#unsent.delete(uid);
        this.#published.set(uid, "delete");
        scope.facts = { outcome: "delete-published", consumer: scope.consumer };
      } catch (err) {
        if (isPublishRefused(err, "not-connected")) {
          this.#unsent.set(uid, scope.req);
          scope.facts = { outcome: "not-connected" };
        }
        // A deletion carries no manifests, so only outsized metadata gets here; retrying cannot
        // help, and the stale-delete wait below still releases the work.
        else if (isPublishRefused(err, "too-large"))
          scope.facts = { outcome: "invalid", problems: [err.message], tooLarge: true };
        else throw err;
      }
      await this.#writeStatus(scope);
    }
    // The agent's Deleted status enqueues this work; the requeue only bounds the stale-delete wait.
    ctx.log.debug("Waiting for the agent to confirm the deletion");
    return { requeueAfterMs: Math.max(1000, this.#d.staleDeleteMs - sinceMs) };
  }

  async #finishDelete(scope: Scope, reason: string, message: string): Promise<Result> {
    const { work, uid } = scope;
    await this.#d.events.event(work, reason === "Deleted" ? "Normal" : "Warning", reason, message);
    await this.#d.applier.removeFinalizer(ManifestWorkResource, work, MANIFEST_WORK_CLEANUP_FINALIZER);
    this.#d.statuses.delete(uid);
    this.#unsent.delete(uid);
    this.#published.delete(uid);
    this.#publishedAt.delete(uid);
    this.#reportAskedFor.delete(uid);
    this.#statusHeldSince.delete(uid);
    this.#finalizerAddedTo.delete(uid);
    this.#writes.forget(uid);
    this.#refused.delete(uid);
    return {};
  }

  async #writeStatus(scope: Scope): Promise<void> {
    const reported = this.#d.statuses.get(scope.uid);
    const status = composeStatus(scope.work, reported?.status, scope.facts, reported?.refusal);
    try {
      const written = await this.#d.applier.applyStatus<ManifestWorkObject>(
        ManifestWorkResource,
        scope.work,
        status,
      );
      this.#writes.remember(scope.work, status, written);
      if (reported?.status) this.#writes.carried(scope.cached, reported);
    } catch (err) {
      // The apiserver finds the agent's report Invalid: the same body would be refused on every
      // retry, so the report is marked refused and the work says why, until the agent reports again.
      if (!reported || reported.refusal || apiStatusCode(err) !== 422) throw err;
      const refusal = {
        reason: STATUS_INVALID,
        message: truncate(`The apiserver refused the agent's status: ${errorMessage(err)}`, 1024),
      };
      this.#d.statuses.refuse(scope.uid, refusal);
      const fallback = composeStatus(scope.work, undefined, scope.facts, refusal);
      const written = await this.#d.applier.applyStatus<ManifestWorkObject>(
        ManifestWorkResource,
        scope.work,
        fallback,
      );
      this.#writes.remember(scope.work, fallback, written);
    }
  }

  /** Forgets what was published, so the next reconcile of each work sends it again. */
  forgetPublished(): void {
    this.#published.clear();
  }
}

/** The work shows that it could not be published (Published False or Unknown). */
function recovered(work: ManifestWorkObject): boolean {
  const published = work.status?.conditions?.find((c) => c.type === "Published");
  return published !== undefined && published.status !== "True";
}
