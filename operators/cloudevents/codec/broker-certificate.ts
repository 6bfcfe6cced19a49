/**
 * Broker client-certificate renewal between our agent and maestro-server, as kubelet renews its
 * client certificate: the agent makes a new key, keeps it, and sends only a PKCS#10 request on its
 * own `agentevents` topic (the broker's ACL lets no other client publish there, so the topic
 * vouches for the requester); maestro-server answers on the consumer's `sourceevents` topic with a
 * certificate or a refusal. The private key never leaves the management cluster. Like the
 * heartbeat, these events are no part of Maestro's protocol: their data type is ours, which a
 * real Maestro source or agent skips before decoding anything.
 * docs/decisions/0010-agent-certificate-renewal.md says why.
 */
import { randomUUID } from "node:crypto";
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

/** `<group>.<version>.<resource>` of broker certificate requests and answers. */
export const BROKER_CERTIFICATE_DATA_TYPE = "dev.aro.hcp.agents.v1alpha1.brokercertificates";

/** Agent → source: a request for a new client certificate. */
export const BROKER_CERTIFICATE_REQUEST_TYPE = formatEventType({
  dataType: BROKER_CERTIFICATE_DATA_TYPE,
  subResource: "status",
  action: Action.create,
});

/** Source → agent: the answer to one request. */
export const BROKER_CERTIFICATE_ANSWER_TYPE = formatEventType({
  dataType: BROKER_CERTIFICATE_DATA_TYPE,
  subResource: "spec",
  action: Action.update,
});

/** Far above a P-256 or RSA-4096 request or certificate chain in PEM; far below a packet. */
export const MAX_PEM_CHARS = 16 * 1024;
/** A refusal's reason is cut to this. */
export const MAX_REFUSAL_REASON_CHARS = 500;

export interface BrokerCertificateRequest {
  consumer: string;
  /** Names the request; the answer echoes it. */
  requestId: string;
  /** PEM PKCS#10, subject CN = the consumer. */
  certificateSigningRequest: string;
}

export type BrokerCertificateAnswer =
  | { consumer: string; requestId: string; certificate: string }
  | { consumer: string; requestId: string; refused: string };

/** True for an event of the broker certificate data type (request or answer). */
export function isBrokerCertificateEvent(event: CloudEvent): boolean {
  try {
    return parseEventType(event.type).dataType === BROKER_CERTIFICATE_DATA_TYPE;
  } catch {
    return false;
  }
}

export function encodeBrokerCertificateRequest(
  agentId: string,
  consumer: string,
  certificateSigningRequest: string,
): CloudEvent {
  const requestId = randomUUID();
  return {
    specversion: "1.0",
    id: requestId,
    source: agentId,
    type: BROKER_CERTIFICATE_REQUEST_TYPE,
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    extensions: { [Ext.clusterName]: consumer },
    data: { requestId, certificateSigningRequest },
  };
}

export function encodeBrokerCertificateAnswer(source: string, answer: BrokerCertificateAnswer): CloudEvent {
  const { consumer, ...data } = answer;
  return {
    specversion: "1.0",
    id: randomUUID(),
    source,
    type: BROKER_CERTIFICATE_ANSWER_TYPE,
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    extensions: { [Ext.clusterName]: consumer },
    data:
      "refused" in data
        ? { requestId: data.requestId, refused: data.refused.slice(0, MAX_REFUSAL_REASON_CHARS) }
        : data,
  };
}

function dataOf(event: CloudEvent): Record<string, unknown> {
  const data = event.data;
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new DecodeError("data", "is not a JSON object");
  return data as Record<string, unknown>;
}

function stringField(data: Record<string, unknown>, name: string, max: number): string {
  const value = data[name];
  if (typeof value !== "string" || value === "")
    throw new DecodeError(`data.${name}`, "is missing or not a string");
  if (value.length > max) throw new DecodeError(`data.${name}`, `is longer than ${max} characters`);
  return value;
}

function requireType(event: CloudEvent, want: string): void {
  if (event.type !== want) throw new DecodeError("type", `${quoted(event.type)} is not ${want}`);
}

export function decodeBrokerCertificateRequest(event: CloudEvent): BrokerCertificateRequest {
  requireType(event, BROKER_CERTIFICATE_REQUEST_TYPE);
  const data = dataOf(event);
  return {
    consumer: requireExtension(event, Ext.clusterName),
    requestId: stringField(data, "requestId", 100),
    certificateSigningRequest: stringField(data, "certificateSigningRequest", MAX_PEM_CHARS),
  };
}

export function decodeBrokerCertificateAnswer(event: CloudEvent): BrokerCertificateAnswer {
  requireType(event, BROKER_CERTIFICATE_ANSWER_TYPE);
  const data = dataOf(event);
  const consumer = requireExtension(event, Ext.clusterName);
  const requestId = stringField(data, "requestId", 100);
  if (data["certificate"] !== undefined)
    return { consumer, requestId, certificate: stringField(data, "certificate", MAX_PEM_CHARS) };
  return { consumer, requestId, refused: stringField(data, "refused", MAX_REFUSAL_REASON_CHARS) };
}
