/**
 * Reconciles one ManifestWork of the service cluster: finalizer first, then either publish the
 * current generation or publish the deletion and wait for the agent's `Deleted`, and always one
 * status write at the end. Level-triggered: what was published is remembered per connection
 * only to avoid resending; losing that memory (a restart) just resends, which agents apply
 * idempotently.
 */
import { MANIFEST_WORK_CLEANUP_FINALIZER, ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import { isPublishRefused } from "../cloudevents/client/errors.ts";
import type { SourceClient } from "../cloudevents/client/source.ts";
import { bundleProblems } from "../cloudevents/codec/manifestbundle.ts";
import type { StatusStore } from "../cloudevents/store/status.ts";
import { Action } from "../cloudevents/types.ts";
import type { Applier } from "../runtime/apply.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Lister } from "../runtime/informer.ts";
import { apiStatusCode, errorMessage } from "../runtime/errors.ts";
import { failpoint } from "../runtime/failpoints.ts";
import { composeStatus, type PublishFacts } from "./status.ts";

/** The reason of AgentStatusAccepted=False when the apiserver refused the agent's report. */
export const STATUS_INVALID = "AgentStatusInvalid";

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** What the reconciler publishes through: the source client's spec side. */
export type SpecPublisher = Pick<SourceClient, "publishSpec">;
/** The writes the reconciler makes to a ManifestWork. */
export type WorkWriter = Pick<Applier, "addFinalizer" | "removeFinalizer" | "applyStatus">;
export type EventSink = Pick<EventRecorder, "event">;

export interface ServerReconcilerDeps {
  works: Lister<ManifestWork>;
  client: SpecPublisher;
  statuses: StatusStore;
  applier: WorkWriter;
  events: EventSink;
  /** Release the finalizer of a deletion no agent confirmed after this long. */
  staleDeleteMs: number;
  /** Publish again when no agent reported on the published generation after this long. */
  redeliverAfterMs: number;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
}

/** Filled by the phases, read by the status computation. */
interface Scope {
  work: ManifestWork;
  uid: string;
  consumer: string;
  /** Set by publish or publishDelete. */
  facts?: PublishFacts;
}

export class ManifestWorkReconciler implements Reconciler {
  readonly #d: ServerReconcilerDeps;
  /** uid → what was last published for it ("<generation>" or "delete"). */
  readonly #published = new Map<string, string>();
  /** uid → when the current generation was last published. */
  readonly #publishedAt = new Map<string, number>();

  readonly #now: () => number;

  constructor(deps: ServerReconcilerDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const work = this.#d.works.get(req.namespace, req.name);
    if (!work?.metadata.uid) return {};
    const scope: Scope = { work, uid: work.metadata.uid, consumer: req.namespace };
    if (work.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, scope);
    if (await this.#d.applier.addFinalizer(ManifestWorkResource, work, MANIFEST_WORK_CLEANUP_FINALIZER))
      return {};
    try {
      await this.#publish(ctx, scope);
    } finally {
      await this.#writeStatus(scope);
    }
    return this.#requeue(scope);
  }

  async #publish(ctx: ReconcileContext, scope: Scope): Promise<void> {
    const { work, uid, consumer } = scope;
    const generation = work.metadata.generation ?? 0;
    const problems = bundleProblems(work.spec?.workload?.manifests);
    if (problems.length > 0) {
      scope.facts = {
        outcome: "invalid",
        problems,
        tooLarge: problems.some((p) => p.includes("-byte limit")),
      };
      if (this.#published.get(uid) !== `invalid:${generation}`) {
        this.#published.set(uid, `invalid:${generation}`);
        await this.#d.events.event(work, "Warning", "NotPublished", scope.facts.problems.join("; "));
      }
      return;
    }
    if (this.#published.get(uid) === undefined && deliveredBefore(work, generation)) {
      // A restart: the work itself says this generation was published and applied. Sending it
      // again, an event and a status write per work would be a restart's only effect.
      this.#published.set(uid, String(generation));
      this.#publishedAt.set(uid, this.#now());
    }
    const isNew = this.#published.get(uid) !== String(generation);
    if (isNew || this.#undelivered(scope, generation)) {
      const sent = await this.#send(ctx, scope, Action.update);
      if (!sent) return;
      failpoint("maestro-server/after-publish");
      this.#published.set(uid, String(generation));
      this.#publishedAt.set(uid, this.#now());
      if (isNew)
        await this.#d.events.event(
          work,
          "Normal",
          "Published",
          `Generation ${generation} sent to ${consumer}`,
        );
    }
    scope.facts = { outcome: "published", generation, consumer };
  }

  /**
   * True when the agent has not reported on this generation for redeliverAfterMs: the event may
   * have met an agent that was between connections (clean sessions keep nothing), and the
   * agent's own resync may have gone out before this server subscribed. Maestro's undelivered
   * detector covers the same gap.
   */
  #undelivered(scope: Scope, generation: number): boolean {
    if (this.#d.statuses.get(scope.uid)?.resourceVersion === generation) return false;
    return this.#now() - (this.#publishedAt.get(scope.uid) ?? 0) >= this.#d.redeliverAfterMs;
  }

  /** How soon to look again: while no status of the current generation arrived, at redelivery time. */
  #requeue(scope: Scope): Result {
    if (scope.facts?.outcome !== "published") return {};
    if (this.#d.statuses.get(scope.uid)?.resourceVersion === scope.facts.generation) return {};
    return { requeueAfterMs: this.#d.redeliverAfterMs };
  }

  /** Publishes; records why not in the scope when the broker is away or refuses the size. */
  async #send(ctx: ReconcileContext, scope: Scope, action: typeof Action.update): Promise<boolean> {
    try {
      await this.#d.client.publishSpec(scope.work, action);
      return true;
    } catch (err) {
      if (isPublishRefused(err, "not-connected")) {
        // The connection's "subscribed" handler enqueues every work again.
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
      return this.#finishDelete(
        scope,
        "DeleteUnconfirmed",
        `No agent confirmed the deletion within ${this.#d.staleDeleteMs} ms`,
      );
    }
    if (this.#published.get(uid) !== "delete") {
      try {
        await this.#d.client.publishSpec(work, Action.delete);
        failpoint("maestro-server/after-delete-published");
        this.#published.set(uid, "delete");
        scope.facts = { outcome: "delete-published", consumer: scope.consumer };
      } catch (err) {
        if (isPublishRefused(err, "not-connected")) scope.facts = { outcome: "not-connected" };
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
    this.#published.delete(uid);
    this.#publishedAt.delete(uid);
    return {};
  }

  async #writeStatus(scope: Scope): Promise<void> {
    const reported = this.#d.statuses.get(scope.uid);
    const status = composeStatus(scope.work, reported?.status, scope.facts, reported?.refusal);
    try {
      await this.#d.applier.applyStatus(ManifestWorkResource, scope.work, status);
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
      await this.#d.applier.applyStatus(ManifestWorkResource, scope.work, fallback);
    }
  }

  /** Forgets what was published, so the next reconcile of each work sends it again. */
  forgetPublished(): void {
    this.#published.clear();
  }
}

/** The work's status shows this generation published and applied by the agent. */
function deliveredBefore(work: ManifestWork, generation: number): boolean {
  const at = (type: string): boolean =>
    work.status?.conditions?.some(
      (c) => c.type === type && c.status === "True" && c.observedGeneration === generation,
    ) ?? false;
  return at("Published") && at("Applied");
}
