/**
 * The rollout controller's reconcile on the runtime's skeleton (runtime/reconciler.ts): the
 * phases of phases.ts, one status write (status.ts), and the events that write made true. The
 * finalizer lets a deleted rollout cancel its unfinished wave before it goes, so that a deletion
 * that orphans the wave tasks still stops what the rollout began.
 */
import { ROLLOUT_FINALIZER, RolloutResource, type Rollout } from "../api/v1alpha1/index.ts";
import { PhasedReconciler } from "../runtime/reconciler.ts";
import { DELETION_PHASES, ROLLOUT_PHASES } from "./phases.ts";
import { resolveWaves } from "./plan.ts";
import type { RolloutReconcilerDeps, RolloutScope } from "./scope.ts";
import { composeRolloutStatus, rolloutEvents, storedStatus } from "./status.ts";

export class RolloutReconciler extends PhasedReconciler<Rollout, RolloutScope> {
  constructor(deps: RolloutReconcilerDeps) {
    const clock = deps.clock ?? (() => new Date());
    super({
      resource: RolloutResource,
      finalizer: ROLLOUT_FINALIZER,
      get: (_namespace, name) => deps.rollouts.get("", name),
      writer: deps.writer,
      scope: (ctx, rollout) => ({
        deps,
        rollout,
        now: clock(),
        log: ctx.log,
        plan: resolveWaves(rollout.spec.waves),
        candidates: [],
        missing: [],
        waves: [],
      }),
      phases: () => ROLLOUT_PHASES,
      deletion: { phases: DELETION_PHASES, waiting: () => false, reportsWaiting: false },
      status: {
        compose: (scope) => (scope.next = composeRolloutStatus(scope, scope.now)),
        written: async (ctx, scope) => {
          if (!scope.next) return;
          for (const event of rolloutEvents(storedStatus(scope.rollout), scope.next))
            await deps.events.record(scope.rollout, { ...event, signal: ctx.signal });
        },
      },
    });
  }
}
