/**
 * How an operation document is written down: its ID (which names the CR it acts on), its
 * `op-<id>` ConfigMap with the notifier's record beside it, and the annotations that carry the
 * current operation and the history on a CR (read back by api/v1alpha1/operation.ts, for hcpctl
 * too). store.ts says where each kind of operation lives.
 */
import { randomUUID } from "node:crypto";
import type { KubeObject } from "../../runtime/kube.ts";
import { ARM_LABELS, OPERATION_DATA_KEY, type OperationDoc } from "../../api/v1alpha1/index.ts";
import { shortHash } from "../mapping/names.ts";
import type { ResourceKind } from "../resource-id.ts";
import { isObject } from "../api/json.ts";

export const NOTIFICATION_KEY = "notification.json";
/** The notifier's field manager: its fields of an operation ConfigMap are its own (NotificationRecord). */
export const NOTIFIER_FIELD_MANAGER = "hcp-frontend-notifier";

/**
 * What the notifier did about an operation's notification: kept in the operation's ConfigMap under
 * a key (and label) of its own field manager, so that no write of the document overwrites it.
 */
export interface NotificationRecord {
  /** Failed POSTs so far. */
  attempts: number;
  /** After a failed POST: not before this time (a doubling delay, kept across leaders). */
  retryAt?: string;
  /** When it was delivered. */
  sent?: string;
  /** When the notifier gave up (too many failed attempts, or a URI no longer allowed). */
  abandoned?: string;
  lastError?: string;
}

/** How many earlier operations a CR keeps in its history annotation. */
export const HISTORY_MAX = 10;

const KIND_DIGITS: Record<ResourceKind, string> = { cluster: "0", nodePool: "1", externalAuth: "2" };

/** The 8 hex digits every operation ID on a CR starts with: a hash of kind and name, then the kind. */
export function operationKey(kind: ResourceKind, name: string): string {
  return `${shortHash(`${kind}/${name}`, 7)}${KIND_DIGITS[kind]}`;
}

/** A UUID-shaped operation ID that names the CR it acts on (see the top of this file). */
export function newOperationId(kind: ResourceKind, name: string): string {
  return `${operationKey(kind, name)}${randomUUID().slice(8)}`;
}

export function kindOfId(id: string): ResourceKind | undefined {
  const digit = id[7];
  return (Object.keys(KIND_DIGITS) as ResourceKind[]).find((k) => KIND_DIGITS[k] === digit);
}

/** The name of an operation's ConfigMap. */
export const cmName = (id: string): string => `op-${id.toLowerCase()}`;

export function toConfigMap(namespace: string, doc: OperationDoc): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: cmName(doc.id),
      namespace,
      labels: {
        [ARM_LABELS.operation]: "true",
        [ARM_LABELS.operationTarget]: doc.target,
        ...(doc.notificationUri ? { [ARM_LABELS.notification]: "pending" } : {}),
      },
    },
    data: { [OPERATION_DATA_KEY]: JSON.stringify(doc) },
  };
}

/** The notifier's record in an operation ConfigMap; none before its first attempt. */
export function notificationOf(cm: KubeObject): NotificationRecord | undefined {
  const data = cm["data"];
  const text = isObject(data) ? data[NOTIFICATION_KEY] : undefined;
  if (typeof text !== "string") return undefined;
  try {
    const record: unknown = JSON.parse(text);
    return isObject(record) && typeof record["attempts"] === "number"
      ? (record as unknown as NotificationRecord)
      : undefined;
  } catch {
    return undefined;
  }
}
