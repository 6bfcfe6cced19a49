/**
 * The summary conditions (Ready, Progressing, Degraded) a controller writes, for tests that play
 * the controller on a CR the frontend reads: ready, still progressing (with the reason and message
 * given), or degraded by a user error.
 */
import type { Condition } from "../../operators/runtime/conditions.ts";

export type SummaryState = "ready" | "progressing" | "degraded";

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, "Z");

export function summaryConditions(
  state: SummaryState,
  generation: number,
  progress: { reason: string; message?: string } = { reason: "Placing" },
): Condition[] {
  const c = (type: string, status: "True" | "False", reason: string, message = reason): Condition => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: now(),
    observedGeneration: generation,
  });
  if (state === "ready")
    return [
      c("Ready", "True", "AsExpected"),
      c("Progressing", "False", "AsExpected"),
      c("Degraded", "False", "AsExpected"),
    ];
  if (state === "degraded")
    return [
      c("Ready", "False", "InvalidSubnet"),
      c("Progressing", "False", "UserActionRequired"),
      c("Degraded", "True", "InvalidSubnet", "the subnet does not exist"),
    ];
  return [
    c("Ready", "False", progress.reason, progress.message),
    c("Progressing", "True", progress.reason, progress.message),
    c("Degraded", "False", "AsExpected"),
  ];
}
