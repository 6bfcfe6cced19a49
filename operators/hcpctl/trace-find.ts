/**
 * Finding the ARM operations one request made, from object state alone: the frontend keeps an
 * operation's document on the CR it acts on (the current one, and the earlier ones in the history
 * annotation) and in a ConfigMap `op-<id>` for a Delete or once a poll froze it
 * (operators/frontend/operations.ts). Each document names the request's correlation and client
 * request IDs; an ID may match several operations (an ARM deployment sends one correlation ID
 * with every resource it writes). Pure: the same objects give the same matches.
 */
import type { KubeObject } from "../api/meta/v1.ts";
import type { HcpCluster, NodePool } from "../api/v1alpha1/index.ts";
import { ARM_ANNOTATIONS } from "../api/v1alpha1/index.ts";
import {
  currentOperationOf as currentOnCR,
  operationHistoryOf as historyOnCR,
  operationOfConfigMap as fromConfigMap,
  type OperationDoc,
} from "../api/v1alpha1/index.ts";

export type CRKind = "HcpCluster" | "NodePool";

/** Which of the request's IDs the one asked for is. */
export type MatchedBy = "correlationRequestId" | "clientRequestId";

/** One operation the request made, with the CR it acts on when that still exists. */
export interface OperationMatch {
  doc: OperationDoc;
  matchedBy: MatchedBy;
  /** Where the document was read: the CR's annotations, its history, or a ConfigMap. */
  recordedIn: "cr" | "history" | "configmap";
  crKind: CRKind;
  namespace: string;
  /** The CR the operation acts on, when it exists. */
  cr?: HcpCluster | NodePool;
}

/** What the scan read: every HcpCluster and NodePool, and the operation ConfigMaps, in all namespaces. */
export interface TraceObjects {
  clusters: readonly HcpCluster[];
  pools: readonly NodePool[];
  configMaps: readonly KubeObject[];
}

const same = (a: string | undefined, b: string): boolean =>
  a !== undefined && a.toLowerCase() === b.toLowerCase();

function matchedBy(doc: OperationDoc, id: string): MatchedBy | undefined {
  if (same(doc.correlationRequestId, id)) return "correlationRequestId";
  if (same(doc.clientRequestId, id)) return "clientRequestId";
  return undefined;
}

const crKindOf = (kind: OperationDoc["kind"]): CRKind => (kind === "nodePool" ? "NodePool" : "HcpCluster");

/** A CR's documents: the current operation, then its history (newest first). */
export function docsOnCR(
  cr: HcpCluster | NodePool,
): Array<{ doc: OperationDoc; recordedIn: "cr" | "history" }> {
  const current = currentOnCR(cr);
  return [
    ...(current ? [{ doc: current, recordedIn: "cr" as const }] : []),
    ...historyOnCR(cr).map((doc) => ({ doc, recordedIn: "history" as const })),
  ];
}

/**
 * A CR that carries the ID in its request annotations but whose document is in none of the
 * places read (written by a frontend that kept documents elsewhere): its current operation as far
 * as the annotations tell.
 */
function annotatedOnly(cr: HcpCluster | NodePool, kind: CRKind, id: string): OperationDoc | undefined {
  const a = cr.metadata.annotations ?? {};
  const correlation = a[ARM_ANNOTATIONS.correlationRequestId];
  const client = a[ARM_ANNOTATIONS.clientRequestId];
  const opId = a[ARM_ANNOTATIONS.operation];
  if (!opId || (!same(correlation, id) && !same(client, id))) return undefined;
  const request = a[ARM_ANNOTATIONS.operationRequest];
  return {
    id: opId,
    request: request === "Update" || request === "Delete" ? request : "Create",
    resourceId: a[ARM_ANNOTATIONS.resourceId] ?? "",
    kind: kind === "NodePool" ? "nodePool" : "cluster",
    target: cr.metadata.name ?? "",
    location: "",
    apiVersion: "",
    ...(correlation ? { correlationRequestId: correlation } : {}),
    ...(client ? { clientRequestId: client } : {}),
    startTime: "",
    lastTransitionTime: "",
    status: "Accepted",
  };
}

const keyOf = (namespace: string, kind: CRKind, name: string): string => `${namespace}/${kind}/${name}`;

type CR = HcpCluster | NodePool;

/** Every CR by namespace, kind and name. */
function indexCRs(objects: TraceObjects): Map<string, { cr: CR; kind: CRKind }> {
  const crs = new Map<string, { cr: CR; kind: CRKind }>();
  const add = (cr: CR, kind: CRKind): void => {
    crs.set(keyOf(cr.metadata.namespace ?? "", kind, cr.metadata.name ?? ""), { cr, kind });
  };
  for (const cr of objects.clusters) add(cr, "HcpCluster");
  for (const cr of objects.pools) add(cr, "NodePool");
  return crs;
}

type Candidate = Omit<OperationMatch, "cr" | "matchedBy">;

/** The documents a CR keeps, and its bare annotations when they name the ID and no document does. */
function candidatesOfCR(cr: CR, crKind: CRKind, id: string): Candidate[] {
  const namespace = cr.metadata.namespace ?? "";
  const docs = docsOnCR(cr).map((d) => ({ ...d, crKind, namespace }));
  const opId = (cr.metadata.annotations?.[ARM_ANNOTATIONS.operation] ?? "").toLowerCase();
  const bare = docs.some((d) => d.doc.id.toLowerCase() === opId) ? undefined : annotatedOnly(cr, crKind, id);
  return bare ? [...docs, { doc: bare, recordedIn: "cr", crKind, namespace }] : docs;
}

function candidateOfConfigMap(cm: KubeObject): Candidate | undefined {
  const doc = fromConfigMap(cm);
  if (!doc) return undefined;
  return { doc, recordedIn: "configmap", crKind: crKindOf(doc.kind), namespace: cm.metadata.namespace ?? "" };
}

/** Every operation whose request had this correlation or client request ID, oldest first. */
export function findOperations(id: string, objects: TraceObjects): OperationMatch[] {
  const crs = indexCRs(objects);
  const candidates: Candidate[] = [
    ...[...crs.values()].flatMap(({ cr, kind }) => candidatesOfCR(cr, kind, id)),
    // Later wins: a ConfigMap's document is the frozen, final word; a CR's is read live.
    ...objects.configMaps.map(candidateOfConfigMap).filter((c): c is Candidate => c !== undefined),
  ];
  const found = new Map<string, OperationMatch>();
  for (const c of candidates) {
    const by = matchedBy(c.doc, id);
    if (!by) continue;
    const cr = crs.get(keyOf(c.namespace, c.crKind, c.doc.target))?.cr;
    found.set(c.doc.id.toLowerCase(), { ...c, matchedBy: by, ...(cr ? { cr } : {}) });
  }
  return [...found.values()].sort((a, b) => a.doc.startTime.localeCompare(b.doc.startTime));
}
