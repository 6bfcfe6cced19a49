/**
 * The request rate at which the service apiserver would use half the machine, from its CPU per
 * request of each kind measured in the same run. A p99 stated at a rate that saturates the
 * apiserver measures its queue, not the code under test; at half the cores it measures latency.
 */

/** One phase of the bench: kinds that take equal turns at the same rate (ours and its floor). */
export interface PhaseCost {
  name: string;
  /** The apiserver's CPU milliseconds per request of each kind in the phase, busy minus idle. */
  cpuMsPerRequest: Record<string, number>;
}

export interface RateChoice {
  /** Requests per second, whole, at least 1. */
  rate: number;
  /** Cores the apiserver may use for the requests: half the machine less what it uses idle. */
  budgetCores: number;
  /** The phase whose mix costs the apiserver most per request: it sets the rate. */
  limiting: string;
  /** That phase's mean CPU milliseconds per request (its kinds send equally many). */
  limitingMs: number;
}

/**
 * The highest whole rate at which every phase keeps the apiserver within half of `cores`,
 * counting `idleCores` (what it burns with no load: watches, leases) as already spent.
 */
export function halfMachineRate(cores: number, idleCores: number, phases: PhaseCost[]): RateChoice {
  const budgetCores = cores / 2 - idleCores;
  if (!(budgetCores > 0))
    throw new Error(`the apiserver idles at ${idleCores} cores, not under half of ${cores}: no rate fits`);
  let limiting = "";
  let limitingMs = 0;
  for (const phase of phases) {
    const costs = Object.values(phase.cpuMsPerRequest);
    const mean = costs.reduce((a, b) => a + b, 0) / costs.length;
    if (mean > limitingMs) [limiting, limitingMs] = [phase.name, mean];
  }
  // Below one tick of CPU time (10 ms) over the calibration the cost is unmeasured, not zero.
  if (!(limitingMs > 0)) throw new Error("the calibration measured no apiserver CPU per request");
  const rate = Math.max(1, Math.floor(budgetCores / (limitingMs / 1000)));
  return { rate, budgetCores, limiting, limitingMs };
}
