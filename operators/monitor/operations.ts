/**
 * What the region's stored objects say about long-running work, read at scrape time: which
 * create, upgrade or delete an HcpCluster or NodePool is in (and since when), whether its Ready is
 * a stale report, and since when an object's latest generation has waited for its controller. The
 * alerts in config/monitoring compare these ages with ARO HCP's own timeouts.
 */
import type { Condition } from "../api/meta/v1.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { STATUS_STALE } from "../api/v1alpha1/managementcluster.ts";

export type Operation = "create" | "upgrade" | "delete";
export const OPERATIONS: readonly Operation[] = ["create", "upgrade", "delete"];

/** The part of an HcpCluster or a NodePool read here. */
export interface Tracked extends KubeObject {
  status?: { version?: string; conditions?: Condition[]; observedGeneration?: number };
}

export interface InFlight {
  operation: Operation;
  /** When it began, milliseconds since the epoch. */
  sinceMs: number;
}

function time(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

const conditionOf = (o: Tracked, type: string): Condition | undefined =>
  o.status?.conditions?.find((c) => c.type === type);

/**
 * The operation the object is in, if any:
 * - delete, from its deletionTimestamp;
 * - none while it waits for the user (Progressing False, UserActionRequired: its ARM operation
 *   has failed and the user must act; Degraded says so);
 * - upgrade, while Progressing is True for Upgrading, from when Progressing turned True;
 * - create, until it first reports a version (HyperShift completed an install), from creation.
 */
export function operationOf(o: Tracked): InFlight | undefined {
  const deleting = time(o.metadata.deletionTimestamp);
  if (deleting !== undefined) return { operation: "delete", sinceMs: deleting };
  const progressing = conditionOf(o, "Progressing");
  if (progressing?.status === "False" && progressing.reason === "UserActionRequired") return undefined;
  if (progressing?.status === "True" && progressing.reason === "Upgrading") {
    const since = time(progressing.lastTransitionTime);
    return since === undefined ? undefined : { operation: "upgrade", sinceMs: since };
  }
  if (o.status?.version) return undefined;
  const created = time(o.metadata.creationTimestamp);
  return created === undefined ? undefined : { operation: "create", sinceMs: created };
}

/** Ready is a stale report (hcp/staleness.ts). */
export function isStale(o: Tracked): boolean {
  return conditionOf(o, "Ready")?.reason === STATUS_STALE;
}

export interface OperationStats {
  count: number;
  /** Age of the oldest, in seconds; 0 when there is none. */
  oldestSeconds: number;
}

/** Count and oldest age of each operation over the objects. */
export function operationStats(objects: Iterable<Tracked>, now: number): Record<Operation, OperationStats> {
  const stats: Record<Operation, OperationStats> = {
    create: { count: 0, oldestSeconds: 0 },
    upgrade: { count: 0, oldestSeconds: 0 },
    delete: { count: 0, oldestSeconds: 0 },
  };
  for (const o of objects) {
    const op = operationOf(o);
    if (!op) continue;
    const s = stats[op.operation];
    s.count++;
    s.oldestSeconds = Math.max(s.oldestSeconds, Math.max(0, (now - op.sinceMs) / 1000));
  }
  return stats;
}

/**
 * Since when each object's latest generation has waited at one hop of its path, kept from
 * informer events (a map entry per object that waits, nothing for the others). `observed` says
 * which generation the hop last acted on. The first hop (no `handed`) owes the object's own
 * generation: a first generation waits since the object was created, a later one since this
 * process first saw it, which after a restart is a lower bound. A later hop owes what the hop
 * before it passed on (`handed`: for the agent, the generation maestro-server published) and
 * waits since this process saw it handed over.
 */
export class UnreconciledAges<T extends KubeObject> {
  readonly #observed: (o: T) => number | undefined;
  readonly #handed: ((o: T) => number | undefined) | undefined;
  readonly #now: () => number;
  readonly #waiting = new Map<string, { generation: number; sinceMs: number }>();

  constructor(
    observed: (o: T) => number | undefined,
    now: () => number = Date.now,
    handed?: (o: T) => number | undefined,
  ) {
    this.#observed = observed;
    this.#now = now;
    this.#handed = handed;
  }

  /** An object added or changed. */
  observe(o: T): void {
    const uid = o.metadata.uid;
    if (!uid) return;
    const generation = this.#handed ? this.#handed(o) : o.metadata.generation;
    const observed = this.#observed(o);
    if (generation === undefined || (observed !== undefined && observed >= generation)) {
      this.#waiting.delete(uid);
      return;
    }
    if (this.#waiting.get(uid)?.generation === generation) return;
    const created = !this.#handed && generation === 1 ? time(o.metadata.creationTimestamp) : undefined;
    this.#waiting.set(uid, { generation, sinceMs: created ?? this.#now() });
  }

  forget(o: T): void {
    if (o.metadata.uid) this.#waiting.delete(o.metadata.uid);
  }

  /** Seconds the oldest waiting generation has waited; 0 when none waits. */
  oldestSeconds(): number {
    const now = this.#now();
    let oldest = 0;
    for (const w of this.#waiting.values()) oldest = Math.max(oldest, (now - w.sinceMs) / 1000);
    return oldest;
  }

  get size(): number {
    return this.#waiting.size;
  }
}
