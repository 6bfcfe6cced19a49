/**
 * The work of a restored object, written again before anything else is done to it
 * (RESTORED_WORK_FINALIZER). After a region restore the agent still holds each work from before
 * it, under a resource ID the region no longer knows, and deletes none of it (decision 0012); only
 * a newer work of the same name replaces it. An object deleted before its controller wrote that
 * newer work would find nothing to delete and leave the old one running. So the deletion of such
 * an object first runs the object's ordinary phases (which write the work, the same as the one the
 * agent holds) until the agent reports it applied, then lets go of the finalizer and deletes as
 * always; an object that is not deleted loses the finalizer once its work is applied.
 */
import type { KubeObject, ResourceType } from "../api/meta/v1.ts";
import { awaitsRestoredWork, RESTORED_WORK_FINALIZER } from "../api/v1alpha1/index.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { runPhases, type Phase } from "../runtime/phases.ts";

export interface RestoredWorkOptions<S> {
  resource: ResourceType;
  object(scope: S): KubeObject;
  writer(scope: S): Pick<ObjectWriter, "removeFinalizer">;
  /** The management cluster the object's work went to; undefined if it never went anywhere. */
  placedOn(scope: S): string | undefined;
  /** Whether the phases found the work applied at its generation by the agent. */
  applied(scope: S): boolean;
  /** Holds the deletion phases after this one, saying why (the scope's `deleting` fact). */
  hold(scope: S, reason: string, message: string): void;
}

/**
 * The cached copies whose finalizer this process dropped: until the cache shows the change, a
 * reconcile gets the same copy, and dropping it again would fail on its old resourceVersion.
 */
const released = new WeakSet<KubeObject>();

/**
 * Drops the finalizer: the work is applied again, or there never was one to replace. Once per
 * reconcile: a deletion runs the ordinary phases, whose last one may have dropped it already.
 */
async function release<S>(ctx: ReconcileContext, scope: S, opts: RestoredWorkOptions<S>): Promise<void> {
  const obj = opts.object(scope);
  if (released.has(obj)) return;
  await opts.writer(scope).removeFinalizer(opts.resource, obj, RESTORED_WORK_FINALIZER, ctx);
  released.add(obj);
}

/** The ordinary path's last phase: once the work is applied again, the finalizer goes. */
export function confirmRestoredWork<S>(opts: RestoredWorkOptions<S>): Phase<S> {
  const confirmRestoredWork: Phase<S> = async (ctx, scope) => {
    if (!awaitsRestoredWork(opts.object(scope))) return {};
    if (opts.applied(scope) || opts.placedOn(scope) === undefined) await release(ctx, scope, opts);
    return {};
  };
  return confirmRestoredWork;
}

/**
 * The first deletion phase: the ordinary `phases` run until the work is applied again; until then
 * the deletion holds. The finalizer's removal brings the object back (a watch event), and the next
 * reconcile deletes.
 */
export function replaceRestoredWork<S>(opts: RestoredWorkOptions<S>, phases: readonly Phase<S>[]): Phase<S> {
  const replaceRestoredWork: Phase<S> = async (ctx, scope) => {
    const obj = opts.object(scope);
    if (!awaitsRestoredWork(obj)) return {};
    const placedOn = opts.placedOn(scope);
    if (placedOn !== undefined) {
      const { result, errors } = await runPhases(ctx, scope, phases);
      if (errors.length > 0) throw errors[0];
      if (!opts.applied(scope)) {
        opts.hold(scope, "ReplacingRestoredWork", waitingFor(obj, placedOn));
        return result;
      }
    }
    // This copy of the object is out of date now: the deletion goes on at the next reconcile.
    await release(ctx, scope, opts);
    opts.hold(
      scope,
      "ReplacingRestoredWork",
      "Nothing from before the restore is left to replace; deleting next",
    );
    return {};
  };
  return replaceRestoredWork;
}

function waitingFor(obj: KubeObject, placedOn: string): string {
  return `Waiting for the agent of ${placedOn} to apply the work written again since the region's restore; it replaces the copy from before the restore, which is then deleted with this ${obj.kind ?? "object"}`;
}
