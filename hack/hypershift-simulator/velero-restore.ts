/**
 * Plays Velero's restore controller on a management cluster for the Restores the clusters' works
 * carry. A new Restore (no phase, or New) is validated as Velero does: its Backup must exist and
 * have completed, else FailedValidation with Velero's own wording ("Error retrieving backup:
 * backups.velero.io "<name>" not found"). Its contents are read from the BackupStorageLocation the
 * Backup went to (velero.ts wrote them), then the Restore is InProgress with progress.totalItems
 * the number of objects in the backup's restored namespaces, and one step later Completed with
 * every item restored (objects are counted, not rewritten: the simulator's HostedClusters are its
 * own). Velero fills in spec.scheduleName from the Backup's label; so does this.
 *
 * Evidence for tests: at completion the Restore is annotated with whether every HostedCluster in
 * its namespaces had spec.pausedUntil "true" (PAUSED_DURING_RESTORE_ANNOTATION). Test-only:
 * SIMULATE_RESTORE_FAILURE_ANNOTATION "true" on a Backup makes each restore from it fail.
 */
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  BackupResource,
  RESTORE_KIND,
  RestoreResource,
  SCHEDULE_NAME_LABEL,
  STORAGE_LOCATION_LABEL,
  VELERO_API_VERSION,
  VELERO_NAMESPACE,
  type Backup,
  type Restore,
} from "../../operators/api/velero/v1/index.ts";
import type { Applier } from "../../operators/runtime/apply.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../../operators/runtime/controller.ts";
import { errorMessage } from "../../operators/runtime/errors.ts";
import type { Informer } from "../../operators/runtime/informer.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { backupObjectName, type VeleroStorage } from "./velero.ts";

export const SIMULATE_RESTORE_FAILURE_ANNOTATION = "hcp.aro.dev/simulate-restore-failure";
/** On a finished Restore: "true" when every HostedCluster it restored was paused while it ran. */
export const PAUSED_DURING_RESTORE_ANNOTATION = "hypershift-simulator.hcp.aro.dev/hostedcluster-paused";
/** How long a restore stays InProgress: long enough for its agent to report it. */
export const RESTORE_STEP_MS = 500;

const FAILED = "the simulated restore failed (hcp.aro.dev/simulate-restore-failure)";
const RESTORABLE = new Set(["Completed", "PartiallyFailed"]);

export interface VeleroRestoreDeps {
  client: KubeClient;
  restores: Informer<Restore>;
  storage: VeleroStorage;
  applier: Applier;
  now?: () => number;
}

type RestoreStatus = NonNullable<Restore["status"]>;

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

/** Velero's validation error for a backup that cannot be restored. */
function refusalOf(name: string, backup: Backup | undefined): string {
  if (!backup) return `Error retrieving backup: backups.velero.io "${name}" not found`;
  return `Backup "${name}" is in phase ${backup.status?.phase ?? "New"}: only a Completed or PartiallyFailed backup can be restored`;
}

/** One Restore: validated, then InProgress, then Completed (or Failed); an ended one is left alone. */
export class VeleroRestoreReconciler implements Reconciler {
  readonly #d: VeleroRestoreDeps;
  readonly #now: () => number;
  readonly #storage: VeleroStorage;

  constructor(deps: VeleroRestoreDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
    this.#storage = deps.storage;
  }

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const restore = this.#d.restores.get(req.namespace, req.name);
    if (!restore || restore.metadata.deletionTimestamp) return {};
    const phase = restore.status?.phase ?? "New";
    if (phase === "New") return this.#start(ctx, restore);
    if (phase === "InProgress") return this.#finish(ctx, restore);
    return {};
  }

  /** Validates the Restore and reads its backup's contents: InProgress, or why it cannot be. */
  async #start(ctx: ReconcileContext, restore: Restore): Promise<Result> {
    const name = restore.spec.backupName ?? "";
    const backup = name
      ? await this.#d.client.find<Backup>(BackupResource, name, VELERO_NAMESPACE, { signal: ctx.signal })
      : undefined;
    if (!backup || !RESTORABLE.has(backup.status?.phase ?? "")) {
      await this.#write(ctx, restore, {
        phase: "FailedValidation",
        validationErrors: [refusalOf(name, backup)],
      });
      return {};
    }
    const started = rfc3339(this.#now());
    const scheduleName = backup.metadata.labels?.[SCHEDULE_NAME_LABEL];
    try {
      const totalItems = await this.#countItems(ctx, restore, backup);
      await this.#write(
        ctx,
        restore,
        { phase: "InProgress", startTimestamp: started, progress: { totalItems, itemsRestored: 0 } },
        { scheduleName },
      );
      return { requeueAfterMs: RESTORE_STEP_MS };
    } catch (err) {
      await this.#write(ctx, restore, {
        phase: "Failed",
        startTimestamp: started,
        completionTimestamp: started,
        failureReason: `reading backup ${name}: ${errorMessage(err)}`,
      });
      return {};
    }
  }

  /** The objects the backup holds in the namespaces the Restore includes (all, when it names none). */
  async #countItems(ctx: ReconcileContext, restore: Restore, backup: Backup): Promise<number> {
    const location = await this.#storage.location(
      ctx.signal,
      backup.metadata.labels?.[STORAGE_LOCATION_LABEL],
    );
    if (!location) throw new Error("the backup's storage location is gone");
    const store = await this.#storage.storeFor(location);
    const blob = backupObjectName(backup.metadata.name ?? "", location.spec.objectStorage.prefix);
    const body = await store.read(blob, { signal: ctx.signal });
    if (body === undefined) throw new Error(`${blob} is not in ${location.spec.objectStorage.bucket}`);
    const listing = (JSON.parse(body) as { namespaces?: Record<string, string[]> }).namespaces ?? {};
    const included = restore.spec.includedNamespaces;
    return Object.entries(listing)
      .filter(([ns]) => !included?.length || included.includes(ns) || included.includes("*"))
      .reduce((n, [, objects]) => n + objects.length, 0);
  }

  /** Completes the Restore (or fails it on demand), saying whether its HostedClusters were paused. */
  async #finish(ctx: ReconcileContext, restore: Restore): Promise<Result> {
    const status = restore.status ?? {};
    const backup = await this.#d.client.find<Backup>(
      BackupResource,
      restore.spec.backupName ?? "",
      VELERO_NAMESPACE,
      {
        signal: ctx.signal,
      },
    );
    const failing = backup?.metadata.annotations?.[SIMULATE_RESTORE_FAILURE_ANNOTATION] === "true";
    const total = status.progress?.totalItems ?? 0;
    const completion = rfc3339(this.#now());
    const paused = await this.#hostedClustersPaused(ctx, restore);
    const annotations = { [PAUSED_DURING_RESTORE_ANNOTATION]: String(paused) };
    if (failing) {
      await this.#write(
        ctx,
        restore,
        { ...status, phase: "Failed", completionTimestamp: completion, errors: 1, failureReason: FAILED },
        { annotations, scheduleName: restore.spec.scheduleName },
      );
      return {};
    }
    await this.#write(
      ctx,
      restore,
      {
        ...status,
        phase: "Completed",
        completionTimestamp: completion,
        progress: { totalItems: total, itemsRestored: total },
        warnings: 0,
        errors: 0,
      },
      { annotations, scheduleName: restore.spec.scheduleName },
    );
    return {};
  }

  /** Whether every HostedCluster in the Restore's namespaces has spec.pausedUntil "true" now. */
  async #hostedClustersPaused(ctx: ReconcileContext, restore: Restore): Promise<boolean> {
    const hosted: HostedCluster[] = [];
    for (const namespace of restore.spec.includedNamespaces ?? []) {
      const list = await this.#d.client.list<HostedCluster>(HostedClusterResource, {
        namespace,
        signal: ctx.signal,
      });
      hosted.push(...list.items);
    }
    return hosted.length > 0 && hosted.every((hc) => hc.spec.pausedUntil === "true");
  }

  /** Status with the object (Velero's Restore CRD has no status subresource), as Velero's manager. */
  async #write(
    ctx: ReconcileContext,
    restore: Restore,
    status: RestoreStatus,
    extra: { scheduleName?: string | undefined; annotations?: Record<string, string> } = {},
  ): Promise<void> {
    await this.#d.applier.apply(
      RestoreResource,
      {
        apiVersion: VELERO_API_VERSION,
        kind: RESTORE_KIND,
        metadata: {
          name: restore.metadata.name,
          namespace: VELERO_NAMESPACE,
          ...(extra.annotations ? { annotations: extra.annotations } : {}),
        },
        ...(extra.scheduleName ? { spec: { scheduleName: extra.scheduleName } } : {}),
        status,
      },
      { signal: ctx.signal },
    );
  }
}
