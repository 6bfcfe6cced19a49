/**
 * The resource IDs this region deleted without its agent's confirmation: maestro-server gave up
 * waiting (staleDeleteMs) and released the work, and the agent, away meanwhile, may still hold it.
 * When that agent comes back and lists the ID, the source answers with its deletion; an ID it
 * neither has nor finds here is never deleted (docs/decisions/0012-never-delete-the-unknown.md).
 *
 * Kept in the service cluster, one ConfigMap per consumer in the consumer's namespace
 * (DELETED_WORKS_CONFIGMAP: resource ID → when it was given up on), so that it outlives an
 * operators restart; written only by maestro-server, before the work's finalizer is released.
 * Not held by a region backup (operators/regionbackup selects nothing of it): lost with the
 * service cluster, which is right, since a restored region knows nothing of what it deleted.
 * Bounded per consumer by age and count, the oldest going first; an ID goes as soon as the agent
 * confirms its deletion.
 */
import { ConfigMapResource } from "../api/core.ts";
import type { KubeObject } from "../api/meta/v1.ts";
import type { KubeClient } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";

export const DELETED_WORKS_CONFIGMAP = "hcp-maestro-deleted-works";
/** The ConfigMap's one key: a JSON object of resource ID → RFC 3339 time. */
const DATA_KEY = "deleted.json";
const FIELD_MANAGER = "maestro-server";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export type DeletedWorksClient = Pick<KubeClient, "listAll" | "apply">;

export interface DeletedWorksOptions {
  client: DeletedWorksClient;
  /** How long an ID is kept. Default 30 days. */
  maxAgeMs?: number;
  /** At most this many IDs per consumer, the oldest dropped first. Default 10,000 (~0.6 MB). */
  maxPerConsumer?: number;
  now?: () => number;
  log?: Logger;
}

/** One consumer's IDs (in the order given up on) and its writes, one at a time. */
interface ConsumerRecord {
  deleted: Map<string, number>;
  /** The write in flight, and whether another must follow it. */
  writing?: Promise<void>;
  next?: Promise<void>;
}

export class DeletedWorks {
  readonly #client: DeletedWorksClient;
  readonly #maxAgeMs: number;
  readonly #max: number;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #consumers = new Map<string, ConsumerRecord>();

  constructor(opts: DeletedWorksOptions) {
    this.#client = opts.client;
    this.#maxAgeMs = opts.maxAgeMs ?? 30 * 24 * 3_600_000;
    this.#max = opts.maxPerConsumer ?? 10_000;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log ?? silentLogger;
  }

  /** Reads every consumer's record; before the first spec resync is answered. */
  async load(signal?: AbortSignal): Promise<void> {
    const list = await this.#client.listAll<ConfigMap>(ConfigMapResource, {
      fieldSelector: `metadata.name=${DELETED_WORKS_CONFIGMAP}`,
      ...(signal ? { signal } : {}),
    });
    for (const cm of list.items) {
      const consumer = cm.metadata.namespace ?? "";
      const deleted = this.#parse(consumer, cm.data?.[DATA_KEY]);
      this.#consumers.set(consumer, { deleted });
      this.#prune(deleted);
    }
  }

  /** Whether this region deleted the consumer's work of that resource ID unconfirmed. */
  has(consumer: string, resourceId: string): boolean {
    const deleted = this.#consumers.get(consumer)?.deleted;
    if (!deleted) return false;
    this.#prune(deleted);
    return deleted.has(resourceId);
  }

  count(consumer: string): number {
    return this.#consumers.get(consumer)?.deleted.size ?? 0;
  }

  /** Remembers an unconfirmed deletion; resolves once it is written to the service cluster. */
  record(consumer: string, resourceId: string): Promise<void> {
    const record = this.#of(consumer);
    record.deleted.delete(resourceId);
    record.deleted.set(resourceId, this.#now());
    this.#prune(record.deleted);
    return this.#write(consumer, record);
  }

  /** The agent confirmed the deletion: the ID is no longer needed. */
  forget(consumer: string, resourceId: string): Promise<void> {
    const record = this.#consumers.get(consumer);
    if (!record?.deleted.delete(resourceId)) return Promise.resolve();
    return this.#write(consumer, record);
  }

  #of(consumer: string): ConsumerRecord {
    let record = this.#consumers.get(consumer);
    if (!record) {
      record = { deleted: new Map() };
      this.#consumers.set(consumer, record);
    }
    return record;
  }

  #prune(deleted: Map<string, number>): void {
    const oldest = this.#now() - this.#maxAgeMs;
    for (const [id, at] of deleted) {
      if (at >= oldest && deleted.size <= this.#max) break;
      deleted.delete(id);
    }
  }

  /**
   * One write per consumer at a time; whoever records while one is in flight shares the next,
   * which writes the record as it then stands (1,000 deletions given up on together are a few
   * writes, not 1,000).
   */
  #write(consumer: string, record: ConsumerRecord): Promise<void> {
    if (record.next) return record.next;
    if (!record.writing) return this.#startWrite(consumer, record);
    const next = record.writing
      .catch(() => undefined)
      .then(() => {
        record.next = undefined;
        return this.#startWrite(consumer, record);
      });
    record.next = next;
    return next;
  }

  #startWrite(consumer: string, record: ConsumerRecord): Promise<void> {
    const entries = [...record.deleted].map(([id, at]) => [id, new Date(at).toISOString()]);
    const writing = this.#client
      .apply(
        ConfigMapResource,
        {
          metadata: { name: DELETED_WORKS_CONFIGMAP, namespace: consumer },
          data: { [DATA_KEY]: JSON.stringify(Object.fromEntries(entries)) },
        },
        { fieldManager: FIELD_MANAGER, force: true },
      )
      .then(() => undefined)
      .finally(() => {
        if (record.writing === writing) record.writing = undefined;
      });
    record.writing = writing;
    return writing;
  }

  /** A record someone broke is read as far as it makes sense; the rest is said in the log. */
  #parse(consumer: string, text: string | undefined): Map<string, number> {
    const deleted = new Map<string, number>();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text ?? "{}");
    } catch (err) {
      this.#log.error("Ignoring an unreadable record of deleted works", err, { consumer });
      return deleted;
    }
    if (typeof parsed !== "object" || parsed === null) return deleted;
    const entries = Object.entries(parsed as Record<string, unknown>)
      .map(([id, at]) => [id, typeof at === "string" ? Date.parse(at) : NaN] as const)
      .filter(([, at]) => Number.isFinite(at))
      .sort((a, b) => a[1] - b[1]);
    for (const [id, at] of entries) deleted.set(id, at);
    return deleted;
  }
}
