/**
 * A ManagementCluster's Connected condition and `status.agent`, from what maestro-server heard of
 * its agent (maestro-server/liveness.ts) and what the status said before. Pure: the clock is an input.
 *
 * - True (AgentConnected): the agent was heard within three of its heartbeat intervals.
 * - False (AgentNotHeard): an agent that beats has been silent beyond that bound. The silence is
 *   counted from when maestro-server last subscribed at the earliest, so an agent is never blamed
 *   for a time nobody listened.
 * - False (SourceDisconnected): maestro-server itself has been off the broker beyond the bound:
 *   nothing the agent sends can arrive, so what the service shows of this cluster is stale.
 * - Unknown (NoHeartbeat): the agent talks but sends no heartbeat (a real Maestro agent); an idle
 *   one is silent, so its silence proves nothing. Unknown (WaitingForAgent): nothing heard yet.
 *   Unknown (LivenessNotTracked): no maestro-server runs in this process.
 *
 * Within the bound after maestro-server starts or reconnects, and while it has been off the broker
 * for less than the bound, the condition stays as it was: a restart or a blip of the broker
 * changes nothing that is written. Whatever is heard is held in memory; `status.agent.lastHeardTime`
 * is written exactly at each change of the condition's status and otherwise at most every
 * `lastHeardRefreshMs` (5 minutes by default): a heartbeat costs no write.
 */
import {
  CONNECTED,
  CONNECTED_REASONS,
  MISSED_HEARTBEATS,
  type LivenessSnapshot,
  type ManagementClusterAgentStatus,
} from "../api/v1alpha1/index.ts";
import { silenceBoundMs } from "../cloudevents/codec/heartbeat.ts";
import { conditionTime, type Condition, type ConditionInput } from "../runtime/conditions.ts";

/**
 * How often `status.agent.lastHeardTime` is refreshed while Connected does not change. It is a
 * record for readers (kubectl, hcpctl); the live value is the metric
 * hcp_managementcluster_agent_last_heard_seconds. At 20 management clusters this is 4 writes a
 * minute for the region, each waking only the predicates of the controllers that watch
 * ManagementClusters.
 */
export const LAST_HEARD_REFRESH_MS = 300_000;

export interface ConnectedInput {
  /** Milliseconds since the epoch. */
  now: number;
  /** What maestro-server heard; absent when none runs in this process. */
  liveness?: LivenessSnapshot;
  previous?: { connected?: Condition; agent?: ManagementClusterAgentStatus };
  /** Default LAST_HEARD_REFRESH_MS. */
  lastHeardRefreshMs?: number;
}

export interface ConnectedOutcome {
  condition: ConditionInput;
  agent?: ManagementClusterAgentStatus;
  /** When to look again without being told: the bound runs out, or lastHeardTime is due. */
  recheckAfterMs?: number;
}

/** What liveness says; no condition means "keep the one the status has". */
interface Verdict {
  condition?: ConditionInput;
  recheckAtMs?: number;
}

const condition = (status: ConditionInput["status"], reason: string, message: string): ConditionInput => ({
  type: CONNECTED,
  status,
  reason,
  message,
});

function at(ms: number): string {
  return conditionTime(new Date(ms));
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}

function parseTime(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** maestro-server is off the broker: the agent's silence is ours, and after the bound it is stale. */
function deafVerdict(deafSinceMs: number, boundMs: number, now: number): Verdict {
  if (now - deafSinceMs < boundMs) return { recheckAtMs: deafSinceMs + boundMs };
  return {
    condition: condition(
      "False",
      CONNECTED_REASONS.sourceDisconnected,
      `maestro-server has not been connected to the broker since ${at(deafSinceMs)}: nothing the agent sends can reach the service`,
    ),
  };
}

/**
 * An agent that announced no heartbeat: heard means alive then, silent means nothing. Within the
 * bound after maestro-server connected nothing is concluded: an agent that beats may have spoken
 * (a resync) before its first heartbeat, and calling it NoHeartbeat made a fresh region's first
 * event a false one.
 */
function noHeartbeatVerdict(live: LivenessSnapshot, listeningSinceMs: number, now: number): Verdict {
  const boundMs = silenceBoundMs(undefined);
  if (now - listeningSinceMs < boundMs) return { recheckAtMs: listeningSinceMs + boundMs };
  if (live.agent)
    return {
      condition: condition(
        "Unknown",
        CONNECTED_REASONS.noHeartbeat,
        "The agent sends no heartbeat (as a real Maestro agent), so whether it is still connected cannot be told; status.agent.lastHeardTime says when it was last heard",
      ),
    };
  return {
    condition: condition(
      "Unknown",
      CONNECTED_REASONS.waiting,
      `Nothing heard from the agent since maestro-server connected at ${at(listeningSinceMs)}`,
    ),
  };
}

function heartbeatVerdict(
  live: LivenessSnapshot,
  facts: { listeningSinceMs: number; lastHeardMs?: number; heartbeatMs: number },
  now: number,
): Verdict {
  const boundMs = silenceBoundMs(facts.heartbeatMs);
  const heard = live.agent?.lastHeardMs;
  if (heard !== undefined && now - heard < boundMs)
    return {
      condition: condition(
        "True",
        CONNECTED_REASONS.connected,
        `The agent sends a heartbeat every ${seconds(facts.heartbeatMs)}`,
      ),
      recheckAtMs: heard + boundMs,
    };
  const from = Math.max(facts.lastHeardMs ?? 0, facts.listeningSinceMs);
  if (now - from < boundMs) return { recheckAtMs: from + boundMs };
  const bound = `${seconds(boundMs)} (${MISSED_HEARTBEATS} intervals of ${seconds(facts.heartbeatMs)})`;
  return {
    condition: condition(
      "False",
      CONNECTED_REASONS.notHeard,
      facts.lastHeardMs !== undefined
        ? `No heartbeat from the agent for more than ${bound}; last heard at ${at(facts.lastHeardMs)}`
        : `No heartbeat from the agent for more than ${bound} since maestro-server connected at ${at(facts.listeningSinceMs)}`,
    ),
  };
}

function verdictOf(input: ConnectedInput, live: LivenessSnapshot, heartbeatMs: number | undefined): Verdict {
  const { now } = input;
  if (live.listeningSinceMs === undefined)
    return deafVerdict(live.deafSinceMs ?? now, silenceBoundMs(heartbeatMs), now);
  if (heartbeatMs === undefined) return noHeartbeatVerdict(live, live.listeningSinceMs, now);
  const persisted = parseTime(input.previous?.agent?.lastHeardTime);
  const lastHeardMs = Math.max(live.agent?.lastHeardMs ?? -Infinity, persisted ?? -Infinity);
  return heartbeatVerdict(
    live,
    {
      listeningSinceMs: live.listeningSinceMs,
      heartbeatMs,
      ...(Number.isFinite(lastHeardMs) ? { lastHeardMs } : {}),
    },
    now,
  );
}

function held(previous: Condition | undefined): ConditionInput {
  if (!previous) return condition("Unknown", CONNECTED_REASONS.waiting, "Waiting to hear from the agent");
  const { type, status, reason, message } = previous;
  return { type, status, reason, message };
}

/**
 * Whether a time heard later than the written one is to be written now: on a change of status, or
 * once the written one is older than the refresh interval. Due by the clock, not by the time heard:
 * the recheck comes at the due time, when the last heartbeat is up to an interval older, and
 * judged by that heartbeat the refresh was never due (lastHeardTime stood still for an hour).
 */
function writeHeardNow(input: ConnectedInput, status: string, beforeMs: number): boolean {
  const refreshMs = input.lastHeardRefreshMs ?? LAST_HEARD_REFRESH_MS;
  return input.previous?.connected?.status !== status || input.now - beforeMs >= refreshMs;
}

/** lastHeardTime: exact on a change of status, else refreshed only when it is older than the refresh interval. */
function lastHeardTime(input: ConnectedInput, status: string): string | undefined {
  const before = input.previous?.agent?.lastHeardTime;
  const beforeMs = parseTime(before);
  const heard = input.liveness?.agent?.lastHeardMs;
  if (heard === undefined) return before;
  if (beforeMs === undefined) return at(heard);
  if (heard <= beforeMs || !writeHeardNow(input, status, beforeMs)) return before;
  return at(heard);
}

function agentStatus(
  input: ConnectedInput,
  status: string,
  heartbeatMs: number | undefined,
): ManagementClusterAgentStatus | undefined {
  const time = lastHeardTime(input, status);
  // The certificate the agent last reported, in this run or (persisted) in an earlier one.
  const certificate = input.liveness?.agent?.brokerCertificate ?? input.previous?.agent?.brokerCertificate;
  const unclaimed = unclaimedWorks(input);
  const agent: ManagementClusterAgentStatus = {
    ...(time === undefined ? {} : { lastHeardTime: time }),
    ...(heartbeatMs === undefined ? {} : { heartbeatSeconds: heartbeatMs / 1000 }),
    ...(certificate === undefined ? {} : { brokerCertificate: certificate }),
    ...(unclaimed ? { unclaimedWorks: unclaimed } : {}),
  };
  return Object.keys(agent).length > 0 ? agent : undefined;
}

/**
 * The works the agent holds that the region does not know, as its last spec resync in this run
 * listed them, or (before one) as written; none are shown as absent.
 */
function unclaimedWorks(input: ConnectedInput): ManagementClusterAgentStatus["unclaimedWorks"] {
  const unclaimed = input.liveness?.unclaimedWorks ?? input.previous?.agent?.unclaimedWorks;
  return unclaimed && unclaimed.count > 0 ? unclaimed : undefined;
}

/** When lastHeardTime will be due for a refresh, if something newer was heard. */
function refreshAtMs(
  input: ConnectedInput,
  agent: ManagementClusterAgentStatus | undefined,
): number | undefined {
  const heard = input.liveness?.agent?.lastHeardMs;
  const written = parseTime(agent?.lastHeardTime);
  if (heard === undefined || written === undefined || heard <= written + 999) return undefined;
  return written + (input.lastHeardRefreshMs ?? LAST_HEARD_REFRESH_MS);
}

/** The interval the agent announced, in this run or (persisted) in an earlier one. */
function heartbeatOf(input: ConnectedInput, live: LivenessSnapshot): number | undefined {
  const persisted = input.previous?.agent?.heartbeatSeconds;
  return live.agent?.heartbeatMs ?? (persisted === undefined ? undefined : persisted * 1000);
}

export function connectedStatus(input: ConnectedInput): ConnectedOutcome {
  const live = input.liveness;
  if (!live)
    return {
      condition: condition(
        "Unknown",
        CONNECTED_REASONS.notTracked,
        "No maestro-server runs in this process, so the agent's liveness is not tracked here",
      ),
      ...(input.previous?.agent ? { agent: input.previous.agent } : {}),
    };
  const heartbeatMs = heartbeatOf(input, live);
  const verdict = verdictOf(input, live, heartbeatMs);
  const result = verdict.condition ?? held(input.previous?.connected);
  const agent = agentStatus(input, result.status, heartbeatMs);
  const recheck = [verdict.recheckAtMs, refreshAtMs(input, agent)].filter((t) => t !== undefined);
  return {
    condition: result,
    ...(agent ? { agent } : {}),
    ...(recheck.length > 0 ? { recheckAfterMs: Math.max(0, Math.min(...recheck) - input.now) } : {}),
  };
}
