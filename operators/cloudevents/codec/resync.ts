/**
 * Resync payloads, both directions. The agent asks for specs newer than the versions it lists
 * (spec.resync_request); the server asks for statuses whose hashes differ from the ones it lists
 * (status.resync_request), in batches that fit the broker's packet limit.
 */
import {
  Action,
  DecodeError,
  Ext,
  MAX_PACKET_BYTES,
  SOURCE_ID,
  STATUS_RESYNC_BATCH,
  quoted,
  type CloudEvent,
} from "../types.ts";
import { checkEventType, newEvent, requireExtension } from "./manifestbundle.ts";

export interface ResourceVersion {
  resourceID: string;
  resourceVersion: number;
}

export interface StatusHashEntry {
  resourceID: string;
  statusHash: string;
}

function listField<T>(data: unknown, field: string): T[] {
  if (data === undefined || data === null) return [];
  if (typeof data !== "object") throw new DecodeError("data", "resync payload is not an object");
  const list = (data as Record<string, unknown>)[field];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new DecodeError(`data.${field}`, "is not a list");
  return list as T[];
}

/** Agent → server after every (re)connect: what the agent holds, for all sources. */
export function encodeSpecResyncRequest(
  agentId: string,
  consumer: string,
  versions: ResourceVersion[],
): CloudEvent {
  const event = newEvent(agentId, "spec", Action.resyncRequest, {
    [Ext.clusterName]: consumer,
    [Ext.originalSource]: "",
  });
  event.data = { resourceVersions: versions };
  return event;
}

export function decodeSpecResyncRequest(event: CloudEvent): {
  consumer: string;
  versions: ResourceVersion[];
} {
  if (checkEventType(event, "spec") !== Action.resyncRequest)
    throw new DecodeError("type", `${quoted(event.type)} is not a resync request`);
  const versions = listField<ResourceVersion>(event.data, "resourceVersions").map((v, i) => {
    if (typeof v?.resourceID !== "string" || !Number.isSafeInteger(v.resourceVersion)) {
      throw new DecodeError(`data.resourceVersions[${i}]`, `bad entry ${quoted(JSON.stringify(v) ?? "")}`);
    }
    return v;
  });
  return { consumer: requireExtension(event, Ext.clusterName), versions };
}

/** Server → agent: a work the agent listed that the server no longer has, to be deleted. */
export function encodeResyncDelete(
  consumer: string,
  resourceId: string,
  resourceVersion: number,
): CloudEvent {
  return newEvent(SOURCE_ID, "spec", Action.resyncResponse, {
    [Ext.resourceId]: resourceId,
    [Ext.resourceVersion]: String(resourceVersion),
    [Ext.clusterName]: consumer,
    [Ext.originalSource]: "",
    [Ext.deletionTimestamp]: new Date().toISOString(),
  });
}

function statusResyncRequest(consumer: string, hashes: StatusHashEntry[]): CloudEvent {
  const event = newEvent(SOURCE_ID, "status", Action.resyncRequest, {
    [Ext.clusterName]: consumer,
    [Ext.originalSource]: "",
  });
  event.data = { statusHashes: hashes };
  return event;
}

/**
 * Server → agent after every (re)connect: one or more requests of at most 1000 hashes each, and
 * always at least one (an empty list asks for every status). A batch that would not fit in a
 * packet is an error, as in Maestro.
 */
export function encodeStatusResyncRequests(consumer: string, hashes: StatusHashEntry[]): CloudEvent[] {
  const events: CloudEvent[] = [];
  for (let i = 0; i === 0 || i < hashes.length; i += STATUS_RESYNC_BATCH) {
    const event = statusResyncRequest(consumer, hashes.slice(i, i + STATUS_RESYNC_BATCH));
    const bytes = Buffer.byteLength(JSON.stringify(event), "utf8");
    if (bytes > MAX_PACKET_BYTES)
      throw new Error(`status resync batch of ${bytes} bytes exceeds ${MAX_PACKET_BYTES}`);
    events.push(event);
  }
  return events;
}

export function decodeStatusResyncRequest(event: CloudEvent): {
  consumer: string;
  hashes: StatusHashEntry[];
} {
  if (checkEventType(event, "status") !== Action.resyncRequest)
    throw new DecodeError("type", `${quoted(event.type)} is not a resync request`);
  const hashes = listField<StatusHashEntry>(event.data, "statusHashes").map((h, i) => {
    if (typeof h?.resourceID !== "string" || typeof h.statusHash !== "string") {
      throw new DecodeError(`data.statusHashes[${i}]`, `bad entry ${quoted(JSON.stringify(h) ?? "")}`);
    }
    return h;
  });
  return { consumer: requireExtension(event, Ext.clusterName), hashes };
}
