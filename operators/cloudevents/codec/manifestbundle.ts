/**
 * The manifestbundle codec, both directions: a ManifestWork's spec becomes a spec event
 * (server → agent) and an agent's status becomes a status event (agent → server). The wire
 * payloads (ManifestBundle, ManifestBundleStatus) are their own types, apart from the CRD's, and
 * extensions are read and written only through `Ext`. Decoders throw a DecodeError that says what
 * is wrong and where; the client logs it and drops the event.
 */
import { randomUUID } from "node:crypto";
import type {
  DeleteOption,
  Manifest,
  ManifestCondition,
  ManifestConfigOption,
  ManifestWork,
  ManifestWorkObject,
  ManifestWorkExecutor,
  ManifestWorkSpec,
  ManifestWorkStatus,
  WorkCondition,
} from "../../api/work/v1.ts";
import type { ObjectMeta } from "../../runtime/kube.ts";
import { isSnowflake } from "./snowflake.ts";
import {
  Action,
  DecodeError,
  Ext,
  quoted,
  MANIFEST_BUNDLE_DATA_TYPE,
  MAX_BUNDLE_MANIFEST_BYTES,
  SOURCE_ID,
  formatEventType,
  parseEventType,
  type CloudEvent,
  type EventAction,
  type SubResource,
} from "../types.ts";

/** The spec payload. `executer` is spelled as sdk-go spells it on the wire. */
export interface ManifestBundle {
  manifests: Manifest[];
  deleteOption?: DeleteOption;
  manifestConfigs?: ManifestConfigOption[];
  executer?: ManifestWorkExecutor;
}

/** The status payload: `resourceStatus` is the flattened `status.resourceStatus.manifests`. */
export interface ManifestBundleStatus {
  conditions: WorkCondition[] | null;
  resourceStatus?: ManifestCondition[];
}

/** Builds an event of this data type; the caller adds the extensions that vary. */
export function newEvent(
  source: string,
  subResource: SubResource,
  action: EventAction,
  extensions: Record<string, string>,
): CloudEvent {
  return {
    specversion: "1.0",
    id: randomUUID(),
    source,
    type: formatEventType({ dataType: MANIFEST_BUNDLE_DATA_TYPE, subResource, action }),
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    extensions,
  };
}

/** Parses the type and checks the data type and subresource; returns the action. */
export function checkEventType(event: CloudEvent, subResource: SubResource): string {
  const t = parseEventType(event.type);
  if (t.dataType !== MANIFEST_BUNDLE_DATA_TYPE)
    throw new DecodeError("type", `unsupported data type ${quoted(t.dataType)}`);
  if (t.subResource !== subResource)
    throw new DecodeError("type", `expected a ${subResource} event, got ${quoted(event.type)}`);
  return t.action;
}

export function requireExtension(event: CloudEvent, name: string): string {
  const value = event.extensions[name];
  if (value === undefined || value === "")
    throw new DecodeError(`extensions.${name}`, `event ${quoted(event.id)} lacks extension ${name}`);
  return value;
}

export function integerExtension(event: CloudEvent, name: string): number {
  const text = requireExtension(event, name);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new DecodeError(`extensions.${name}`, `${quoted(text)} is not a non-negative integer`);
  return n;
}

function manifestBytes(manifests: readonly unknown[]): number {
  return manifests.reduce<number>((sum, m) => sum + Buffer.byteLength(JSON.stringify(m) ?? "", "utf8"), 0);
}

/**
 * What the agent's validator would refuse in a bundle, as messages naming the manifest: no
 * manifests, more than 500 KiB of them, an object without apiVersion, kind or metadata.name, or
 * with generateName.
 */
export function bundleProblems(manifests: readonly unknown[] | undefined): string[] {
  if (!manifests || manifests.length === 0) return ["the work has no manifests"];
  const problems: string[] = [];
  const bytes = manifestBytes(manifests);
  if (bytes > MAX_BUNDLE_MANIFEST_BYTES) {
    problems.push(
      `the manifests total ${bytes} bytes, over the ${MAX_BUNDLE_MANIFEST_BYTES}-byte limit of one bundle`,
    );
  }
  manifests.forEach((m, i) => problems.push(...manifestProblems(m, `spec.workload.manifests[${i}]`)));
  return problems;
}

const isObject = (m: unknown): m is object => typeof m === "object" && m !== null && !Array.isArray(m);
const isBlank = (v: unknown): boolean => typeof v !== "string" || !v;

/** One manifest's problems, each prefixed with where it sits (`at`). */
function manifestProblems(m: unknown, at: string): string[] {
  if (!isObject(m)) return [`${at} is not an object`];
  const { apiVersion, kind, metadata } = m as Partial<Manifest>;
  const problems: string[] = [];
  if (isBlank(apiVersion)) problems.push(`${at}.apiVersion is required`);
  if (isBlank(kind)) problems.push(`${at}.kind is required`);
  if (isBlank(metadata?.name)) problems.push(`${at}.metadata.name is required`);
  if (metadata?.["generateName"]) problems.push(`${at}.metadata.generateName is not supported`);
  return problems;
}

/**
 * The annotation on the agent's copy of a work that keeps the ManifestWork's own name (the copy is
 * named after the resource ID): a work written again under a new resource ID, as after a region
 * restore, supersedes the agent's older copy of the same namespace and name.
 */
export const MANIFEST_WORK_NAME_ANNOTATION = "hcp.aro.dev/manifestwork-name";

function specMetadata(work: ManifestWorkObject, uid: string): ObjectMeta {
  const { name, namespace, labels, creationTimestamp } = work.metadata;
  const annotations = name
    ? { ...work.metadata.annotations, [MANIFEST_WORK_NAME_ANNOTATION]: name }
    : work.metadata.annotations;
  // maestro-server names the agent's copy after the resource ID.
  return { name: uid, namespace, uid, labels, annotations, creationTimestamp };
}

function bundleOf(spec: ManifestWorkSpec | undefined): ManifestBundle {
  return {
    manifests: spec?.workload?.manifests ?? [],
    ...(spec?.deleteOption ? { deleteOption: spec.deleteOption } : {}),
    ...(spec?.manifestConfigs ? { manifestConfigs: spec.manifestConfigs } : {}),
    ...(spec?.executor ? { executer: spec.executor } : {}),
  };
}

/** The event without data: resourceid = uid, resourceversion = generation, clustername = namespace (the consumer). */
function specHeader(work: ManifestWorkObject, action: EventAction): CloudEvent {
  const { uid, generation, namespace, deletionTimestamp } = work.metadata;
  if (!uid || !generation || !namespace)
    throw new Error("a ManifestWork needs uid, generation and namespace to be sent");
  const event = newEvent(SOURCE_ID, "spec", action, {
    [Ext.resourceId]: uid,
    [Ext.resourceVersion]: String(generation),
    [Ext.clusterName]: namespace,
    [Ext.originalSource]: "",
    [Ext.metadata]: JSON.stringify(specMetadata(work, uid)),
  });
  if (deletionTimestamp) event.extensions[Ext.deletionTimestamp] = deletionTimestamp;
  return event;
}

/**
 * The spec event for a ManifestWork of the service cluster. A deleting work carries
 * deletiontimestamp and no data: agents ignore a deletion's data, and without it a deletion fits
 * in one packet whatever the size of the manifests it removes.
 */
export function encodeSpecEvent(work: ManifestWork, action: EventAction): CloudEvent {
  const event = specHeader(work, action);
  if (!work.metadata.deletionTimestamp) event.data = bundleOf(work.spec);
  return event;
}

/**
 * The deletion of a work whose deletionTimestamp is set; needs no manifests, so a cached copy
 * without them will do.
 */
export function encodeDeletionEvent(work: ManifestWorkObject, action: EventAction): CloudEvent {
  if (!work.metadata.deletionTimestamp)
    throw new Error("a deletion is sent only for a deleting ManifestWork");
  return specHeader(work, action);
}

/** A work as the agent receives it. */
export interface ReceivedWork {
  uid: string;
  /** metadata.name, or the resource ID when absent. */
  name: string;
  consumer: string;
  /** The source's resourceversion. */
  generation: number;
  /** The `source` of the spec event; status goes back to it as `originalsource`. */
  originalSource: string;
  metadata: ObjectMeta;
  /** Set when the source deletes the work; the spec is then ignored. */
  deletionTimestamp?: string;
  spec: ManifestWorkSpec;
}

/** The fields of ObjectMeta a received work's metadata is read for, and what each must be. */
const META_STRINGS = [
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "deletionTimestamp",
];
const META_MAPS = ["labels", "annotations"];

/** Where `meta` breaks ObjectMeta's types for the fields a work's metadata carries, or undefined. */
function metadataFault(meta: Record<string, unknown>): string | undefined {
  // null is absent: Go's ObjectMeta marshals an unset creationTimestamp as null.
  const badString = META_STRINGS.find((f) => meta[f] != null && typeof meta[f] !== "string");
  if (badString) return `${badString} is not a string`;
  for (const f of META_MAPS) {
    const m = meta[f];
    if (m === undefined || m === null) continue;
    if (!isObject(m)) return `${f} is not a map`;
    const key = Object.keys(m).find((k) => typeof (m as Record<string, unknown>)[k] !== "string");
    if (key !== undefined) return `${f}[${JSON.stringify(key.slice(0, 100))}] is not a string`;
  }
  return undefined;
}

function parseMetadata(event: CloudEvent): ObjectMeta {
  const field = `extensions.${Ext.metadata}`;
  const text = event.extensions[Ext.metadata];
  if (!text) return {};
  let meta: unknown;
  try {
    meta = JSON.parse(text);
  } catch {
    throw new DecodeError(field, "is not JSON");
  }
  if (!isObject(meta)) throw new DecodeError(field, "is not a JSON object");
  const fault = metadataFault(meta as Record<string, unknown>);
  if (fault) throw new DecodeError(field, fault);
  return meta;
}

/** The bundle's options have the shapes the agent reads them in (it reads no further than that). */
function checkBundleOptions(bundle: Partial<ManifestBundle>): void {
  for (const field of ["deleteOption", "executer"] as const) {
    const v = bundle[field];
    if (v != null && !isObject(v)) throw new DecodeError(`data.${field}`, "is not an object");
  }
  const configs = bundle.manifestConfigs;
  if (configs != null && !Array.isArray(configs))
    throw new DecodeError("data.manifestConfigs", "is not a list");
  const bad = (configs ?? []).findIndex((c) => !isObject(c));
  if (bad !== -1) throw new DecodeError(`data.manifestConfigs[${bad}]`, "is not an object");
}

function specOf(data: unknown): ManifestWorkSpec {
  if (typeof data !== "object" || data === null)
    throw new DecodeError("data", "spec event data is not a manifest bundle");
  const bundle = data as Partial<ManifestBundle>;
  if (bundle.manifests != null && !Array.isArray(bundle.manifests))
    throw new DecodeError("data.manifests", "is not a list");
  const problems = bundleProblems(bundle.manifests);
  if (problems.length > 0)
    throw new DecodeError("data.manifests", `invalid manifest bundle: ${problems.join("; ")}`);
  checkBundleOptions(bundle);
  return {
    workload: { manifests: bundle.manifests },
    ...(bundle.deleteOption ? { deleteOption: bundle.deleteOption } : {}),
    ...(bundle.manifestConfigs ? { manifestConfigs: bundle.manifestConfigs } : {}),
    ...(bundle.executer ? { executor: bundle.executer } : {}),
  };
}

/** Decodes a spec event addressed to `consumer` (any spec action but resync_request). */
export function decodeSpecEvent(event: CloudEvent, consumer: string): ReceivedWork {
  const action = checkEventType(event, "spec");
  if (action === Action.resyncRequest) throw new DecodeError("type", "a spec resync request is not a work");
  const clusterName = requireExtension(event, Ext.clusterName);
  if (clusterName !== consumer)
    throw new DecodeError(
      `extensions.${Ext.clusterName}`,
      `event for consumer ${quoted(clusterName)}, this agent is ${consumer}`,
    );
  const uid = requireExtension(event, Ext.resourceId);
  const metadata = parseMetadata(event);
  const deletionTimestamp = event.extensions[Ext.deletionTimestamp] || undefined;
  return {
    uid,
    name: metadata.name || uid,
    consumer,
    generation: integerExtension(event, Ext.resourceVersion),
    originalSource: event.source,
    metadata,
    ...(deletionTimestamp ? { deletionTimestamp } : {}),
    // A delete carries the old data or none; the agent ignores it either way.
    spec: deletionTimestamp ? {} : specOf(event.data),
  };
}

/** The status event the agent publishes for one work. */
export function encodeStatusEvent(
  work: Pick<ReceivedWork, "uid" | "generation" | "consumer" | "originalSource" | "metadata">,
  status: ManifestWorkStatus,
  opts: { agentId: string; sequenceId: string; statusHash: string; action: EventAction },
): CloudEvent {
  const event = newEvent(opts.agentId, "status", opts.action, {
    [Ext.resourceId]: work.uid,
    [Ext.resourceVersion]: String(work.generation),
    [Ext.clusterName]: work.consumer,
    [Ext.originalSource]: work.originalSource,
    [Ext.sequenceId]: opts.sequenceId,
    [Ext.statusHash]: opts.statusHash,
    [Ext.metadata]: JSON.stringify(work.metadata),
  });
  const data: ManifestBundleStatus = { conditions: status.conditions ?? [] };
  const manifests = status.resourceStatus?.manifests;
  if (manifests && manifests.length > 0) data.resourceStatus = manifests;
  event.data = data;
  return event;
}

/** A status update as the server receives it. */
export interface StatusUpdate {
  resourceId: string;
  resourceVersion: number;
  consumer: string;
  sequenceId?: string;
  statusHash?: string;
  status: ManifestWorkStatus;
  /** The agent confirmed that the work and its manifests are gone (condition Deleted=True). */
  deleted: boolean;
}

function statusOf(data: unknown): ManifestWorkStatus {
  if (typeof data !== "object" || data === null)
    throw new DecodeError("data", "status event data is not a manifest bundle status");
  const { conditions, resourceStatus } = data as Partial<ManifestBundleStatus>;
  if (conditions != null && !Array.isArray(conditions))
    throw new DecodeError("data.conditions", "status conditions is not a list");
  const notObject = (conditions ?? []).findIndex((c) => !isObject(c));
  if (notObject !== -1) throw new DecodeError(`data.conditions[${notObject}]`, "is not an object");
  if (resourceStatus != null && !Array.isArray(resourceStatus))
    throw new DecodeError("data.resourceStatus", "status resourceStatus is not a list");
  return {
    conditions: conditions ?? [],
    ...(resourceStatus && resourceStatus.length > 0 ? { resourceStatus: { manifests: resourceStatus } } : {}),
  };
}

/** Decodes a status event (any status action but resync_request) addressed to this source. */
export function decodeStatusEvent(event: CloudEvent): StatusUpdate {
  const action = checkEventType(event, "status");
  if (action === Action.resyncRequest)
    throw new DecodeError("type", "a status resync request is not a status update");
  const originalSource = event.extensions[Ext.originalSource];
  if (originalSource !== SOURCE_ID)
    throw new DecodeError(
      `extensions.${Ext.originalSource}`,
      `unmatched original source id ${quoted(originalSource ?? "")}`,
    );
  const status = statusOf(event.data);
  const sequenceId = event.extensions[Ext.sequenceId] || undefined;
  // The server orders a work's statuses by it; one it cannot read is refused here, not there.
  if (sequenceId !== undefined && !isSnowflake(sequenceId))
    throw new DecodeError(
      `extensions.${Ext.sequenceId}`,
      `${quoted(sequenceId, 40)} is not a decimal snowflake ID`,
    );
  return {
    resourceId: requireExtension(event, Ext.resourceId),
    resourceVersion: integerExtension(event, Ext.resourceVersion),
    consumer: requireExtension(event, Ext.clusterName),
    sequenceId,
    statusHash: event.extensions[Ext.statusHash] || undefined,
    status,
    deleted: (status.conditions ?? []).some((c) => c.type === "Deleted" && c.status === "True"),
  };
}
