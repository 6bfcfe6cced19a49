/**
 * The NodePool status the simulator reports, computed from the NodePool, its HostedCluster and the
 * clock. Work (nodes to add or remove, a version to roll out) starts when `Ready` turns False, or
 * when the HostedCluster becomes Available if that is later, and is done `provisionDelayMs`
 * after; both times come from conditions' lastTransitionTime, so a restart changes nothing.
 *
 * Condition types, reasons and messages follow HyperShift's NodePool controller
 * (nodepool_controller.go, conditions.go) and, for Ready, the CAPI MachineDeployment it bubbles up.
 */
import {
  ALL_IS_WELL,
  HostedClusterConditionType,
  HyperShiftReason as R,
  NodePoolConditionType as T,
  type HostedCluster,
  type NodePool,
  type NodePoolCondition,
  type NodePoolStatus,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  getCondition,
  setCondition,
  type Condition,
  type ConditionInput,
} from "../../operators/runtime/conditions.ts";
import { parseReleaseImage, type Failure } from "./release.ts";
import type { Clock, StatusOutcome } from "./status.ts";

/** CAPI's MachineDeployment reason while replicas are not all available; HyperShift bubbles it up. */
export const WAITING_FOR_MACHINES = "WaitingForAvailableMachines";

export interface NodePoolFacts extends Clock {
  /** The NodePool's HostedCluster (spec.clusterName in its namespace), if it exists. */
  hostedCluster: HostedCluster | undefined;
  /** The injected failure: Ready is False with its reason until it is removed; nothing converges. */
  failure: Failure | undefined;
}

/** The replica count the pool converges to: spec.replicas, or autoScaling.min when autoscaling. */
export function desiredReplicas(np: NodePool): number {
  return np.spec.autoScaling ? np.spec.autoScaling.min : (np.spec.replicas ?? 0);
}

/** When the HostedCluster last became Available, or undefined while it is not. */
function availableSince(hc: HostedCluster | undefined): number | undefined {
  const available = getCondition(hc?.status?.conditions, HostedClusterConditionType.Available);
  return available?.status === "True" ? Date.parse(available.lastTransitionTime) : undefined;
}

/** What the pool has and wants, after this reconcile's progress. */
interface PoolFacts {
  desired: number;
  replicas: number;
  version: string | undefined;
  target: string | undefined;
  hcAvailable: boolean;
}

const pending = (p: PoolFacts): boolean => p.replicas !== p.desired || p.version !== p.target;

function readyCondition(np: NodePool, p: PoolFacts, failure: Failure | undefined): ConditionInput {
  const hcName = np.spec.clusterName;
  const notReady = (reason: string, message: string): ConditionInput => ({
    type: T.Ready,
    status: "False",
    reason,
    message,
  });
  if (failure) return notReady(failure.reason, failure.message);
  if (!p.target)
    return notReady(R.ValidationFailed, `No OpenShift version in release image ${np.spec.release.image}`);
  if (!pending(p)) return { type: T.Ready, status: "True", reason: R.AsExpected, message: "" };
  if (!p.hcAvailable)
    return notReady(R.WaitingForAvailable, `Waiting for HostedCluster ${hcName} to be available`);
  if (p.replicas !== p.desired) {
    return notReady(
      WAITING_FOR_MACHINES,
      `Minimum availability requires ${p.desired} replicas, current ${p.replicas} available`,
    );
  }
  return notReady(WAITING_FOR_MACHINES, `Rolling out version ${p.target} to ${p.desired} nodes`);
}

function machineConditions(p: PoolFacts): ConditionInput[] {
  const none = p.desired === 0 && p.replicas === 0;
  const noReplicas = "NodePool set to no replicas";
  let machines: ConditionInput;
  if (none)
    machines = { type: T.AllMachinesReady, status: "False", reason: R.AsExpected, message: noReplicas };
  else if (p.replicas === 0)
    machines = {
      type: T.AllMachinesReady,
      status: "False",
      reason: R.NotFound,
      message: "No Machines are created",
    };
  else if (p.replicas < p.desired)
    machines = {
      type: T.AllMachinesReady,
      status: "False",
      reason: "WaitingForNodeRef",
      message: `${p.desired - p.replicas} of ${p.desired} machines are not ready`,
    };
  else machines = { type: T.AllMachinesReady, status: "True", reason: R.AsExpected, message: ALL_IS_WELL };
  let nodes: ConditionInput;
  if (none) nodes = { type: T.AllNodesHealthy, status: "False", reason: R.AsExpected, message: noReplicas };
  else if (p.replicas === 0)
    nodes = {
      type: T.AllNodesHealthy,
      status: "False",
      reason: R.NotFound,
      message: "No Machines are created",
    };
  else nodes = { type: T.AllNodesHealthy, status: "True", reason: R.AsExpected, message: ALL_IS_WELL };
  return [machines, nodes];
}

function specConditions(np: NodePool, p: PoolFacts): ConditionInput[] {
  const flag = (type: string, on: boolean, message = ""): ConditionInput => ({
    type,
    status: on ? "True" : "False",
    reason: R.AsExpected,
    message,
  });
  const as = np.spec.autoScaling;
  const image = np.spec.release.image;
  return [
    flag(
      T.AutoscalingEnabled,
      as !== undefined,
      as ? `Maximum nodes: ${as.max}, Minimum nodes: ${as.min}` : "",
    ),
    flag(T.AutorepairEnabled, np.spec.management.autoRepair === true),
    flag(T.UpdateManagementEnabled, true),
    flag(T.UpdatingConfig, false),
    flag(
      T.UpdatingVersion,
      p.target !== undefined && p.version !== p.target,
      p.target !== undefined && p.version !== p.target
        ? `Updating version in progress. Target version: ${p.target}`
        : "",
    ),
    flag(T.ReconciliationActive, true, "Reconciliation active on resource"),
    p.target
      ? flag(T.ValidReleaseImage, true, `Using release image: ${image}`)
      : {
          type: T.ValidReleaseImage,
          status: "False",
          reason: R.ValidationFailed,
          message: `Failed to get release image: no OpenShift version in the tag of ${image}`,
        },
  ];
}

/** The NodePool condition list as the runtime's helper sees it (reason and message always strings). */
function asConditions(list: readonly NodePoolCondition[] | undefined): Condition[] {
  return (list ?? []).map((c) => ({ ...c, reason: c.reason ?? "", message: c.message ?? "" }));
}

function nodePoolConditions(np: NodePool, p: PoolFacts, facts: NodePoolFacts): NodePoolCondition[] {
  const inputs = [readyCondition(np, p, facts.failure), ...machineConditions(p), ...specConditions(np, p)];
  const opts = { observedGeneration: np.metadata.generation, now: facts.now };
  let list = inputs.reduce((acc, c) => setCondition(acc, c, opts), asConditions(np.status?.conditions));
  // HyperShift reports IgnitionEndpointAvailable only while the endpoint is missing.
  const ignitionMissing = !facts.hostedCluster?.status?.ignitionEndpoint;
  list = ignitionMissing
    ? setCondition(
        list,
        {
          type: T.IgnitionEndpointAvailable,
          status: "False",
          reason: R.IgnitionEndpointMissing,
          message: "Ignition endpoint not available, waiting",
        },
        opts,
      )
    : list.filter((c) => c.type !== T.IgnitionEndpointAvailable);
  return list;
}

/**
 * Moves the pool towards its spec when it may (a valid version, no failure, the HostedCluster
 * Available): all at once when the delay since the work started has passed.
 */
function progress(np: NodePool, facts: NodePoolFacts): { pool: PoolFacts; dueInMs?: number } {
  const hcSince = availableSince(facts.hostedCluster);
  const pool: PoolFacts = {
    desired: desiredReplicas(np),
    replicas: np.status?.replicas ?? 0,
    version: np.status?.version,
    target: parseReleaseImage(np.spec.release.image).version,
    hcAvailable: hcSince !== undefined,
  };
  if (!pending(pool) || !pool.target || facts.failure || hcSince === undefined) return { pool };
  const ready = getCondition(asConditions(np.status?.conditions), T.Ready);
  // Work began when Ready turned False; from a Ready pool it begins now.
  const workSince = ready?.status === "False" ? Date.parse(ready.lastTransitionTime) : facts.now.getTime();
  const dueInMs = Math.max(workSince, hcSince) + facts.provisionDelayMs - facts.now.getTime();
  if (dueInMs > 0) return { pool, dueInMs };
  return { pool: { ...pool, replicas: pool.desired, version: pool.target } };
}

export function computeNodePoolStatus(np: NodePool, facts: NodePoolFacts): StatusOutcome<NodePoolStatus> {
  const { pool, dueInMs } = progress(np, facts);
  const status: NodePoolStatus = {
    replicas: pool.replicas,
    ...(pool.version ? { version: pool.version } : {}),
    conditions: nodePoolConditions(np, pool, facts),
  };
  return { status, requeueAfterMs: dueInMs };
}
