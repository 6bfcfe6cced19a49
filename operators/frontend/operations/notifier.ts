/**
 * Azure-AsyncNotificationUri: ARM may name, on a PUT, PATCH, DELETE or POST action, a URI to be told
 * when the operation ends. The request checks the header (https, bounded, an allowed host), answers
 * `Azure-AsyncNotification: Enabled` and stores the URI on the operation document. The frontend
 * keeps no state and runs several replicas, so the POST is the job of the notifier below: a
 * leader-elected, level-triggered controller over the operations that wait for one.
 *
 * What it watches: operation ConfigMaps labelled `arm-notification=pending` and not yet
 * `arm-notified`, and the CRs whose current operation carries a URI (label `arm-notification=<id>`;
 * a CR's change or removal is what ends a Create, Update or Delete). Each key is an operation ID;
 * its reconcile reads the operation with the poll endpoint's code (OperationStore.find, which
 * freezes a terminal one into its ConfigMap), and when it is terminal POSTs the same body as
 * GET hcpOperationStatuses/{id}, then records the outcome in the ConfigMap under its own field
 * manager (NotificationRecord). A restart thus neither repeats a delivered notification (short of a
 * crash between the POST and that write) nor loses one. A failed POST is retried with a doubling
 * delay, counted in the record, and given up after `maxAttempts`. While the operation runs, the
 * reconcile requeues at its deadline (deadlines.ts), so a deadline is notified without any poll.
 */
import { rootCertificates } from "node:tls";
import type { Registry } from "prom-client";
import { Agent, request } from "undici";
import { ExternalAuthResource, HcpClusterResource, NodePoolResource } from "../../api/v1alpha1/index.ts";
import { Controller, type ReconcileContext, type Request, type Result } from "../../runtime/controller.ts";
import { errorMessage } from "../../runtime/errors.ts";
import { Informer } from "../../runtime/informer.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../runtime/kube.ts";
import { silentLogger, type Logger } from "../../runtime/logger.ts";
import type { Runnable } from "../../runtime/manager.ts";
import { counter, metricsRegistry } from "../../runtime/metrics.ts";
import {
  refusalOf,
  resolveNotificationOptions,
  type NotificationOptions,
  type ResolvedNotificationOptions,
} from "./notification-uri.ts";
import { ARM_LABELS } from "../../api/v1alpha1/index.ts";
import { operationStatusBody } from "./endpoints.ts";
import type { OperationDoc } from "../../api/v1alpha1/index.ts";
import type { NotificationRecord } from "./document.ts";
import { OperationStore } from "./store.ts";
import { isTerminal } from "../../api/v1alpha1/index.ts";
import { configMapType } from "../service-cluster.ts";

/** How often a running operation is looked at again when no watch tells (credential actions). */
const RECHECK_MS = 15_000;

const CR_TYPES: ResourceType[] = [HcpClusterResource, NodePoolResource, ExternalAuthResource];
const CLUSTER = "service";

/**
 * A watched object trimmed to what the notifier maps from (name, namespace, its label) and the
 * resourceVersion the informer tells changes by.
 */
const trimmed = (o: KubeObject): KubeObject => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  metadata: {
    name: o.metadata.name,
    namespace: o.metadata.namespace,
    resourceVersion: o.metadata.resourceVersion,
    labels: { [ARM_LABELS.notification]: o.metadata.labels?.[ARM_LABELS.notification] ?? "" },
  },
});

function notifierMetrics(registry: Registry) {
  return counter(registry, {
    name: "hcp_frontend_operation_notifications_total",
    help: "Azure-AsyncNotificationUri POSTs by result: sent, failed (an attempt), abandoned (given up)",
    labelNames: ["result"] as const,
  });
}

const subscriptionOf = (doc: OperationDoc): string =>
  /^\/subscriptions\/([^/]+)/i.exec(doc.resourceId)?.[1] ?? "";

export interface NotifierOptions extends NotificationOptions {
  client: KubeClient;
  log?: Logger;
  registry?: Registry;
}

export class OperationNotifier implements Runnable {
  readonly needLeaderElection = true;
  readonly #client: KubeClient;
  readonly #store: OperationStore;
  readonly #opts: ResolvedNotificationOptions;
  readonly #log: Logger;
  readonly #results: ReturnType<typeof notifierMetrics>;
  readonly #agent: Agent;

  constructor(opts: NotifierOptions) {
    this.#client = opts.client;
    this.#store = new OperationStore(opts.client);
    this.#opts = resolveNotificationOptions(opts);
    this.#log = (opts.log ?? silentLogger).child({ component: "operation-notifier" });
    this.#results = notifierMetrics(opts.registry ?? metricsRegistry);
    for (const result of ["sent", "failed", "abandoned"]) this.#results.inc({ result }, 0);
    const ca = this.#opts.ca ? [...rootCertificates, this.#opts.ca.toString()] : undefined;
    this.#agent = new Agent({
      connect: { ...(ca ? { ca } : {}), timeout: this.#opts.timeoutMs },
      headersTimeout: this.#opts.timeoutMs,
      bodyTimeout: this.#opts.timeoutMs,
    });
  }

  /** Runs the watches and the controller until the signal aborts (on the leader only). */
  async start(signal: AbortSignal): Promise<void> {
    const controller = new Controller({
      name: "operation-notifier",
      reconciler: { reconcile: (ctx, req) => this.reconcile(ctx, req) },
      maxConcurrentReconciles: 4,
      log: this.#log,
    });
    const informers = this.#informers(controller);
    const running = informers.map((i) =>
      i.run(signal).catch((err: unknown) => this.#log.error("A watch stopped", err)),
    );
    await controller.start(signal);
    await Promise.all(running);
    await this.#agent.close();
  }

  #informers(controller: Controller): Informer[] {
    const operations = new Informer<KubeObject>({
      client: this.#client,
      type: configMapType,
      labelSelector: `${ARM_LABELS.notification}=pending,!${ARM_LABELS.notified}`,
      transform: trimmed,
      log: this.#log,
    });
    const enqueue = (namespace: string | undefined, id: string | undefined): void => {
      if (namespace && id) controller.enqueue({ cluster: CLUSTER, namespace, name: id });
    };
    operations.addEventHandler({
      onAdd: (cm) => enqueue(cm.metadata.namespace, cm.metadata.name?.replace(/^op-/, "")),
      onUpdate: (_, cm) => enqueue(cm.metadata.namespace, cm.metadata.name?.replace(/^op-/, "")),
    });
    const resources = CR_TYPES.map((type) => {
      const informer = new Informer<KubeObject>({
        client: this.#client,
        type,
        labelSelector: ARM_LABELS.notification,
        transform: trimmed,
        log: this.#log,
      });
      const push = (cr: KubeObject): void =>
        enqueue(cr.metadata.namespace, cr.metadata.labels?.[ARM_LABELS.notification]);
      informer.addEventHandler({ onAdd: push, onUpdate: (_, cr) => push(cr), onDelete: push });
      return informer;
    });
    return [operations, ...resources];
  }

  /** One operation: brought up to date as a poll would; once terminal, notified once. */
  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const { namespace, name: id } = req;
    const stored = await this.#store.stored(namespace, id);
    const record = stored?.notification ?? { attempts: 0 };
    if (record.sent !== undefined || record.abandoned !== undefined) return {};
    const doc = await this.#current(namespace, id, stored?.doc);
    if (!doc?.notificationUri) return {};
    // A running one is looked at again by its deadline; a retry waits for its time, whatever woke
    // this reconcile (the record's own write does).
    const wait = isTerminal(doc.status) ? untilRetry(record) : untilRecheck(doc);
    if (wait > 0) return { requeueAfterMs: wait };
    // A replaced or frozen one has its ConfigMap; this makes sure, and reads the frozen document.
    const frozen = stored ? doc : await this.#store.freeze(namespace, doc);
    return this.#deliver(ctx.log, namespace, frozen, record);
  }

  /** The frozen document, else the operation as a poll finds it now. */
  async #current(
    namespace: string,
    id: string,
    stored: OperationDoc | undefined,
  ): Promise<OperationDoc | undefined> {
    if (stored && isTerminal(stored.status)) return stored;
    return (await this.#store.find(namespace, id))?.doc;
  }

  async #deliver(
    log: Logger,
    namespace: string,
    doc: OperationDoc,
    record: NotificationRecord,
  ): Promise<Result> {
    const uri = doc.notificationUri ?? "";
    const refusal = refusalOf(uri, this.#opts.allowedHosts);
    if (refusal) return this.#abandon(log, namespace, doc, { ...record, lastError: `the URI ${refusal}` });
    log.info("Notifying ARM of an operation's end", { operation: doc.id, status: doc.status });
    try {
      await this.#post(uri, operationStatusBody(doc, subscriptionOf(doc)));
    } catch (err) {
      return this.#failed(log, namespace, doc, {
        attempts: record.attempts + 1,
        lastError: errorMessage(err),
      });
    }
    await this.#store.recordNotification(namespace, doc.id, { ...record, sent: new Date().toISOString() });
    this.#results.inc({ result: "sent" });
    return {};
  }

  async #failed(
    log: Logger,
    namespace: string,
    doc: OperationDoc,
    record: NotificationRecord,
  ): Promise<Result> {
    this.#results.inc({ result: "failed" });
    if (record.attempts >= this.#opts.maxAttempts) return this.#abandon(log, namespace, doc, record);
    const delay = Math.min(this.#opts.maxRetryMs, this.#opts.firstRetryMs * 2 ** (record.attempts - 1));
    const retryAt = new Date(Date.now() + delay).toISOString();
    await this.#store.recordNotification(namespace, doc.id, { ...record, retryAt });
    log.info("An operation's notification failed; retrying", {
      operation: doc.id,
      attempts: record.attempts,
      retryInMs: delay,
      err: record.lastError,
    });
    return { requeueAfterMs: delay };
  }

  async #abandon(
    log: Logger,
    namespace: string,
    doc: OperationDoc,
    record: NotificationRecord,
  ): Promise<Result> {
    await this.#store.recordNotification(namespace, doc.id, {
      ...record,
      abandoned: new Date().toISOString(),
    });
    this.#results.inc({ result: "abandoned" });
    log.error("Gave up notifying ARM of an operation's end", new Error(record.lastError ?? "unknown"), {
      operation: doc.id,
      attempts: record.attempts,
    });
    return {};
  }

  async #post(uri: string, body: Record<string, unknown>): Promise<void> {
    const res = await request(uri, {
      method: "POST",
      dispatcher: this.#agent,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await res.body.dump();
    if (res.statusCode < 200 || res.statusCode >= 300)
      throw new Error(`the notification endpoint answered ${res.statusCode}`);
  }
}

/** Until a failed notification's next attempt; 0 when it is due. */
function untilRetry(record: NotificationRecord): number {
  const left = record.retryAt ? Date.parse(record.retryAt) - Date.now() : 0;
  return Number.isNaN(left) ? 0 : Math.max(0, left);
}

/** Until the deadline (the notifier is then to tell ARM it Failed), at most RECHECK_MS. */
function untilRecheck(doc: OperationDoc): number {
  const left = doc.deadline ? Date.parse(doc.deadline) - Date.now() : RECHECK_MS;
  return Math.max(10, Math.min(RECHECK_MS, Number.isNaN(left) ? RECHECK_MS : left + 10));
}
