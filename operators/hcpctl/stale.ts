/**
 * Whether what the service cluster shows is behind what was asked, hop by hop, as far as the
 * stored objects tell: the controller has not reported on the object's latest generation, or a
 * work's latest generation is not published, or the agent has not applied it; and whether what
 * it shows is stale because the management cluster's agent is not Connected (Ready StatusStale on
 * a cluster or node pool, Connected not True on a ManagementCluster).
 */
import type { KubeObject } from "../api/meta/v1.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import { find } from "./conditions.ts";
import { ageOf } from "./time.ts";

interface WithStatus extends KubeObject {
  status?: {
    observedGeneration?: number;
    conditions?: Array<{ type: string; status: string; reason: string; lastTransitionTime?: string }>;
  };
}

/** The controller hop: the object's status against its generation. */
export function statusLag(obj: WithStatus): string[] {
  const generation = obj.metadata.generation;
  const observed = obj.status?.observedGeneration;
  if (generation === undefined) return [];
  if (observed === undefined) return ["no status yet"];
  return observed < generation ? [`status at generation ${observed} of ${generation}`] : [];
}

/** When the work's spec was last written: the time of the field manager that owns spec. */
export function specWrittenAt(work: ManifestWork): string | undefined {
  const owners = (work.metadata.managedFields ?? []).filter(
    (m) => !m.subresource && m.time && JSON.stringify(m.fieldsV1 ?? {}).includes('"f:spec"'),
  );
  return owners
    .map((m) => m.time ?? "")
    .sort()
    .at(-1);
}

/** The publish hop: maestro-server could not send the work's current generation. */
function publishLag(work: ManifestWork): string[] {
  const published = find(work.status?.conditions, "Published");
  if (published?.status === "False" || published?.status === "Unknown")
    return [`work ${work.metadata.name ?? ""} not published: ${published.reason}`];
  return [];
}

/** Whether the agent has reported on the work's current generation (applied or failed to). */
function agentCaughtUp(work: ManifestWork): boolean {
  const applied = find(work.status?.conditions, "Applied");
  const acked = applied?.observedGeneration;
  return acked !== undefined && acked >= (work.metadata.generation ?? 0);
}

/** The publish and agent hops of one work. */
export function workLag(work: ManifestWork, now: number): string[] {
  const unpublished = publishLag(work);
  if (unpublished.length > 0) return unpublished;
  if (agentCaughtUp(work)) return [];
  const applied = find(work.status?.conditions, "Applied");
  const acked = applied?.status === "True" ? applied.observedGeneration : undefined;
  const sentAt = specWrittenAt(work);
  const when = sentAt ? ` ${ageOf(sentAt, now)} ago` : "";
  const generation = work.metadata.generation ?? 0;
  return [
    `work ${work.metadata.name ?? ""}: generation ${generation} sent${when}, ${acked ?? "none"} applied`,
  ];
}

/** The agent hop: Ready is a stale report (StatusStale), or a ManagementCluster's agent is not Connected. */
export function agentLag(obj: WithStatus, now: number): string[] {
  const conditions = obj.status?.conditions;
  const ready = find(conditions, "Ready");
  if (ready?.reason === "StatusStale")
    return [`Ready StatusStale for ${ageOf(ready.lastTransitionTime, now) || "?"}`];
  const connected = find(conditions, "Connected");
  if (connected && connected.status !== "True")
    return [
      `agent ${connected.status === "False" ? "not connected" : "unknown"} for ${ageOf(connected.lastTransitionTime, now) || "?"} (${connected.reason})`,
    ];
  return [];
}

/** Every lag of an object and the works that carry it. */
export function staleOf(obj: WithStatus, works: readonly ManifestWork[], now: number): string[] {
  return [...statusLag(obj), ...agentLag(obj, now), ...works.flatMap((w) => workLag(w, now))];
}
