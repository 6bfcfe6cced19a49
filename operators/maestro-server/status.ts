/**
 * The ManifestWork status maestro-server writes: the agent's conditions and resource status as the
 * agent last reported them, plus one condition of its own, `Published`, that says whether the
 * current generation reached the broker or why it cannot.
 */
import type { ManifestWorkObject, ManifestWorkStatus, WorkCondition } from "../api/work/v1.ts";
import { statusHash } from "../cloudevents/codec/statushash.ts";
import type { StatusRefusal } from "../cloudevents/store/status.ts";
import { setCondition, type ConditionInput } from "../runtime/conditions.ts";

export const PUBLISHED = "Published";

/** Written (False) only while the agent's last report cannot be written to the work; it says why. */
export const AGENT_STATUS_ACCEPTED = "AgentStatusAccepted";

export const PublishedReason = {
  published: "Published",
  deletePublished: "DeletePublished",
  bundleTooLarge: "BundleTooLarge",
  invalidManifests: "InvalidManifests",
  brokerNotConnected: "BrokerNotConnected",
} as const;

/** What the publish phase found out; the Published condition is computed from it alone. */
export type PublishFacts =
  | { outcome: "published"; generation: number; consumer: string }
  | { outcome: "delete-published"; consumer: string }
  | { outcome: "invalid"; problems: string[]; tooLarge: boolean }
  | { outcome: "not-connected" };

export function publishedCondition(facts: PublishFacts): ConditionInput {
  switch (facts.outcome) {
    case "published":
      return {
        type: PUBLISHED,
        status: "True",
        reason: PublishedReason.published,
        message: `Generation ${facts.generation} was published to consumer ${facts.consumer}`,
      };
    case "delete-published":
      return {
        type: PUBLISHED,
        status: "True",
        reason: PublishedReason.deletePublished,
        message: `The deletion was published to consumer ${facts.consumer}; waiting for the agent to confirm`,
      };
    case "invalid":
      return {
        type: PUBLISHED,
        status: "False",
        reason: facts.tooLarge ? PublishedReason.bundleTooLarge : PublishedReason.invalidManifests,
        message: `Not published: ${facts.problems.join("; ")}`,
      };
    case "not-connected":
      return {
        type: PUBLISHED,
        status: "Unknown",
        reason: PublishedReason.brokerNotConnected,
        message: "maestro-server is not connected to the broker; the work is published once it is",
      };
  }
}

/**
 * The status to write: the agent's report (or, before one arrives or when it is refused, what the
 * work already shows) with the Published condition set on top, and AgentStatusAccepted=False
 * when the report is refused.
 */
export function composeStatus(
  work: ManifestWorkObject,
  agentStatus: ManifestWorkStatus | undefined,
  facts: PublishFacts | undefined,
  refusal?: StatusRefusal,
): ManifestWorkStatus {
  const base = (refusal ? undefined : agentStatus) ?? work.status ?? {};
  let conditions: WorkCondition[] = [...(base.conditions ?? [])];
  const previous = work.status?.conditions?.find((c) => c.type === PUBLISHED);
  conditions = conditions.filter((c) => c.type !== PUBLISHED);
  if (facts) {
    conditions = setCondition([...conditions, ...(previous ? [previous] : [])], publishedCondition(facts), {
      observedGeneration: work.metadata.generation,
    });
  } else if (previous) {
    conditions.push(previous);
  }
  if (refusal) {
    conditions = setCondition(
      conditions,
      { type: AGENT_STATUS_ACCEPTED, status: "False", ...refusal },
      { observedGeneration: work.metadata.generation },
    );
  }
  return {
    conditions,
    ...(base.resourceStatus ? { resourceStatus: base.resourceStatus } : {}),
  };
}

/** The work's status shows this generation published and applied by the agent. */
export function deliveredBefore(work: ManifestWorkObject, generation: number): boolean {
  const at = (type: string): boolean =>
    work.status?.conditions?.some(
      (c) => c.type === type && c.status === "True" && c.observedGeneration === generation,
    ) ?? false;
  return at(PUBLISHED) && at("Applied");
}

/**
 * The agent's last report as the work shows it, for a restart to start from: the generation it
 * was on and the hash the agent gave it (the status less this server's own conditions, in the
 * shape a status event decodes to). Undefined when the work shows no report of its current
 * generation, or shows what it had before a refused one. A hash that differs from the agent's
 * (an agent that hashes otherwise, a status the schema pruned) only makes the agent send it again.
 */
export function shownReport(
  work: ManifestWorkObject,
): { resourceVersion: number; statusHash: string } | undefined {
  const generation = work.metadata.generation ?? 0;
  const conditions = work.status?.conditions ?? [];
  if (!deliveredBefore(work, generation) || conditions.some((c) => c.type === AGENT_STATUS_ACCEPTED))
    return undefined;
  const manifests = work.status?.resourceStatus?.manifests;
  const report: ManifestWorkStatus = {
    conditions: conditions.filter((c) => c.type !== PUBLISHED),
    ...(manifests && manifests.length > 0 ? { resourceStatus: { manifests } } : {}),
  };
  return { resourceVersion: generation, statusHash: statusHash(report) };
}
