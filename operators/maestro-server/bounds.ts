/**
 * What of an agent's status fits the ManifestWork schema (crds/work.open-cluster-management.io_manifestworks.yaml),
 * decided before it is stored: a status the apiserver would refuse would otherwise be written,
 * refused, and written again on every reconcile. Conditions that break the schema (type, status,
 * reason, lastTransitionTime, observedGeneration) and duplicate types are left out, messages over
 * the CRD's 32768 characters are cut, resource statuses beyond the work's manifests and feedback
 * values that break the schema are left out, and only known fields are kept. Each cut is named
 * by a reason the caller counts. The whole status is measured too; the caller refuses one over
 * MAX_STATUS_BYTES.
 */
import type {
  FeedbackValue,
  FieldValue,
  ManifestCondition,
  ManifestResourceMeta,
  ManifestWorkStatus,
  WorkCondition,
} from "../api/work/v1.ts";

/** The CRD's limits. */
export const MAX_CONDITION_TYPE_CHARS = 316;
export const MAX_CONDITION_REASON_CHARS = 1024;
export const MAX_CONDITION_MESSAGE_CHARS = 32768;
export const MAX_JSON_RAW_CHARS = 1024 * 1024;

/**
 * Ours, where the CRD sets none. OCM's agent reports under ten condition types per list, the
 * rest come from condition rules; feedback values come one per rule path.
 */
export const MAX_CONDITIONS = 64;
export const MAX_FEEDBACK_VALUES = 128;

/**
 * The largest agent status written to a work: the production broker's packet limit, which no
 * real agent's status event can exceed, and which leaves room for a 500 KiB spec within etcd's
 * 1.5 MiB per object.
 */
export const MAX_STATUS_BYTES = 512 * 1024;

export type TrimReason =
  | "message-truncated"
  | "invalid-condition"
  | "duplicate-condition"
  | "excess-conditions"
  | "invalid-manifest-status"
  | "excess-manifests"
  | "invalid-feedback"
  | "excess-feedback";

export interface BoundedStatus {
  status: ManifestWorkStatus;
  /** One reason per part left out or cut. */
  trimmed: TrimReason[];
  /** The size of `status` as JSON. */
  bytes: number;
}

const TYPE_PATTERN =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const CONDITION_STATUSES = new Set(["True", "False", "Unknown"]);
const TRUNCATED = " … (truncated)";

type Fields = Record<string, unknown>;

const isObject = (v: unknown): v is Fields => typeof v === "object" && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === "string";
const chars = (s: string): number => (s.length <= MAX_CONDITION_MESSAGE_CHARS ? s.length : [...s].length);

function validType(v: unknown): v is string {
  return isString(v) && v.length <= MAX_CONDITION_TYPE_CHARS && TYPE_PATTERN.test(v);
}

function validReason(v: unknown): v is string {
  return isString(v) && v.length <= MAX_CONDITION_REASON_CHARS && REASON_PATTERN.test(v);
}

function validTime(v: unknown): v is string {
  return isString(v) && DATE_TIME_PATTERN.test(v) && !Number.isNaN(Date.parse(v));
}

function validGeneration(v: unknown): v is number | undefined {
  return v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0);
}

function validCondition(c: Fields): boolean {
  return (
    validType(c["type"]) &&
    CONDITION_STATUSES.has(c["status"] as string) &&
    validReason(c["reason"]) &&
    isString(c["message"]) &&
    validTime(c["lastTransitionTime"]) &&
    validGeneration(c["observedGeneration"])
  );
}

/** The schema's string fields of resourceMeta. */
const META_FIELDS = ["group", "version", "kind", "resource", "name", "namespace"] as const;

function resourceMeta(v: unknown): ManifestResourceMeta | undefined {
  if (!isObject(v)) return undefined;
  const ordinal = v["ordinal"];
  if (!Number.isInteger(ordinal) || (ordinal as number) < -(2 ** 31) || (ordinal as number) >= 2 ** 31)
    return undefined;
  const meta: ManifestResourceMeta = { ordinal: ordinal as number };
  for (const field of META_FIELDS) if (isString(v[field])) meta[field] = v[field];
  return meta;
}

/** Per field type: the field that holds the value, and what the schema admits there. */
const FIELD_VALUE_RULES: Record<FieldValue["type"], { field: string; valid: (v: unknown) => boolean }> = {
  Integer: { field: "integer", valid: (v) => Number.isSafeInteger(v) },
  String: { field: "string", valid: isString },
  Boolean: { field: "boolean", valid: (v) => typeof v === "boolean" },
  JsonRaw: { field: "jsonRaw", valid: (v) => isString(v) && v.length <= MAX_JSON_RAW_CHARS },
};

function fieldValue(v: unknown): FieldValue | undefined {
  if (!isObject(v) || !isString(v["type"]) || !Object.hasOwn(FIELD_VALUE_RULES, v["type"])) return undefined;
  const type = v["type"] as FieldValue["type"];
  const { field, valid } = FIELD_VALUE_RULES[type];
  const value = v[field];
  if (value === undefined || value === null) return { type };
  return valid(value) ? { type, [field]: value } : undefined;
}

class Bounder {
  readonly trimmed: TrimReason[] = [];

  conditions(list: unknown): WorkCondition[] {
    if (!Array.isArray(list)) {
      if (list !== undefined && list !== null) this.trimmed.push("invalid-condition");
      return [];
    }
    const kept: WorkCondition[] = [];
    const types = new Set<string>();
    for (const item of list) {
      if (!isObject(item) || !validCondition(item)) this.trimmed.push("invalid-condition");
      else if (types.has(item["type"] as string)) this.trimmed.push("duplicate-condition");
      else if (kept.length >= MAX_CONDITIONS) this.trimmed.push("excess-conditions");
      else {
        types.add(item["type"] as string);
        kept.push(this.#condition(item));
      }
    }
    return kept;
  }

  /** Only the schema's fields, the message cut to the CRD's limit. */
  #condition(c: Fields): WorkCondition {
    let message = c["message"] as string;
    if (chars(message) > MAX_CONDITION_MESSAGE_CHARS) {
      this.trimmed.push("message-truncated");
      message = [...message].slice(0, MAX_CONDITION_MESSAGE_CHARS - TRUNCATED.length).join("") + TRUNCATED;
    }
    const generation = c["observedGeneration"] as number | undefined;
    return {
      type: c["type"] as string,
      status: c["status"] as WorkCondition["status"],
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime: c["lastTransitionTime"] as string,
      reason: c["reason"] as string,
      message,
    };
  }

  manifests(list: unknown, manifestCount: number): ManifestCondition[] {
    if (!Array.isArray(list)) return [];
    const kept: ManifestCondition[] = [];
    for (const item of list) {
      const meta = isObject(item) ? resourceMeta(item["resourceMeta"]) : undefined;
      if (!isObject(item) || !meta) this.trimmed.push("invalid-manifest-status");
      else if (kept.length >= manifestCount) this.trimmed.push("excess-manifests");
      else kept.push(this.#manifest(item, meta));
    }
    return kept;
  }

  #manifest(entry: Fields, resourceMeta: ManifestResourceMeta): ManifestCondition {
    const kept: ManifestCondition = { resourceMeta, conditions: this.conditions(entry["conditions"]) };
    const feedback = entry["statusFeedback"];
    if (isObject(feedback)) kept.statusFeedback = { values: this.#feedback(feedback["values"]) };
    return kept;
  }

  #feedback(list: unknown): FeedbackValue[] {
    if (!Array.isArray(list)) return [];
    const kept: FeedbackValue[] = [];
    const names = new Set<string>();
    for (const item of list) {
      const value = isObject(item) ? fieldValue(item["fieldValue"]) : undefined;
      const name = isObject(item) ? item["name"] : undefined;
      if (!value || !isString(name) || !name || names.has(name)) this.trimmed.push("invalid-feedback");
      else if (kept.length >= MAX_FEEDBACK_VALUES) this.trimmed.push("excess-feedback");
      else {
        names.add(name);
        kept.push({ name, fieldValue: value });
      }
    }
    return kept;
  }
}

/** The part of `status` the CRD admits, for a work of `manifestCount` manifests. */
export function boundStatus(status: ManifestWorkStatus, manifestCount: number): BoundedStatus {
  const bounder = new Bounder();
  const conditions = bounder.conditions(status.conditions);
  const manifests = bounder.manifests(status.resourceStatus?.manifests, manifestCount);
  const bounded: ManifestWorkStatus = {
    conditions,
    ...(manifests.length > 0 ? { resourceStatus: { manifests } } : {}),
  };
  return {
    status: bounded,
    trimmed: bounder.trimmed,
    bytes: Buffer.byteLength(JSON.stringify(bounded), "utf8"),
  };
}
