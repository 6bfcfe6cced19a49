/**
 * ARM's subscription lifecycle (`GET` and `PUT /subscriptions/{id}?api-version=2.0`). A
 * subscription is the namespace that holds its resources: the document ARM sent is an annotation
 * on it, its state a label. Requests are allowed by state as ARO HCP's frontend allows them:
 * Registered everything, Warned and Suspended only GET and DELETE, Unregistered, Deleted or
 * unknown nothing. A subscription put in state Deleted loses every resource.
 */
import type { ArmCR } from "../mapping/common.ts";
import { Informer } from "../../runtime/informer.ts";
import type { KubeClient, KubeObject } from "../../runtime/kube.ts";
import type { Logger } from "../../runtime/logger.ts";
import type { ArmRequest, Reply } from "../arm-request.ts";
import { CloudError, CODES, fieldErrors, type FieldError } from "../errors.ts";
import { ARM_ANNOTATIONS, ARM_LABELS } from "../../api/v1alpha1/index.ts";
import { FIELD_MANAGER, subscriptionNamespace } from "../mapping/names.ts";
import type { OperationStore } from "../operations/store.ts";
import { crType, kubeWrite, namespaceType } from "../service-cluster.ts";
import { isObject, type JsonObject } from "../api/json.ts";

export const SUBSCRIPTION_STATES = ["Registered", "Unregistered", "Warned", "Deleted", "Suspended"] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

export interface Subscription {
  state: SubscriptionState;
  registrationDate: string;
  properties?: JsonObject & { tenantId?: string };
}

/**
 * The largest subscription document stored: it is an annotation on the namespace, and the API
 * server allows 256 KiB of annotations per object.
 */
export const MAX_SUBSCRIPTION_BYTES = 64 * 1024;

const isSubscriptionState = (v: unknown): v is SubscriptionState =>
  SUBSCRIPTION_STATES.some((state) => state === v);

/** What would not fit the namespace annotation the document is stored in. */
function sizeErrors(registrationDate: unknown, properties: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof registrationDate === "string" && registrationDate.length > 64)
    errors.push({
      target: "registrationDate",
      message: "'registrationDate' must be at most 64 characters long",
    });
  const size = isObject(properties) ? Buffer.byteLength(JSON.stringify(properties)) : 0;
  if (size > MAX_SUBSCRIPTION_BYTES)
    errors.push({
      target: "properties",
      message: `'properties' is ${size} bytes, more than the limit of ${MAX_SUBSCRIPTION_BYTES} bytes (64 KiB)`,
    });
  return errors;
}

/** A subscription document, or the field errors that keep it from being one. */
function parseSubscription(body: unknown): { doc: Subscription } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const b = isObject(body) ? body : {};
  const { state, registrationDate, properties } = b;
  if (!isSubscriptionState(state))
    errors.push({ target: "state", message: `'state' must be one of ${SUBSCRIPTION_STATES.join(", ")}` });
  if (typeof registrationDate !== "string" || registrationDate === "")
    errors.push({ target: "registrationDate", message: "Missing required field 'registrationDate'" });
  if (properties !== undefined && !isObject(properties))
    errors.push({ target: "properties", message: "'properties' must be an object" });
  errors.push(...sizeErrors(registrationDate, properties));
  if (!isSubscriptionState(state) || typeof registrationDate !== "string" || errors.length > 0)
    return { errors };
  return { doc: { state, registrationDate, ...(isObject(properties) ? { properties } : {}) } };
}

/** Validates a PUT body; field errors name the field. */
export function readSubscription(body: unknown): Subscription {
  const parsed = parseSubscription(body);
  if ("errors" in parsed) throw fieldErrors(parsed.errors);
  return parsed.doc;
}

/** The document on a subscription's namespace (written by `put`, so valid when present). */
function parse(ns: KubeObject): Subscription | undefined {
  const text = ns.metadata.annotations?.[ARM_ANNOTATIONS.subscription];
  if (!text) return undefined;
  try {
    const parsed = parseSubscription(JSON.parse(text));
    return "doc" in parsed ? parsed.doc : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Subscriptions are read through a watch on the subscription namespaces. Only a Registered
 * subscription is taken from the watch; anything else (not seen yet, or a state that refuses) is
 * read again from the API server, so a subscription registered a moment ago is never refused.
 */
export class SubscriptionStore {
  readonly #client: KubeClient;
  readonly informer: Informer<KubeObject>;
  /** Namespace → resourceVersion of this process's last write, until the watch has caught up. */
  readonly #written = new Map<string, string>();

  constructor(client: KubeClient) {
    this.#client = client;
    this.informer = new Informer<KubeObject>({
      client,
      type: namespaceType,
      labelSelector: ARM_LABELS.subscription,
    });
  }

  async get(subscriptionId: string): Promise<Subscription | undefined> {
    const name = subscriptionNamespace(subscriptionId);
    let cached = this.informer.hasSynced() ? this.informer.get("", name) : undefined;
    // Read your own writes: a state just changed here must not be answered from an older copy.
    const written = this.#written.get(name);
    if (written !== undefined) {
      if (cached?.metadata.resourceVersion === written) this.#written.delete(name);
      else cached = undefined;
    }
    const fromCache = cached && !cached.metadata.deletionTimestamp ? parse(cached) : undefined;
    if (fromCache?.state === "Registered") return fromCache;
    const ns = await this.#client.find<KubeObject>(namespaceType, name);
    return ns && !ns.metadata.deletionTimestamp ? parse(ns) : undefined;
  }

  async put(subscriptionId: string, doc: Subscription): Promise<Subscription> {
    const ns: KubeObject = {
      metadata: {
        name: subscriptionNamespace(subscriptionId),
        labels: {
          [ARM_LABELS.subscription]: subscriptionId.toLowerCase(),
          [ARM_LABELS.subscriptionState]: doc.state,
        },
        annotations: { [ARM_ANNOTATIONS.subscription]: JSON.stringify(doc) },
      },
    };
    const stored = await kubeWrite(() =>
      this.#client.apply<KubeObject>(namespaceType, ns, { fieldManager: FIELD_MANAGER }),
    );
    if (stored.metadata.resourceVersion)
      this.#written.set(ns.metadata.name ?? "", stored.metadata.resourceVersion);
    return doc;
  }
}

export interface SubscriptionDeps {
  client: KubeClient;
  subscriptions: SubscriptionStore;
  operations: OperationStore;
}

export async function getSubscription(deps: SubscriptionDeps, req: ArmRequest): Promise<Reply> {
  const id = req.params["subscriptionId"] ?? "";
  const sub = await deps.subscriptions.get(id);
  if (!sub)
    throw new CloudError(404, {
      code: CODES.SubscriptionNotFound,
      message: `The subscription '${id}' could not be found.`,
    });
  return { status: 200, body: sub };
}

export async function putSubscription(deps: SubscriptionDeps, req: ArmRequest): Promise<Reply> {
  const id = req.params["subscriptionId"] ?? "";
  const doc = await deps.subscriptions.put(id, readSubscription(req.body));
  if (doc.state === "Deleted") await deleteEverything(deps, id, req.log);
  return { status: 200, body: doc };
}

/** A Deleted subscription loses every resource; operations still running end as Canceled. */
async function deleteEverything(deps: SubscriptionDeps, subscriptionId: string, log: Logger): Promise<void> {
  const namespace = subscriptionNamespace(subscriptionId);
  for (const kind of ["externalAuth", "nodePool", "cluster"] as const) {
    const list = await deps.client.listAll<ArmCR>(crType(kind), { namespace });
    for (const cr of list.items) {
      if (cr.metadata.deletionTimestamp) continue;
      await deps.operations.retire(namespace, cr);
      await deps.client.delete(crType(kind), { name: cr.metadata.name ?? "", namespace });
    }
    log.info("Deleted the resources of a deleted subscription", { kind, count: list.items.length });
  }
}
