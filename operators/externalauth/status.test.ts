import { describe, expect, it } from "vitest";
import type { ExternalAuth } from "../api/v1alpha1/index.ts";
import { getCondition } from "../runtime/conditions.ts";
import type { StepState } from "../hcp/steps.ts";
import { AUTH_CONDITIONS as C, composeAuthStatus, type AuthFacts, type AuthStep } from "./status.ts";

const auth = (phase?: ExternalAuth["status"]): ExternalAuth => ({
  metadata: { name: "entra", namespace: "ns", generation: 2, uid: "u" },
  spec: {
    clusterRef: { name: "c" },
    issuer: { url: "https://login.example.com", audiences: ["a"] },
    claim: { mappings: { username: { claim: "email" } } },
  },
  ...(phase ? { status: phase } : {}),
});

const ready: StepState = { state: "ready", message: "ok" };
const facts = (steps: Partial<Record<AuthStep, StepState>>, prior?: ExternalAuth["status"]): AuthFacts => ({
  auth: auth(prior),
  steps,
});

describe("composeAuthStatus", () => {
  it.each([
    [
      "every step ready",
      facts({ [C.ClusterReady]: ready, [C.ProviderApplied]: ready, [C.ProviderAccepted]: ready }),
      { phase: "Ready", ready: "True", progressing: "False", degraded: "False" },
    ],
    [
      "waiting for HyperShift on a first create",
      facts({
        [C.ClusterReady]: ready,
        [C.ProviderApplied]: ready,
        [C.ProviderAccepted]: { state: "pending", reason: "WaitingForHyperShift", message: "…" },
      }),
      { phase: "Provisioning", ready: "False", progressing: "True", degraded: "False" },
    ],
    [
      "a new generation rolling out over a Ready one",
      facts(
        {
          [C.ClusterReady]: ready,
          [C.ProviderApplied]: { state: "pending", reason: "WaitingForAgent", message: "…" },
        },
        { phase: "Ready" },
      ),
      { phase: "Updating", ready: "False", progressing: "True", degraded: "False" },
    ],
    [
      "HyperShift refusing the provider",
      facts({
        [C.ClusterReady]: ready,
        [C.ProviderApplied]: ready,
        [C.ProviderAccepted]: {
          state: "failed",
          reason: "HostedClusterInvalidConfiguration",
          message: "issuerURL: must use the 'https' scheme",
          userActionRequired: true,
        },
      }),
      { phase: "Degraded", ready: "False", progressing: "False", degraded: "True" },
    ],
  ])("%s", (_what, f, want) => {
    const status = composeAuthStatus(f, { succeeded: true });
    expect(status.phase).toBe(want.phase);
    expect(getCondition(status.conditions, C.Ready)?.status).toBe(want.ready);
    expect(getCondition(status.conditions, C.Progressing)?.status).toBe(want.progressing);
    expect(getCondition(status.conditions, C.Degraded)?.status).toBe(want.degraded);
    expect(status.observedGeneration).toBe(2);
    for (const c of status.conditions ?? []) expect(c.observedGeneration).toBe(2);
  });

  it("keeps observedGeneration when the reconcile failed", () => {
    const status = composeAuthStatus(facts({}, { observedGeneration: 1 }), { succeeded: false });
    expect(status.observedGeneration).toBe(1);
  });

  it("says Deleting while the HostedCluster still carries the provider", () => {
    const f: AuthFacts = {
      ...facts({}),
      deleting: { reason: "RemovingProvider", message: "Waiting for the agent" },
    };
    const status = composeAuthStatus(f, { succeeded: true });
    expect(status.phase).toBe("Deleting");
    expect(getCondition(status.conditions, C.Deleting)).toMatchObject({
      status: "True",
      reason: "RemovingProvider",
    });
    expect(getCondition(status.conditions, C.Ready)).toMatchObject({ status: "False", reason: "Deleting" });
  });
});
