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
 * `evaluate` (status.ts) as in the CR's provisioningState. A Delete knows the CR it deletes by uid,
 * so that a look between its ConfigMap's write and the DELETE's mark on the CR does not end it.
 *
 * Notifications: an operation with a `notificationUri` is labelled for the notifier (notifier.ts),
 * its ConfigMap `arm-notification=pending`; one a PUT or PATCH replaces gets its ConfigMap then,
 * as the notifier works from ConfigMaps. The notifier's record lives in the same ConfigMap under
 * a key and field manager of its own, so no write of the document overwrites it.
 *
 * ConfigMaps older than seven days (ARO HCP's TTL) are removed by garbage-collection.ts. ConfigMaps
 * of Create and Update operations written before the documents moved onto the CR are still read.
 */
import {
  ARM_ANNOTATIONS,
  ARM_LABELS,
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  type CredentialCR,
  credentialState,
  currentOperationOf,
  evaluate,
  frozen,
  isTerminal,
  type Observed,
  OPERATION_TTL_MS,
  type OperationDoc,
  operationHistoryOf,
  operationOfConfigMap,
  settle,
  type StateResult,
  SUPERSEDED,
  withState,
} from "../../api/v1alpha1/index.ts";
import type { KubeClient, KubeObject } from "../../runtime/kube.ts";
import type { ArmCR } from "../mapping/common.ts";
import { configMapType, crType } from "../service-cluster.ts";
import { FIELD_MANAGER } from "../mapping/names.ts";
import {
  cmName,
  HISTORY_MAX,
  kindOfId,
  notificationOf,
  NOTIFICATION_KEY,
  NOTIFIER_FIELD_MANAGER,
  toConfigMap,
  type NotificationRecord,
} from "./document.ts";

/** An operation found by ID; `cr` is the CR it acts on, if it still exists. */
export interface FoundOperation {
  doc: OperationDoc;
  cr?: ArmCR;
  /** A credential action's CR, if it still exists. */
  credential?: CredentialCR;
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
    return cm ? operationOfConfigMap(cm) : undefined;
  }

  /** An operation's ConfigMap: its document and the notifier's record, if it is frozen there. */
  async stored(
    namespace: string,
    id: string,
  ): Promise<{ doc: OperationDoc; notification?: NotificationRecord } | undefined> {
    const cm = await this.#client.find<KubeObject>(configMapType, cmName(id), namespace);
    const doc = cm ? operationOfConfigMap(cm) : undefined;
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
          ...(done ? { labels: { [ARM_LABELS.notified]: record.sent ? "sent" : "abandoned" } } : {}),
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
      labelSelector: `${ARM_LABELS.operationKey}=${id.slice(0, 8).toLowerCase()}`,
    });
    const wanted = id.toLowerCase();
    for (const cr of crs.items) {
      const current = currentOperationOf(cr);
      if (current?.id.toLowerCase() === wanted) {
        const doc = settle(current, cr, new Date().toISOString());
        return { doc: isTerminal(doc.status) ? await this.#freeze(namespace, doc) : doc, cr };
      }
      const earlier = operationHistoryOf(cr).find((d) => d.id.toLowerCase() === wanted);
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
    const history = operationHistoryOf(cr).filter((d) => now - Date.parse(d.startTime) < OPERATION_TTL_MS);
    const current = currentOperationOf(cr);
    const replaced = current ? frozen(current, cr) : undefined;
    if (replaced) history.unshift(replaced);
    // One to be notified needs its ConfigMap now: the notifier works from ConfigMaps.
    const notify = replaced?.notificationUri ? [replaced] : [];
    await Promise.all([...notify, ...history.slice(HISTORY_MAX)].map((d) => this.#freeze(namespace, d)));
    const keep = history.slice(0, HISTORY_MAX);
    return keep.length > 0 ? { [ARM_ANNOTATIONS.operationHistory]: JSON.stringify(keep) } : {};
  }

  /**
   * Before `cr` goes (DELETE, a deleted subscription): its current operation, as it ends now
   * (Canceled if still running), and its history into ConfigMaps.
   */
  async retire(namespace: string, cr: Observed): Promise<void> {
    const docs = operationHistoryOf(cr);
    const current = currentOperationOf(cr);
    if (current) docs.unshift(frozen(current, cr));
    else await this.supersede(namespace, cr.metadata.annotations?.[ARM_ANNOTATIONS.operation], cr, true);
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
}
