/**
 * The agent side of the protocol over a Connection: merges spec events for its own consumer into
 * the work store and reports which work changed; after every (re)connect asks the source for what
 * it lacks (spec resync), and again when a source asks for statuses after a while (it may have
 * restarted); answers status resync requests from the stored statuses; publishes
 * status events with a sequence ID and a status hash; beats (codec/heartbeat.ts) after every
 * (re)subscribe and then at a fixed interval. It never deduplicates on the event ID: the source
 * reuses IDs, and resourceversion is what orders specs.
 */
import type { ManifestWorkStatus } from "../../api/work/v1.ts";
import { sleep } from "../../runtime/backoff.ts";
import { silentLogger, type Logger } from "../../runtime/logger.ts";
import type { BrokerCertificateSummary } from "../../api/v1alpha1/managementcluster.ts";
import { isBrokerCertificateEvent } from "../codec/broker-certificate.ts";
import { encodeHeartbeat } from "../codec/heartbeat.ts";
import { decodeSpecEvent, encodeStatusEvent } from "../codec/manifestbundle.ts";
import { decodeStatusResyncRequest, encodeSpecResyncRequest, type ResourceVersion } from "../codec/resync.ts";
import { SnowflakeGenerator } from "../codec/snowflake.ts";
import { statusHash } from "../codec/statushash.ts";
import type { AgentWork, WorkStore } from "../store/works.ts";
import { Action, parseEventType, type CloudEvent, type EventAction } from "../types.ts";
import type { Connection } from "./connection.ts";
import { isPublishRefused } from "./errors.ts";

/** The part of a Connection the agent client uses. */
export type AgentConnection = Pick<Connection, "onEvent" | "onSubscribed" | "publish" | "drop">;

export interface AgentClientOptions {
  consumer: string;
  /** The CloudEvents `source` of this agent, e.g. "<consumer>-work-agent". */
  agentId: string;
  store: WorkStore;
  /** Works known only from the cluster (applied before a restart); listed at version 0 in a resync. */
  recordedWorks?: () => Promise<string[]>;
  /**
   * How long requestSpecResync waits, so that the retirements of many works make one request.
   * Default 1 s.
   */
  resyncDelayMs?: number;
  /** How often to beat (runHeartbeats); 0 or unset: never, as a real Maestro agent. */
  heartbeatMs?: number;
  /** The client certificate in use, which each heartbeat reports. */
  brokerCertificate?: () => BrokerCertificateSummary | undefined;
  log?: Logger;
}

/**
 * A status resync request is also answered with a spec resync unless one went out this recently:
 * a source asks for statuses after it (re)connects, and its view of what this agent holds may be
 * older than its connection (a restart, a region restored without its works). Within the window,
 * the request that follows the source's own answer to a spec resync does not start another.
 */
export const SPEC_RESYNC_WINDOW_MS = 60_000;

export class AgentClient {
  readonly #conn: AgentConnection;
  readonly #opts: AgentClientOptions;
  readonly #log: Logger;
  readonly #sequence = new SnowflakeGenerator(1);
  #onChange: (uid: string) => void = () => undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  #lastSpecResyncMs = -Infinity;

  constructor(conn: AgentConnection, opts: AgentClientOptions) {
    this.#conn = conn;
    this.#opts = opts;
    this.#log = opts.log ?? silentLogger;
    conn.onEvent((event) => this.#dispatch(event));
    conn.onSubscribed(() => {
      void this.#beat();
      void this.#resyncSpecs();
    });
  }

  /**
   * Beats every heartbeatMs until the signal aborts (besides the beat after each subscribe);
   * returns at once when heartbeats are off. Never throws: a beat that finds no connection is
   * simply not sent, and the next subscribe beats again.
   */
  async runHeartbeats(signal: AbortSignal): Promise<void> {
    const intervalMs = this.#opts.heartbeatMs ?? 0;
    if (intervalMs <= 0) return;
    while (!signal.aborted) {
      await sleep(intervalMs, signal);
      if (!signal.aborted) await this.#beat();
    }
  }

  async #beat(): Promise<void> {
    const intervalMs = this.#opts.heartbeatMs ?? 0;
    if (intervalMs <= 0) return;
    try {
      const brokerCertificate = this.#opts.brokerCertificate?.();
      await this.#conn.publish(
        encodeHeartbeat(this.#opts.agentId, {
          consumer: this.#opts.consumer,
          intervalMs,
          ...(brokerCertificate ? { brokerCertificate } : {}),
        }),
      );
    } catch (err) {
      if (!isPublishRefused(err, "not-connected")) this.#log.error("Failed to send a heartbeat", err);
    }
  }

  /**
   * Tells the source again, shortly, what this agent holds (a spec resync request): after it
   * retired works the source does not know, so that the source stops counting them as held.
   * Calls within the delay make one request.
   */
  requestSpecResync(): void {
    if (this.#resyncTimer) return;
    this.#resyncTimer = setTimeout(() => {
      this.#resyncTimer = undefined;
      void this.#resyncSpecs();
    }, this.#opts.resyncDelayMs ?? 1000).unref();
  }

  /** Called with the resource ID of each work a spec event added, changed or marked for deletion. */
  onChange(handler: (uid: string) => void): void {
    this.#onChange = handler;
  }

  /** Publishes the work's status; returns the hash it was sent with. */
  async publishStatus(
    work: AgentWork,
    status: ManifestWorkStatus,
    action: EventAction = Action.update,
  ): Promise<string> {
    const hash = statusHash(status);
    const event = encodeStatusEvent(work, status, {
      agentId: this.#opts.agentId,
      sequenceId: this.#sequence.next(),
      statusHash: hash,
      action,
    });
    await this.#conn.publish(event);
    return hash;
  }

  async #resyncSpecs(): Promise<void> {
    try {
      const versions: ResourceVersion[] = this.#opts.store.versions();
      const held = new Set(versions.map((v) => v.resourceID));
      for (const uid of (await this.#opts.recordedWorks?.()) ?? []) {
        if (!held.has(uid)) versions.push({ resourceID: uid, resourceVersion: 0 });
      }
      await this.#conn.publish(encodeSpecResyncRequest(this.#opts.agentId, this.#opts.consumer, versions));
      this.#lastSpecResyncMs = Date.now();
      this.#log.info("Requested spec resync", { holds: versions.length });
    } catch (err) {
      this.#log.error("Failed to request a spec resync", err);
    }
  }

  #dispatch(event: CloudEvent): void {
    // Answers to certificate requests are the certificate renewal's (maestro-agent/certificate-renewal.ts).
    if (isBrokerCertificateEvent(event)) return;
    try {
      const type = parseEventType(event.type);
      if (type.subResource === "status" && type.action === Action.resyncRequest) {
        void this.#answerStatusResync(event);
        return;
      }
      const received = decodeSpecEvent(event, this.#opts.consumer);
      const result = this.#opts.store.upsert(received);
      if (result === "stale")
        return this.#conn.drop("stale-version", `resourceversion ${received.generation}`, event);
      if (result === "removed")
        return this.#conn.drop("removed-work", `work ${received.uid} was deleted and removed`, event);
      this.#onChange(received.uid);
    } catch (err) {
      this.#conn.drop("invalid", err, event);
    }
  }

  /**
   * Whether a status resync request is followed by a spec resync: when it lists a work this agent
   * lacks, when it lists none (the source holds none of this agent's works, as a restored region),
   * and when none went out within SPEC_RESYNC_WINDOW_MS.
   */
  #specsWanted(listed: number, missing: number): boolean {
    return missing > 0 || listed === 0 || Date.now() - this.#lastSpecResyncMs >= SPEC_RESYNC_WINDOW_MS;
  }

  /**
   * Publishes each listed work whose status hash differs; an empty list asks for all. Bounded by
   * the store: a work listed twice is sent once. A listed work the agent does not hold was meant
   * for it and missed (its spec resync went out while no server listened: sessions are clean, so
   * the broker kept nothing), so it asks for its specs again; the server sends only what it lacks.
   */
  async #answerStatusResync(event: CloudEvent): Promise<void> {
    try {
      const { consumer, hashes } = decodeStatusResyncRequest(event);
      if (consumer !== this.#opts.consumer) return this.#conn.drop("consumer-mismatch", consumer, event);
      const store = this.#opts.store;
      const listed = new Map(hashes.map((h) => [h.resourceID, h.statusHash]));
      const wanted =
        hashes.length === 0
          ? store.list()
          : [...listed].flatMap(([uid, hash]) => {
              const w = store.get(uid);
              return w && w.statusHash !== hash ? [w] : [];
            });
      const missing = [...listed.keys()].filter((uid) => !store.get(uid)).length;
      let sent = 0;
      for (const { uid } of wanted) {
        // Each as the store holds it now, not as it was when the request came: a work removed
        // meanwhile has had its Deleted sent, and its earlier status, sent after, would replace it.
        const work = store.get(uid);
        if (!work?.status) continue; // removed, or not reconciled yet: the controller publishes it
        await this.publishStatus(work, work.status, Action.resyncResponse);
        sent++;
      }
      this.#log.info("Answered status resync", { asked: hashes.length, sent, missing });
      if (this.#specsWanted(hashes.length, missing)) await this.#resyncSpecs();
    } catch (err) {
      this.#conn.drop("invalid", err, event);
    }
  }
}
