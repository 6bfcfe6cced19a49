/**
 * Retiring the works a newer one supersedes. A region restored from a backup writes every
 * ManifestWork again under a new resource ID; the agent still holds the older copies (in its store,
 * or after a restart only as AppliedManifestWorks), which the source no longer knows and so never
 * deletes (docs/decisions/0012-never-delete-the-unknown.md). Once the newer work of the same
 * ManifestWork namespace and name is applied at its generation, each older copy goes through the
 * ordinary deletion: what the newer work also applies stays (the shared-resource rule), what only
 * the older had is deleted, and its record goes. The source hears nothing of it. A newer work that
 * adopted the older's objects (adopt.ts) shares every one, so the older's deletion deletes nothing.
 */
import { manifestWorkName, type AgentWork, type WorkStore } from "../cloudevents/store/works.ts";
import type { AppliedWorks } from "./appliedwork.ts";

export interface SupersedeDeps {
  consumer: string;
  store: WorkStore;
  applied: Pick<AppliedWorks, "othersRecordedFor">;
  /** Queues a retired work for its deletion. */
  enqueue: (uid: string) => void;
  now: () => number;
}

/**
 * Retires what `work`, just applied at its generation, supersedes; resolves with the resource IDs
 * retired.
 */
export async function retireSuperseded(deps: SupersedeDeps, work: AgentWork): Promise<string[]> {
  const name = manifestWorkName(work);
  if (!name) return [];
  const { store, consumer } = deps;
  const older = store.supersededBy(work).map((w) => w.uid);
  // Known only from the records (the agent restarted): the source did not send them again, so they
  // are not the current copy of this name.
  const recorded = (await deps.applied.othersRecordedFor(name, work.name)).filter((uid) => !store.get(uid));
  const retired = [...older, ...recorded];
  const at = new Date(deps.now()).toISOString();
  for (const uid of retired) {
    store.retire(uid, consumer, at);
    deps.enqueue(uid);
  }
  return retired;
}
