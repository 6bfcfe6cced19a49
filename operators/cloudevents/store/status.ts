/**
 * The server's record of the newest status each agent reported, by resource ID: what the
 * ManifestWork reconcile writes to /status, the sequence ID that orders status events, and the
 * hash that status resync requests send back. In memory: after a restart the status resync asks
 * every agent again, and the first status per work is accepted.
 */
import type { StatusUpdate } from "../codec/manifestbundle.ts";
import { isNewerSequence } from "../snowflake.ts";

export type StatusVerdict = "accepted" | "stale-sequence";

export class StatusStore {
  readonly #byId = new Map<string, StatusUpdate>();

  get(resourceId: string): StatusUpdate | undefined {
    return this.#byId.get(resourceId);
  }

  /** Keeps the update unless an equal or newer sequence ID was already accepted. */
  offer(update: StatusUpdate): StatusVerdict {
    const current = this.#byId.get(update.resourceId);
    // Deleted is final whatever its order: the agent has nothing left to report.
    if (!update.deleted && update.sequenceId && current?.sequenceId) {
      if (!isNewerSequence(update.sequenceId, current.sequenceId)) return "stale-sequence";
    }
    this.#byId.set(update.resourceId, update);
    return "accepted";
  }

  statusHash(resourceId: string): string | undefined {
    return this.#byId.get(resourceId)?.statusHash;
  }

  delete(resourceId: string): void {
    this.#byId.delete(resourceId);
  }

  get size(): number {
    return this.#byId.size;
  }
}
