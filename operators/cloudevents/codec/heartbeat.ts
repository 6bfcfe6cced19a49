/**
 * The agent's heartbeat: a small CloudEvent our maestro-agent publishes on its own `agentevents`
 * topic right after every (re)subscribe and then at a fixed interval, so that the service side
 * can tell a silent agent from an idle one. It is no part of Maestro's protocol and is shaped so
 * that a real Maestro server ignores it quietly: the type parses (five parts, subresource
 * `status`) but names a data type of its own, which sdk-go's source client logs at info level and
 * skips before decoding anything. (The OCM heartbeat type, `io.open-cluster-management.cloudevents.heartbeat`,
 * exists for gRPC only; it has four parts, so the same client would log a parse error on every
 * beat.) A real Maestro agent sends none: the service then cannot tell and says so (Unknown).
 */
import { randomUUID } from "node:crypto";
import { MISSED_HEARTBEATS } from "../../api/v1alpha1/managementcluster.ts";
import {
  Action,
  DecodeError,
  Ext,
  formatEventType,
  parseEventType,
  quoted,
  type CloudEvent,
} from "../types.ts";
import { requireExtension } from "./manifestbundle.ts";

/** `<group>.<version>.<resource>` of heartbeats: hcp.aro.dev's own, reversed as OCM writes its own. */
export const HEARTBEAT_DATA_TYPE = "dev.aro.hcp.agents.v1alpha1.heartbeats";

export const HEARTBEAT_TYPE = formatEventType({
  dataType: HEARTBEAT_DATA_TYPE,
  subResource: "status",
  action: Action.update,
});

/** How often an agent beats unless told otherwise: the OCM work agent's status sync period. */
export const DEFAULT_HEARTBEAT_MS = 10_000;

/** How long an agent that beats every `heartbeatMs` (default 10 s) may stay silent and be Connected. */
export function silenceBoundMs(heartbeatMs: number | undefined): number {
  return MISSED_HEARTBEATS * (heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
}

/** The longest interval a heartbeat may announce: a longer one would make liveness meaningless. */
export const MAX_HEARTBEAT_SECONDS = 3600;

export interface Heartbeat {
  consumer: string;
  /** How often the agent promises to beat, in milliseconds. */
  intervalMs: number;
}

export function encodeHeartbeat(agentId: string, beat: Heartbeat): CloudEvent {
  return {
    specversion: "1.0",
    id: randomUUID(),
    source: agentId,
    type: HEARTBEAT_TYPE,
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    extensions: { [Ext.clusterName]: beat.consumer },
    data: { intervalSeconds: beat.intervalMs / 1000 },
  };
}

/** True for an event of the heartbeat data type (whatever its action). */
export function isHeartbeat(event: CloudEvent): boolean {
  return parseEventType(event.type).dataType === HEARTBEAT_DATA_TYPE;
}

export function decodeHeartbeat(event: CloudEvent): Heartbeat {
  if (!isHeartbeat(event)) throw new DecodeError("type", `${quoted(event.type)} is not a heartbeat`);
  const consumer = requireExtension(event, Ext.clusterName);
  const data = event.data;
  const seconds =
    typeof data === "object" && data !== null
      ? (data as Record<string, unknown>)["intervalSeconds"]
      : undefined;
  if (
    typeof seconds !== "number" ||
    !Number.isFinite(seconds) ||
    seconds <= 0 ||
    seconds > MAX_HEARTBEAT_SECONDS
  )
    throw new DecodeError(
      "data.intervalSeconds",
      `${quoted(JSON.stringify(seconds) ?? "undefined")} is not a number of seconds in (0, ${MAX_HEARTBEAT_SECONDS}]`,
    );
  return { consumer, intervalMs: Math.round(seconds * 1000) };
}
