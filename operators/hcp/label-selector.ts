/**
 * Kubernetes label selector semantics (matchLabels and the four matchExpressions operators), for
 * the controllers that choose objects by a selector their users wrote: placement over management
 * clusters, maintenance tasks and rollouts over HcpClusters.
 */
import type { LabelSelector } from "../api/v1alpha1/index.ts";

type Requirement = NonNullable<LabelSelector["matchExpressions"]>[number];

const OPERATORS: Record<Requirement["operator"], (has: boolean, inValues: boolean) => boolean> = {
  Exists: (has) => has,
  DoesNotExist: (has) => !has,
  In: (has, inValues) => has && inValues,
  NotIn: (has, inValues) => !has || !inValues,
};

function matchesRequirement(labels: Record<string, string>, req: Requirement): boolean {
  const has = Object.hasOwn(labels, req.key);
  const inValues = (req.values ?? []).includes(labels[req.key] ?? "");
  return OPERATORS[req.operator](has, inValues);
}

/** Whether `labels` satisfy `selector`; no selector selects everything, an empty one too. */
export function matchesSelector(
  labels: Record<string, string> | undefined,
  selector?: LabelSelector,
): boolean {
  if (!selector) return true;
  const l = labels ?? {};
  return (
    Object.entries(selector.matchLabels ?? {}).every(([k, v]) => l[k] === v) &&
    (selector.matchExpressions ?? []).every((req) => matchesRequirement(l, req))
  );
}
