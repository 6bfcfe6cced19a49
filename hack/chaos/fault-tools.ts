/**
 * What the faults share (faults.ts and the faults in files of their own): a fault's own duration,
 * a wait on evidence with a deadline, seconds for the notes, and a kill at a failpoint. A module
 * of its own so that those files need not import values from faults.ts, which imports them.
 */
import type { Failpoint } from "../../operators/runtime/failpoints.ts";
import type { FaultContext } from "./faults.ts";
import type { Slot } from "./region.ts";

/** A fault's own duration: how long it lasts is part of what it is. */
export const lasting = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` (evidence) until it holds or the deadline passes; says which. */
export async function seen(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

export const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/** Arms `failpoint` on the slots, makes `trigger` happen, and waits for one of them to die there. */
export async function killAt(
  ctx: FaultContext,
  slots: Slot[],
  failpoint: Failpoint,
  trigger: () => Promise<unknown>,
): Promise<boolean> {
  await Promise.all(slots.map((s) => s.restart({ env: { HCP_FAILPOINTS: failpoint }, ready: false })));
  ctx.injected();
  const started = Date.now();
  await trigger();
  const hit = await seen(() => slots.some((s) => s.killed()), 120_000);
  ctx.note(`${failpoint}: ${hit ? `killed after ${seconds(Date.now() - started)}` : "not reached in 120 s"}`);
  return hit;
}
