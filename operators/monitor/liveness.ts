/**
 * Agent liveness as maestro-server hears it, in memory only: when each consumer's agent was last
 * heard, the heartbeat interval it announced, and whether maestro-server itself is listening. The
 * management cluster controller turns this into the Connected condition (it writes; this never
 * does), so a heartbeat costs a map update and nothing in the apiserver.
 *
 * How the service side learns that an agent is alive, and why this way:
 * - A heartbeat from the agent (codec/heartbeat.ts) every 10 s, on the agent's own `agentevents`
 *   topic, the only one the broker's ACL lets it publish on. An agent is Connected while it was
 *   heard within MISSED_HEARTBEATS intervals (30 s by default). This is the one signal that covers
 *   every way an agent can stop: its process killed or wedged, its host partitioned, its
 *   connection up but refused by the broker. 20 management clusters cost 2 small messages a
 *   second at the broker.
 * - Every other message on a consumer's topic (status updates, resync requests and answers)
 *   counts as heard too: it proves the agent alive as much as a beat does. It cannot prove it
 *   dead, because an idle agent sends nothing: a real Maestro agent, which sends no heartbeat,
 *   is therefore Unknown, never False.
 * - Not MQTT 5 will messages: the broker sends a will only when it notices the session died,
 *   which for a silent peer takes 1.5 keep-alives (90 s with Maestro's 60 s, over the one-minute
 *   bound), never on a clean disconnect, and not at all if the broker itself restarts; and
 *   maestro-server hears none while it is disconnected itself. The birth message they pair with
 *   exists already: every agent sends a spec resync request after each subscribe.
 * - Not the status resync traffic alone: maestro-server asks only after its own reconnect, and an
 *   agent whose hashes match answers nothing.
 *
 * The bound, 3 × 10 s = 30 s, is Maestro's own rule for its server instances (dead after three
 * missed heartbeat intervals) over the OCM agent's 10 s report period; it rides out two lost
 * beats, and with the reconcile that follows the expiry and the status writes after it a stopped
 * agent shows within about 35 s, under the one minute. Times are this process's clock at
 * receipt, never the agent's: an agent's skewed clock cannot make it look alive or dead.
 */
import { DEFAULT_HEARTBEAT_MS } from "../cloudevents/codec/heartbeat.ts";
import { MISSED_HEARTBEATS } from "../hcp/staleness.ts";

export { MISSED_HEARTBEATS };

/** How long an agent that beats every `heartbeatMs` (default 10 s) may stay silent. */
export function silenceBoundMs(heartbeatMs: number | undefined): number {
  return MISSED_HEARTBEATS * (heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
}

export interface AgentHeard {
  /** When the agent was last heard, by this process's clock (ms since the epoch). */
  lastHeardMs: number;
  /** The interval its heartbeats announce; absent for an agent that has sent none. */
  heartbeatMs?: number;
}

export interface LivenessSnapshot {
  /** When maestro-server last subscribed; absent while it is not connected to the broker. */
  listeningSinceMs?: number;
  /**
   * Since when maestro-server has not been connected (since it started, before its first
   * subscribe); absent before it starts, when nobody can be blamed for a silence yet.
   */
  deafSinceMs?: number;
  /** Absent: nothing heard from this consumer's agent since maestro-server started. */
  agent?: AgentHeard;
}

/** What the management cluster controller reads of agent liveness. */
export interface AgentLivenessSource {
  snapshot(consumer: string): LivenessSnapshot;
  /**
   * Called when a consumer's agent is heard for the first time, again after a silence longer
   * than its bound, or with a new heartbeat interval; with undefined when listening starts or
   * stops (every consumer). Expiry is not announced: the reader looks again at the bound.
   */
  onChange(handler: (consumer: string | undefined) => void): void;
}

export class AgentLiveness implements AgentLivenessSource {
  readonly #now: () => number;
  readonly #agents = new Map<string, AgentHeard>();
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

  /** A message from the consumer's agent; `heartbeatMs` when it was a heartbeat announcing it. */
  heard(consumer: string, heartbeatMs?: number): void {
    const now = this.#now();
    const before = this.#agents.get(consumer);
    const interval = heartbeatMs ?? before?.heartbeatMs;
    this.#agents.set(consumer, {
      lastHeardMs: now,
      ...(interval === undefined ? {} : { heartbeatMs: interval }),
    });
    const news =
      !before ||
      before.heartbeatMs !== interval ||
      now - before.lastHeardMs >= silenceBoundMs(before.heartbeatMs);
    if (news) this.#emit(consumer);
  }

  snapshot(consumer: string): LivenessSnapshot {
    const agent = this.#agents.get(consumer);
    return {
      ...(this.#listeningSinceMs !== undefined
        ? { listeningSinceMs: this.#listeningSinceMs }
        : this.#deafSinceMs !== undefined
          ? { deafSinceMs: this.#deafSinceMs }
          : {}),
      ...(agent ? { agent: { ...agent } } : {}),
    };
  }

  onChange(handler: (consumer: string | undefined) => void): void {
    this.#handlers.push(handler);
  }

  #emit(consumer: string | undefined): void {
    for (const h of this.#handlers) h(consumer);
  }
}
