/**
 * The task definitions: a task type mapped to its steps. The steps call the operations of the
 * thing they maintain through an interface given at construction, so that this folder imports no
 * other controller (hack/lint/layers.js).
 */
import type { HCP_CLUSTER_STEPS, HcpCluster, MaintenanceTaskType } from "../api/v1alpha1/index.ts";
import type { MaintenanceStep, TaskDefinition, TaskRegistry } from "./step.ts";
import { done, waiting } from "./step-outcomes.ts";
import { isTrue } from "../runtime/conditions.ts";
import { refreshWorkTemplate, type WorkTemplateRefresh } from "./refresh-task.ts";
import { upgradeControlPlane, type ControlPlaneUpgrades } from "./upgrade-task.ts";

/**
 * Where a cluster's signing-key rotation stands: the fields of RotationState
 * (operators/cluster/signing-key-rotation.ts) the steps read.
 */
export interface SigningKeyRotationState {
  /** none: one key; begun: a next key exists; switched: no next key, a retired key still verifies. */
  stage: "none" | "begun" | "switched";
  activeKid: string;
  /** The next key is in the published JWKS. */
  nextPublished: boolean;
  /** Retired public keys still published, each until the last token it signed has expired. */
  retired: Array<{ kid: string; verifyUntil: Date }>;
}

/**
 * The rotation's operations, each idempotent: the shape of SigningKeyRotation in
 * operators/cluster/signing-key-rotation.ts. operators/main.ts gives this controller the cluster
 * controller's instance (ClusterController.signingKeyRotation), so both work on one key store and
 * each change wakes the cluster to publish it; this folder never imports the cluster controller.
 */
export interface SigningKeyRotation {
  rotationState(cluster: HcpCluster, signal?: AbortSignal): Promise<SigningKeyRotationState>;
  beginRotation(cluster: HcpCluster, signal?: AbortSignal): Promise<void>;
  switchSigningKey(cluster: HcpCluster, signal?: AbortSignal): Promise<void>;
  retireExpired(cluster: HcpCluster, now: Date, signal?: AbortSignal): Promise<void>;
}

/** Whether the HostedCluster runs with a signing key (hostedSigningKeyFromStatus says how it is told). */
export interface HostedSigningKey {
  runsKey(cluster: HcpCluster, kid: string): boolean;
}

const AVAILABLE: (typeof HCP_CLUSTER_STEPS)[number] = "HostedClusterAvailable";

/**
 * From the cluster's status, which the cluster controller writes from its work's feedback: the
 * management cluster's signing-key Secret carries `kid` (its annotation, read back by the agent),
 * and the HostedCluster is Available. The run controller is woken when either changes.
 */
export const hostedSigningKeyFromStatus: HostedSigningKey = {
  runsKey(cluster, kid) {
    const status = cluster.status;
    const available = isTrue(status?.conditions, AVAILABLE);
    return status?.serviceAccountSigningKey?.appliedKeyId === kid && available;
  },
};

/** RotateServiceAccountSigningKey: a new key with no token broken on the way. */
export function rotateServiceAccountSigningKey(
  rotation: SigningKeyRotation,
  hosted: HostedSigningKey,
): TaskDefinition {
  const steps: MaintenanceStep[] = [
    {
      name: "BeginRotation",
      async execute({ cluster, signal }) {
        if ((await rotation.rotationState(cluster, signal)).stage === "begun")
          return done("A next signing key exists");
        await rotation.beginRotation(cluster, signal);
        return done("Made the next signing key");
      },
    },
    {
      name: "PublishBothKeys",
      async execute({ cluster, signal }) {
        const state = await rotation.rotationState(cluster, signal);
        // Past the switch (a crash after it): the key published then is the active one now.
        if (state.nextPublished || state.stage === "switched")
          return done("The published JWKS holds the current and the next key");
        return waiting("Waiting for the published JWKS to hold the next key");
      },
    },
    {
      name: "SwitchSigningKey",
      async execute({ cluster, signal }) {
        await rotation.switchSigningKey(cluster, signal);
        const { activeKid } = await rotation.rotationState(cluster, signal);
        if (hosted.runsKey(cluster, activeKid))
          return done(`The HostedCluster signs tokens with key ${activeKid}`);
        return waiting(
          `Waiting for the HostedCluster to run signing key ${activeKid} (the work applied, HyperShift's rollout)`,
        );
      },
    },
    {
      // The run ends here rather than waiting out the old key's verify-until (a year by default):
      // a run holds its cluster, and a year-long run would hold every other task and rollout off
      // it. The cluster controller drops the old key from the JWKS at that instant on its own
      // (operators/cluster/phases.ts, reconcileOidcIssuer requeues for it).
      name: "ScheduleKeyRetirement",
      async execute({ cluster, now, signal }) {
        // Tidies retired keys of earlier rotations whose tokens have all expired out of the Secret.
        await rotation.retireExpired(cluster, now, signal);
        const { retired } = await rotation.rotationState(cluster, signal);
        if (retired.length === 0) return done("No previous key is published any more");
        const until = new Date(Math.max(...retired.map((r) => r.verifyUntil.getTime())));
        return done(
          `The previous public key stays in the JWKS until ${until.toISOString()}, when tokens it signed have expired; the cluster controller removes it then`,
        );
      },
    },
  ];
  return { steps };
}

export interface TaskOperations {
  signingKeys: SigningKeyRotation;
  /** Default hostedSigningKeyFromStatus. */
  hostedSigningKey?: HostedSigningKey;
  /** Without it this process has no UpgradeControlPlane (its tasks say UnknownTask). */
  controlPlane?: ControlPlaneUpgrades;
  /** Without it this process has no RefreshWorkTemplate (its tasks say UnknownTask). */
  workTemplates?: WorkTemplateRefresh;
}

/** Every task type this version knows, with the operations its steps call. */
export function taskRegistry(ops: TaskOperations): TaskRegistry {
  return new Map<MaintenanceTaskType, TaskDefinition>([
    [
      "RotateServiceAccountSigningKey",
      rotateServiceAccountSigningKey(ops.signingKeys, ops.hostedSigningKey ?? hostedSigningKeyFromStatus),
    ],
    ...(ops.controlPlane ? [["UpgradeControlPlane", upgradeControlPlane(ops.controlPlane)] as const] : []),
    ...(ops.workTemplates ? [["RefreshWorkTemplate", refreshWorkTemplate(ops.workTemplates)] as const] : []),
  ]);
}
