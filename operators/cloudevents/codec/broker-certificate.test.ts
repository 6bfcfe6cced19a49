import { describe, expect, it } from "vitest";
import { DecodeError, Ext, parseEventType } from "../types.ts";
import {
  BROKER_CERTIFICATE_DATA_TYPE,
  MAX_PEM_CHARS,
  decodeBrokerCertificateAnswer,
  decodeBrokerCertificateRequest,
  encodeBrokerCertificateAnswer,
  encodeBrokerCertificateRequest,
  isBrokerCertificateEvent,
} from "./broker-certificate.ts";
import { encodeHeartbeat } from "./heartbeat.ts";

const CSR = "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n";

describe("broker certificate events", () => {
  it("carry a request on the agent's status side and its answer on the spec side, in a data type of ours", () => {
    const request = encodeBrokerCertificateRequest("mgmt-1-work-agent", "mgmt-1", CSR);
    expect(parseEventType(request.type)).toEqual({
      dataType: BROKER_CERTIFICATE_DATA_TYPE,
      subResource: "status",
      action: "create_request",
    });
    const decoded = decodeBrokerCertificateRequest(request);
    expect(decoded).toEqual({ consumer: "mgmt-1", requestId: request.id, certificateSigningRequest: CSR });

    const answer = encodeBrokerCertificateAnswer("maestro", {
      consumer: "mgmt-1",
      requestId: decoded.requestId,
      certificate: "PEM",
    });
    expect(parseEventType(answer.type).subResource).toBe("spec");
    expect(answer.extensions[Ext.clusterName]).toBe("mgmt-1");
    expect(decodeBrokerCertificateAnswer(answer)).toEqual({
      consumer: "mgmt-1",
      requestId: decoded.requestId,
      certificate: "PEM",
    });
    const refusal = encodeBrokerCertificateAnswer("maestro", {
      consumer: "mgmt-1",
      requestId: "r",
      refused: "x".repeat(2000),
    });
    const refused = decodeBrokerCertificateAnswer(refusal);
    expect("refused" in refused && refused.refused.length).toBe(500);
    expect(isBrokerCertificateEvent(request) && isBrokerCertificateEvent(answer)).toBe(true);
    expect(isBrokerCertificateEvent(encodeHeartbeat("a", { consumer: "mgmt-1", intervalMs: 1000 }))).toBe(
      false,
    );
  });

  it.each([
    ["no data", undefined, "data"],
    ["no request ID", { certificateSigningRequest: CSR }, "data.requestId"],
    ["no request", { requestId: "r" }, "data.certificateSigningRequest"],
    [
      "a request too long",
      { requestId: "r", certificateSigningRequest: "x".repeat(MAX_PEM_CHARS + 1) },
      "data.certificateSigningRequest",
    ],
  ])("refuse a request with %s, naming the field", (_name, data, field) => {
    const event = { ...encodeBrokerCertificateRequest("a", "mgmt-1", CSR), data };
    expect(() => decodeBrokerCertificateRequest(event)).toThrow(DecodeError);
    expect(() => decodeBrokerCertificateRequest(event)).toThrow(new RegExp(`^${field.replace(".", "\\.")}:`));
  });

  it("refuse an answer that is neither a certificate nor a refusal, and a request of another type", () => {
    const answer = {
      ...encodeBrokerCertificateAnswer("maestro", { consumer: "mgmt-1", requestId: "r", certificate: "P" }),
    };
    expect(() => decodeBrokerCertificateAnswer({ ...answer, data: { requestId: "r" } })).toThrow(
      /^data\.refused:/,
    );
    expect(() => decodeBrokerCertificateRequest(answer)).toThrow(/^type:/);
  });
});
