/**
 * What changed between the status an object showed and the one just written, as Kubernetes Events
 * (and the simulator's transition counter): availability, degradation, rollouts, scaling.
 */
import {
  HostedClusterConditionType,
  NodePoolConditionType,
  type HostedClusterStatus,
  type NodePoolStatus,
  type UpdateHistory,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import type { EventSeverity } from "../../operators/runtime/events.ts";
import { WAITING_FOR_MACHINES } from "./nodepool-status.ts";

export interface Transition {
  type: EventSeverity;
  reason: string;
  message: string;
}

interface ConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

function statusOf(list: readonly ConditionLike[] | undefined, type: string): ConditionLike | undefined {
  return list?.find((c) => c.type === type);
}

/** The condition as it is now, when its status changed (a first appearance included). */
function flipped(
  before: readonly ConditionLike[] | undefined,
  after: readonly ConditionLike[] | undefined,
  type: string,
): ConditionLike | undefined {
  const old = statusOf(before, type);
  const now = statusOf(after, type);
  if (!now || old?.status === now.status) return undefined;
  return now;
}

const newestEntry = (s: HostedClusterStatus): UpdateHistory | undefined => s.version?.history?.[0];

function rolloutTransitions(before: HostedClusterStatus, after: HostedClusterStatus): Transition[] {
  const oldHead = newestEntry(before);
  const newHead = newestEntry(after);
  if (!newHead) return [];
  const version = `OpenShift ${newHead.version ?? ""}`;
  const out: Transition[] = [];
  const started = oldHead?.image !== newHead.image;
  if (started) {
    const reason = oldHead ? "UpgradeStarted" : "RolloutStarted";
    out.push({ type: "Normal", reason, message: `Rolling out ${version} (${newHead.image})` });
  }
  const wasCompleted = !started && oldHead?.state === "Completed";
  if (newHead.state === "Completed" && !wasCompleted) {
    out.push({ type: "Normal", reason: "RolloutCompleted", message: `${version} is rolled out` });
  }
  return out;
}

/** Events for a condition that turned True (`up`) or, having been set before, turned away from it (`down`). */
function conditionTransition(
  before: readonly ConditionLike[] | undefined,
  after: readonly ConditionLike[] | undefined,
  type: string,
  events: { up: (c: ConditionLike) => Transition; down: (c: ConditionLike) => Transition },
): Transition[] {
  const changed = flipped(before, after, type);
  if (!changed) return [];
  if (changed.status === "True") return [events.up(changed)];
  return statusOf(before, type) ? [events.down(changed)] : [];
}

export function hostedClusterTransitions(
  before: HostedClusterStatus,
  after: HostedClusterStatus,
): Transition[] {
  const { Available, Degraded } = HostedClusterConditionType;
  return [
    ...rolloutTransitions(before, after),
    ...conditionTransition(before.conditions, after.conditions, Available, {
      up: (c) => ({ type: "Normal", reason: "Available", message: c.message ?? "" }),
      down: (c) => ({ type: "Warning", reason: "Unavailable", message: c.message ?? "" }),
    }),
    // Degraded is the one condition whose True is bad news.
    ...conditionTransition(before.conditions, after.conditions, Degraded, {
      up: (c) => ({ type: "Warning", reason: c.reason ?? Degraded, message: c.message ?? "" }),
      down: () => ({ type: "Normal", reason: "Recovered", message: "The hosted cluster is not degraded" }),
    }),
  ];
}

/** Scaling and version rollouts take Ready away as a matter of course; anything else is a warning. */
function notReady(c: ConditionLike): Transition {
  const routine = c.reason === WAITING_FOR_MACHINES;
  return {
    type: routine ? "Normal" : "Warning",
    reason: routine ? "Updating" : c.reason || "NotReady",
    message: c.message || "Not ready",
  };
}

export function nodePoolTransitions(before: NodePoolStatus, after: NodePoolStatus): Transition[] {
  const out: Transition[] = [];
  const [from, to] = [before.replicas ?? 0, after.replicas ?? 0];
  if (from !== to)
    out.push({ type: "Normal", reason: "Scaled", message: `Scaled from ${from} to ${to} nodes` });
  if (after.version && before.version !== after.version) {
    out.push({ type: "Normal", reason: "VersionUpdated", message: `Nodes run OpenShift ${after.version}` });
  }
  out.push(
    ...conditionTransition(before.conditions, after.conditions, NodePoolConditionType.Ready, {
      up: () => ({ type: "Normal", reason: "Ready", message: "All nodes are ready" }),
      down: notReady,
    }),
  );
  return out;
}
