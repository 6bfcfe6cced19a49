/**
 * The actuator: reconciles one MaintenanceRun through the runtime's skeleton
 * (runtime/reconciler.ts) with the phases of run-phases.ts and one status write (run-status.ts).
 * Events are recorded only after the write that made their transition true.
 */
import {
  MAINTENANCE_RUN_FINALIZER,
  MaintenanceRunResource,
  type MaintenanceRun,
} from "../api/v1alpha1/index.ts";
import { requestLog } from "../hcp/requests.ts";
import { objectKey } from "../runtime/informer.ts";
import { PhasedReconciler } from "../runtime/reconciler.ts";
import { RUN_PHASES } from "./run-phases.ts";
import { storedFacts, type RunReconcilerDeps, type RunScope } from "./run-scope.ts";
import { composeRunStatus } from "./run-status.ts";

export class MaintenanceRunReconciler extends PhasedReconciler<MaintenanceRun, RunScope> {
  constructor(deps: RunReconcilerDeps) {
    const clock = deps.clock ?? (() => new Date());
    super({
      resource: MaintenanceRunResource,
      finalizer: MAINTENANCE_RUN_FINALIZER,
      get: (namespace, name) => {
        const run = deps.runs.get(namespace, name);
        // What the cache shows of the run replaces what this process remembers admitting.
        deps.admissions.settle(run, `${namespace}/${name}`);
        return run;
      },
      writer: deps.writer,
      scope: (ctx, run) => {
        const definition = deps.tasks.get(run.spec.taskType);
        return {
          deps,
          run,
          now: clock(),
          log: requestLog(ctx, run),
          facts: storedFacts(run, definition),
          stored: run.status?.phase ?? "Pending",
          definition,
        };
      },
      phases: () => RUN_PHASES,
      deletion: {
        phases: [],
        waiting: () => false,
        reportsWaiting: false,
        released: (_ctx, scope) => {
          deps.admissions.settle(undefined, objectKey(scope.run));
          return Promise.resolve();
        },
      },
      status: {
        compose: (scope) =>
          composeRunStatus(
            scope.facts,
            scope.run.status?.conditions,
            scope.run.metadata.generation,
            scope.now,
          ),
        written: async (ctx, scope) => {
          for (const event of scope.facts.events)
            await deps.events.record(scope.run, { ...event, signal: ctx.signal });
        },
      },
    });
  }
}
