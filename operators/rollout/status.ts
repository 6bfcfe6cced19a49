/**
 * A Rollout's status from one reconcile's facts (pure): the phase, Accepted, Progressing and
 * Paused, the waves; and the events a write of it makes true, found by comparing it with the
 * status it replaces, so that each real transition is told once.
 */
import {
  MAINTENANCE_RUN_PHASES,
  ROLLOUT_PAUSE_REASONS,
  type Condition,
  type MaintenanceRunPhase,
  type Rollout,
  type RolloutPhase,
  type RolloutStatus,
  type RolloutWaveStatus,
} from "../api/v1alpha1/index.ts";
import type { EventSeverity } from "../runtime/events.ts";
import { getCondition, setCondition, type ConditionInput } from "../runtime/conditions.ts";
import { halted } from "./phases.ts";
import type { RolloutScope } from "./scope.ts";
import { listedFailures } from "./waves.ts";

export const ROLLOUT_CONDITIONS = {
  Accepted: "Accepted",
  Progressing: "Progressing",
  Paused: "Paused",
} as const;

export type StatusFacts = Pick<
  RolloutScope,
  "rollout" | "candidates" | "missing" | "waves" | "begun" | "done"
>;

interface PhaseVerdict {
  phase: RolloutPhase;
  reason: string;
  message: string;
}

const shortList = (items: readonly string[], max = 5): string =>
  items.slice(0, max).join(", ") + (items.length > max ? `, … (${items.length} in all)` : "");

function runSummary(runs: Partial<Record<MaintenanceRunPhase, number>> | undefined): string {
  const parts = MAINTENANCE_RUN_PHASES.filter((p) => runs?.[p]).map((p) => `${runs?.[p]} ${p}`);
  return parts.length > 0 ? parts.join(", ") : "no runs yet";
}

function noClusters(facts: StatusFacts): string {
  const { selector, names } = facts.rollout.spec.clusters;
  if (names) return `spec.clusters.names matches no existing HcpCluster (${shortList(names)})`;
  return `spec.clusters.selector matches no HcpCluster (${JSON.stringify(selector)})`;
}

export function waveStatuses(facts: StatusFacts): RolloutWaveStatus[] {
  const waves: RolloutWaveStatus[] = facts.waves.map((w) => {
    const failed = listedFailures(w);
    return {
      index: w.index,
      task: w.task.metadata.name ?? "",
      clusters: w.members.length,
      runs: w.runs,
      state: w.state,
      ...(failed.length > 0 ? { failedClusters: failed } : {}),
    };
  });
  const { begun } = facts;
  if (begun && !waves.some((w) => w.index === begun.index))
    waves.push({
      index: begun.index,
      task: begun.task,
      clusters: begun.members.length,
      runs: {},
      state: "Progressing",
    });
  return waves;
}

function budgetMessage(facts: StatusFacts): string {
  const wave = facts.waves.find((w) => w.state === "FailureBudgetExceeded");
  if (!wave) return "";
  const budget = facts.rollout.spec.failureBudget?.maxFailedPerWave ?? 0;
  return (
    `Wave ${wave.index} has ${wave.failed.length} failed run(s), more than spec.failureBudget.maxFailedPerWave ` +
    `(${budget}): ${shortList(wave.failed)}. No later wave starts; set spec.proceedPastWave to ${wave.index} ` +
    `to accept these failures and go on, or spec.abort to stop`
  );
}

function succeeded(waves: readonly RolloutWaveStatus[]): PhaseVerdict {
  const clusters = waves.reduce((n, w) => n + w.clusters, 0);
  return {
    phase: "Succeeded",
    reason: "Succeeded",
    message: `Every wave finished: ${clusters} cluster(s) in ${waves.length} wave(s)`,
  };
}

function progressing(current: RolloutWaveStatus | undefined): PhaseVerdict {
  const message = current
    ? `Wave ${current.index} (${current.clusters} cluster(s)): ${runSummary(current.runs)}`
    : "Beginning the first wave";
  return { phase: "Progressing", reason: "WaveProgressing", message };
}

function phaseOf(facts: StatusFacts, waves: readonly RolloutWaveStatus[]): PhaseVerdict {
  const { rollout } = facts;
  const current = waves.at(-1);
  if (rollout.status?.phase === "Succeeded" || facts.done) return succeeded(waves);
  if (rollout.spec.abort)
    return {
      phase: "Aborted",
      reason: "Aborted",
      message: `spec.abort: runs not yet Running are cancelled${current ? ` (wave ${current.index})` : ""}; no wave follows`,
    };
  if (!current && facts.candidates.length === 0)
    return { phase: "Pending", reason: "NoClustersMatch", message: noClusters(facts) };
  if (halted(facts))
    return { phase: "Paused", reason: ROLLOUT_PAUSE_REASONS.budget, message: budgetMessage(facts) };
  if (rollout.spec.paused)
    return {
      phase: "Paused",
      reason: ROLLOUT_PAUSE_REASONS.spec,
      message: `spec.paused: no run of wave ${current?.index ?? 1} is admitted and no next wave starts`,
    };
  return progressing(current);
}

function accepted(facts: StatusFacts, hasWaves: boolean): ConditionInput {
  const type = ROLLOUT_CONDITIONS.Accepted;
  if (!hasWaves && facts.candidates.length === 0)
    return { type, status: "False", reason: "NoClustersMatch", message: noClusters(facts) };
  const missing =
    facts.missing.length > 0 ? `; spec.clusters.names not found: ${shortList(facts.missing)}` : "";
  return {
    type,
    status: "True",
    reason: "ClustersMatched",
    message: `${clusterCount(facts)} cluster(s)${missing}`,
  };
}

/** The clusters in the rollout: in its waves, and named now. */
function clusterCount(facts: StatusFacts): number {
  const all = new Set(facts.candidates);
  for (const w of facts.waves) for (const m of w.members) all.add(m);
  for (const m of facts.begun?.members ?? []) all.add(m);
  return all.size;
}

function conditionInputs(verdict: PhaseVerdict, facts: StatusFacts, hasWaves: boolean): ConditionInput[] {
  const paused = verdict.phase === "Paused";
  return [
    accepted(facts, hasWaves),
    {
      type: ROLLOUT_CONDITIONS.Progressing,
      status: verdict.phase === "Progressing" ? "True" : "False",
      reason: verdict.phase === "Progressing" ? verdict.reason : verdict.phase,
      message: verdict.message,
    },
    {
      type: ROLLOUT_CONDITIONS.Paused,
      status: paused ? "True" : "False",
      reason: paused ? verdict.reason : "NotPaused",
      message: paused ? verdict.message : "",
    },
  ];
}

export function composeRolloutStatus(facts: StatusFacts, now: Date): RolloutStatus {
  const { rollout } = facts;
  const waves = waveStatuses(facts);
  const verdict = phaseOf(facts, waves);
  const generation = rollout.metadata.generation;
  const opts = { observedGeneration: generation, now };
  let conditions: Condition[] = [];
  for (const input of conditionInputs(verdict, facts, waves.length > 0)) {
    // setCondition keeps a condition's transition time from the stored one when its status holds.
    const kept = getCondition(rollout.status?.conditions, input.type);
    conditions = setCondition(kept ? [...conditions, kept] : conditions, input, opts);
  }
  return {
    phase: verdict.phase,
    conditions,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    clusters: clusterCount(facts),
    currentWave: waves.at(-1)?.index ?? 0,
    waves,
  };
}

export interface RolloutEvent {
  type: EventSeverity;
  reason: string;
  message: string;
}

function waveEvents(before: RolloutStatus, after: RolloutStatus): RolloutEvent[] {
  const events: RolloutEvent[] = [];
  const old = new Map((before.waves ?? []).map((w) => [w.index, w]));
  for (const w of after.waves ?? []) {
    const was = old.get(w.index);
    if (!was)
      events.push({
        type: "Normal",
        reason: "WaveStarted",
        message: `Wave ${w.index} began on ${w.clusters} cluster(s) (MaintenanceTask ${w.task})`,
      });
    if (was?.state === w.state) continue;
    if (w.state === "Succeeded")
      events.push({
        type: "Normal",
        reason: "WaveSucceeded",
        message: `Wave ${w.index}: ${runSummary(w.runs)}`,
      });
    if (w.state === "FailuresAccepted")
      events.push({
        type: "Normal",
        reason: "WaveFinished",
        message: `Wave ${w.index} finished with its failures accepted (spec.proceedPastWave): ${runSummary(w.runs)}`,
      });
  }
  return events;
}

const pausedReason = (s: RolloutStatus): string | undefined =>
  s.phase === "Paused" ? getCondition(s.conditions, ROLLOUT_CONDITIONS.Paused)?.reason : undefined;

/** The events a write of `after` over `before` makes true. */
export function rolloutEvents(before: RolloutStatus, after: RolloutStatus): RolloutEvent[] {
  const events = waveEvents(before, after);
  const message = getCondition(after.conditions, ROLLOUT_CONDITIONS.Progressing)?.message ?? "";
  const reason = pausedReason(after);
  if (reason && reason !== pausedReason(before)) events.push({ type: "Warning", reason: "Paused", message });
  if (before.phase === "Paused" && after.phase === "Progressing")
    events.push({ type: "Normal", reason: "Resumed", message });
  if (after.phase !== before.phase && (after.phase === "Aborted" || after.phase === "Succeeded"))
    events.push({ type: after.phase === "Aborted" ? "Warning" : "Normal", reason: after.phase, message });
  return events;
}

export const storedStatus = (rollout: Rollout): RolloutStatus => rollout.status ?? {};
