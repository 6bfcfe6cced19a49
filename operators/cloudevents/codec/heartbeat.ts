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
import { MISSED_HEARTBEATS, type BrokerCertificateSummary } from "../../api/v1alpha1/managementcluster.ts";
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
  /** The client certificate the agent's connection uses; absent from an agent that cannot say. */
  brokerCertificate?: BrokerCertificateSummary;
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
    data: {
      intervalSeconds: beat.intervalMs / 1000,
      ...(beat.brokerCertificate ? { brokerCertificate: beat.brokerCertificate } : {}),
    },
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
  const certificate = decodeCertificateSummary((data as Record<string, unknown>)["brokerCertificate"]);
  return {
    consumer,
    intervalMs: Math.round(seconds * 1000),
    ...(certificate ? { brokerCertificate: certificate } : {}),
  };
}

const SERIAL_PATTERN = /^[0-9a-f]{1,64}$/;

function instant(value: unknown, field: string): string {
  if (typeof value !== "string" || value.length > 40 || Number.isNaN(Date.parse(value)))
    throw new DecodeError(field, `${quoted(JSON.stringify(value) ?? "undefined")} is not an RFC 3339 time`);
  return new Date(value).toISOString();
}

function decodeCertificateSummary(value: unknown): BrokerCertificateSummary | undefined {
  if (value === undefined) return undefined;
  const field = "data.brokerCertificate";
  if (typeof value !== "object" || value === null) throw new DecodeError(field, "is not an object");
  const v = value as Record<string, unknown>;
  const serial = v["serialNumber"];
  if (typeof serial !== "string" || !SERIAL_PATTERN.test(serial))
    throw new DecodeError(`${field}.serialNumber`, "is not a lower-case hexadecimal serial number");
  return {
    serialNumber: serial,
    notBefore: instant(v["notBefore"], `${field}.notBefore`),
    notAfter: instant(v["notAfter"], `${field}.notAfter`),
  };
}
