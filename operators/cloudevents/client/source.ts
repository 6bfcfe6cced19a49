/**
 * The source side (maestro-server) of the protocol over a Connection: publishes spec events,
 * answers agents' spec resync requests from a lister, asks agents for their statuses after every
 * (re)connect, and hands decoded status updates and agents' heartbeats to the owner. A resync
 * answers with a deletion only an ID the source knows it deleted (a tombstone); one it neither has
 * nor deleted is left to the agent and reported as unclaimed: after a region restore the works
 * come back under new IDs, and deleting what is unknown would delete the fleet
 * (docs/decisions/0012-never-delete-the-unknown.md). A status or
 * heartbeat that arrives on one consumer's topic but names another consumer is dropped: the topic
 * is what the broker's ACL vouches for.
 */
import type { ManifestWork, ManifestWorkObject } from "../../api/work/v1.ts";
import { silentLogger, type Logger } from "../../runtime/logger.ts";
import {
  bundleProblems,
  decodeStatusEvent,
  encodeDeletionEvent,
  encodeSpecEvent,
  type StatusUpdate,
} from "../codec/manifestbundle.ts";
import {
  decodeBrokerCertificateRequest,
  encodeBrokerCertificateAnswer,
  isBrokerCertificateEvent,
  type BrokerCertificateAnswer,
  type BrokerCertificateRequest,
} from "../codec/broker-certificate.ts";
import { decodeHeartbeat, isHeartbeat, type Heartbeat } from "../codec/heartbeat.ts";
import {
  decodeSpecResyncRequest,
  encodeResyncDelete,
  encodeStatusResyncRequests,
  type ResourceVersion,
} from "../codec/resync.ts";
import { Action, SOURCE_ID, parseEventType, topics, type CloudEvent, type EventAction } from "../types.ts";
import type { Connection } from "./connection.ts";

/** The part of a Connection the source client uses. */
export type SourceConnection = Pick<Connection, "onEvent" | "publish" | "drop">;

/**
 * Bounds on the work one spec resync request can cause. A request is only ever answered for the
 * consumer whose topic it came on, from that consumer's works; the agent's list adds deletions
 * for IDs this source deleted without the agent's confirmation (how an agent learns what was
 * deleted while it was away), and those are what a hostile or broken agent could inflate.
 */
export interface SpecResyncLimits {
  /**
   * After a burst, at most one answer per consumer this often (default 10 s). A request beyond
   * that is answered when the next one is allowed; a later one replaces it (counted as dropped,
   * "resync-rate-limited").
   */
  minIntervalMs?: number;
  /** Answers a consumer gets at once, e.g. for reconnects close together (default 3). */
  burst?: number;
  /**
   * Deletions sent per answer for listed IDs this source deleted (default 500); the rest are
   * counted as dropped ("resync-deletes-capped") and go out with the agent's next resync.
   */
  maxDeletes?: number;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
}

/** Resource IDs are Kubernetes UIDs (as in Maestro, UUIDs); anything else names no resource. */
const RESOURCE_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A consumer's token bucket of answers, and the request waiting for a token. */
interface ResyncState {
  tokens: number;
  refilledMs: number;
  pending?: ResourceVersion[];
  timer?: NodeJS.Timeout;
}

/**
 * What the source knows: its works per consumer (from a cache that may leave the manifests out),
 * the whole of a work when it is to be sent, and the last status hash it accepted for each.
 */
export interface SourceLister {
  consumers(): string[];
  worksOf(consumer: string): ManifestWorkObject[];
  /** The work with its manifests, if it still exists as the same object (uid). */
  fetch(work: ManifestWorkObject): Promise<ManifestWork | undefined>;
  statusHash(resourceId: string): string | undefined;
  /**
   * Whether this source deleted the consumer's work of that ID without its agent's confirmation
   * (maestro-server/deleted-works.ts). Absent: it knows of none, and no unknown ID is deleted.
   */
  deleted?(consumer: string, resourceId: string): boolean;
}

export class SourceClient {
  readonly #conn: SourceConnection;
  readonly #lister: SourceLister;
  readonly #log: Logger;
  readonly #minIntervalMs: number;
  readonly #burst: number;
  readonly #maxDeletes: number;
  readonly #now: () => number;
  readonly #resyncs = new Map<string, ResyncState>();
  #onStatus: (update: StatusUpdate) => void = () => undefined;
  #onHeartbeat: (beat: Heartbeat) => void = () => undefined;
  #onCertificateRequest: (request: BrokerCertificateRequest) => void = () => undefined;
  #onUnclaimed: (consumer: string, resourceIds: string[]) => void = () => undefined;

  constructor(
    conn: SourceConnection,
    lister: SourceLister,
    log: Logger = silentLogger,
    limits: SpecResyncLimits = {},
  ) {
    this.#conn = conn;
    this.#lister = lister;
    this.#log = log;
    this.#minIntervalMs = limits.minIntervalMs ?? 10_000;
    this.#burst = limits.burst ?? 3;
    this.#maxDeletes = limits.maxDeletes ?? 500;
    this.#now = limits.now ?? Date.now;
    conn.onEvent((event, topic) => this.#dispatch(event, topic));
  }

  onStatus(handler: (update: StatusUpdate) => void): void {
    this.#onStatus = handler;
  }

  onHeartbeat(handler: (beat: Heartbeat) => void): void {
    this.#onHeartbeat = handler;
  }

  /**
   * After each spec resync answer: the resource IDs the agent listed that this source neither has
   * nor deleted, which it left alone (possibly none).
   */
  onUnclaimed(handler: (consumer: string, resourceIds: string[]) => void): void {
    this.#onUnclaimed = handler;
  }

  /** An agent's request for a new broker certificate, from its own topic (the consumer checked). */
  onBrokerCertificateRequest(handler: (request: BrokerCertificateRequest) => void): void {
    this.#onCertificateRequest = handler;
  }

  /** Sends the answer to a certificate request to its consumer's agent. */
  answerBrokerCertificate(answer: BrokerCertificateAnswer): Promise<void> {
    return this.#conn.publish(encodeBrokerCertificateAnswer(SOURCE_ID, answer));
  }

  /** Publishes the work's spec (or its deletion, when it has a deletionTimestamp). */
  publishSpec(work: ManifestWork, action: EventAction): Promise<void> {
    return this.#conn.publish(encodeSpecEvent(work, action));
  }

  /** Publishes the deletion of a deleting work; its manifests are not needed. */
  publishDeletion(work: ManifestWorkObject, action: EventAction = Action.delete): Promise<void> {
    return this.#conn.publish(encodeDeletionEvent(work, action));
  }

  /**
   * Asks one consumer's agent for one work's status again: listed with an empty hash, it differs
   * from whatever the agent holds, so the agent sends it (works not listed are left alone).
   */
  async requestStatus(consumer: string, resourceId: string): Promise<void> {
    const hashes = [{ resourceID: resourceId, statusHash: "" }];
    for (const event of encodeStatusResyncRequests(consumer, hashes)) await this.#conn.publish(event);
  }

  /**
   * Asks a consumer's agent for every status it holds (an empty list): for a consumer this source
   * has no works of, so that the agent says what it holds (it follows with a spec resync).
   */
  async requestAllStatuses(consumer: string): Promise<void> {
    for (const event of encodeStatusResyncRequests(consumer, [])) await this.#conn.publish(event);
  }

  /** Asks every consumer for the statuses whose hashes differ from what this source holds. */
  async resyncStatus(): Promise<void> {
    for (const consumer of this.#lister.consumers()) await this.#requestStatuses(consumer);
  }

  /**
   * Lists one consumer's works with the status hash this source holds (empty where it holds
   * none); its agent sends each status that differs. Resolves with how many were listed.
   */
  async #requestStatuses(consumer: string): Promise<number> {
    const hashes = this.#lister.worksOf(consumer).flatMap((w) => {
      const uid = w.metadata.uid;
      return uid ? [{ resourceID: uid, statusHash: this.#lister.statusHash(uid) ?? "" }] : [];
    });
    // An empty list would ask for every status the agent holds; with no works there is none to ask for.
    if (hashes.length === 0) return 0;
    for (const event of encodeStatusResyncRequests(consumer, hashes)) await this.#conn.publish(event);
    return hashes.length;
  }

  #dispatch(event: CloudEvent, topic: string): void {
    try {
      this.#handle(event, topic);
    } catch (err) {
      this.#conn.drop("invalid", err, event);
    }
  }

  #handle(event: CloudEvent, topic: string): void {
    const topicConsumer = topics.consumerOf(topic);
    const type = parseEventType(event.type);
    if (type.subResource === "spec" && type.action === Action.resyncRequest) {
      const request = decodeSpecResyncRequest(event);
      if (request.consumer !== topicConsumer) return this.#conn.drop("consumer-mismatch", topic, event);
      return this.#limitSpecResync(request.consumer, request.versions);
    }
    if (isHeartbeat(event)) {
      const beat = decodeHeartbeat(event);
      if (beat.consumer !== topicConsumer) return this.#conn.drop("consumer-mismatch", topic, event);
      return this.#onHeartbeat(beat);
    }
    if (isBrokerCertificateEvent(event)) {
      // The topic vouches for the requester: the broker lets only that consumer publish there.
      const request = decodeBrokerCertificateRequest(event);
      if (request.consumer !== topicConsumer) return this.#conn.drop("consumer-mismatch", topic, event);
      return this.#onCertificateRequest(request);
    }
    if (type.subResource !== "status") return this.#conn.drop("unexpected-type", event.type, event);
    const update = decodeStatusEvent(event);
    if (update.consumer !== topicConsumer) {
      return this.#conn.drop("consumer-mismatch", `${update.consumer} on ${topic}`, event);
    }
    this.#onStatus(update);
  }

  /** Answers now, or when the consumer's next answer is allowed; only the latest waiting request is kept. */
  #limitSpecResync(consumer: string, versions: ResourceVersion[]): void {
    const state = this.#resyncs.get(consumer) ?? { tokens: this.#burst, refilledMs: this.#now() };
    this.#resyncs.set(consumer, state);
    if (state.pending)
      this.#conn.drop("resync-rate-limited", `${consumer} asked again before its last request was answered`);
    state.pending = versions;
    if (!state.timer) this.#answerWhenAllowed(consumer, state);
  }

  #answerWhenAllowed(consumer: string, state: ResyncState): void {
    const waitMs = this.#takeToken(state);
    if (waitMs > 0) {
      state.timer = setTimeout(() => {
        state.timer = undefined;
        this.#answerWhenAllowed(consumer, state);
      }, waitMs).unref();
      return;
    }
    const versions = state.pending ?? [];
    state.pending = undefined;
    void this.#respondSpecResync(consumer, versions).catch((err: unknown) =>
      this.#log.error("Failed to answer a spec resync request", err, { consumer }),
    );
  }

  /** Takes a token and returns 0, or returns how long until one is there. */
  #takeToken(state: ResyncState): number {
    const now = this.#now();
    state.tokens = Math.min(this.#burst, state.tokens + (now - state.refilledMs) / this.#minIntervalMs);
    state.refilledMs = now;
    if (state.tokens < 1) return Math.ceil((1 - state.tokens) * this.#minIntervalMs);
    state.tokens -= 1;
    return 0;
  }

  /**
   * Sends what the agent lacks: every deleting work, every work newer than the agent's version,
   * and a deletion for each work the agent holds that this source deleted unconfirmed (at most
   * maxDeletes, and only for IDs shaped like resource IDs). The rest it holds are unclaimed.
   */
  async #respondSpecResync(consumer: string, agentVersions: ResourceVersion[]): Promise<void> {
    const known = new Map(agentVersions.map((v) => [v.resourceID, v.resourceVersion]));
    const works = this.#lister.worksOf(consumer);
    let sent = 0;
    for (const work of works) {
      const uid = work.metadata.uid ?? "";
      const agentVersion = known.get(uid) ?? 0;
      known.delete(uid);
      if (await this.#resend(work, agentVersion)) sent++;
    }
    const { deletions, unclaimed } = this.#sortUnknown(consumer, known);
    sent += await this.#sendDeletions(consumer, deletions);
    this.#onUnclaimed(consumer, unclaimed);
    // An agent asks for specs when it (re)connects. A status it sent as its connection went, or
    // while it was away, may be lost (it cannot tell); this source's hashes show which.
    const statusesAsked = await this.#requestStatuses(consumer);
    this.#log.info("Answered spec resync", {
      consumer,
      agentHolds: agentVersions.length,
      sent,
      unclaimed: unclaimed.length,
      statusesAsked,
    });
  }

  /**
   * The listed IDs this source does not have, as deletions to send (those it deleted) and
   * unclaimed ones (the rest shaped like resource IDs; anything else names no resource).
   */
  #sortUnknown(
    consumer: string,
    unknown: Map<string, number>,
  ): { deletions: Array<[string, number]>; unclaimed: string[] } {
    const ids = [...unknown].filter(([uid]) => RESOURCE_ID_PATTERN.test(uid));
    if (ids.length < unknown.size) {
      const why = `${unknown.size - ids.length} IDs listed by ${consumer} are not resource IDs`;
      this.#conn.drop("resync-bad-id", why);
    }
    const deleted = (uid: string): boolean => this.#lister.deleted?.(consumer, uid) ?? false;
    return {
      deletions: ids.filter(([uid]) => deleted(uid)),
      unclaimed: ids.filter(([uid]) => !deleted(uid)).map(([uid]) => uid),
    };
  }

  /** Sends a work the agent lacks or holds at an older version; true if it was sent. */
  async #resend(work: ManifestWorkObject, agentVersion: number): Promise<boolean> {
    if (work.metadata.deletionTimestamp !== undefined) {
      await this.publishDeletion(work, Action.resyncResponse);
      return true;
    }
    if ((work.metadata.generation ?? 0) <= agentVersion) return false;
    const whole = await this.#lister.fetch(work);
    // Gone since, or a bundle the agent would refuse: not sent; the reconcile reports why on the work.
    if (!whole || bundleProblems(whole.spec?.workload?.manifests).length > 0) return false;
    await this.publishSpec(whole, Action.resyncResponse);
    return true;
  }

  /** Deletions for listed IDs this source deleted, bounded; returns how many were sent. */
  async #sendDeletions(consumer: string, gone: Array<[string, number]>): Promise<number> {
    if (gone.length > this.#maxDeletes) {
      const why = `${gone.length - this.#maxDeletes} deletions for ${consumer} wait for a later resync`;
      this.#conn.drop("resync-deletes-capped", why);
    }
    const sent = gone.slice(0, this.#maxDeletes);
    for (const [uid, version] of sent) await this.#conn.publish(encodeResyncDelete(consumer, uid, version));
    return sent.length;
  }
}
