import { describe, expect, it } from "vitest";
import type { BrokerCertificateSummary } from "../api/v1alpha1/index.ts";
import { certificateEvent } from "./broker-certificate.ts";
import { connectedStatus } from "./connected.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const first: BrokerCertificateSummary = {
  serialNumber: "1a",
  notBefore: "2026-01-01T00:00:00.000Z",
  notAfter: "2026-01-31T00:00:00.000Z",
};
const renewed: BrokerCertificateSummary = {
  serialNumber: "2b",
  notBefore: "2026-01-25T00:00:00.000Z",
  notAfter: "2026-02-24T00:00:00.000Z",
};

describe("the agent's broker certificate on the ManagementCluster", () => {
  it("shows the certificate the last heartbeat reported, and keeps it across a restart of the operators", () => {
    const heard = connectedStatus({
      now: T0 + 5_000,
      liveness: {
        listeningSinceMs: T0,
        agent: { lastHeardMs: T0 + 4_000, heartbeatMs: 10_000, brokerCertificate: renewed },
      },
      previous: { agent: { lastHeardTime: "2026-01-01T00:00:00Z", brokerCertificate: first } },
    });
    expect(heard.agent?.brokerCertificate).toEqual(renewed);
    // A new maestro-server has heard nothing yet: what was written stays.
    const restarted = connectedStatus({
      now: T0 + 5_000,
      liveness: { deafSinceMs: T0 + 4_000 },
      previous: { agent: { lastHeardTime: "2026-01-01T00:00:00Z", brokerCertificate: first } },
    });
    expect(restarted.agent?.brokerCertificate).toEqual(first);
  });

  it("tells a switch to another certificate, and nothing else", () => {
    expect(certificateEvent(first, renewed)).toEqual({
      type: "Normal",
      reason: "BrokerCertificateRenewed",
      message:
        "The agent connects with broker certificate 2b, valid until 2026-02-24T00:00:00.000Z; the one before (1a) was valid until 2026-01-31T00:00:00.000Z",
    });
    expect(certificateEvent(undefined, first)).toBeUndefined();
    expect(certificateEvent(first, { ...first })).toBeUndefined();
    expect(certificateEvent(first, undefined)).toBeUndefined();
  });
});
