/**
 * `hcpctl trace ID`: every hop the ARM request with this correlation (or client) request ID took,
 * from the objects on the service cluster alone: every HcpCluster and NodePool (their operation
 * documents and history) and the frontend's operation ConfigMaps, in all namespaces, then the
 * works of the CRs found. No log store is read.
 */
import { ConfigMapResource } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta/v1.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../api/work/v1.ts";
import { ARM_LABELS } from "../../api/v1alpha1/index.ts";
import { OPERATION_TTL_MS } from "../../api/v1alpha1/index.ts";
import { WORK_LABELS } from "../../api/v1alpha1/labels.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { toJson, toYaml } from "../output.ts";
import { renderTrace } from "../render-trace.ts";
import { traceOperation, type RequestTrace } from "../trace.ts";
import { findOperations, type OperationMatch, type TraceObjects } from "../trace-find.ts";

export interface TraceOptions {
  output?: "json" | "yaml";
}

/** The operation ConfigMaps; a refusal to list them narrows the search, with a warning. */
async function operationConfigMaps(io: Io, conn: Connection): Promise<KubeObject[]> {
  try {
    return (await conn.list<KubeObject>(ConfigMapResource, { labelSelector: `${ARM_LABELS.operation}=true` }))
      .items;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    io.stderr.write(`warning: deletes and finished operations not searched: ${why}\n`);
    return [];
  }
}

async function readObjects(io: Io, conn: Connection): Promise<TraceObjects> {
  const [clusters, pools, configMaps] = await Promise.all([
    conn.list<HcpCluster>(HcpClusterResource),
    conn.list<NodePool>(NodePoolResource),
    operationConfigMaps(io, conn),
  ]);
  return { clusters: clusters.items, pools: pools.items, configMaps };
}

/** The CR's own works: a cluster's (not its pools'), or a pool's. */
async function worksOf(conn: Connection, m: OperationMatch): Promise<ManifestWork[]> {
  const uid = m.cr?.metadata.uid;
  if (!uid) return [];
  const pool = m.crKind === "NodePool";
  const selector = pool
    ? `${WORK_LABELS.nodePool}=${uid}`
    : `${WORK_LABELS.clusterUid}=${uid},!${WORK_LABELS.nodePool}`;
  return (await conn.list<ManifestWork>(ManifestWorkResource, { labelSelector: selector })).items;
}

function notFound(id: string): CliError {
  const days = OPERATION_TTL_MS / (24 * 3600 * 1000);
  return new CliError(
    `no ARM request with correlation or client request id "${id}": no HcpCluster, NodePool or operation record in any namespace carries it (operation records are kept ${days} days)`,
  );
}

export async function runTrace(
  io: Io,
  connect: Connect,
  args: { id: string; opts: TraceOptions },
): Promise<void> {
  const id = args.id.trim();
  if (!id) throw new CliError("the correlation or client request id is empty");
  const conn = connect();
  const matches = findOperations(id, await readObjects(io, conn));
  if (matches.length === 0) throw notFound(id);
  const now = new Date(io.now()).toISOString().replace(/\.\d+Z$/, "Z");
  const works = await Promise.all(matches.map((m) => worksOf(conn, m)));
  const trace: RequestTrace = {
    apiVersion: "hcpctl.hcp.aro.dev/v1alpha1",
    kind: "RequestTrace",
    id,
    observedAt: now,
    operations: matches.map((match, i) => traceOperation({ match, works: works[i] ?? [], now })),
  };
  const { output } = args.opts;
  if (output === "json") io.stdout.write(toJson(trace));
  else if (output === "yaml") io.stdout.write(toYaml(trace));
  else io.stdout.write(renderTrace(trace, io.paint));
}
