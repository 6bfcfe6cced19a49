/** A RequestTrace as hcpctl's trace.ts builds it, for the portal's unit tests: a Create that failed on a quota. */
import type { RequestTrace } from "../hcpctl/trace.ts";

export function failedCreateTrace(id: string): RequestTrace {
  return {
    apiVersion: "hcpctl.hcp.aro.dev/v1alpha1",
    kind: "RequestTrace",
    id,
    observedAt: "2026-11-28T23:40:00Z",
    operations: [
      {
        operation: {
          id: "op-1",
          request: "Create",
          resourceId: "/subscriptions/s/…/broken",
          kind: "cluster",
          target: "broken",
          location: "westeurope",
          apiVersion: "2024-06-10-preview",
          startTime: "2026-11-28T23:30:00Z",
          lastTransitionTime: "2026-11-28T23:35:00Z",
          status: "Failed",
        },
        matchedBy: "correlationRequestId",
        recordedIn: "cr",
        target: { kind: "HcpCluster", namespace: "ns1", name: "broken" },
        hops: [
          {
            hop: "Accepted",
            object: { kind: "Operation", name: "op-1" },
            state: "Done",
            time: "2026-11-28T23:30:00Z",
            message: "Create of broken",
          },
          {
            hop: "Result",
            object: { kind: "Operation", name: "op-1" },
            state: "Failed",
            time: "2026-11-28T23:35:00Z",
            sincePreviousSeconds: 300,
            message: "Failed: QuotaExceeded: <quota>",
          },
        ],
      },
    ],
  };
}
