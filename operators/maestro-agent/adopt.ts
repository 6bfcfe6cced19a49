/**
 * Adopting what an older copy of a work applied. A region restored from a backup writes every
 * ManifestWork again under a new resource ID, mostly with the manifests the older copy (still in
 * the agent's store) applied. Applying them all again is a write per object that the apiserver
 * answers with no change: 1,400 for 200 clusters in the restore bench, most of a restore's time on
 * the management clusters (docs/performance.md). Instead, when the newer work applies exactly what
 * the older one did and a read shows every object still as that copy's last apply left it, the
 * newer work takes over the older's applied state: its record is written with the same objects
 * (same uids), it counts as applied at its generation, and no object gets a request. An object
 * someone else changed since (Velero reporting on a Schedule, which has no status subresource,
 * moves its generation and annotations) still counts as left so when a fresh read shows every
 * field the manifest sets at the manifest's value: applying it would change nothing. The older
 * copy is then retired as any superseded copy (supersede.ts): every object is shared with the
 * newer, so its deletion deletes nothing and only removes its record.
 *
 * Anything else is applied in full, as before: another spec (a manifest changed, added or dropped),
 * a field the manifest sets changed, an object missing or recreated (another uid), an older copy
 * never applied at its
 * generation, or one known only from its record after an agent restart. In those cases the agent
 * cannot tell from a read that the objects are what the newer work wants, and a needless apply
 * costs a write while a wrong adoption would leave drift unrepaired until the next drift check.
 *
 * Crash safety: the newer record is written before the work counts as applied, and the older
 * record stays until the older copy's deletion; a crash in between leaves both records, and after
 * a restart the newer work (the older one is no longer in the store) is applied in full and the
 * older record retired by supersede.ts, as before adoption existed.
 */
import { isDeepStrictEqual } from "node:util";
import type { ManifestWorkSpec } from "../api/work/v1.ts";
import type { AgentWork, WorkStore } from "../cloudevents/store/works.ts";
import type { Logger } from "../runtime/logger.ts";
import { counter, metricsRegistry } from "../runtime/metrics.ts";
import type { ManifestClient, ManifestOutcome } from "./apply.ts";
import {
  appliedResourceOf,
  recordOwner,
  sameResource,
  type AppliedResource,
  type AppliedWorks,
} from "./appliedwork.ts";
import { changeMark, manifestHolds } from "./drift.ts";

export const ADOPTED_METRIC = "maestro_agent_works_adopted_total";

function adoptedCounter() {
  return counter(metricsRegistry, {
    name: ADOPTED_METRIC,
    help: "Works that took over an older copy's applied state without applying their manifests (a restored region's works written again)",
    labelNames: ["consumer"] as const,
  });
}

export interface AdoptionDeps {
  consumer: string;
  store: Pick<WorkStore, "supersededBy">;
  applied: Pick<AppliedWorks, "get" | "record">;
  /** Reads an object whose change mark moved from the apiserver (a watch's cache has no spec). */
  kube: Pick<ManifestClient, "find">;
  /** Reads the work's objects afresh, writing nothing (the drift check's read). */
  read: (work: AgentWork) => Promise<ManifestOutcome[]>;
  log: Logger;
}

/**
 * The parts of a spec that decide what is applied and how: the manifests (in order: ordinals and
 * change marks go by position), their configs (update strategy, feedback rules) and the executor.
 * The deleteOption only decides what a deletion leaves; the newer record carries the newer's.
 */
function appliedSpec(spec: ManifestWorkSpec): unknown {
  return [spec.workload?.manifests ?? [], spec.manifestConfigs ?? [], spec.executor ?? null];
}

/** An older copy whose change marks say what its current spec applied, with the same applied spec. */
function mayAdoptFrom(work: AgentWork): (older: AgentWork) => boolean {
  const spec = appliedSpec(work.spec);
  return (older) =>
    !older.retired &&
    older.appliedGeneration === older.generation &&
    older.appliedVersions !== undefined &&
    isDeepStrictEqual(appliedSpec(older.spec), spec);
}

/**
 * The object, whose change mark moved since the older copy's apply, read afresh: the same object
 * (uid), holding every field its manifest sets.
 */
async function stillHolds(deps: AdoptionDeps, o: ManifestOutcome, manifest: unknown): Promise<boolean> {
  if (!o.type || !o.object) return false;
  const live = await deps.kube.find(o.type, o.meta.name ?? "", o.meta.namespace || undefined);
  return live?.metadata.uid === o.object.metadata.uid && manifestHolds(manifest, live);
}

/**
 * Every object is as the older copy's last apply left it (the same change mark), or, where it is
 * not, still holds every field its manifest sets.
 */
async function leftAsApplied(
  deps: AdoptionDeps,
  work: AgentWork,
  older: AgentWork,
  outcomes: readonly ManifestOutcome[],
): Promise<boolean> {
  const marks = older.appliedVersions ?? [];
  const manifests = work.spec.workload?.manifests ?? [];
  if (marks.length !== outcomes.length) return false;
  for (const [i, o] of outcomes.entries()) {
    if (o.failure || !o.object) return false;
    if (changeMark(o.object) !== marks[i] && !(await stillHolds(deps, o, manifests[i]))) return false;
  }
  return true;
}

/** Every object is in the older copy's record with the uid read now: the very objects it applied. */
function sameObjects(resources: AppliedResource[], recorded: AppliedResource[] | undefined): boolean {
  return resources.every(
    (r) => r.uid !== undefined && (recorded ?? []).some((x) => sameResource(x, r) && x.uid === r.uid),
  );
}

/**
 * Adopts an older copy's applied state for `work` when it may (see the file comment): writes the
 * work's record and resolves with the objects as read, for the caller to record the work applied
 * at its generation (its change marks as read now) and report its status. Resolves undefined, having
 * written nothing, when the work must be applied in full.
 */
export async function adoptSuperseded(
  deps: AdoptionDeps,
  work: AgentWork,
): Promise<ManifestOutcome[] | undefined> {
  const candidates = deps.store.supersededBy(work).filter(mayAdoptFrom(work));
  if (candidates.length === 0) return undefined;
  const outcomes = await deps.read(work);
  let older: AgentWork | undefined;
  for (const c of candidates) if (!older && (await leftAsApplied(deps, work, c, outcomes))) older = c;
  if (!older) return undefined;
  const resources = outcomes.flatMap((o) => appliedResourceOf(o) ?? []);
  const olderRecord = await deps.applied.get(older.name);
  if (!sameObjects(resources, olderRecord?.status?.appliedResources)) return undefined;
  // A record from an attempt that failed after writing it is written again only where it differs.
  await deps.applied.record(recordOwner(work), resources, await deps.applied.get(work.name));
  adoptedCounter().inc({ consumer: deps.consumer });
  deps.log.info("Work adopted what an older copy applied, without applying it again", {
    work: work.name,
    olderWork: older.name,
    objects: resources.length,
  });
  return outcomes;
}
