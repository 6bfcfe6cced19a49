/**
 * Whether the objects a work applied are still as its last full apply left it, read without a
 * write: what lets the drift check skip the apply of an unchanged work, and a newer copy of a work
 * adopt what an older copy applied (adopt.ts).
 */
import type { KubeObject } from "../runtime/kube.ts";
import type { AgentWork } from "../cloudevents/store/works.ts";
import type { ManifestOutcome } from "./apply.ts";

/**
 * What moves when someone changes an object the agent applied. An object with a generation moves
 * it only when its spec changes, so its status (HyperShift reporting on a HostedCluster) is not
 * taken for drift; its labels and annotations are compared too. An object without one (a Secret,
 * a Namespace) has no status that others write, and its resourceVersion is the mark.
 */
export function changeMark(obj: KubeObject | undefined): string | undefined {
  if (!obj) return undefined;
  const { generation, resourceVersion, labels, annotations } = obj.metadata;
  if (generation === undefined) return resourceVersion;
  return JSON.stringify([generation, labels ?? {}, annotations ?? {}]);
}

/** Every object exists and is as the work's last full apply left it. */
export function unchangedSinceApply(
  work: Pick<AgentWork, "appliedVersions">,
  outcomes: readonly ManifestOutcome[],
): boolean {
  const marks = work.appliedVersions;
  if (!marks || marks.length !== outcomes.length) return false;
  return outcomes.every((o, i) => {
    const now = changeMark(o.object);
    return !o.failure && now !== undefined && now === marks[i];
  });
}

/**
 * Whether every field the manifest sets has that value on the live object, so that applying it
 * would change nothing there (what others added beside it, an apply leaves alone). Lists must
 * match item by item: an apply of a list another manager added items to may still change it.
 */
export function manifestHolds(manifest: unknown, live: unknown): boolean {
  if (Array.isArray(manifest))
    return (
      Array.isArray(live) &&
      live.length === manifest.length &&
      manifest.every((m, i) => manifestHolds(m, live[i]))
    );
  if (manifest === null || typeof manifest !== "object") return manifest === live;
  if (live === null || typeof live !== "object" || Array.isArray(live)) return false;
  const fields = live as Record<string, unknown>;
  return Object.entries(manifest).every(([k, v]) => manifestHolds(v, fields[k]));
}

/**
 * Every object exists and holds every field its manifest sets, as read now: an apply would change
 * nothing, though a change mark moved (Velero writing a Schedule's status moves its generation, its
 * CRD having no status subresource, so every cluster's work looked drifted after each backup).
 */
export function everyManifestHolds(
  manifests: readonly unknown[],
  outcomes: readonly ManifestOutcome[],
): boolean {
  return (
    manifests.length === outcomes.length &&
    outcomes.every((o, i) => !o.failure && o.object !== undefined && manifestHolds(manifests[i], o.object))
  );
}
