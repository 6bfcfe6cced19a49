/**
 * maestro-agent: serves one consumer (management cluster). Spec events fill the work store and
 * enqueue the work's key; the reconciler (reconcile.ts) applies and reports. The protocol stays in
 * ../cloudevents; this file only wires it to the cluster.
 */
import { AgentClient } from "../cloudevents/client/agent.ts";
import { brokerConnection, type BrokerConnectionOptions } from "../cloudevents/client/broker.ts";
import type { Connection } from "../cloudevents/client/connection.ts";
import { WorkStore } from "../cloudevents/store/works.ts";
import { DEFAULT_HEARTBEAT_MS } from "../cloudevents/codec/heartbeat.ts";
import { checkConsumerName, topics } from "../cloudevents/types.ts";
import { Applier } from "../runtime/apply.ts";
import { Controller } from "../runtime/controller.ts";
import { bucketRateLimiter, itemExponentialRateLimiter, maxOfRateLimiter } from "../runtime/ratelimiter.ts";
import type { KubeClient } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { DEFAULT_ALLOWED_KINDS, DEFAULT_FIELD_MANAGER, KindAllowList } from "./apply.ts";
import { AppliedWorks, hubHash } from "./appliedwork.ts";
import { AppliedObjects, DEFAULT_WATCHED_RESOURCES, informerWatch } from "./objects.ts";
import { readFileSync } from "node:fs";
import type { BrokerCertificateSummary } from "../api/v1alpha1/managementcluster.ts";
import { certificateSummary, CredentialsSecret } from "./broker-credentials.ts";
import { CertificateRenewal } from "./certificate-renewal.ts";
import { AgentWorkReconciler } from "./reconcile.ts";
import { RestMapper } from "./restmapper.ts";

export interface MaestroAgentOptions {
  /** The consumer name: the management cluster's name in Maestro, `[a-z0-9-]+`. */
  consumer: string;
  /** The management cluster the manifests are applied to. */
  kube: KubeClient;
  /** The client ID prefix defaults to `<agentId>-client`, as Maestro's agent names its MQTT client. */
  broker: Omit<BrokerConnectionOptions, "clientId"> & { clientId?: string };
  /** The CloudEvents source of this agent. Default `<consumer>-work-agent`. */
  agentId?: string;
  /** Kinds the agent may apply (see KindAllowList). Default DEFAULT_ALLOWED_KINDS. */
  allowedKinds?: readonly string[];
  /**
   * How often an object whose status is asked back and that no watch covers is read for status.
   * Default 60 s: OCM's agent reads every object every 10 s, which at 2,000 works saturates a
   * management cluster's apiserver; here the objects whose status matters (watchedResources)
   * report through watches as they change, and objects that only have to exist are read at the
   * drift check (reapplyMs).
   */
  statusSyncMs?: number;
  /** Kinds watched for status, `plural.group`. Default DEFAULT_WATCHED_RESOURCES (HyperShift's, Velero's Schedules). */
  watchedResources?: readonly string[];
  /** Default 5 min. */
  reapplyMs?: number;
  /**
   * How long a generation's first status waits for its feedback (reconcile.ts firstStatusHoldMs).
   * Default FIRST_STATUS_HOLD_MS (10 s, OCM's agent's status sync period).
   */
  firstStatusHoldMs?: number;
  /** Default 4. */
  workers?: number;
  /**
   * The longest a failed work waits before it is tried again. Default MAX_RETRY_BACKOFF_MS
   * (30 s); controllers' default is 1,000 s.
   */
  maxRetryBackoffMs?: number;
  /**
   * How often the agent tells maestro-server it is alive (codec/heartbeat.ts). Default 10 s, the
   * OCM agent's status sync period; maestro-server calls an agent not Connected after three
   * missed beats. 0: no heartbeat, as a real Maestro agent.
   */
  heartbeatMs?: number;
  /**
   * `<namespace>/<name>` of the Secret on the management cluster that holds the agent's broker
   * credentials (ca.crt, tls.crt, tls.key). With it the agent renews its certificate before it
   * expires and keeps the renewed one there (certificate-renewal.ts); without it the files are
   * read at each connection attempt and renewed by whoever writes them.
   */
  credentialsSecret?: string;
  /** How long the renewal waits for maestro-server's answer. Default 30 s. */
  certificateAnswerTimeoutMs?: number;
  log?: Logger;
}

/**
 * What fails an agent's reconcile is its management cluster's apiserver (away, restarting,
 * overloaded) or the broker, not the work: the work's own problems are conditions in its status.
 * With controllers' default backoff (doubling up to 1,000 s) a work that failed through a
 * 2-minute apiserver outage was tried again 2.7 minutes after the apiserver was back, and one
 * through a 10-minute outage would wait up to 10 more. 30 s bounds that wait; the overall bucket
 * (10 retries a second) still bounds the load on an apiserver that comes back.
 */
export const MAX_RETRY_BACKOFF_MS = 30_000;
/** See MaestroAgentOptions.firstStatusHoldMs. */
export const FIRST_STATUS_HOLD_MS = 10_000;

/** The certificate in a file the agent connects with (read at each beat, as at each attempt). */
function fileCertificate(path: string): BrokerCertificateSummary | undefined {
  try {
    return path ? certificateSummary(readFileSync(path, "utf8")) : undefined;
  } catch {
    return undefined;
  }
}

/** The agent's certificate renewal, when it keeps its credentials in a Secret. */
function certificateRenewal(
  opts: MaestroAgentOptions,
  agentId: string,
  connection: Connection,
  log: Logger,
): CertificateRenewal | undefined {
  if (!opts.credentialsSecret) return undefined;
  const { caFile, certFile, keyFile } = opts.broker;
  return new CertificateRenewal({
    consumer: opts.consumer,
    agentId,
    connection,
    secret: new CredentialsSecret(opts.kube, opts.credentialsSecret),
    ...(certFile && keyFile ? { files: { caFile, certFile, keyFile } } : {}),
    answerTimeoutMs: opts.certificateAnswerTimeoutMs,
    log,
  });
}

export class MaestroAgent implements Runnable {
  /** One agent per management cluster; it needs no lease of the service cluster. */
  readonly needLeaderElection = false;
  readonly connection: Connection;
  readonly store = new WorkStore();
  readonly #controller: Controller;
  readonly #client: AgentClient;
  readonly objects: AppliedObjects;
  /** Present with a credentials Secret: the certificate in use and its renewal. */
  readonly certificates: CertificateRenewal | undefined;

  constructor(opts: MaestroAgentOptions) {
    checkConsumerName(opts.consumer);
    const { consumer, kube } = opts;
    const agentId = opts.agentId ?? `${consumer}-work-agent`;
    const name = `maestro-agent-${consumer}`;
    const log = (opts.log ?? silentLogger).child({ component: "maestro-agent", consumer });
    this.connection = brokerConnection(
      name,
      {
        ...opts.broker,
        clientId: opts.broker.clientId ?? `${agentId}-client`,
        ...(opts.credentialsSecret ? { tls: () => this.certificates?.credentials } : {}),
      },
      { subscriptions: [topics.sourceEvents(consumer)], publishTopic: () => topics.agentEvents(consumer) },
      log,
    );
    const applied = new AppliedWorks({
      kube,
      applier: new Applier(kube, DEFAULT_FIELD_MANAGER),
      hubHash: hubHash(new URL(opts.broker.url).host),
      agentId,
    });
    const renewal = certificateRenewal(opts, agentId, this.connection, log);
    this.certificates = renewal;
    const client = new AgentClient(this.connection, {
      consumer,
      agentId,
      store: this.store,
      recordedWorks: () => applied.recordedWorkNames(),
      heartbeatMs: opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      brokerCertificate: () => renewal?.summary ?? fileCertificate(opts.broker.certFile),
      log,
    });
    this.#client = client;
    const { statusSyncMs, reapplyMs, firstStatusHoldMs } = timings(opts);
    const enqueue = (uid: string): void =>
      this.#controller.enqueue({ cluster: consumer, namespace: consumer, name: uid });
    this.objects = new AppliedObjects({
      watch: informerWatch(kube, log),
      watched: opts.watchedResources ?? DEFAULT_WATCHED_RESOURCES,
      existenceTtlMs: reapplyMs,
      onChange: enqueue,
      log,
    });
    this.#controller = new Controller({
      name,
      maxConcurrentReconciles: opts.workers ?? 4,
      rateLimiter: maxOfRateLimiter(
        itemExponentialRateLimiter(5, opts.maxRetryBackoffMs ?? MAX_RETRY_BACKOFF_MS),
        bucketRateLimiter(10, 100),
      ),
      log,
      reconciler: new AgentWorkReconciler({
        consumer,
        store: this.store,
        client,
        kube,
        mapper: new RestMapper(kube),
        allowed: new KindAllowList(opts.allowedKinds ?? DEFAULT_ALLOWED_KINDS),
        applied,
        objects: this.objects,
        statusSyncMs,
        reapplyMs,
        firstStatusHoldMs,
        enqueue,
        resyncSpecs: () => client.requestSpecResync(),
      }),
    });
    client.onChange(enqueue);
    // A status that could not be sent while the connection was down goes out as soon as it is
    // back, not at the work's next sync (a certificate switch reconnects on purpose).
    this.connection.onSubscribed(() => {
      for (const work of this.store.list())
        if (work.status && work.statusHash === undefined) enqueue(work.uid);
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.certificates?.load(signal);
    await Promise.all([
      this.connection.run(signal),
      this.certificates?.run(signal),
      this.#client.runHeartbeats(signal),
      this.objects.start(signal),
      this.#controller.start(signal),
    ]);
  }
}

function timings(
  opts: MaestroAgentOptions,
): Required<Pick<MaestroAgentOptions, "statusSyncMs" | "reapplyMs" | "firstStatusHoldMs">> {
  return {
    statusSyncMs: opts.statusSyncMs ?? 60_000,
    reapplyMs: opts.reapplyMs ?? 300_000,
    firstStatusHoldMs: opts.firstStatusHoldMs ?? FIRST_STATUS_HOLD_MS,
  };
}
