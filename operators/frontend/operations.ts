/**
 * ARM asynchronous operations without frontend state. Where an operation's document lives:
 *
 *  - Create and Update (PUT, PATCH): on the CR it acts on, annotation `arm-operation` (beside
 *    `arm-operation-id` and `arm-operation-request`), written by the same request as the CR, so
 *    such a request costs one apiserver write. While it runs its status is not stored: every poll
 *    computes it from the CR (provisioning-state.ts). The first poll that finds it terminal freezes it, with
 *    the end time from the CR's conditions, into a ConfigMap `op-<id>` (below): one write per
 *    operation, at a poll rather than in the request, so later changes of the CR (a Degraded
 *    cluster that recovers) never change what ARM was told.
 *  - Delete: a ConfigMap `op-<id>` in the subscription's namespace, written before the delete,
 *    because it must outlive the CR. Its status is written back to the ConfigMap when it changes
 *    and never changes once terminal.
 *
 * Finding one by ID: the first 8 hex digits of an operation ID are the operation key of its CR
 * (a hash of the CR's kind and name; the 8th digit names the kind), which the CR carries as label
 * `arm-operation-key`. A poll reads the ConfigMap `op-<id>` first (a frozen document is the final
 * word), then lists the CRs of that kind with that key in the namespace (one read, no cache; a
 * hash collision only means more than one CR to look through) and looks at the current operation
 * and the history. Nothing is kept in the frontend, so a restarted one answers every operation.
 *
 * Freezing, when a later operation replaces one:
 *  - by a PUT or PATCH: the earlier operation is evaluated against the CR as the request found it
 *    (Succeeded or Failed, since an update needs a settled resource; Canceled if it still ran) and
 *    moves into the history annotation `arm-operation-history` (newest first) in the same CR
 *    write. Entries past the TTL are dropped; past HISTORY_MAX entries, the oldest are frozen into
 *    ConfigMaps instead (an extra write only for a resource updated that often within the TTL).
 *  - by a DELETE (also a cluster's DELETE for its node pools, and a Deleted subscription): the
 *    current operation (Canceled if still running) and the whole history are frozen into
 *    ConfigMaps before the CR goes, and the DELETE removes both annotations from the CR.
 * A replaced operation nobody polled to its end is thus frozen as it stood at the replacement;
 * one a poll already froze keeps that ConfigMap, which a lookup reads first.
 *
 *  - RequestCredential and RevokeCredentials: a ConfigMap `op-<id>` naming the BreakglassCredential
 *    (or BreakglassRevocation) the action created (`credential`); its status is computed from that
 *    CR's conditions as a Create's is from its CR, and frozen into the ConfigMap once terminal.
 *
 * Deadlines: every operation carries one (deadlines.ts); one not terminal past it is Failed, in
 * `evaluate` as in the CR's provisioningState. A Delete knows the CR it deletes by uid, so that a
 * look between its ConfigMap's write and the DELETE's mark on the CR does not end it.
 *
 * Notifications: an operation with a `notificationUri` is labelled for the notifier (notifier.ts),
 * its ConfigMap `arm-notification=pending`; one a PUT or PATCH replaces gets its ConfigMap then,
 * as the notifier works from ConfigMaps. The notifier's record lives in the same ConfigMap under
 * a key and field manager of its own, so no write of the document overwrites it.
 *
 * ConfigMaps older than seven days (ARO HCP's TTL) are removed by `collectExpired`. ConfigMaps of
 * Create and Update operations written before the documents moved onto the CR are still read.
 */
import { randomUUID } from "node:crypto";
import type { ArmCR } from "./cr-mapping.ts";
import {
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  type BreakglassCredential,
  type BreakglassRevocation,
} from "../api/v1alpha1/index.ts";
import { isApiError, type KubeClient, type KubeObject } from "../runtime/kube.ts";
import { CODES, type CloudErrorBody } from "./errors.ts";
import { configMapType, crType } from "./service-cluster.ts";
import { deadlineError, isPast } from "./deadlines.ts";
import { ANNOTATIONS, FIELD_MANAGER, LABELS, shortHash } from "./names.ts";
import type { ResourceKind } from "./resource-id.ts";
import { isObject } from "./body-schema.ts";
import {
  isTerminal,
  progressState,
  type Observed,
  type OperationRequest,
  type ProvisioningState,
  type StateResult,
} from "./provisioning-state.ts";

export const OPERATION_TTL_MS = 7 * 24 * 3600 * 1000;
const DATA_KEY = "operation.json";
const NOTIFICATION_KEY = "notification.json";
/** The notifier's field manager: its fields of an operation ConfigMap are its own (NotificationRecord). */
export const NOTIFIER_FIELD_MANAGER = "hcp-frontend-notifier";

export interface OperationDoc {
  id: string;
  request: OperationRequest;
  /** The ARM resource ID as the request named it. */
  resourceId: string;
  kind: ResourceKind;
  /** The CR (in the subscription's namespace). */
  target: string;
  /** Delete: the uid of the CR it deletes (a CR of that name made later is another resource). */
  targetUid?: string;
  location: string;
  apiVersion: string;
  tenantId?: string;
  clientObjectId?: string;
  clientRequestId?: string;
  correlationRequestId?: string;
  startTime: string;
  lastTransitionTime: string;
  status: ProvisioningState;
  endTime?: string;
  error?: CloudErrorBody;
  /** RequestCredential, RevokeCredentials: the CR the action created (top of this file). */
  credential?: string;
  /** By when it must end, else it ends Failed (deadlines.ts); none on documents older than deadlines. */
  deadline?: string;
  /** Azure-AsyncNotificationUri: where the notifier POSTs the status once it is terminal (notifier.ts). */
  notificationUri?: string;
}

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

export const SUPERSEDED: CloudErrorBody = {
  code: CODES.Canceled,
  message: "This operation was superseded by another",
};

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

function kindOfId(id: string): ResourceKind | undefined {
  const digit = id[7];
  return (Object.keys(KIND_DIGITS) as ResourceKind[]).find((k) => KIND_DIGITS[k] === digit);
}

const cmName = (id: string): string => `op-${id.toLowerCase()}`;

function toConfigMap(namespace: string, doc: OperationDoc): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: cmName(doc.id),
      namespace,
      labels: {
        [LABELS.operation]: "true",
        [LABELS.operationTarget]: doc.target,
        ...(doc.notificationUri ? { [LABELS.notification]: "pending" } : {}),
      },
    },
    data: { [DATA_KEY]: JSON.stringify(doc) },
  };
}

function parseDoc(text: unknown): OperationDoc | undefined {
  if (typeof text !== "string") return undefined;
  try {
    const doc: unknown = JSON.parse(text);
    return isObject(doc) && typeof doc["id"] === "string" ? (doc as unknown as OperationDoc) : undefined;
  } catch {
    return undefined;
  }
}

/** The document an operation ConfigMap holds, or undefined when it holds none that reads. */
export function fromConfigMap(cm: KubeObject): OperationDoc | undefined {
  const data = cm["data"];
  return isObject(data) ? parseDoc(data[DATA_KEY]) : undefined;
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

/** The CR's current operation, when its document is on the CR. */
export function currentOnCR(cr: KubeObject): OperationDoc | undefined {
  const a = cr.metadata.annotations ?? {};
  const doc = parseDoc(a[ANNOTATIONS.operationDoc]);
  return doc && doc.id === a[ANNOTATIONS.operation] ? doc : undefined;
}

/** The CR's earlier operations, newest first. */
export function historyOnCR(cr: KubeObject): OperationDoc[] {
  const text = cr.metadata.annotations?.[ANNOTATIONS.operationHistory];
  if (!text) return [];
  try {
    const list: unknown = JSON.parse(text);
    return Array.isArray(list)
      ? list.filter((d): d is OperationDoc => isObject(d) && typeof d["id"] === "string")
      : [];
  } catch {
    return [];
  }
}

/**
 * Where an operation stands at `now`, from the CR it acts on (undefined when the CR is gone): as
 * the CR says, unless that is not terminal and the deadline has passed (deadlines.ts).
 */
export function evaluate(doc: OperationDoc, cr: Observed | undefined, now = Date.now()): StateResult {
  return withDeadline(doc, stateFromCR(doc, cr), cr, now);
}

/** `result`, or Failed when it is not terminal past the operation's deadline. */
function withDeadline(
  doc: OperationDoc,
  result: StateResult,
  cr: Observed | undefined,
  now: number,
): StateResult {
  if (isTerminal(result.state) || !doc.deadline || !isPast(doc.deadline, now)) return result;
  return {
    state: "Failed",
    error: deadlineError(doc.startTime, doc.deadline, cr?.status?.conditions),
    endTime: doc.deadline,
  };
}

function stateFromCR(doc: OperationDoc, cr: Observed | undefined): StateResult {
  if (isTerminal(doc.status)) return { state: doc.status, ...(doc.error ? { error: doc.error } : {}) };
  const current = cr?.metadata.annotations?.[ANNOTATIONS.operation] === doc.id;
  if (doc.request === "Delete") return deleteState(doc, cr, current);
  if (!cr)
    return {
      state: "Failed",
      error: {
        code: CODES.ResourceNotFound,
        message: "The resource was deleted before the operation completed",
      },
    };
  if (!current || cr.metadata.deletionTimestamp) return { state: "Canceled", error: SUPERSEDED };
  return progressState(doc.request === "Update" ? "Update" : "Create", cr);
}

/**
 * A Delete runs while the CR it deletes exists. Known by uid: the CR names the operation only once
 * the DELETE has marked it, a moment after the operation's ConfigMap is written, and a poll (or the
 * notifier) may come in between. Documents without a uid go by the CR's current operation.
 */
function deleteState(doc: OperationDoc, cr: Observed | undefined, current: boolean): StateResult {
  const same = doc.targetUid ? cr?.metadata.uid === doc.targetUid : cr !== undefined && current;
  return same ? { state: "Deleting" } : { state: "Succeeded" };
}

/**
 * When an operation whose status the CR decides ended: the last transition of the CR's summary
 * conditions (or its deletion), not before the operation started; stable from poll to poll.
 */
function endTimeOf(doc: OperationDoc, cr: Observed): string {
  const times = [Date.parse(doc.startTime)];
  for (const c of cr.status?.conditions ?? [])
    if (["Ready", "Progressing", "Degraded"].includes(c.type)) times.push(Date.parse(c.lastTransitionTime));
  if (cr.metadata.deletionTimestamp) times.push(Date.parse(cr.metadata.deletionTimestamp));
  const t = Math.max(...times.filter((n) => !Number.isNaN(n)));
  return Number.isFinite(t) ? new Date(t).toISOString() : doc.startTime;
}

/** The document with a state computed from `cr`; `time` stamps a change when the CR gives none. */
function withState(
  doc: OperationDoc,
  result: StateResult,
  cr: Observed | undefined,
  time: string,
): OperationDoc {
  if (isTerminal(doc.status) || doc.status === result.state) return doc;
  const end = isTerminal(result.state) ? (result.endTime ?? (cr ? endTimeOf(doc, cr) : time)) : undefined;
  return {
    ...doc,
    status: result.state,
    lastTransitionTime: end ?? time,
    ...(end ? { endTime: end } : {}),
    ...(result.error ? { error: result.error } : {}),
  };
}

/**
 * The document as a poll would answer it now, brought up to date with `cr` (undefined when the CR
 * is gone); nothing is written. `time` stamps a change the CR gives no time for.
 */
export function settle(doc: OperationDoc, cr: Observed | undefined, time: string): OperationDoc {
  return withState(doc, evaluate(doc, cr, Date.parse(time)), cr, time);
}

/** The document of the operation `cr` carries, as it ends when replaced now: Canceled if still running. */
function frozen(doc: OperationDoc, cr: Observed): OperationDoc {
  const now = new Date().toISOString();
  const result = evaluate(doc, cr);
  if (isTerminal(result.state)) return withState(doc, result, cr, now);
  return withState(doc, { state: "Canceled", error: SUPERSEDED }, undefined, now);
}

/** An operation found by ID; `cr` is the CR it acts on, if it still exists. */
export interface FoundOperation {
  doc: OperationDoc;
  cr?: ArmCR;
  /** A credential action's CR, if it still exists. */
  credential?: CredentialCR;
}

/** What a credential action's CR shows: its conditions, and for a credential its certificate. */
type CredentialCR = BreakglassCredential | BreakglassRevocation;

/** Where a credential action stands at `now`, from the CR it created (as a Create from its CR). */
function credentialState(doc: OperationDoc, cr: CredentialCR | undefined, now: number): StateResult {
  return withDeadline(doc, credentialProgress(cr), cr, now);
}

function credentialProgress(cr: CredentialCR | undefined): StateResult {
  if (!cr)
    return {
      state: "Failed",
      error: {
        code: CODES.ResourceNotFound,
        message: "The credential request was deleted before it completed",
      },
    };
  return progressState("Create", cr);
}

export class OperationStore {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  /** Stores a Delete operation (before the delete). */
  async create(namespace: string, doc: OperationDoc): Promise<void> {
    await this.#client.create(configMapType, toConfigMap(namespace, doc));
  }

  async #getConfigMap(namespace: string, id: string): Promise<OperationDoc | undefined> {
    const cm = await this.#client.find<KubeObject>(configMapType, cmName(id), namespace);
    return cm ? fromConfigMap(cm) : undefined;
  }

  /** An operation's ConfigMap: its document and the notifier's record, if it is frozen there. */
  async stored(
    namespace: string,
    id: string,
  ): Promise<{ doc: OperationDoc; notification?: NotificationRecord } | undefined> {
    const cm = await this.#client.find<KubeObject>(configMapType, cmName(id), namespace);
    const doc = cm ? fromConfigMap(cm) : undefined;
    if (!cm || !doc) return undefined;
    const notification = notificationOf(cm);
    return { doc, ...(notification ? { notification } : {}) };
  }

  /** Freezes a terminal document into its ConfigMap unless one is there (the notifier's hand-over). */
  async freeze(namespace: string, doc: OperationDoc): Promise<OperationDoc> {
    return this.#freeze(namespace, doc);
  }

  /** Writes the notifier's record (its own field manager); a record that is done drops the pending label's match. */
  async recordNotification(namespace: string, id: string, record: NotificationRecord): Promise<void> {
    const done = record.sent !== undefined || record.abandoned !== undefined;
    await this.#client.apply(
      configMapType,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: cmName(id),
          namespace,
          ...(done ? { labels: { [LABELS.notified]: record.sent ? "sent" : "abandoned" } } : {}),
        },
        data: { [NOTIFICATION_KEY]: JSON.stringify(record) },
      },
      { fieldManager: NOTIFIER_FIELD_MANAGER },
    );
  }

  /** Freezes a terminal document into a ConfigMap; the first one written stays, and is returned. */
  async #freeze(namespace: string, doc: OperationDoc): Promise<OperationDoc> {
    if (await this.#client.createIfAbsent(configMapType, toConfigMap(namespace, doc))) return doc;
    return (await this.#getConfigMap(namespace, doc.id)) ?? doc;
  }

  /** The operation with this ID, brought up to date with its CR (see the top of this file). */
  async find(namespace: string, id: string): Promise<FoundOperation | undefined> {
    if (!/^[0-9a-fA-F-]{36}$/.test(id)) return undefined;
    const kind = kindOfId(id);
    const stored = await this.#getConfigMap(namespace, id);
    if (stored?.credential) return this.#findCredential(namespace, stored, stored.credential);
    if (stored) {
      const cr = await this.#client.find<ArmCR>(crType(stored.kind), stored.target, namespace);
      const doc = await this.record(namespace, stored, evaluate(stored, cr));
      return { doc, ...(cr ? { cr } : {}) };
    }
    if (!kind) return undefined;
    const crs = await this.#client.list<ArmCR>(crType(kind), {
      namespace,
      labelSelector: `${LABELS.operationKey}=${id.slice(0, 8).toLowerCase()}`,
    });
    const wanted = id.toLowerCase();
    for (const cr of crs.items) {
      const current = currentOnCR(cr);
      if (current?.id.toLowerCase() === wanted) {
        const doc = settle(current, cr, new Date().toISOString());
        return { doc: isTerminal(doc.status) ? await this.#freeze(namespace, doc) : doc, cr };
      }
      const earlier = historyOnCR(cr).find((d) => d.id.toLowerCase() === wanted);
      if (earlier) return { doc: earlier, cr };
    }
    return undefined;
  }

  async #findCredential(namespace: string, stored: OperationDoc, name: string): Promise<FoundOperation> {
    const type =
      stored.request === "RevokeCredentials" ? BreakglassRevocationResource : BreakglassCredentialResource;
    const credential = await this.#client.find<CredentialCR>(type, name, namespace);
    const doc = isTerminal(stored.status)
      ? stored
      : await this.record(namespace, stored, credentialState(stored, credential, Date.now()));
    return { doc, ...(credential ? { credential } : {}) };
  }

  /** Records a state in an operation's ConfigMap; a terminal one is never changed again. */
  async record(namespace: string, doc: OperationDoc, result: StateResult): Promise<OperationDoc> {
    const next = withState(doc, result, undefined, new Date().toISOString());
    if (next === doc) return doc;
    await this.#client.apply(configMapType, toConfigMap(namespace, next), { fieldManager: FIELD_MANAGER });
    return next;
  }

  /**
   * The history annotation for the write that replaces `cr`'s operation by a PUT or PATCH: the
   * replaced operation as it ended, then the earlier ones within the TTL; the oldest past
   * HISTORY_MAX are frozen into ConfigMaps now.
   */
  async replace(namespace: string, cr: Observed): Promise<Record<string, string>> {
    const now = Date.now();
    const history = historyOnCR(cr).filter((d) => now - Date.parse(d.startTime) < OPERATION_TTL_MS);
    const current = currentOnCR(cr);
    const replaced = current ? frozen(current, cr) : undefined;
    if (replaced) history.unshift(replaced);
    // One to be notified needs its ConfigMap now: the notifier works from ConfigMaps.
    const notify = replaced?.notificationUri ? [replaced] : [];
    await Promise.all([...notify, ...history.slice(HISTORY_MAX)].map((d) => this.#freeze(namespace, d)));
    const keep = history.slice(0, HISTORY_MAX);
    return keep.length > 0 ? { [ANNOTATIONS.operationHistory]: JSON.stringify(keep) } : {};
  }

  /**
   * Before `cr` goes (DELETE, a deleted subscription): its current operation, as it ends now
   * (Canceled if still running), and its history into ConfigMaps.
   */
  async retire(namespace: string, cr: Observed): Promise<void> {
    const docs = historyOnCR(cr);
    const current = currentOnCR(cr);
    if (current) docs.unshift(frozen(current, cr));
    else await this.supersede(namespace, cr.metadata.annotations?.[ANNOTATIONS.operation], cr, true);
    await Promise.all(docs.map((d) => this.#freeze(namespace, d)));
  }

  /**
   * Ends an operation kept in a ConfigMap that another one replaces: Canceled if it was still
   * running, else as computed. For ConfigMaps from before documents moved onto the CR.
   */
  async supersede(namespace: string, id: string | undefined, cr: Observed, cancel: boolean): Promise<void> {
    if (!id || !/^[0-9a-fA-F-]{36}$/.test(id)) return;
    const doc = await this.#getConfigMap(namespace, id);
    if (!doc || isTerminal(doc.status)) return;
    const result = evaluate(doc, cr);
    await this.record(
      namespace,
      doc,
      isTerminal(result.state) || !cancel ? result : { state: "Canceled", error: SUPERSEDED },
    );
  }

  async remove(namespace: string, id: string): Promise<void> {
    await this.#client.delete(configMapType, { name: cmName(id), namespace });
  }

  /** Deletes operation documents past the TTL in every namespace; returns how many. */
  async collectExpired(now = Date.now()): Promise<number> {
    const list = await this.#client.listAll<KubeObject>(configMapType, {
      labelSelector: `${LABELS.operation}=true`,
    });
    let removed = 0;
    for (const cm of list.items) {
      const doc = fromConfigMap(cm);
      if (!doc || now - Date.parse(doc.startTime) < OPERATION_TTL_MS) continue;
      try {
        await this.#client.delete(configMapType, {
          name: cm.metadata.name ?? "",
          namespace: cm.metadata.namespace,
        });
        removed++;
      } catch (err) {
        if (!isApiError(err, 404)) throw err;
      }
    }
    return removed;
  }
}
