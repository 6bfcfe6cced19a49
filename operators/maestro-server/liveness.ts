/**
 * Agent liveness as maestro-server hears it, in memory only: when each consumer's agent was last
 * heard, the heartbeat interval it announced, and whether maestro-server itself is listening. The
 * management cluster controller turns this into the Connected condition (it writes; this never
 * does), so a heartbeat costs a map update and nothing in the apiserver. Any message from an
 * agent counts as heard; only a heartbeat announces an interval. Times are this process's clock
 * at receipt, never the agent's. Why a heartbeat, and why three intervals:
 * docs/decisions/0006-agent-liveness-by-heartbeat.md.
 */
import {
  MAX_UNCLAIMED_SHOWN,
  type AgentHeard,
  type AgentLivenessSource,
  type BrokerCertificateSummary,
  type LivenessSnapshot,
  type UnclaimedWorks,
} from "../api/v1alpha1/managementcluster.ts";
import { silenceBoundMs } from "../cloudevents/codec/heartbeat.ts";

/** Whether what was just heard changes what a reader concludes: an interval, a certificate, a silence ended. */
function isNews(
  before: AgentHeard,
  now: number,
  interval: number | undefined,
  certificate: BrokerCertificateSummary | undefined,
): boolean {
  return (
    before.heartbeatMs !== interval ||
    before.brokerCertificate?.serialNumber !== certificate?.serialNumber ||
    now - before.lastHeardMs >= silenceBoundMs(before.heartbeatMs)
  );
}

export class AgentLiveness implements AgentLivenessSource {
  readonly #now: () => number;
  readonly #agents = new Map<string, AgentHeard>();
  /** What each agent's last spec resync listed that the region does not know. */
  readonly #unclaimed = new Map<string, UnclaimedWorks>();
  readonly #handlers: Array<(consumer: string | undefined) => void> = [];
  #listeningSinceMs: number | undefined;
  #deafSinceMs: number | undefined;

  constructor(opts: { now?: () => number } = {}) {
    this.#now = opts.now ?? Date.now;
  }

  /**
   * maestro-server starts, or takes over from another replica: what an earlier run heard is
   * forgotten, and the silence of an agent is counted from now on.
   */
  start(): void {
    this.#agents.clear();
    this.#unclaimed.clear();
    this.#listeningSinceMs = undefined;
    this.#deafSinceMs = this.#now();
    this.#emit(undefined);
  }

  /** maestro-server subscribed (true) or lost its connection (false). */
  listening(up: boolean): void {
    const now = this.#now();
    if (up) {
      this.#listeningSinceMs = now;
    } else {
      if (this.#listeningSinceMs === undefined) return;
      this.#listeningSinceMs = undefined;
      this.#deafSinceMs = now;
    }
    this.#emit(undefined);
  }

  /**
   * A message from the consumer's agent; `heartbeatMs` when it was a heartbeat announcing it, and
   * the broker certificate that heartbeat reported. A certificate other than the one held is news.
   */
  heard(consumer: string, heartbeatMs?: number, brokerCertificate?: BrokerCertificateSummary): void {
    const now = this.#now();
    const before = this.#agents.get(consumer);
    const interval = heartbeatMs ?? before?.heartbeatMs;
    const certificate = brokerCertificate ?? before?.brokerCertificate;
    this.#agents.set(consumer, {
      lastHeardMs: now,
      ...(interval === undefined ? {} : { heartbeatMs: interval }),
      ...(certificate === undefined ? {} : { brokerCertificate: certificate }),
    });
    if (!before || isNews(before, now, interval, certificate)) this.#emit(consumer);
  }

  /**
   * The resource IDs the consumer's agent holds and the region neither has nor deleted, as its
   * last spec resync listed them; a change is news.
   */
  unclaimed(consumer: string, resourceIds: readonly string[]): void {
    const shown = [...resourceIds].sort().slice(0, MAX_UNCLAIMED_SHOWN);
    const before = this.#unclaimed.get(consumer);
    const same = before?.count === resourceIds.length && before.resourceIDs.every((id, i) => id === shown[i]);
    this.#unclaimed.set(consumer, { count: resourceIds.length, resourceIDs: shown });
    if (!same) this.#emit(consumer);
  }

  snapshot(consumer: string): LivenessSnapshot {
    const agent = this.#agents.get(consumer);
    const unclaimed = this.#unclaimed.get(consumer);
    return {
      ...(this.#listeningSinceMs !== undefined
        ? { listeningSinceMs: this.#listeningSinceMs }
        : this.#deafSinceMs !== undefined
          ? { deafSinceMs: this.#deafSinceMs }
          : {}),
      ...(agent ? { agent: { ...agent } } : {}),
      ...(unclaimed ? { unclaimedWorks: { ...unclaimed, resourceIDs: [...unclaimed.resourceIDs] } } : {}),
    };
  }

  onChange(handler: (consumer: string | undefined) => void): void {
    this.#handlers.push(handler);
  }

  #emit(consumer: string | undefined): void {
    for (const h of this.#handlers) h(consumer);
  }
}
