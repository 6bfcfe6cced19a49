/**
 * The CloudEvents vocabulary Maestro and the OCM work agent speak over MQTT: the event-type
 * grammar, the extension names, the topic layout and the consumer-name rule. Everything else in
 * the protocol reads and writes events only through these names.
 */

/** The source ID of maestro-server; agents echo it back as `originalsource`. */
export const SOURCE_ID = "maestro";

/** The only data type in use: one event carries a whole ManifestWork as a manifest bundle. */
export const MANIFEST_BUNDLE_DATA_TYPE = "io.open-cluster-management.works.v1alpha1.manifestbundles";

export type SubResource = "spec" | "status";

export const Action = {
  create: "create_request",
  update: "update_request",
  delete: "delete_request",
  resyncRequest: "resync_request",
  resyncResponse: "resync_response",
} as const;

export type EventAction = (typeof Action)[keyof typeof Action];

/** The longest message a DecodeError carries. */
export const MAX_REFUSAL_CHARS = 1000;

/** A value of the input as a refusal quotes it: JSON-quoted, at most `max` characters of it. */
export function quoted(v: string, max = 80): string {
  return JSON.stringify(v.length > max ? `${v.slice(0, max)}…` : v);
}

/**
 * An inbound message or event this protocol does not take. `field` says where the fault is: a
 * CloudEvent attribute (`type`, `extensions.resourceversion`), a path into its data
 * (`data.manifests[0].kind`), or `payload` for a message that is no CloudEvent at all. The client
 * layer counts and drops the event; nothing else may be thrown at it by a decoder.
 */
export class DecodeError extends Error {
  readonly field: string;
  constructor(field: string, message: string, options?: ErrorOptions) {
    // Logged for every dropped event: however much of the input a message quotes, it stays short.
    const text = `${field.slice(0, 100)}: ${message}`;
    super(text.length <= MAX_REFUSAL_CHARS ? text : `${text.slice(0, MAX_REFUSAL_CHARS)}… (cut)`, options);
    this.name = "DecodeError";
    this.field = field;
  }
}

/** `<group>.<version>.<resource>.<subresource>.<action>`, e.g. `…manifestbundles.spec.create_request`. */
export interface CloudEventsType {
  dataType: string;
  subResource: SubResource;
  action: string;
}

export function formatEventType(t: CloudEventsType): string {
  return `${t.dataType}.${t.subResource}.${t.action}`;
}

export function parseEventType(type: string): CloudEventsType {
  const parts = type.split(".");
  if (parts.length < 5)
    throw new DecodeError("type", `${quoted(type)} does not have five dot-separated parts`);
  const action = parts[parts.length - 1] ?? "";
  const subResource = parts[parts.length - 2];
  if (subResource !== "spec" && subResource !== "status") {
    throw new DecodeError(
      "type",
      `${quoted(type)} has subresource ${quoted(subResource ?? "")}, want spec or status`,
    );
  }
  return { dataType: parts.slice(0, -2).join("."), subResource, action };
}

const KNOWN_ACTIONS: ReadonlySet<string> = new Set(Object.values(Action));

/**
 * A metric label for an event's type: the protocol's own types by name, anything else (a peer may
 * send any string) as "other", so that no sender can create label values without bound.
 */
export function eventTypeLabel(type: string): string {
  try {
    const t = parseEventType(type);
    if (t.dataType === MANIFEST_BUNDLE_DATA_TYPE && KNOWN_ACTIONS.has(t.action)) return type;
  } catch {
    // not the protocol's: counted as other
  }
  return "other";
}

/** CloudEvents extension attributes (lower case, as the spec requires). */
export const Ext = {
  resourceId: "resourceid",
  resourceVersion: "resourceversion",
  clusterName: "clustername",
  originalSource: "originalsource",
  deletionTimestamp: "deletiontimestamp",
  sequenceId: "sequenceid",
  statusHash: "statushash",
  metadata: "metadata",
  logTracing: "logtracing",
} as const;

/**
 * One CloudEvent. Extension values are kept in their wire form (strings), as binary mode carries
 * them; the codecs convert through `Ext` names only.
 */
export interface CloudEvent {
  specversion: string;
  id: string;
  source: string;
  type: string;
  time?: string;
  datacontenttype?: string;
  extensions: Record<string, string>;
  /** The decoded JSON payload. */
  data?: unknown;
}

/** Maestro's topic patterns only admit these consumer names (no dots, no upper case). */
export const CONSUMER_NAME_PATTERN = /^[a-z0-9-]+$/;

export function checkConsumerName(name: string): void {
  if (!CONSUMER_NAME_PATTERN.test(name)) {
    throw new Error(
      `consumer name "${name}" must match ${CONSUMER_NAME_PATTERN.source} (Maestro's topic rule)`,
    );
  }
}

/** Topics as Maestro's charts configure them: one pair per consumer under the source. */
export const topics = {
  sourceEvents: (consumer: string, source = SOURCE_ID): string =>
    `sources/${source}/consumers/${consumer}/sourceevents`,
  agentEvents: (consumer: string, source = SOURCE_ID): string =>
    `sources/${source}/consumers/${consumer}/agentevents`,
  allAgentEvents: (source = SOURCE_ID): string => `sources/${source}/consumers/+/agentevents`,
  /** The consumer segment of a `sources/<s>/consumers/<c>/<kind>` topic, or undefined. */
  consumerOf(topic: string): string | undefined {
    const parts = topic.split("/");
    return parts.length === 5 && parts[2] === "consumers" ? parts[3] : undefined;
  },
};

/** Largest manifest bundle the agent accepts (sdk-go validator: 500 KiB of manifests). */
export const MAX_BUNDLE_MANIFEST_BYTES = 500 * 1024;

/** The production broker's packet limit that Maestro designs for. */
export const MAX_PACKET_BYTES = 512 * 1024;

/** Status-resync requests carry at most this many hashes each (Maestro batches at 1000). */
export const STATUS_RESYNC_BATCH = 1000;
