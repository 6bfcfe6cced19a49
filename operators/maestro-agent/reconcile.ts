/**
 * Reconciles one work the agent holds (keyed by resource ID): apply its manifests and report
 * status, or, once the source deletes it, clean up per its deleteOption and confirm `Deleted`.
 * What was applied is recorded in the AppliedManifestWork before and after each apply, so a crash
 * at any point leaves a record that covers every object the agent may have created. At a work's
 * first apply the record's create carries the intent (appliedwork.ts create()), so a work costs one
 * create and one status write, as with OCM's agent; a later generation that adds objects writes
 * its intent to the status before applying them.
 */
import type { Manifest } from "../api/work/v1.ts";
import type { AgentClient } from "../cloudevents/client/agent.ts";
import { isPublishRefused } from "../cloudevents/client/errors.ts";
import { statusHash } from "../cloudevents/codec/statushash.ts";
import type { AgentWork, WorkStore } from "../cloudevents/store/works.ts";
import { requestLog } from "../hcp/requests.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { failpoint } from "../runtime/failpoints.ts";
import {
  applyResolved,
  resolveManifest,
  type ApplyInput,
  type KindAllowList,
  type KindMapper,
  type ManifestClient,
  type ManifestOutcome,
} from "./apply.ts";
import { adoptSuperseded } from "./adopt.ts";
import {
  appliedResourceOf,
  isOrphaned,
  recordedResources,
  recordOwner,
  sameResource,
  type AppliedManifestWork,
  type AppliedResource,
  type AppliedWorks,
} from "./appliedwork.ts";
import { changeMark, everyManifestHolds, unchangedSinceApply } from "./drift.ts";
import type { AppliedObjects } from "./objects.ts";
import { deletedStatus, deletingStatus, feedbackToCome, workStatus } from "./status.ts";
import { retireSuperseded } from "./supersede.ts";

/** What the reconciler sends to the source: the agent client's status side. */
export type StatusPublisher = Pick<AgentClient, "publishStatus">;

export interface AgentReconcilerDeps {
  consumer: string;
  store: WorkStore;
  client: StatusPublisher;
  kube: ManifestClient;
  mapper: KindMapper;
  allowed: KindAllowList;
  applied: AppliedWorks;
  /** Where status syncs read the applied objects: watches and remembered existence (objects.ts). */
  objects: AppliedObjects;
  /**
   * How often an object whose status is asked back (feedback rules) and that no watch covers is
   * read again. A work without one is synced by its watched objects' events and at its next drift
   * check, which also reads the existence of the rest (objects.ts).
   */
  statusSyncMs: number;
  /** How often manifests are applied again even if nothing changed (drift repair). */
  reapplyMs: number;
  /**
   * How many deleting works may poll their remaining objects per second, all together. Default
   * DELETE_POLLS_PER_SECOND.
   */
  deletePollsPerSecond?: number;
  /** Queues a work (one a newer work supersedes). Default: none is retired. */
  enqueue?: (uid: string) => void;
  /** Tells the source again what the agent holds, once a retired work is gone. */
  resyncSpecs?: () => void;
  /**
   * How long the first status of a generation just applied is held while it stays what the apply
   * found and a manifest's feedback is still to come: reported once with HyperShift's answer, not
   * once before it and once with it (each a status write on the service apiserver). OCM's agent
   * reports on a 10 s sync. Default 0: reported at once.
   */
  firstStatusHoldMs?: number;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
}

/**
 * How soon to look again at resources that are still being deleted and that no watch reports:
 * 1 s, doubling while nothing changes, up to 4 s (a Namespace takes the namespace controller a few
 * seconds; polling each of a region's deleting works every second was most of a deletion's reads).
 */
const DELETE_REQUEUE_AFTER_MS = 1000;
const DELETE_REQUEUE_MAX_MS = 4000;
/**
 * Polls of what no watch reports are spread over the deletions in progress: together at most this
 * many works a second, each at least every DELETE_SPREAD_MAX_MS. With 2,000 clusters deleted at
 * once the namespace controller holds ~1,800 Namespaces Terminating for minutes, and polling each
 * every 4 s was 446 GETs/s on its apiserver, beside the namespace controller doing the deleting.
 */
export const DELETE_POLLS_PER_SECOND = 50;
const DELETE_SPREAD_MAX_MS = 60_000;
/** A deletion waiting only for watched objects is woken by their events; this is a safety net. */
const DELETE_WATCHED_RECHECK_MS = 30_000;

/**
 * What a deletion in progress has learned in this process: its record (only this agent writes it,
 * and a deleting work is not applied again) and the objects found gone (an object with the uid the
 * agent applied does not come back). A restart starts again from the apiserver.
 */
interface DeletionProgress {
  record: AppliedManifestWork | undefined;
  gone: AppliedResource[];
  /** Polls since the set of remaining objects last changed, for the backoff. */
  polls: number;
  remaining: number;
}

export class AgentWorkReconciler implements Reconciler {
  readonly #d: AgentReconcilerDeps;

  readonly #now: () => number;

  readonly #deletions = new Map<string, DeletionProgress>();

  /** uid → the generation whose superseded works were last retired (supersede.ts). */
  readonly #supersedeChecked = new Map<string, number>();

  /** uid → a first status held (firstStatusHoldMs): until when, and its hash. */
  readonly #held = new Map<string, { until: number; hash: string }>();

  constructor(deps: AgentReconcilerDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const work = this.#d.store.get(req.name);
    if (!work) {
      this.#deletions.delete(req.name);
      this.#supersedeChecked.delete(req.name);
      this.#held.delete(req.name);
      return {};
    }
    requestLog(ctx, work);
    if (work.deletionTimestamp) {
      this.#supersedeChecked.delete(work.uid);
      this.#held.delete(work.uid);
      return this.#reconcileDelete(ctx, work);
    }
    this.#deletions.delete(work.uid);
    const firstApply = work.appliedGeneration !== work.generation;
    const { due, outcomes } = await this.#applyOrRead(ctx, work);
    this.#d.objects.track(work.uid, outcomes, due);
    const reapplyNow = this.#recordApplied(work, due, outcomes);
    await this.#retireSuperseded(ctx, work);
    const status = workStatus(outcomes, work.status, work.generation);
    const applied = this.#d.store.get(work.uid)?.appliedGeneration === work.generation;
    const heldMs = this.#hold(work, status, firstApply && applied && feedbackToCome(outcomes));
    if (heldMs > 0) this.#d.store.update(work.uid, { status });
    else await this.#report(ctx, work, status);
    const syncMs = reapplyNow ? 1 : this.#nextSyncMs(work, outcomes);
    return { requeueAfterMs: heldMs > 0 ? Math.min(heldMs, syncMs) : syncMs };
  }

  /**
   * How long `status` is still held (0: report it now). A hold starts at a generation's first
   * clean apply and ends when the status changes (the feedback came, or anything else) or at
   * firstStatusHoldMs. The held status is kept as the work's, unpublished, so the next computation
   * keeps its transition times and finds it unchanged.
   */
  #hold(work: AgentWork, status: NonNullable<AgentWork["status"]>, start: boolean): number {
    const holdMs = this.#d.firstStatusHoldMs ?? 0;
    const now = this.#now();
    if (start && holdMs > 0) this.#held.set(work.uid, { until: now + holdMs, hash: statusHash(status) });
    const held = this.#held.get(work.uid);
    if (!held) return 0;
    if (held.until > now && held.hash === statusHash(status)) return held.until - now;
    this.#held.delete(work.uid);
    return 0;
  }

  /**
   * A work whose objects are watched or only have to exist waits for their events or the drift
   * check; one whose status needs the apiserver read polls.
   */
  #nextSyncMs(work: AgentWork, outcomes: ManifestOutcome[]): number {
    if (this.#d.objects.needsStatusPolling(outcomes)) return this.#d.statusSyncMs;
    const appliedAt = this.#d.store.get(work.uid)?.appliedAtMs ?? this.#now();
    return Math.max(this.#d.statusSyncMs, appliedAt + this.#d.reapplyMs - this.#now() + 1);
  }

  /**
   * A new generation is applied in full. Every reapplyMs the objects are read, and applied again
   * only if one changed since the last apply (drift repair, changeMark): an object as that apply
   * left it needs no repair, and at 2,000 works per agent the forced applies of unchanged objects
   * were most of a management apiserver's writes at rest. A new copy of a work an older copy
   * applied may adopt that copy's objects instead of applying them (adopt.ts).
   */
  async #applyOrRead(
    ctx: ReconcileContext,
    work: AgentWork,
  ): Promise<{ due: boolean; outcomes: ManifestOutcome[] }> {
    if (work.appliedGeneration !== work.generation) {
      const read = (w: AgentWork): Promise<ManifestOutcome[]> => this.#resolveAll(w, false, true);
      const adopted = await adoptSuperseded({ ...this.#d, read, log: ctx.log }, work);
      return { due: true, outcomes: adopted ?? (await this.#applyAll(work)) };
    }
    const driftCheck = this.#now() - (work.appliedAtMs ?? 0) > this.#d.reapplyMs;
    const outcomes = await this.#resolveAll(work, false, driftCheck);
    if (!driftCheck) return { due: false, outcomes };
    if (unchangedSinceApply(work, outcomes)) {
      this.#d.store.update(work.uid, { appliedAtMs: this.#now() });
      return { due: false, outcomes };
    }
    // Recorded as applied with the marks read now, without a write.
    if (everyManifestHolds(work.spec.workload?.manifests ?? [], outcomes)) return { due: true, outcomes };
    return { due: true, outcomes: await this.#applyAll(work) };
  }

  /**
   * Records a clean full apply; returns true when a status sync found an object missing. An object
   * someone deleted is applied again at once; a failure is retried at the status sync.
   */
  #recordApplied(work: AgentWork, due: boolean, outcomes: ManifestOutcome[]): boolean {
    const missing = outcomes.some((o) => o.type && !o.failure && !o.object && o.strategy !== "ReadOnly");
    const failed = outcomes.some((o) => o.failure);
    if (due && !failed && !missing)
      this.#d.store.update(work.uid, {
        appliedGeneration: work.generation,
        appliedAtMs: this.#now(),
        appliedVersions: outcomes.map((o) => changeMark(o.object)),
      });
    if (missing && !due) this.#d.store.update(work.uid, { appliedGeneration: undefined });
    return missing && !due;
  }

  /**
   * Once the work is applied at its generation, the older copies of its ManifestWork go; looked
   * for once per generation applied, not at every status sync.
   */
  async #retireSuperseded(ctx: ReconcileContext, work: AgentWork): Promise<void> {
    const { enqueue } = this.#d;
    const applied = this.#d.store.get(work.uid)?.appliedGeneration;
    if (!enqueue || applied !== work.generation || this.#supersedeChecked.get(work.uid) === applied) return;
    const retired = await retireSuperseded({ ...this.#d, enqueue, now: this.#now }, work);
    this.#supersedeChecked.set(work.uid, applied);
    if (retired.length > 0) ctx.log.info("Retiring works superseded by a newer one", { retired });
  }

  #input(work: AgentWork, write: boolean): ApplyInput {
    const { kube: client, mapper, allowed } = this.#d;
    return { client, mapper, allowed, configs: work.spec.manifestConfigs, write };
  }

  /** `fresh`: a drift check, which reads what is not watched from the apiserver. */
  async #resolveAll(work: AgentWork, write: boolean, fresh = false): Promise<ManifestOutcome[]> {
    const manifests: Manifest[] = work.spec.workload?.manifests ?? [];
    const input = this.#input(work, write);
    const outcomes = await Promise.all(manifests.map((m, i) => resolveManifest(input, m, i)));
    if (write) return outcomes;
    const read = (o: ManifestOutcome): ApplyInput => ({
      ...input,
      client: this.#d.objects.readerFor(o, input.client, fresh),
    });
    await Promise.all(outcomes.map((o, i) => applyResolved(read(o), o, manifests[i] as Manifest)));
    return outcomes;
  }

  /** Records intent, applies, records the result, then deletes what the work no longer holds. */
  async #applyAll(work: AgentWork): Promise<ManifestOutcome[]> {
    const { applied } = this.#d;
    const manifests: Manifest[] = work.spec.workload?.manifests ?? [];
    const record = await applied.get(work.name);
    const before = recordedResources(record);
    const outcomes = await this.#resolveAll(work, true);
    // Before the apply: a change the apply sets off (HyperShift reporting at once) must find the work.
    this.#d.objects.track(work.uid, outcomes, false);
    const planned = outcomes.flatMap((o) => appliedResourceOf(o) ?? []);
    const added = planned.filter((p) => !before.some((b) => sameResource(b, p)));
    // The record must cover an object before it can exist; already covered objects need no write.
    let written = record;
    if (!record) written = await applied.create(recordOwner(work), planned);
    else if (added.length > 0)
      written = await applied.record(recordOwner(work), [...before, ...added], record);
    const input = this.#input(work, true);
    for (const [i, o] of outcomes.entries()) {
      await applyResolved(input, o, manifests[i] as Manifest);
      if (i === 0 && outcomes.length > 1) failpoint("maestro-agent/mid-apply");
    }
    const current = outcomes.flatMap((o) => (o.object ? (appliedResourceOf(o) ?? []) : []));
    const dropped = before.filter((b) => !planned.some((p) => sameResource(b, p)));
    const shared = await applied.sharedWithOthers(work.name, dropped, this.#deleting);
    const stillThere = await applied.deleteResources(
      dropped.filter((r) => !isOrphaned(work.spec.deleteOption, r) && !shared.includes(r)),
    );
    await applied.record(recordOwner(work), [...current, ...stillThere], written);
    return outcomes;
  }

  /** Whether the work of that name is being deleted (asked only about works sharing an object). */
  readonly #deleting = (workName: string): boolean =>
    this.#d.store.list().some((w) => w.name === workName && w.deletionTimestamp !== undefined);

  async #reconcileDelete(ctx: ReconcileContext, work: AgentWork): Promise<Result> {
    const { applied } = this.#d;
    const progress = await this.#deletionOf(work);
    const { record } = progress;
    const deleteOption = work.spec.deleteOption ?? applied.recordedDeleteOption(record);
    const recorded = recordedResources(record);
    // An object another work also applied stays, as an orphaned one does.
    const shared = await applied.sharedWithOthers(work.name, recorded, this.#deleting);
    const pending = recorded.filter(
      (r) =>
        !isOrphaned(deleteOption, r) && !shared.includes(r) && !progress.gone.some((g) => sameResource(g, r)),
    );
    const remaining = await this.#deleteInOrder(applied, pending);
    progress.gone.push(...pending.filter((r) => !remaining.some((x) => sameResource(x, r))));
    if (remaining.length > 0) {
      if (!work.retired)
        await this.#report(ctx, work, deletingStatus(work.status, work.generation, remaining.length));
      return { requeueAfterMs: this.#nextDeletePollMs(work.uid, remaining, progress) };
    }
    if (record) await applied.remove(work.name);
    if (work.retired) return this.#forgetRetired(ctx, work);
    failpoint("maestro-agent/before-deleted-confirmed");
    const deleted = deletedStatus(work.status, work.generation, this.#d.consumer);
    // Deleted is the work's status from now on: a status resync answered while it is on its way
    // sends Deleted too, never the status before it, which, ordered after Deleted, would take
    // Deleted's place at the source and leave the deletion unconfirmed.
    this.#d.store.update(work.uid, { status: deleted, statusHash: statusHash(deleted) });
    // Deleted must reach the source: without a connection this throws and the queue retries.
    await this.#d.client.publishStatus(work, deleted);
    this.#d.store.remove(work.uid);
    this.#d.objects.forget(work.uid);
    this.#deletions.delete(work.uid);
    ctx.log.info("Work deleted", {
      work: work.name,
      orphaned: recorded.filter((r) => isOrphaned(deleteOption, r)).length,
      keptForOtherWorks: shared.length,
    });
    return {};
  }

  /** A retired work is gone: the source, which does not know it, hears nothing, but learns what is held. */
  #forgetRetired(ctx: ReconcileContext, work: AgentWork): Result {
    this.#d.store.remove(work.uid);
    this.#d.objects.forget(work.uid);
    this.#deletions.delete(work.uid);
    this.#d.resyncSpecs?.();
    ctx.log.info("Superseded work retired", { work: work.name });
    return {};
  }

  async #deletionOf(work: AgentWork): Promise<DeletionProgress> {
    let progress = this.#deletions.get(work.uid);
    if (!progress) {
      const record = await this.#d.applied.get(work.name);
      progress = { record, gone: [], polls: 0, remaining: -1 };
      this.#deletions.set(work.uid, progress);
    }
    return progress;
  }

  /**
   * Watched objects wake the work by their events; others are polled with a backoff, spread over
   * the deletions in progress (DELETE_POLLS_PER_SECOND).
   */
  #nextDeletePollMs(workUid: string, remaining: AppliedResource[], progress: DeletionProgress): number {
    if (this.#d.objects.awaitDeletion(workUid, remaining)) return DELETE_WATCHED_RECHECK_MS;
    progress.polls = remaining.length === progress.remaining ? progress.polls + 1 : 0;
    progress.remaining = remaining.length;
    const backoffMs = Math.min(DELETE_REQUEUE_AFTER_MS * 2 ** progress.polls, DELETE_REQUEUE_MAX_MS);
    const perSecond = this.#d.deletePollsPerSecond ?? DELETE_POLLS_PER_SECOND;
    const spreadMs = Math.min((this.#deletions.size / perSecond) * 1000, DELETE_SPREAD_MAX_MS);
    return Math.round(Math.max(backoffMs, spreadMs));
  }

  /**
   * Deletes a work's Namespaces only once its other objects are gone. Deleting all at once leaves
   * the namespace controller finding content that is still finalizing (a HostedCluster), and its
   * retries back off exponentially: at N=100 that held every cluster's deletion ~40 s after the
   * HostedClusters were already gone.
   */
  async #deleteInOrder(applied: AppliedWorks, resources: AppliedResource[]): Promise<AppliedResource[]> {
    const isNamespace = (r: AppliedResource): boolean => r.group === "" && r.resource === "namespaces";
    const read = this.#d.objects.deletionReader((t, name, ns) => this.#d.kube.find(t, name, ns));
    const remaining = await applied.deleteResources(
      resources.filter((r) => !isNamespace(r)),
      read,
    );
    const namespaces = resources.filter(isNamespace);
    if (remaining.length > 0) return [...remaining, ...namespaces];
    return applied.deleteResources(namespaces, read);
  }

  /** Publishes the status when it changed; without a connection it is kept for the next resync. */
  async #report(
    ctx: ReconcileContext,
    work: AgentWork,
    status: NonNullable<AgentWork["status"]>,
  ): Promise<void> {
    const hash = statusHash(status);
    if (hash === work.statusHash) return;
    this.#d.store.update(work.uid, { status, statusHash: undefined });
    try {
      await this.#d.client.publishStatus(work, status);
      this.#d.store.update(work.uid, { statusHash: hash });
    } catch (err) {
      if (!isPublishRefused(err, "not-connected")) throw err;
      ctx.log.debug("Status kept until the broker is back");
    }
  }
}
