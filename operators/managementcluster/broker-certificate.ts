/**
 * What a ManagementCluster shows of its agent's broker client certificate: the one its heartbeat
 * reports (status.agent.brokerCertificate), an event when the agent switches to another, and when
 * it is due to expire. The agent renews it itself (maestro-agent/certificate-renewal.ts); the
 * region monitor's gauge and the HcpAgentBrokerCertificateExpiring alert catch a renewal that
 * does not happen.
 */
import type { BrokerCertificateSummary } from "../api/v1alpha1/index.ts";
import type { EventSeverity } from "../runtime/events.ts";

/** BrokerCertificateRenewed, when the reported certificate changes from one known to another. */
export function certificateEvent(
  before: BrokerCertificateSummary | undefined,
  after: BrokerCertificateSummary | undefined,
): { type: EventSeverity; reason: string; message: string } | undefined {
  if (!before || !after || before.serialNumber === after.serialNumber) return undefined;
  return {
    type: "Normal",
    reason: "BrokerCertificateRenewed",
    message: `The agent connects with broker certificate ${after.serialNumber}, valid until ${after.notAfter}; the one before (${before.serialNumber}) was valid until ${before.notAfter}`,
  };
}
