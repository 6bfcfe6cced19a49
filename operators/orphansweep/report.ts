/**
 * How the sweep reports: the ConfigMap `hcp-azure-orphans` in the operators' namespace lists the
 * orphans of the last sweep (written only when the list changes) and carries the events, one per
 * orphan found, mark cleared, deletion and failed deletion (`kubectl describe configmap`); metrics
 * count them for alerts.
 *
 *   hcp_azure_orphans{kind,state}                       orphans now: marked (in the grace period)
 *                                                       or deleting (past it, not gone yet)
 *   hcp_azure_orphans_deleted_total{kind}               orphans this process deleted
 *   hcp_azure_orphan_sweep_last_completed_seconds       when a sweep last decided (Unix time)
 */
import type { Registry } from "prom-client";
import { ConfigMapResource } from "../api/core.ts";
import type { EventRecorder, EventSeverity } from "../runtime/events.ts";
import type { KubeClient, KubeObject } from "../runtime/kube.ts";
import { counter, gauge } from "../runtime/metrics.ts";
import type { OrphanKind, OwnedResource } from "./inventory.ts";

export const REPORT_NAME = "hcp-azure-orphans";
export const FIELD_MANAGER = "hcp-orphan-sweep";

export type OrphanState = "marked" | "deleting";

export interface ReportEntry {
  resource: OwnedResource;
  state: OrphanState;
  since: Date;
  deleteAfter: Date;
  /** Why the last deletion did not finish. */
  problem?: string;
}

export interface SweepMetrics {
  setOrphans(entries: readonly ReportEntry[]): void;
  deleted(kind: OrphanKind): void;
  completed(at: Date): void;
}

const KINDS: readonly OrphanKind[] = ["ResourceGroup", "DnsZone", "LoadBalancer", "PublicIp", "DnsRecordSet"];
const STATES: readonly OrphanState[] = ["marked", "deleting"];

export function sweepMetrics(registry: Registry): SweepMetrics {
  const orphans = gauge(registry, {
    name: "hcp_azure_orphans",
    help: "Azure resources whose HcpCluster is gone: marked (within the grace period) or deleting",
    labelNames: ["kind", "state"] as const,
  });
  const deletions = counter(registry, {
    name: "hcp_azure_orphans_deleted_total",
    help: "Orphaned Azure resources the sweep deleted",
    labelNames: ["kind"] as const,
  });
  const last = gauge(registry, {
    name: "hcp_azure_orphan_sweep_last_completed_seconds",
    help: "Unix time of the last orphan sweep that decided (its cache synced)",
  });
  return {
    setOrphans: (entries) => {
      for (const kind of KINDS)
        for (const state of STATES)
          orphans.set(
            { kind, state },
            entries.filter((e) => e.resource.kind === kind && e.state === state).length,
          );
    },
    deleted: (kind) => deletions.inc({ kind }),
    completed: (at) => last.set(at.getTime() / 1000),
  };
}

/** One line per orphan, sorted, for people: what, whose, since when, until when, what went wrong. */
export function reportText(entries: readonly ReportEntry[]): string {
  const lines = entries.map(({ resource: r, state, since, deleteAfter, problem }) =>
    [
      `${r.kind} ${r.id}`,
      `cluster=${r.owner.cluster || "?"} uid=${r.owner.id}`,
      `state=${state} since=${since.toISOString()} deleteAfter=${deleteAfter.toISOString()}`,
      ...(problem ? [`problem=${JSON.stringify(problem)}`] : []),
    ].join(" "),
  );
  return lines.sort().join("\n");
}

/** The report ConfigMap and the events on it. */
export class SweepReport {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #events: EventRecorder;
  #object: KubeObject | undefined;
  #written: string | undefined;

  constructor(client: KubeClient, namespace: string, events: EventRecorder) {
    this.#client = client;
    this.#namespace = namespace;
    this.#events = events;
  }

  /** Writes the list when it differs from what this process last wrote (or on the first sweep). */
  async write(entries: readonly ReportEntry[], signal?: AbortSignal): Promise<void> {
    const text = reportText(entries);
    if (this.#object && text === this.#written) return;
    const summary = `${entries.length} orphaned Azure resources: ${STATES.map(
      (s) => `${entries.filter((e) => e.state === s).length} ${s}`,
    ).join(", ")}`;
    this.#object = await this.#client.apply<KubeObject>(
      ConfigMapResource,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: REPORT_NAME, namespace: this.#namespace },
        data: { summary, orphans: text },
      },
      { fieldManager: FIELD_MANAGER, signal },
    );
    this.#written = text;
  }

  /** Reads the report once per process (made empty when missing), so that it can carry events. */
  async ensure(signal?: AbortSignal): Promise<void> {
    if (this.#object) return;
    const found = await this.#client.find<KubeObject & { data?: Record<string, string> }>(
      ConfigMapResource,
      REPORT_NAME,
      this.#namespace,
      { signal },
    );
    if (!found) return this.write([], signal);
    this.#object = found;
    this.#written = found.data?.["orphans"];
  }

  /** An event on the report; ensure() has run. */
  async event(type: EventSeverity, reason: string, message: string, signal?: AbortSignal): Promise<void> {
    if (this.#object) await this.#events.record(this.#object, { type, reason, message, signal });
  }
}
