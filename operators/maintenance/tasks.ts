/**
 * The task definitions: a task type mapped to its steps. The steps call the operations of the
 * thing they maintain through an interface given at construction, so that this folder imports no
 * other controller (hack/lint/layers.js).
 */
import type { HcpCluster, MaintenanceTaskType } from "../api/v1alpha1/index.ts";
import type { MaintenanceStep, StepOutcome, TaskDefinition, TaskRegistry } from "./step.ts";

/** How often a step that waits on something outside the service (the JWKS, HyperShift) looks again. */
const POLL_MS = 30_000;

/** Where a cluster's service-account signing-key rotation stands, as the key store and the work show it. */
export interface SigningKeyRotationState {
  /** A next key exists (beginRotation ran). */
  begun: boolean;
  /** The published JWKS holds the next key beside the current one. */
  nextKeyPublished: boolean;
  /** The HostedCluster's work names the next key as its signing key. */
  switchRequested: boolean;
  /** The agent applied that work and HyperShift reports the control plane signing with it. */
  hostedClusterRunsNextKey: boolean;
  /** The previous public key, still published until tokens it signed have expired. */
  previousKey?: { verifyUntil: Date };
}

/**
 * The rotation's operations (operators/cluster/signing-key-rotation.ts, to be moved into a library
 * folder so that this controller may call them). Each is idempotent.
 */
export interface SigningKeyRotation {
  rotationState(cluster: HcpCluster, signal: AbortSignal): Promise<SigningKeyRotationState>;
  beginRotation(cluster: HcpCluster, signal: AbortSignal): Promise<void>;
  switchSigningKey(cluster: HcpCluster, signal: AbortSignal): Promise<void>;
  /** Removes a previous key whose verify-until instant has passed. */
  retireExpired(cluster: HcpCluster, now: Date, signal: AbortSignal): Promise<void>;
}

const done = (message: string): StepOutcome => ({ kind: "done", message });
const waiting = (message: string, requeueMs = POLL_MS): StepOutcome => ({
  kind: "waiting",
  message,
  requeueMs,
});

/** RotateServiceAccountSigningKey: a new key with no token broken on the way. */
export function rotateServiceAccountSigningKey(rotation: SigningKeyRotation): TaskDefinition {
  const steps: MaintenanceStep[] = [
    {
      name: "BeginRotation",
      async execute({ cluster, signal }) {
        if ((await rotation.rotationState(cluster, signal)).begun) return done("A next signing key exists");
        await rotation.beginRotation(cluster, signal);
        return done("Made the next signing key");
      },
    },
    {
      name: "PublishBothKeys",
      async execute({ cluster, signal }) {
        const state = await rotation.rotationState(cluster, signal);
        if (state.nextKeyPublished) return done("The published JWKS holds the current and the next key");
        return waiting("Waiting for the published JWKS to hold the next key");
      },
    },
    {
      name: "SwitchSigningKey",
      async execute({ cluster, signal }) {
        let state = await rotation.rotationState(cluster, signal);
        if (!state.switchRequested) {
          await rotation.switchSigningKey(cluster, signal);
          state = await rotation.rotationState(cluster, signal);
        }
        if (state.hostedClusterRunsNextKey) return done("The HostedCluster signs tokens with the new key");
        return waiting(
          "Waiting for the HostedCluster to run the new signing key (the work applied, HyperShift's report)",
        );
      },
    },
    {
      name: "RetirePreviousKey",
      async execute({ cluster, now, signal }) {
        const state = await rotation.rotationState(cluster, signal);
        if (!state.previousKey) return done("The previous key is no longer published");
        const until = state.previousKey.verifyUntil;
        if (until > now)
          return waiting(
            `Keeping the previous public key until ${until.toISOString()}, when tokens it signed have expired`,
            Math.min(until.getTime() - now.getTime(), 3_600_000),
          );
        await rotation.retireExpired(cluster, now, signal);
        return done("Retired the previous public key");
      },
    },
  ];
  return { steps };
}

export interface TaskOperations {
  signingKeys: SigningKeyRotation;
}

/** Every task type this version knows, with the operations its steps call. */
export function taskRegistry(ops: TaskOperations): TaskRegistry {
  return new Map<MaintenanceTaskType, TaskDefinition>([
    ["RotateServiceAccountSigningKey", rotateServiceAccountSigningKey(ops.signingKeys)],
  ]);
}
