/**
 * What one cluster's page lists beside hcpctl's tree, read with hcpctl's own code: the ARM
 * operations its CRs carry (current and history, trace-find.ts's reading of the frontend's
 * documents, settled as a poll would answer), its events, and the trace of one request ID
 * (trace-find.ts and trace.ts, as `hcpctl trace` builds it). Pure.
 */
import { settle, type HcpCluster, type NodePool } from "../api/v1alpha1/index.ts";
import type { KubeObject } from "../api/meta/v1.ts";
import { docsOnCR } from "../hcpctl/trace-find.ts";

export interface OperationRow {
  /** HcpCluster/name or NodePool/name. */
  target: string;
  id: string;
  request: string;
  status: string;
  startTime: string;
  endTime: string;
  /** The ID a trace finds it by: the correlation request ID, else the client's. */
  requestId: string;
  error: string;
}

export interface EventRow {
  object: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  last: string;
}

/** The operations of the cluster and its pools, newest first. */
export function operationRows(cluster: HcpCluster, pools: readonly NodePool[], now: string): OperationRow[] {
  const crs: Array<[string, HcpCluster | NodePool]> = [
    [`HcpCluster/${cluster.metadata.name ?? ""}`, cluster],
    ...pools.map((p): [string, NodePool] => [`NodePool/${p.metadata.name ?? ""}`, p]),
  ];
  return crs
    .flatMap(([target, cr]) =>
      docsOnCR(cr).map(({ doc }) => {
        const settled = settle(doc, cr, now);
        return {
          target,
          id: doc.id,
          request: doc.request,
          status: settled.status,
          startTime: doc.startTime,
          endTime: settled.endTime ?? "",
          requestId: doc.correlationRequestId ?? doc.clientRequestId ?? "",
          error: settled.error ? `${settled.error.code}: ${settled.error.message}` : "",
        };
      }),
    )
    .sort((a, b) => b.startTime.localeCompare(a.startTime));
}

const text = (o: Record<string, unknown>, key: string): string => {
  const v = o[key];
  return typeof v === "string" ? v : "";
};

/** A core/v1 Event as a row; its object as Kind/name. */
export function eventRow(e: KubeObject): EventRow {
  const o = e as unknown as Record<string, unknown>;
  const involved = (o["involvedObject"] ?? {}) as Record<string, unknown>;
  const count = o["count"];
  return {
    object: `${text(involved, "kind")}/${text(involved, "name")}`,
    type: text(o, "type"),
    reason: text(o, "reason"),
    message: text(o, "message"),
    count: typeof count === "number" ? count : 1,
    last: text(o, "lastTimestamp") || text(o, "eventTime") || text(o, "firstTimestamp"),
  };
}
