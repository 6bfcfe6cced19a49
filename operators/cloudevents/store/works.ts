/**
 * The agent's works, by resource ID, in memory as the OCM agent keeps them (there is no
 * ManifestWork API on a management cluster). Spec events are merged in by the protocol's rules:
 * an older resourceversion is dropped, an equal one is taken again (duplicates are harmless), a
 * deletion marks the work and keeps it until the controller confirms. After a restart the store
 * starts empty and is refilled by the spec resync.
 */
import type { ManifestWorkStatus } from "../../api/work/v1.ts";
import type { ReceivedWork } from "../codec/manifestbundle.ts";
import type { ResourceVersion } from "../codec/resync.ts";

export interface AgentWork extends ReceivedWork {
  /** The status last computed for this work, and its hash. */
  status?: ManifestWorkStatus;
  statusHash?: string;
  /** The generation whose manifests were last applied in full, and when. */
  appliedGeneration?: number;
  appliedAtMs?: number;
}

export type UpsertResult = "added" | "updated" | "deleting" | "stale";

export class WorkStore {
  readonly #works = new Map<string, AgentWork>();

  get(uid: string): AgentWork | undefined {
    return this.#works.get(uid);
  }

  list(): AgentWork[] {
    return [...this.#works.values()];
  }

  upsert(received: ReceivedWork): UpsertResult {
    const current = this.#works.get(received.uid);
    if (!current) {
      this.#works.set(received.uid, { ...received });
      return received.deletionTimestamp ? "deleting" : "added";
    }
    if (received.deletionTimestamp) {
      if (!current.deletionTimestamp) current.deletionTimestamp = received.deletionTimestamp;
      current.generation = Math.max(current.generation, received.generation);
      return "deleting";
    }
    // A deletion is final; an older version is late.
    if (current.deletionTimestamp) return "stale";
    if (received.generation !== 0 && received.generation < current.generation) return "stale";
    const { status, statusHash, appliedGeneration, appliedAtMs } = current;
    this.#works.set(received.uid, { ...received, status, statusHash, appliedGeneration, appliedAtMs });
    return "updated";
  }

  /** Merges fields the controller computed into the stored work, if it is still there. */
  update(
    uid: string,
    fields: Partial<Pick<AgentWork, "status" | "statusHash" | "appliedGeneration" | "appliedAtMs">>,
  ): void {
    const work = this.#works.get(uid);
    if (work) Object.assign(work, fields);
  }

  remove(uid: string): void {
    this.#works.delete(uid);
  }

  /** What the agent holds, for a spec resync request. */
  versions(): ResourceVersion[] {
    return this.list().map((w) => ({ resourceID: w.uid, resourceVersion: w.generation }));
  }
}
