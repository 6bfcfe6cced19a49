/**
 * The phase contract every reconciler with more than one step follows (Cluster API's
 * `doReconcile`): a phase is `(ctx, scope) => Promise<PhaseResult>`; `runPhases` runs a flat list
 * in order, keeps the smallest non-zero requeue (`LowestNonZeroResult`; periodic only if every
 * requeue asked for was) and collects what phases throw instead of stopping at the first, so
 * that observing phases still run and status still tells the truth. A phase that depends on an
 * earlier one checks the facts that one recorded in the scope; the runner knows nothing of the
 * order's meaning.
 */
import type { ReconcileContext, Result } from "./controller.ts";
import { errorMessage } from "./errors.ts";
import { phaseTime } from "./metrics.ts";

export interface PhaseResult {
  /** Look again after this many milliseconds: something no watch reports is under way. */
  requeueAfterMs?: number;
  /** The look is a periodic recheck for drift (Result.periodic). */
  periodic?: boolean;
}

/** One step of a reconcile. A phase that only reads and decides may answer synchronously. */
export type Phase<S> = (ctx: ReconcileContext, scope: S) => Promise<PhaseResult> | PhaseResult;

export interface PhasesOutcome {
  /** The smallest non-zero requeue any phase asked for. */
  result: Result;
  /** What the phases threw, in order. */
  errors: unknown[];
}

/** The smaller of two delays, where 0 and undefined mean "no requeue". */
export function lowestNonZero(a: number | undefined, b: number | undefined): number | undefined {
  if (!a) return b || undefined;
  if (!b) return a;
  return Math.min(a, b);
}

export async function runPhases<S>(
  ctx: ReconcileContext,
  scope: S,
  phases: readonly Phase<S>[],
): Promise<PhasesOutcome> {
  let requeueAfterMs: number | undefined;
  // Periodic only when every phase that asked for a requeue asked for a periodic one.
  let periodic = true;
  const errors: unknown[] = [];
  for (const phase of phases) {
    if (ctx.signal.aborted) {
      errors.push(ctx.signal.reason ?? new Error("reconcile aborted"));
      break;
    }
    try {
      const result = await timed(ctx, phase.name || "anonymous", async () => phase(ctx, scope));
      requeueAfterMs = lowestNonZero(requeueAfterMs, result.requeueAfterMs);
      if (result.requeueAfterMs && !result.periodic) periodic = false;
    } catch (err) {
      errors.push(err);
    }
  }
  if (!requeueAfterMs) return { result: {}, errors };
  return { result: periodic ? { requeueAfterMs, periodic } : { requeueAfterMs }, errors };
}

/** Looked up once, on the first reconcile part timed, not on every one. */
let phaseSeconds: ReturnType<typeof phaseTime> | undefined;

/** Runs one part of a reconcile (a phase, the status write) and records its time by name. */
export async function timed<T>(ctx: ReconcileContext, part: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await run();
  } finally {
    if (ctx.controller) {
      phaseSeconds ??= phaseTime();
      phaseSeconds.observe({ controller: ctx.controller, phase: part }, (performance.now() - started) / 1000);
    }
  }
}

/**
 * The reconcile's result: the merged requeue when every phase succeeded; otherwise the error (an
 * AggregateError for several), so the queue backs off.
 */
export function phasesResult(outcome: PhasesOutcome): Result {
  const [first, ...rest] = outcome.errors;
  if (rest.length > 0) throw new AggregateError(outcome.errors, aggregateMessage(outcome.errors));
  if (first !== undefined) throw first instanceof Error ? first : new Error(errorMessage(first));
  return outcome.result;
}

function aggregateMessage(errors: unknown[]): string {
  return errors.map(errorMessage).join("; ");
}
