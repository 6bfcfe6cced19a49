/**
 * The work status the agent reports, computed from what applying found, with OCM's condition
 * types and reasons: per manifest Applied, Available and StatusFeedbackSynced; for the work
 * Applied, Available, Degraded, then Deleting and finally Deleted (the CloudEvents-only
 * confirmation the source waits for). Pure functions; conditions go through setCondition.
 */
import type { ManifestCondition, ManifestWorkStatus, WorkCondition } from "../api/work/v1.ts";
import { setCondition, type ConditionInput } from "../runtime/conditions.ts";
import type { ManifestOutcome } from "./apply.ts";
import { collectFeedback } from "./feedback.ts";

function set(list: WorkCondition[], input: ConditionInput, generation: number): WorkCondition[] {
  return setCondition(list, input, { observedGeneration: generation });
}

function appliedCondition(o: ManifestOutcome): ConditionInput {
  if (o.failure)
    return { type: "Applied", status: "False", reason: o.failure.reason, message: o.failure.message };
  return {
    type: "Applied",
    status: "True",
    reason: "AppliedManifestComplete",
    message: "Apply manifest complete",
  };
}

function availableCondition(o: ManifestOutcome): ConditionInput {
  if (o.failure && !o.type) {
    return {
      type: "Available",
      status: "Unknown",
      reason: "IncompleteResourceMeta",
      message: "The resource could not be resolved",
    };
  }
  return o.object
    ? { type: "Available", status: "True", reason: "ResourceAvailable", message: "Resource is available" }
    : {
        type: "Available",
        status: "False",
        reason: "ResourceNotAvailable",
        message: "Resource is not available",
      };
}

/** One manifest's entry in status.resourceStatus.manifests. */
export function manifestCondition(
  o: ManifestOutcome,
  previous: ManifestCondition | undefined,
  generation: number,
): ManifestCondition {
  let conditions = set(previous?.conditions ?? [], appliedCondition(o), generation);
  conditions = set(conditions, availableCondition(o), generation);
  const rules = o.config?.feedbackRules ?? [];
  const entry: ManifestCondition = { resourceMeta: o.meta, conditions };
  if (rules.length === 0) return entry;
  const feedback = collectFeedback(o.object, rules);
  const synced: ConditionInput =
    feedback.errors.length > 0
      ? {
          type: "StatusFeedbackSynced",
          status: "False",
          reason: "StatusFeedbackSyncFailed",
          message: feedback.errors.join("; "),
        }
      : feedback.values.length > 0
        ? { type: "StatusFeedbackSynced", status: "True", reason: "StatusFeedbackSynced", message: "" }
        : {
            type: "StatusFeedbackSynced",
            status: "False",
            reason: "NoStatusFeedbackSynced",
            message: "No status feedback value was found",
          };
  entry.conditions = set(conditions, synced, generation);
  entry.statusFeedback = { values: feedback.values };
  return entry;
}

function workConditions(
  manifests: ManifestOutcome[],
  previous: WorkCondition[],
  generation: number,
): WorkCondition[] {
  const failed = manifests.filter((m) => m.failure);
  const missing = manifests.filter((m) => !m.object && !m.failure);
  let c = set(
    previous,
    failed.length === 0
      ? {
          type: "Applied",
          status: "True",
          reason: "AppliedManifestWorkComplete",
          message: "Apply manifest work complete",
        }
      : {
          type: "Applied",
          status: "False",
          reason: "AppliedManifestWorkFailed",
          message: `Failed to apply manifest work: ${failed.map((m) => `manifest ${m.meta.ordinal}: ${m.failure?.message ?? ""}`).join("; ")}`,
        },
    generation,
  );
  const unavailable = failed.length + missing.length;
  c = set(
    c,
    unavailable === 0
      ? {
          type: "Available",
          status: "True",
          reason: "ResourcesAvailable",
          message: "All resources are available",
        }
      : {
          type: "Available",
          status: "False",
          reason: "ResourcesNotAvailable",
          message: `${unavailable} of ${manifests.length} resources are not available`,
        },
    generation,
  );
  const refused = failed.some((m) => m.failure?.reason === "ManifestKindNotAllowed");
  return set(
    c,
    failed.length === 0
      ? { type: "Degraded", status: "False", reason: "AsExpected", message: "Every manifest is applied" }
      : {
          type: "Degraded",
          status: "True",
          reason: refused ? "ManifestKindNotAllowed" : "ApplyFailed",
          message: `${failed.length} of ${manifests.length} manifests are not applied`,
        },
    generation,
  );
}

/** The status after an apply (or read) of every manifest. */
export function workStatus(
  manifests: ManifestOutcome[],
  previous: ManifestWorkStatus | undefined,
  generation: number,
): ManifestWorkStatus {
  const prevManifests = previous?.resourceStatus?.manifests ?? [];
  return {
    conditions: workConditions(manifests, previous?.conditions ?? [], generation),
    resourceStatus: {
      manifests: manifests.map((m) =>
        manifestCondition(
          m,
          prevManifests.find((p) => p.resourceMeta.ordinal === m.meta.ordinal),
          generation,
        ),
      ),
    },
  };
}

export function deletingStatus(
  previous: ManifestWorkStatus | undefined,
  generation: number,
  remaining: number,
): ManifestWorkStatus {
  return {
    ...previous,
    conditions: set(
      previous?.conditions ?? [],
      {
        type: "Deleting",
        status: "True",
        reason: "WorkDeleting",
        message: `Deleting the work; ${remaining} resources remain`,
      },
      generation,
    ),
  };
}

/** The final report: the source releases the work on Deleted=True. */
export function deletedStatus(
  previous: ManifestWorkStatus | undefined,
  generation: number,
  consumer: string,
): ManifestWorkStatus {
  return {
    ...previous,
    conditions: set(
      previous?.conditions ?? [],
      {
        type: "Deleted",
        status: "True",
        reason: "ManifestsDeleted",
        message: `The manifests are deleted from the cluster ${consumer}`,
      },
      generation,
    ),
  };
}

/**
 * Whether a manifest asks back a value its object does not hold yet (HyperShift's status on a
 * HostedCluster just applied): what the first status of a generation waits for (reconcile.ts).
 */
export function feedbackToCome(manifests: ManifestOutcome[]): boolean {
  return manifests.some((m) => {
    const rules = (m.config?.feedbackRules ?? []).filter((r) => r.type === "JSONPaths");
    const asked = rules.reduce((n, r) => n + (r.jsonPaths?.length ?? 0), 0);
    return asked > 0 && collectFeedback(m.object, rules).values.length < asked;
  });
}
