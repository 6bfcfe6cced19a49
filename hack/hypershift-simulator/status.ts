/**
 * The HostedCluster status the simulator reports, computed from the object alone (spec, the
 * status it already shows, the clock): a release rollout is a Partial history entry whose
 * startedTime says when it began, and it completes `provisionDelayMs` later. Nothing is kept in
 * memory, so a restarted simulator continues where the status says it was.
 *
 * Condition types, reasons and messages are HyperShift's (hostedcluster_controller.go and the
 * control-plane operator), including the misspelt `ReconciliatonSucceeded` reason.
 */
import {
  ALL_IS_WELL,
  HostedClusterConditionType as T,
  HyperShiftReason as R,
  adminKubeconfigSecretName,
  type ClusterVersionStatus,
  type ControlPlaneUpdateHistory,
  type ControlPlaneVersionStatus,
  type HostedCluster,
  type HostedClusterStatus,
  type UpdateHistory,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  conditionTime,
  setCondition,
  type Condition,
  type ConditionInput,
} from "../../operators/runtime/conditions.ts";
import { authenticationProblem } from "./authentication.ts";
import { reEncryption, validAzureKMSConfig, type ReEncryption } from "./etcd-encryption.ts";
import { apiServerHost, ignitionHost, parseReleaseImage, type Failure } from "./release.ts";

/**
 * On a HostedCluster whose API a real kube-apiserver serves (hack/harness/hosted-apis.ts): its
 * `host:port`, published as the control plane's endpoint in place of the simulated one.
 */
export const SERVED_ENDPOINT_ANNOTATION = "hypershift-simulator.hcp.aro.dev/api-endpoint";

/** Where the control plane's API is reached: a real server's, else the simulated host's. */
function endpointOf(hc: HostedCluster): { host: string; port: number } {
  return servedEndpoint(hc) ?? { host: apiServerHost(hc), port: 443 };
}

function servedEndpoint(hc: HostedCluster): { host: string; port: number } | undefined {
  const value = hc.metadata.annotations?.[SERVED_ENDPOINT_ANNOTATION];
  const at = value?.lastIndexOf(":") ?? -1;
  const port = Number(value?.slice(at + 1));
  if (!value || at <= 0 || !Number.isInteger(port)) return undefined;
  return { host: value.slice(0, at), port };
}

/** HyperShift never keeps more than this many controlPlaneVersion.history entries (CRD maxItems). */
const MAX_HISTORY = 100;

export interface Clock {
  now: Date;
  /** How long a rollout (creation or upgrade) takes. */
  provisionDelayMs: number;
}

export interface HostedClusterFacts extends Clock {
  /** The injected failure, if any: the control plane is Degraded and not Available; rollouts stall. */
  failure: Failure | undefined;
  /** The fingerprint of the key all etcd data is encrypted with, as last recorded (etcd-encryption.ts). */
  migratedKeyHash?: string;
}

export interface StatusOutcome<S> {
  status: S;
  /** When the next change is due (a rollout completing); undefined when nothing waits on time. */
  requeueAfterMs?: number;
  /** A new fingerprint of the key all etcd data is encrypted with, to record before the status. */
  migratedKeyHash?: string;
}

interface RolloutEntry {
  state: "Completed" | "Partial";
  startedTime: string;
  image: string;
}

interface Rollout<E extends RolloutEntry> {
  history: E[];
  /** True when this call started a new rollout (desired changed). */
  started: boolean;
  dueInMs?: number;
}

/**
 * Moves a version history along: a new desired image prepends a Partial entry (the previous one
 * stays as it was, like HyperShift's CVO history); the newest Partial entry completes once the
 * delay since its start has passed, unless the rollout is blocked.
 */
function advanceRollout<E extends RolloutEntry>(
  history: readonly E[] | undefined,
  target: { image: string; blocked: boolean },
  clock: Clock,
  entry: { start: (startedTime: string) => E; complete: (e: E, completionTime: string) => E },
): Rollout<E> {
  const now = conditionTime(clock.now);
  let entries = [...(history ?? [])];
  const started = entries[0]?.image !== target.image;
  if (started) entries = [entry.start(now), ...entries].slice(0, MAX_HISTORY);
  const head = entries[0];
  if (!head || head.state !== "Partial" || target.blocked) return { history: entries, started };
  const dueInMs = Date.parse(head.startedTime) + clock.provisionDelayMs - clock.now.getTime();
  if (dueInMs > 0) return { history: entries, started, dueInMs };
  entries[0] = entry.complete(head, now);
  return { history: entries, started };
}

interface Target {
  image: string;
  version: string;
  generation: number;
  blocked: boolean;
}

function nextVersion(
  prev: ClusterVersionStatus | undefined,
  target: Target,
  clock: Clock,
): { version: ClusterVersionStatus; dueInMs?: number } {
  const { image, version } = target;
  const rollout = advanceRollout<UpdateHistory>(prev?.history, target, clock, {
    start: (startedTime) => ({
      state: "Partial",
      startedTime,
      completionTime: null,
      version,
      image,
      verified: false,
    }),
    complete: (e, completionTime) => ({ ...e, state: "Completed", completionTime }),
  });
  return {
    version: {
      desired: { image, version },
      history: rollout.history,
      observedGeneration: rollout.started || !prev ? target.generation : prev.observedGeneration,
      availableUpdates: null,
    },
    dueInMs: rollout.dueInMs,
  };
}

function nextControlPlaneVersion(
  prev: ControlPlaneVersionStatus | undefined,
  target: Target,
  clock: Clock,
): { version: ControlPlaneVersionStatus; dueInMs?: number } {
  const { image, version } = target;
  const rollout = advanceRollout<ControlPlaneUpdateHistory>(prev?.history, target, clock, {
    start: (startedTime) => ({ state: "Partial", startedTime, version, image }),
    complete: (e, completionTime) => ({ ...e, state: "Completed", completionTime }),
  });
  const observedGeneration =
    rollout.started || prev?.observedGeneration === undefined ? target.generation : prev.observedGeneration;
  return {
    version: { desired: { image, version }, history: rollout.history, observedGeneration },
    dueInMs: rollout.dueInMs,
  };
}

/** Facts the conditions are computed from. */
interface ControlPlaneFacts {
  /** A control-plane rollout has completed at least once: the API server is up. */
  up: boolean;
  /** A rollout of either version is under way. */
  rollingOut: boolean;
  /** Why no version can be rolled out (an image without an x.y.z tag), if so. */
  invalidImage?: string;
  failure: Failure | undefined;
}

function availableCondition(f: ControlPlaneFacts): ConditionInput {
  if (f.failure) return { type: T.Available, status: "False", ...f.failure };
  if (f.up)
    return {
      type: T.Available,
      status: "True",
      reason: R.AsExpected,
      message: "The hosted control plane is available",
    };
  return {
    type: T.Available,
    status: "False",
    reason: R.WaitingForAvailable,
    message: "Waiting for hosted control plane to be healthy",
  };
}

function progressingCondition(f: ControlPlaneFacts): ConditionInput {
  if (f.invalidImage)
    return { type: T.Progressing, status: "False", reason: R.Blocked, message: f.invalidImage };
  if (f.rollingOut)
    return {
      type: T.Progressing,
      status: "True",
      reason: "Progressing",
      message: "HostedCluster is deploying, upgrading, or reconfiguring",
    };
  return {
    type: T.Progressing,
    status: "False",
    reason: R.AsExpected,
    message: "HostedCluster is at expected version",
  };
}

function degradedCondition(f: ControlPlaneFacts): ConditionInput {
  if (f.failure) return { type: T.Degraded, status: "True", ...f.failure };
  return {
    type: T.Degraded,
    status: "False",
    reason: R.AsExpected,
    message: "The hosted cluster is not degraded",
  };
}

/** The components a real control plane brings up, all following `up`. */
function componentConditions(up: boolean): ConditionInput[] {
  const component = (type: string, ok: [string, string], waiting: [string, string]): ConditionInput => {
    const [reason, message] = up ? ok : waiting;
    return { type, status: up ? "True" : "False", reason, message };
  };
  return [
    component(
      T.InfrastructureReady,
      [R.AsExpected, ALL_IS_WELL],
      [R.WaitingOnInfrastructureReady, "Cluster infrastructure is still provisioning"],
    ),
    component(
      T.KubeAPIServerAvailable,
      [R.AsExpected, "Kube APIServer deployment is available"],
      [R.WaitingForAvailable, "Waiting for Kube APIServer deployment to become available"],
    ),
    component(
      T.EtcdAvailable,
      [R.EtcdQuorumAvailable, "Etcd has quorum"],
      [R.EtcdWaitingForQuorum, "Waiting for etcd to reach quorum"],
    ),
  ];
}

/** ValidConfiguration: HyperShift's verdict on spec.configuration (the OIDC providers, authentication.ts). */
function validConfiguration(hc: HostedCluster): ConditionInput {
  const problem = authenticationProblem(hc);
  if (problem)
    return { type: T.ValidConfiguration, status: "False", reason: R.InvalidConfiguration, message: problem };
  return {
    type: T.ValidConfiguration,
    status: "True",
    reason: R.AsExpected,
    message: "Configuration passes validation",
  };
}

/** Conditions that hold for any HostedCluster the simulator accepts. */
function constantConditions(invalidImage: string | undefined): ConditionInput[] {
  return [
    invalidImage
      ? { type: T.ValidReleaseImage, status: "False", reason: R.InvalidImage, message: invalidImage }
      : {
          type: T.ValidReleaseImage,
          status: "True",
          reason: R.AsExpected,
          message: "Release image is valid",
        },
    {
      type: T.SupportedHostedCluster,
      status: "True",
      reason: R.AsExpected,
      message: "HostedCluster is supported by operator configuration",
    },
    {
      type: T.ReconciliationActive,
      status: "True",
      reason: R.AsExpected,
      message: "Reconciliation active on resource",
    },
    {
      type: T.ReconciliationSucceeded,
      status: "True",
      // Sic: HyperShift's hostedcluster_controller.go spells the reason this way.
      reason: "ReconciliatonSucceeded",
      message: "Reconciliation completed successfully",
    },
  ];
}

/** ValidAzureKMSConfig on Azure, EtcdDataEncryptionUpToDate with a customer's key (etcd-encryption.ts). */
function kmsConditions(hc: HostedCluster, encryption: ReEncryption): ConditionInput[] {
  if (hc.spec.platform.type !== "Azure") return [];
  return [validAzureKMSConfig(hc), ...(encryption.condition ? [encryption.condition] : [])];
}

function hostedClusterConditions(
  hc: HostedCluster,
  f: ControlPlaneFacts,
  encryption: ReEncryption,
  now: Date,
): Condition[] {
  const inputs = [
    availableCondition(f),
    progressingCondition(f),
    degradedCondition(f),
    ...componentConditions(f.up),
    validConfiguration(hc),
    ...kmsConditions(hc, encryption),
    ...constantConditions(f.invalidImage),
  ];
  const opts = { observedGeneration: hc.metadata.generation, now };
  return inputs.reduce<Condition[]>((list, c) => setCondition(list, c, opts), hc.status?.conditions ?? []);
}

/** The release targets of both versions, or why there are none. */
function releaseTargets(
  hc: HostedCluster,
  blocked: boolean,
): { data: Target; controlPlane: Target } | { invalid: string } {
  const generation = hc.metadata.generation ?? 1;
  const dataImage = hc.spec.release.image;
  const cpImage = hc.spec.controlPlaneRelease?.image ?? dataImage;
  const data = parseReleaseImage(dataImage).version;
  const cp = parseReleaseImage(cpImage).version;
  if (!data || !cp) {
    const bad = data ? cpImage : dataImage;
    return {
      invalid: `The simulator reads the OpenShift version from the release image tag; ${bad} has none`,
    };
  }
  return {
    data: { image: dataImage, version: data, generation, blocked },
    controlPlane: { image: cpImage, version: cp, generation, blocked },
  };
}

function minDue(...dues: Array<number | undefined>): number | undefined {
  const defined = dues.filter((d): d is number => d !== undefined);
  return defined.length > 0 ? Math.max(1, Math.min(...defined)) : undefined;
}

interface Versions {
  version?: ClusterVersionStatus;
  controlPlaneVersion?: ControlPlaneVersionStatus;
  invalidImage?: string;
  requeueAfterMs?: number;
}

/** Both version blocks moved along; with an unreadable release image they stay as they were. */
function nextVersions(hc: HostedCluster, facts: HostedClusterFacts): Versions {
  const prev = hc.status ?? {};
  const targets = releaseTargets(hc, facts.failure !== undefined);
  if ("invalid" in targets) {
    return {
      version: prev.version,
      controlPlaneVersion: prev.controlPlaneVersion,
      invalidImage: targets.invalid,
    };
  }
  const data = nextVersion(prev.version, targets.data, facts);
  const cp = nextControlPlaneVersion(prev.controlPlaneVersion, targets.controlPlane, facts);
  return {
    version: data.version,
    controlPlaneVersion: cp.version,
    requeueAfterMs: minDue(data.dueInMs, cp.dueInMs),
  };
}

/** The whole status: versions, conditions, and once the control plane is up its endpoint and kubeconfig. */
export function computeHostedClusterStatus(
  hc: HostedCluster,
  facts: HostedClusterFacts,
): StatusOutcome<HostedClusterStatus> {
  const { version, controlPlaneVersion, invalidImage, requeueAfterMs } = nextVersions(hc, facts);
  const up = controlPlaneVersion?.history?.some((h) => h.state === "Completed") ?? false;
  const rollingOut = [version?.history?.[0], controlPlaneVersion?.history?.[0]].some(
    (h) => h?.state === "Partial",
  );
  const cf: ControlPlaneFacts = { up, rollingOut, invalidImage, failure: facts.failure };
  const encryption = reEncryption(hc, facts.migratedKeyHash, facts);
  const status: HostedClusterStatus = {
    conditions: hostedClusterConditions(hc, cf, encryption, facts.now),
    ...(version ? { version } : {}),
    ...(controlPlaneVersion ? { controlPlaneVersion } : {}),
    payloadArch: parseReleaseImage(hc.spec.release.image).arch,
  };
  if (up) {
    status.controlPlaneEndpoint = endpointOf(hc);
    status.kubeconfig = { name: adminKubeconfigSecretName(hc.metadata.name ?? "") };
    status.ignitionEndpoint = ignitionHost(hc);
  }
  return {
    status,
    requeueAfterMs: minDue(requeueAfterMs, encryption.dueInMs),
    migratedKeyHash: encryption.migratedKeyHash,
  };
}
