/**
 * maestro-server: carries the service cluster's ManifestWorks to management clusters over MQTT
 * and their status back. Wiring only: the informer and the status store feed one controller whose
 * reconciler (reconcile.ts) publishes and writes status; the protocol stays in ../cloudevents.
 *
 * Several replicas run with leader election (the Manager's Lease), not MQTT shared subscriptions:
 * the spec side is driven by one informer and must have one writer per work anyway, ordering of
 * status per work is kept by one subscriber, and Azure's Event Grid broker, the production target,
 * has no shared subscriptions. A follower keeps no broker connection.
 *
 * Everything heard on a consumer's topic, and its agent's heartbeats, feed `agents`, the
 * in-memory liveness the management cluster controller shows as Connected (liveness.ts).
 *
 * A spec resync is answered with a deletion only for an ID this region deleted unconfirmed
 * (deleted-works.ts, read before the broker connection starts); what an agent holds beyond its
 * works and those is left alone and reported (unclaimed.ts).
 */
import {
  ManifestWorkResource,
  summariseWorkSpec,
  type CachedManifestWork,
  type ManifestWork,
  type ManifestWorkObject,
} from "../api/work/v1.ts";
import { brokerConnection, type BrokerConnectionOptions } from "../cloudevents/client/broker.ts";
import type { Connection } from "../cloudevents/client/connection.ts";
import { SourceClient } from "../cloudevents/client/source.ts";
import type { StatusUpdate } from "../cloudevents/codec/manifestbundle.ts";
import { StatusStore } from "../cloudevents/store/status.ts";
import { SOURCE_ID, topics } from "../cloudevents/types.ts";
import type { BrokerCertificateRequest } from "../cloudevents/codec/broker-certificate.ts";
import { noSignerAnswer, type AgentCertificateSigner } from "./agent-certificates.ts";
import { AgentLiveness } from "./liveness.ts";
import { DeletedWorks } from "./deleted-works.ts";
import { UnclaimedWorksReport } from "./unclaimed.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { Controller } from "../runtime/controller.ts";
import { EventRecorder } from "../runtime/events.ts";
import type { Informer } from "../runtime/informer.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import { counter, metricsRegistry } from "../runtime/metrics.ts";
import type { Runnable } from "../runtime/manager.ts";
import { enqueueForObject } from "../runtime/source.ts";
import { UID_INDEX, acceptStatus, uidIndexer } from "./accept.ts";
import { ManifestWorkReconciler } from "./reconcile.ts";
import { shownReport } from "./status.ts";

export const SERVER_NAME = "maestro-server";

export interface MaestroServerOptions {
  /** The service cluster, whose ManifestWorks are served. */
  cluster: Cluster;
  broker: BrokerConnectionOptions;
  /** Release a deletion no agent confirmed after this long. Default 1 h, Maestro's default. */
  staleDeleteMs?: number;
  /** Publish a work again when no status of its generation arrived after this long. Default 30 s. */
  redeliverAfterMs?: number;
  /**
   * How long a freshly published generation's status write waits for the agent's first report,
   * so that one write carries both. Default 10 s.
   */
  publishedStatusDelayMs?: number;
  /**
   * Reconciles at once. Default 32: a reconcile mostly waits on the apiserver (the finalizer, the
   * status write) and the broker, so 4 kept 1,000 works queued ~20 s each while the process idled.
   */
  workers?: number;
  /**
   * Signs agents' broker certificate renewals (agent-certificates.ts); without it every request
   * is answered with a refusal saying so.
   */
  agentCertificates?: AgentCertificateSigner;
  /** Milliseconds since the epoch, for agent liveness. Default Date.now. */
  now?: () => number;
  log?: Logger;
}

export class MaestroServer implements Runnable {
  readonly needLeaderElection = true;
  readonly connection: Connection;
  readonly statuses = new StatusStore();
  /** When each consumer's agent was last heard; read by the management cluster controller. */
  readonly agents: AgentLiveness;
  /** The deletions this region gave up waiting for, kept in the service cluster. */
  readonly deletedWorks: DeletedWorks;
  readonly #opts: MaestroServerOptions;
  readonly #log: Logger;
  readonly #works: Informer<CachedManifestWork, ManifestWork>;
  readonly #client: SourceClient;
  readonly #reconciler: ManifestWorkReconciler;
  /** Consumers whose agents were heard since this server started (#askWhatAgentHolds). */
  readonly #asked = new Set<string>();
  readonly #controller: Controller;
  readonly #bounded = counter(metricsRegistry, {
    name: "maestro_server_status_bounded_total",
    help: "Parts of agents' statuses left out or cut to fit the ManifestWork schema, and statuses refused for their size, by reason",
    labelNames: ["reason"] as const,
  });

  constructor(opts: MaestroServerOptions) {
    this.#opts = opts;
    this.agents = new AgentLiveness({ now: opts.now });
    this.#log = (opts.log ?? silentLogger).child({ component: SERVER_NAME });
    this.connection = brokerConnection(
      SERVER_NAME,
      opts.broker,
      {
        subscriptions: [topics.allAgentEvents()],
        publishTopic: (e) => topics.sourceEvents(e.extensions["clustername"] ?? "", SOURCE_ID),
      },
      this.#log,
    );
    this.#trackAgents();
    this.deletedWorks = new DeletedWorks({ client: opts.cluster.client, log: this.#log });
    const unclaimed = new UnclaimedWorksReport(this.agents, this.#log);
    this.#works = opts.cluster.informer<CachedManifestWork, ManifestWork>(ManifestWorkResource, {
      transform: summariseWorkSpec,
      indexers: { [UID_INDEX]: uidIndexer },
    });
    this.#client = new SourceClient(
      this.connection,
      {
        consumers: () =>
          [...new Set(this.#works.list().map((w) => w.metadata.namespace ?? ""))].filter(Boolean),
        worksOf: (consumer) => this.#works.list(consumer),
        fetch: (work) => this.#fetch(work),
        statusHash: (uid) => this.statuses.statusHash(uid),
        deleted: (consumer, uid) => this.deletedWorks.has(consumer, uid),
      },
      this.#log,
    );
    this.#client.onUnclaimed((consumer, ids) => unclaimed.report(consumer, ids));
    const client = opts.cluster.client;
    this.#reconciler = new ManifestWorkReconciler({
      works: this.#works,
      fetch: (work) => this.#fetch(work),
      client: this.#client,
      statuses: this.statuses,
      applier: new Applier(client, SERVER_NAME),
      events: new EventRecorder(client, SERVER_NAME, this.#log),
      staleDeleteMs: opts.staleDeleteMs ?? 3_600_000,
      deletedWorks: this.deletedWorks,
      redeliverAfterMs: opts.redeliverAfterMs ?? 30_000,
      publishedStatusDelayMs: opts.publishedStatusDelayMs ?? 10_000,
    });
    this.#controller = new Controller({
      name: SERVER_NAME,
      maxConcurrentReconciles: opts.workers ?? 32,
      log: this.#log,
      reconciler: this.#reconciler,
    });
    enqueueForObject(this.#works, this.#controller);
    this.#client.onStatus((u) => this.#acceptStatus(u));
    this.#client.onHeartbeat((beat) =>
      this.agents.heard(beat.consumer, beat.intervalMs, beat.brokerCertificate),
    );
    this.#client.onBrokerCertificateRequest((request) => void this.#answerCertificateRequest(request));
    this.connection.onSubscribed(() => void this.#afterSubscribe());
  }

  async #answerCertificateRequest(request: BrokerCertificateRequest): Promise<void> {
    const signer = this.#opts.agentCertificates;
    const answer = signer ? await signer.answer(request) : noSignerAnswer(request);
    // Not connected: the agent asks again after its timeout.
    await this.#client
      .answerBrokerCertificate(answer)
      .catch((err: unknown) =>
        this.#log.error("Failed to answer a broker certificate request", err, { consumer: request.consumer }),
      );
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.#works.waitForSync(signal);
    // Before any spec resync can be answered: an ID missing from it would be left, not deleted.
    await this.deletedWorks.load(signal);
    this.#seedReports();
    this.#asked.clear();
    // Silence is counted from when this server can listen: a sync longer than the silence bound
    // would otherwise show every management cluster SourceDisconnected after a restart.
    this.agents.start();
    await Promise.all([this.connection.run(signal), this.#controller.start(signal)]);
  }

  /**
   * Before the first status resync: each work's last report as the work shows it. Agents then
   * answer only for statuses that changed while this process was away, rather than for every work
   * (docs/decisions/0007-send-what-changed-ask-for-what-is-missing.md).
   */
  #seedReports(): void {
    for (const work of this.#works.list()) {
      const uid = work.metadata.uid;
      const shown = uid ? shownReport(work) : undefined;
      if (uid && shown)
        this.statuses.seed({ resourceId: uid, consumer: work.metadata.namespace ?? "", ...shown });
    }
  }

  /** Any event on a consumer's topic was sent by that consumer's agent: the broker's ACL says so. */
  #trackAgents(): void {
    this.connection.onEvent((_event, topic) => {
      const consumer = topics.consumerOf(topic);
      if (!consumer) return;
      this.agents.heard(consumer);
      this.#askWhatAgentHolds(consumer);
    });
    this.connection.onSubscribed(() => this.agents.listening(true));
    this.connection.onDisconnected(() => this.agents.listening(false));
  }

  /**
   * The first time since this server started that it hears an agent it has no works of (a
   * region restored without its works, or one not written yet), it asks that agent for its
   * statuses, which the agent follows with what it holds: so the works this region does not know
   * are counted (unclaimed.ts), not left unseen until the agent reconnects. An agent with works
   * here is asked by the status resync after each subscribe.
   */
  #askWhatAgentHolds(consumer: string): void {
    if (this.#asked.has(consumer)) return;
    this.#asked.add(consumer);
    if (this.#works.list(consumer).length > 0) return;
    void this.#client
      .requestAllStatuses(consumer)
      .catch((err: unknown) => this.#log.error("Failed to ask an agent what it holds", err, { consumer }));
  }

  /**
   * After every (re)connect: retry what found no connection, and ask agents for statuses. A work
   * published just before the connection dropped is sent again at its redelivery time.
   */
  async #afterSubscribe(): Promise<void> {
    for (const req of this.#reconciler.takeUnsent()) this.#controller.enqueue(req);
    try {
      await this.#client.resyncStatus();
    } catch (err) {
      this.#log.error("Failed to request a status resync", err);
    }
  }

  /** The work with its manifests, which the informer does not cache; undefined if that object is gone. */
  async #fetch(work: ManifestWorkObject): Promise<ManifestWork | undefined> {
    const { name = "", namespace, uid } = work.metadata;
    const found = await this.#opts.cluster.client.find<ManifestWork>(ManifestWorkResource, name, namespace);
    return found?.metadata.uid === uid ? found : undefined;
  }

  #acceptStatus(update: StatusUpdate): void {
    const decision = acceptStatus(update, this.#works, this.statuses);
    if (decision.verdict === "dropped" && this.#confirmsDeleted(update)) return;
    if (decision.verdict === "dropped") return this.connection.drop(decision.reason, decision.why);
    for (const reason of decision.trimmed) this.#bounded.labels(reason).inc();
    if (decision.unordered) this.#bounded.labels("future-sequence").inc();
    if (decision.refusal) {
      this.#bounded.labels("status-too-large").inc();
      this.#log.info("Refused an agent's status", { uid: update.resourceId, why: decision.refusal.message });
    }
    this.#enqueue(decision.work);
  }

  /** The agent confirms a deletion this region gave up waiting for: it is no longer remembered. */
  #confirmsDeleted(update: StatusUpdate): boolean {
    if (!update.deleted || !this.deletedWorks.has(update.consumer, update.resourceId)) return false;
    void this.deletedWorks
      .forget(update.consumer, update.resourceId)
      .catch((err: unknown) =>
        this.#log.error("Failed to forget a confirmed deletion", err, { consumer: update.consumer }),
      );
    return true;
  }

  #enqueue(work: ManifestWorkObject): void {
    const { namespace = "", name = "" } = work.metadata;
    this.#controller.enqueue({ cluster: this.#opts.cluster.name, namespace, name });
  }
}
