/**
 * The one reconcile skeleton of every controller whose objects carry a finalizer (Cluster API's
 * `Reconcile`): get the object by key (gone: done); a deleting object runs its deletion phases
 * and loses the finalizer once nothing waits; otherwise a guard may end the reconcile (an object
 * that is itself deleted), the finalizer is added first (the write brings the object back), the
 * phases run in order (runPhases), and the status is written once, observedGeneration moving only
 * when every phase got through. A controller gives its phases, its scope and its status function.
 */
import type { ObjectWriter } from "./apply.ts";
import type { Condition } from "./conditions.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "./controller.ts";
import { recordTransitions, type EventRecorder, type TransitionPolicy } from "./events.ts";
import type { KubeObject, ResourceType } from "./kube.ts";
import { phasesResult, runPhases, timed, type Phase, type PhasesOutcome } from "./phases.ts";

/** What the skeleton reads of a status: its conditions, for the events of a write. */
export interface StatusWithConditions {
  conditions?: Condition[];
}

/** An object the skeleton reconciles: a stored status with conditions. */
export type ReconciledObject = KubeObject & { status?: StatusWithConditions };

export interface DeletionSpec<S> {
  /** Run in order while the object is deleting and still holds the finalizer. */
  phases: readonly Phase<S>[];
  /** Whether something recorded by the phases still holds the finalizer. */
  waiting(scope: S): boolean;
  /** Whether the status says what deletion waits for (written only while it waits). */
  reportsWaiting: boolean;
  /** Just before the finalizer goes (a crash point). */
  releasing?(scope: S): void;
  /** Once the finalizer is gone: forget what was remembered of the object, tell its audience. */
  released?(ctx: ReconcileContext, scope: S): Promise<void>;
}

export interface StatusSpec<S> {
  /** The whole status from what the phases recorded; `succeeded` moves observedGeneration. */
  compose(scope: S, succeeded: boolean): StatusWithConditions;
  /** Events for the conditions a write changed (runtime/events.ts conditionTransitions). */
  events?: {
    recorder: Pick<EventRecorder, "record">;
    policy: TransitionPolicy;
    failedSteps(scope: S): ReadonlySet<string>;
  };
  /** After a write that changed the status: what the new status now says (an event). */
  written?(ctx: ReconcileContext, scope: S): Promise<void>;
  /**
   * For an object nothing was written of yet: how long its first status, which says only that
   * things are under way, may wait for news (a write saved; the reconcile comes back then).
   * Undefined writes it now.
   */
  holdFirst?(scope: S, next: StatusWithConditions): number | undefined;
}

export interface ReconcilerSpec<T extends ReconciledObject, S> {
  resource: ResourceType;
  finalizer: string;
  /** The cached object by key. */
  get(namespace: string, name: string): T | undefined;
  writer: Pick<ObjectWriter, "addFinalizer" | "removeFinalizer" | "applyStatus">;
  /** A fresh scope for one reconcile of `obj`. */
  scope(ctx: ReconcileContext, obj: T): S;
  /** Before the finalizer is added: true when the reconcile is over (it deleted the object). */
  guard?(ctx: ReconcileContext, scope: S): Promise<boolean>;
  /** The phases of one reconcile, in order (a paused object may run fewer). */
  phases(scope: S): readonly Phase<S>[];
  deletion: DeletionSpec<S>;
  status: StatusSpec<S>;
}

export class PhasedReconciler<T extends ReconciledObject, S> implements Reconciler {
  readonly #spec: ReconcilerSpec<T, S>;

  constructor(spec: ReconcilerSpec<T, S>) {
    this.#spec = spec;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const spec = this.#spec;
    const obj = spec.get(req.namespace, req.name);
    if (!obj?.metadata.uid) return {};
    const scope = spec.scope(ctx, obj);
    if (obj.metadata.deletionTimestamp) return this.#reconcileDelete(ctx, obj, scope);
    if (spec.guard && (await spec.guard(ctx, scope))) return {};
    // The finalizer first, so that a delete racing the create still finds something to wait on.
    if (await spec.writer.addFinalizer(spec.resource, obj, spec.finalizer, ctx)) return {};
    const outcome = await runPhases(ctx, scope, spec.phases(scope));
    const heldMs = await this.#writeStatus(ctx, obj, scope, outcome);
    const result = phasesResult(outcome);
    if (heldMs === undefined) return result;
    return { ...result, requeueAfterMs: Math.min(result.requeueAfterMs ?? Infinity, heldMs) };
  }

  async #reconcileDelete(ctx: ReconcileContext, obj: T, scope: S): Promise<Result> {
    const { deletion, finalizer, resource, writer } = this.#spec;
    if (!obj.metadata.finalizers?.includes(finalizer)) return {};
    const outcome = await runPhases(ctx, scope, deletion.phases);
    if (deletion.waiting(scope)) {
      // Once the finalizer is gone the object may be too: status is written only while it waits.
      if (deletion.reportsWaiting) await this.#writeStatus(ctx, obj, scope, outcome);
      return phasesResult(outcome);
    }
    // A phase that failed without saying it waits is retried before anything is let go.
    if (outcome.errors.length > 0) return phasesResult(outcome);
    deletion.releasing?.(scope);
    await writer.removeFinalizer(resource, obj, finalizer, ctx);
    await deletion.released?.(ctx, scope);
    return outcome.result;
  }

  /** How long a first status that only says "under way" waits (StatusSpec.holdFirst); none: write. */
  #firstHeldMs(obj: T, scope: S, outcome: PhasesOutcome, next: StatusWithConditions): number | undefined {
    const { status } = this.#spec;
    if (!status.holdFirst || obj.status?.conditions?.length || obj.metadata.deletionTimestamp)
      return undefined;
    if (outcome.errors.length > 0) return undefined;
    const ms = status.holdFirst(scope, next);
    return ms !== undefined && ms > 0 ? ms : undefined;
  }

  /** Writes the status, or resolves how long a first status is held (StatusSpec.holdFirst). */
  async #writeStatus(
    ctx: ReconcileContext,
    obj: T,
    scope: S,
    outcome: PhasesOutcome,
  ): Promise<number | undefined> {
    const { resource, writer, status } = this.#spec;
    return timed(ctx, "writeStatus", async () => {
      const next = status.compose(scope, outcome.errors.length === 0);
      const heldMs = this.#firstHeldMs(obj, scope, outcome, next);
      if (heldMs !== undefined) return heldMs;
      const written = await writer.applyStatus(resource, obj, next, ctx);
      if (!written) return undefined;
      if (status.events)
        await recordTransitions(
          status.events.recorder,
          obj,
          {
            before: obj.status?.conditions ?? [],
            after: next.conditions ?? [],
            failedSteps: status.events.failedSteps(scope),
            signal: ctx.signal,
          },
          status.events.policy,
        );
      await status.written?.(ctx, scope);
      return undefined;
    });
  }
}
