/**
 * ExternalAuth status from the facts the phases recorded: a condition per step (its cluster is
 * there, the HostedCluster carries the provider at this generation, HyperShift accepts the
 * configuration), then Ready, Progressing, Degraded and Deleting, the phase and
 * observedGeneration. Written once per reconcile through setCondition.
 */
import {
  EXTERNAL_AUTH_STEPS,
  type ExternalAuth,
  type ExternalAuthStatus,
  type Phase,
} from "../api/v1alpha1/index.ts";
import { degradedFromSteps, firstNotReady, heldBy, stepCondition, type Steps } from "../hcp/steps.ts";
import { getCondition, setCondition, type Condition, type ConditionInput } from "../runtime/conditions.ts";

export const AUTH_CONDITIONS = {
  Ready: "Ready",
  Progressing: "Progressing",
  Degraded: "Degraded",
  ClusterReady: "ClusterReady",
  ProviderApplied: "ProviderApplied",
  ProviderAccepted: "ProviderAccepted",
  Deleting: "Deleting",
} as const;

/** The steps in the order they run; a step that is not True holds the ones after it. */
export const AUTH_STEPS =
  EXTERNAL_AUTH_STEPS satisfies readonly (typeof AUTH_CONDITIONS)[keyof typeof AUTH_CONDITIONS][];

export type AuthStep = (typeof AUTH_STEPS)[number];

export interface AuthFacts {
  auth: ExternalAuth;
  steps: Steps<AuthStep>;
  deleting?: { reason: string; message: string };
}

export function degradedCondition(facts: AuthFacts): ConditionInput {
  return degradedFromSteps(AUTH_CONDITIONS.Degraded, AUTH_STEPS, facts.steps);
}

export function readyCondition(facts: AuthFacts): ConditionInput {
  const type = AUTH_CONDITIONS.Ready;
  if (facts.deleting) return { type, status: "False", reason: "Deleting", message: facts.deleting.message };
  const blocker = firstNotReady(AUTH_STEPS, facts.steps);
  if (blocker) return heldBy(type, "False", blocker);
  return {
    type,
    status: "True",
    reason: "AsExpected",
    message: "The cluster authenticates with this provider",
  };
}

export function progressingCondition(facts: AuthFacts, degraded: ConditionInput): ConditionInput {
  const type = AUTH_CONDITIONS.Progressing;
  if (facts.deleting) return { type, status: "True", ...facts.deleting };
  if (degraded.status === "True")
    return { type, status: "False", reason: "UserActionRequired", message: degraded.message };
  const blocker = firstNotReady(AUTH_STEPS, facts.steps);
  if (blocker) return heldBy(type, "True", blocker);
  return { type, status: "False", reason: "AsExpected", message: "Nothing to roll out" };
}

export function phaseOf(facts: AuthFacts, conditions: Condition[]): Phase {
  if (facts.deleting) return "Deleting";
  if (getCondition(conditions, AUTH_CONDITIONS.Degraded)?.status === "True") return "Degraded";
  if (getCondition(conditions, AUTH_CONDITIONS.Ready)?.status === "True") return "Ready";
  // A provider once Ready whose new generation is rolling out is updating, as ARM reports it.
  return facts.auth.status?.phase === "Ready" || facts.auth.status?.phase === "Updating"
    ? "Updating"
    : "Provisioning";
}

function summary(facts: AuthFacts): ConditionInput[] {
  const degraded = degradedCondition(facts);
  return [
    readyCondition(facts),
    progressingCondition(facts, degraded),
    degraded,
    ...(facts.deleting
      ? [{ type: AUTH_CONDITIONS.Deleting, status: "True" as const, ...facts.deleting }]
      : []),
  ];
}

/** The whole status; `observedGeneration` moves only when the reconcile got through (`succeeded`). */
export function composeAuthStatus(facts: AuthFacts, opts: { succeeded: boolean }): ExternalAuthStatus {
  const { auth } = facts;
  const stamp = { observedGeneration: auth.metadata.generation };
  let conditions: Condition[] = auth.status?.conditions ?? [];
  for (const type of AUTH_STEPS) {
    const s = facts.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), stamp);
  }
  for (const c of summary(facts)) conditions = setCondition(conditions, c, stamp);
  const observedGeneration = opts.succeeded ? auth.metadata.generation : auth.status?.observedGeneration;
  return {
    conditions,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    phase: phaseOf(facts, conditions),
  };
}
