/**
 * What an SRE is told of the works agents hold that this region does not know and never deleted
 * (the source leaves them alone: docs/decisions/0012-never-delete-the-unknown.md): a gauge per
 * consumer, one log line per consumer each time the set changes, and the count and the first IDs
 * on the ManagementCluster's status.agent.unclaimedWorks (through the liveness record).
 */
import { MAX_UNCLAIMED_SHOWN } from "../api/v1alpha1/managementcluster.ts";
import type { Logger } from "../runtime/logger.ts";
import { gauge, metricsRegistry } from "../runtime/metrics.ts";
import type { AgentLiveness } from "./liveness.ts";

export const UNCLAIMED_METRIC = "hcp_maestro_unclaimed_resources";

export class UnclaimedWorksReport {
  readonly #log: Logger;
  readonly #agents: Pick<AgentLiveness, "unclaimed">;
  /** consumer → the sorted IDs last reported, joined, to tell a change. */
  readonly #last = new Map<string, string>();
  readonly #gauge = gauge(metricsRegistry, {
    name: UNCLAIMED_METRIC,
    help: "Works a consumer's agent holds that this region neither has nor deleted (left alone), as its last spec resync listed them",
    labelNames: ["consumer"] as const,
  });

  constructor(agents: Pick<AgentLiveness, "unclaimed">, log: Logger) {
    this.#agents = agents;
    this.#log = log;
  }

  report(consumer: string, resourceIds: readonly string[]): void {
    const sorted = [...resourceIds].sort();
    this.#gauge.labels(consumer).set(sorted.length);
    this.#agents.unclaimed(consumer, sorted);
    const key = sorted.join(",");
    if (this.#last.get(consumer) === key) return;
    const first = this.#last.get(consumer) === undefined;
    this.#last.set(consumer, key);
    if (first && sorted.length === 0) return;
    this.#log.info("Agent holds works this region does not know; leaving them", {
      consumer,
      unclaimed: sorted.length,
      resourceIDs: sorted.slice(0, MAX_UNCLAIMED_SHOWN),
    });
  }
}
