/**
 * Failures only the user can fix (a quota, a missing permission) are not retried on every status
 * event: the failure stands, without another call, for the same generation until the recheck
 * interval passes, so that watch events cannot turn a quota error into a stream of requests.
 */
import type { FailedStep, StepState } from "../hcp/steps.ts";

interface Held {
  step: FailedStep;
  generation: number;
  at: number;
}

export class UserErrorHold {
  readonly #held = new Map<string, Held>();
  readonly #recheckMs: number;
  readonly #now: () => number;

  constructor(recheckMs: number, now: () => number = Date.now) {
    this.#recheckMs = recheckMs;
    this.#now = now;
  }

  /** The failure that still stands for this owner, step and generation, if any. */
  held(owner: string, step: string, generation: number): FailedStep | undefined {
    const h = this.#held.get(key(owner, step));
    if (!h || h.generation !== generation || this.#now() - h.at >= this.#recheckMs) return undefined;
    return h.step;
  }

  /** Remembers a user failure; any other outcome clears what was held. */
  note(owner: string, step: string, generation: number, outcome: StepState): void {
    if (outcome.state === "failed" && outcome.userActionRequired)
      this.#held.set(key(owner, step), { step: outcome, generation, at: this.#now() });
    else this.#held.delete(key(owner, step));
  }

  /** Drops everything held for an owner that is gone. */
  forget(owner: string): void {
    for (const k of this.#held.keys()) if (k.startsWith(`${owner}/`)) this.#held.delete(k);
  }

  get size(): number {
    return this.#held.size;
  }
}

function key(owner: string, step: string): string {
  return `${owner}/${step}`;
}

interface Verified {
  result: unknown;
  generation: number;
  at: number;
}

/**
 * Azure steps found ready are trusted, without another call, for the same generation until the
 * recheck interval passes. A cluster is reconciled for every status change of its works and
 * pools; re-reading its resource group, zone, delegation and ingress each time cost six ARM reads
 * per reconcile, which a region of thousands of clusters cannot spend (ARM throttles reads per
 * principal). Drift made behind our back is found at the next recheck, or at once on a spec change.
 */
export class VerifiedSteps {
  readonly #verified = new Map<string, Verified>();
  readonly #recheckMs: number;
  readonly #now: () => number;

  constructor(recheckMs: number, now: () => number = Date.now) {
    this.#recheckMs = recheckMs;
    this.#now = now;
  }

  /** What the step found when it was last ready, if that still stands for this generation. */
  verified<R>(owner: string, step: string, generation: number): R | undefined {
    const v = this.#verified.get(key(owner, step));
    if (!v || v.generation !== generation || this.#now() - v.at >= this.#recheckMs) return undefined;
    return v.result as R;
  }

  /** Remembers what a step found ready. */
  note(owner: string, step: string, generation: number, result: unknown): void {
    this.#verified.set(key(owner, step), { result, generation, at: this.#now() });
  }

  /** Forgets a step that was found not ready. */
  drop(owner: string, step: string): void {
    this.#verified.delete(key(owner, step));
  }

  forget(owner: string): void {
    for (const k of this.#verified.keys()) if (k.startsWith(`${owner}/`)) this.#verified.delete(k);
  }

  get size(): number {
    return this.#verified.size;
  }
}
