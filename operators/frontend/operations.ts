/**
 * ARM asynchronous operations without frontend state. Each operation is a ConfigMap
 * `op-<id>` in the subscription's namespace holding the operation document (who asked, what,
 * on which resource, when); the resource's CR carries the ID of the operation that last changed
 * it (annotation). The status is computed on every poll from that CR (state.ts) and written back
 * to the ConfigMap once it is terminal, so that it never changes after and survives the CR's
 * deletion. A restarted frontend answers every operation in flight. Documents older than seven
 * days (ARO HCP's TTL) are removed by `collectExpired`.
 */
import { randomUUID } from "node:crypto";
import { isApiError, type KubeClient, type KubeObject } from "../runtime/kube.ts";
import { CODES, type CloudErrorBody } from "./errors.ts";
import { configMapType } from "./kube.ts";
import { ANNOTATIONS, FIELD_MANAGER, LABELS } from "./names.ts";
import type { ResourceKind } from "./resourceid.ts";
import { isObject } from "./schema.ts";
import {
  isTerminal,
  progressState,
  type Observed,
  type OperationRequest,
  type ProvisioningState,
  type StateResult,
} from "./state.ts";

export const OPERATION_TTL_MS = 7 * 24 * 3600 * 1000;
const DATA_KEY = "operation.json";

export interface OperationDoc {
  id: string;
  request: OperationRequest;
  /** The ARM resource ID as the request named it. */
  resourceId: string;
  kind: ResourceKind;
  /** The CR (in the subscription's namespace). */
  target: string;
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
}

export const SUPERSEDED: CloudErrorBody = {
  code: CODES.Canceled,
  message: "This operation was superseded by another",
};

export function newOperationId(): string {
  return randomUUID();
}

const cmName = (id: string): string => `op-${id.toLowerCase()}`;

function toConfigMap(namespace: string, doc: OperationDoc): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: cmName(doc.id),
      namespace,
      labels: { [LABELS.operation]: "true", [LABELS.operationTarget]: doc.target },
    },
    data: { [DATA_KEY]: JSON.stringify(doc) },
  };
}

function fromConfigMap(cm: KubeObject): OperationDoc | undefined {
  const data = cm["data"];
  const text = isObject(data) ? data[DATA_KEY] : undefined;
  if (typeof text !== "string") return undefined;
  try {
    return JSON.parse(text) as OperationDoc;
  } catch {
    return undefined;
  }
}

/** Where an operation stands, from the CR it acts on (undefined when the CR is gone). */
export function evaluate(doc: OperationDoc, cr: Observed | undefined): StateResult {
  if (isTerminal(doc.status)) return { state: doc.status, ...(doc.error ? { error: doc.error } : {}) };
  const current = cr?.metadata.annotations?.[ANNOTATIONS.operation] === doc.id;
  if (doc.request === "Delete") return cr && current ? { state: "Deleting" } : { state: "Succeeded" };
  if (!cr)
    return {
      state: "Failed",
      error: {
        code: CODES.ResourceNotFound,
        message: "The resource was deleted before the operation completed",
      },
    };
  if (!current || cr.metadata.deletionTimestamp) return { state: "Canceled", error: SUPERSEDED };
  return progressState(doc.request, cr);
}

export class OperationStore {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async create(namespace: string, doc: OperationDoc): Promise<void> {
    await this.#client.create(configMapType, toConfigMap(namespace, doc));
  }

  async get(namespace: string, id: string): Promise<OperationDoc | undefined> {
    if (!/^[0-9a-fA-F-]{36}$/.test(id)) return undefined;
    const cm = await this.#client.find<KubeObject>(configMapType, cmName(id), namespace);
    return cm ? fromConfigMap(cm) : undefined;
  }

  /** Records a state; a terminal one gets its end time and is never changed again. */
  async record(namespace: string, doc: OperationDoc, result: StateResult): Promise<OperationDoc> {
    if (isTerminal(doc.status) || doc.status === result.state) return doc;
    const now = new Date().toISOString();
    const next: OperationDoc = {
      ...doc,
      status: result.state,
      lastTransitionTime: now,
      ...(isTerminal(result.state) ? { endTime: now } : {}),
      ...(result.error ? { error: result.error } : {}),
    };
    await this.#client.apply(configMapType, toConfigMap(namespace, next), { fieldManager: FIELD_MANAGER });
    return next;
  }

  /** Ends an operation that another one replaces: Canceled if it was still running, else as computed. */
  async supersede(namespace: string, id: string | undefined, cr: Observed, cancel: boolean): Promise<void> {
    if (!id) return;
    const doc = await this.get(namespace, id);
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
