/**
 * The source side (maestro-server) of the protocol over a Connection: publishes spec events,
 * answers agents' spec resync requests from a lister, asks agents for their statuses after every
 * (re)connect, and hands decoded status updates to the owner. A status that arrives on one
 * consumer's topic but names another consumer is dropped: the topic is what the broker's ACL
 * vouches for.
 */
import type { ManifestWork } from "../../api/work/v1.ts";
import { silentLogger, type Logger } from "../../runtime/logger.ts";
import {
  bundleProblems,
  decodeStatusEvent,
  encodeSpecEvent,
  type StatusUpdate,
} from "../codec/manifestbundle.ts";
import {
  decodeSpecResyncRequest,
  encodeResyncDelete,
  encodeStatusResyncRequests,
  type ResourceVersion,
} from "../codec/resync.ts";
import { Action, parseEventType, topics, type CloudEvent, type EventAction } from "../types.ts";
import type { Connection } from "./connection.ts";

/** What the source knows: its works per consumer and the last status hash it accepted for each. */
export interface SourceLister {
  consumers(): string[];
  worksOf(consumer: string): ManifestWork[];
  statusHash(resourceId: string): string | undefined;
}

export class SourceClient {
  readonly #conn: Connection;
  readonly #lister: SourceLister;
  readonly #log: Logger;
  #onStatus: (update: StatusUpdate) => void = () => undefined;

  constructor(conn: Connection, lister: SourceLister, log: Logger = silentLogger) {
    this.#conn = conn;
    this.#lister = lister;
    this.#log = log;
    conn.onEvent((event, topic) => this.#dispatch(event, topic));
  }

  onStatus(handler: (update: StatusUpdate) => void): void {
    this.#onStatus = handler;
  }

  /** Publishes the work's spec (or its deletion, when it has a deletionTimestamp). */
  publishSpec(work: ManifestWork, action: EventAction): Promise<void> {
    return this.#conn.publish(encodeSpecEvent(work, action));
  }

  /** Asks every consumer for the statuses whose hashes differ from what this source holds. */
  async resyncStatus(): Promise<void> {
    for (const consumer of this.#lister.consumers()) {
      const hashes = this.#lister.worksOf(consumer).flatMap((w) => {
        const uid = w.metadata.uid;
        return uid ? [{ resourceID: uid, statusHash: this.#lister.statusHash(uid) ?? "" }] : [];
      });
      for (const event of encodeStatusResyncRequests(consumer, hashes)) await this.#conn.publish(event);
    }
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
      void this.#respondSpecResync(request.consumer, request.versions).catch((err: unknown) =>
        this.#log.error("Failed to answer a spec resync request", err, { consumer: request.consumer }),
      );
      return;
    }
    if (type.subResource !== "status") return this.#conn.drop("unexpected-type", event.type, event);
    const update = decodeStatusEvent(event);
    if (update.consumer !== topicConsumer) {
      return this.#conn.drop("consumer-mismatch", `${update.consumer} on ${topic}`, event);
    }
    this.#onStatus(update);
  }

  /**
   * Sends what the agent lacks: every deleting work, every work newer than the agent's version,
   * and a deletion for each work the agent holds that this source no longer has.
   */
  async #respondSpecResync(consumer: string, agentVersions: ResourceVersion[]): Promise<void> {
    const known = new Map(agentVersions.map((v) => [v.resourceID, v.resourceVersion]));
    const works = this.#lister.worksOf(consumer);
    let sent = 0;
    for (const work of works) {
      const uid = work.metadata.uid ?? "";
      const agentVersion = known.get(uid) ?? 0;
      known.delete(uid);
      const deleting = work.metadata.deletionTimestamp !== undefined;
      if (!deleting && (work.metadata.generation ?? 0) <= agentVersion) continue;
      // A bundle the agent would refuse is not sent; the reconcile reports why on the work.
      if (!deleting && bundleProblems(work.spec?.workload?.manifests).length > 0) continue;
      await this.publishSpec(work, Action.resyncResponse);
      sent++;
    }
    for (const [uid, version] of known) {
      await this.#conn.publish(encodeResyncDelete(consumer, uid, version));
      sent++;
    }
    this.#log.info("Answered spec resync", { consumer, agentHolds: agentVersions.length, sent });
  }
}
