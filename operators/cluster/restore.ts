/**
 * A restore of one hosted control plane from one of its own backups (backup.ts), by command: the
 * cluster's spec.restore names the backup, its work carries a Velero Restore of the cluster's two
 * namespaces (objects that exist are updated to the backup's copy), and the Restore's status comes
 * back through the work's feedback onto status.restore. While a restore is asked and has not
 * ended, the HostedCluster is paused (spec.pausedUntil "true"), HyperShift's disaster-recovery
 * practice: its operator must not reconcile the control plane while Velero rewrites it.
 *
 * The CRD refuses a change of spec.restore to a backup not of this cluster; one created with the
 * object (CEL has no status then: a region restore recreates clusters so) is refused here instead:
 * no Restore, status.restore FailedValidation saying why.
 *
 * status.restore exists while spec.restore does: it describes the Restore the work carries, so a
 * cleared spec.restore (the Restore leaves the work) clears it, and asking the same backup again
 * afterwards is a new restore. The events (RestoreStarted, RestoreCompleted, RestoreFailed) keep
 * the history.
 */
import { createHash } from "node:crypto";
import type {
  HcpCluster,
  HcpClusterRestoreStatus,
  RestorePhase as ClusterRestorePhase,
} from "../api/v1alpha1/index.ts";
import type { ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { feedbackOf } from "../api/v1alpha1/feedback.ts";
import type { JsonPath, ManifestConfigOption, ManifestWorkObject } from "../api/work/v1.ts";
import {
  RESTORE_KIND,
  RestoreResource,
  VELERO_API_VERSION,
  VELERO_NAMESPACE,
  type Restore,
  type RestorePhase,
} from "../api/velero/v1/index.ts";
import type { EventSeverity } from "../runtime/events.ts";
import { backupScheduleName } from "./backup.ts";

/** Feedback names of the Restore in a cluster's work. */
export const RESTORE_FEEDBACK = {
  backupName: "restoreBackupName",
  phase: "restorePhase",
  itemsRestored: "restoreItemsRestored",
  itemsTotal: "restoreItemsTotal",
  warnings: "restoreWarnings",
  errors: "restoreErrors",
  failureReason: "restoreFailureReason",
  validationError: "restoreValidationError",
  started: "restoreStarted",
  completed: "restoreCompleted",
} as const;

/** Scalars only: the first validation error stands for them all (OCM reads one value per path). */
export const RESTORE_FEEDBACK_PATHS: JsonPath[] = [
  { name: RESTORE_FEEDBACK.backupName, path: ".spec.backupName" },
  { name: RESTORE_FEEDBACK.phase, path: ".status.phase" },
  { name: RESTORE_FEEDBACK.itemsRestored, path: ".status.progress.itemsRestored" },
  { name: RESTORE_FEEDBACK.itemsTotal, path: ".status.progress.totalItems" },
  { name: RESTORE_FEEDBACK.warnings, path: ".status.warnings" },
  { name: RESTORE_FEEDBACK.errors, path: ".status.errors" },
  { name: RESTORE_FEEDBACK.failureReason, path: ".status.failureReason" },
  { name: RESTORE_FEEDBACK.validationError, path: ".status.validationErrors[0]" },
  { name: RESTORE_FEEDBACK.started, path: ".status.startTimestamp" },
  { name: RESTORE_FEEDBACK.completed, path: ".status.completionTimestamp" },
];

/** The phases a restore ends in: the HostedCluster resumes, and only a new backupName restores again. */
export const RESTORE_END_PHASES: ReadonlySet<ClusterRestorePhase> = new Set([
  "Completed",
  "PartiallyFailed",
  "Failed",
  "FailedValidation",
]);

/** Velero's Restore phases as status.restore has them: its plugin and finalizing phases are still InProgress. */
const PHASES: Record<RestorePhase, ClusterRestorePhase> = {
  New: "New",
  FailedValidation: "FailedValidation",
  InProgress: "InProgress",
  WaitingForPluginOperations: "InProgress",
  WaitingForPluginOperationsPartiallyFailed: "InProgress",
  Finalizing: "InProgress",
  FinalizingPartiallyFailed: "InProgress",
  Completed: "Completed",
  PartiallyFailed: "PartiallyFailed",
  Failed: "Failed",
};

/** The prefix every backup of the cluster's Schedule has (the CRD refuses a spec.restore without it). */
export function backupNamePrefix(names: ClusterNames): string {
  return `${backupScheduleName(names)}-`;
}

/** Whether the backup is one of this cluster's (its Schedule's name and a dash). */
export function ownBackup(names: ClusterNames, backupName: string): boolean {
  return backupName.startsWith(backupNamePrefix(names));
}

/**
 * `<clusterID>-restore-<10 hex of the backup name's digest>`: one per cluster and backup, a valid
 * label value (at most 63 characters), so another backupName is another Restore.
 */
export function restoreName(names: ClusterNames, backupName: string): string {
  const digest = createHash("sha256").update(backupName).digest("hex").slice(0, 10);
  const suffix = `-restore-${digest}`;
  return `${names.clusterID.slice(0, 63 - suffix.length)}${suffix}`;
}

/** The Velero Restore the cluster's spec.restore asks for; none without one. */
export function restoreManifest(cluster: HcpCluster, names: ClusterNames): Restore | undefined {
  const backupName = cluster.spec.restore?.backupName;
  if (!backupName || !ownBackup(names, backupName)) return undefined;
  return {
    apiVersion: VELERO_API_VERSION,
    kind: RESTORE_KIND,
    metadata: {
      name: restoreName(names, backupName),
      namespace: VELERO_NAMESPACE,
      labels: {
        "api.openshift.com/id": names.clusterID,
        "api.openshift.com/name": cluster.metadata.name ?? "",
      },
    },
    spec: {
      backupName,
      includedNamespaces: [names.hostedClusterNamespace, names.controlPlaneNamespace],
      existingResourcePolicy: "update",
      restorePVs: true,
    },
  };
}

/** The work's feedback rule for the Restore; none without one. */
export function restoreFeedbackConfig(cluster: HcpCluster, names: ClusterNames): ManifestConfigOption[] {
  const backupName = cluster.spec.restore?.backupName;
  if (!backupName || !ownBackup(names, backupName)) return [];
  return [
    {
      resourceIdentifier: {
        group: RestoreResource.group,
        resource: RestoreResource.plural,
        name: restoreName(names, backupName),
        namespace: VELERO_NAMESPACE,
      },
      feedbackRules: [{ type: "JSONPaths", jsonPaths: RESTORE_FEEDBACK_PATHS }],
    },
  ];
}

/** What the Restore reported; absent fields were not reported. */
export interface RestoreReport {
  backupName?: string;
  phase?: ClusterRestorePhase;
  itemsRestored?: number;
  itemsTotal?: number;
  warnings?: number;
  errors?: number;
  failureReason?: string;
  started?: string;
  completed?: string;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);
const count = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;

function phaseOf(v: unknown): ClusterRestorePhase | undefined {
  const s = text(v);
  return s !== undefined && Object.hasOwn(PHASES, s) ? PHASES[s as RestorePhase] : undefined;
}

/** The Restore's feedback values (feedbackOf) as a report. */
export function restoreReport(fb: Record<string, unknown>): RestoreReport {
  const F = RESTORE_FEEDBACK;
  const entries = {
    backupName: text(fb[F.backupName]),
    phase: phaseOf(fb[F.phase]),
    itemsRestored: count(fb[F.itemsRestored]),
    itemsTotal: count(fb[F.itemsTotal]),
    warnings: count(fb[F.warnings]),
    errors: count(fb[F.errors]),
    failureReason: text(fb[F.failureReason]) ?? text(fb[F.validationError]),
    started: text(fb[F.started]),
    completed: text(fb[F.completed]),
  };
  const report: RestoreReport = Object.fromEntries(
    Object.entries(entries).filter(([, v]) => v !== undefined),
  );
  return report;
}

/** status.restore as the Restore reported it. */
function reported(
  report: RestoreReport,
  phase: ClusterRestorePhase,
  restore: string,
): HcpClusterRestoreStatus {
  const { backupName = "", started, completed, failureReason, ...rest } = report;
  const { itemsRestored, itemsTotal, warnings, errors } = rest;
  const counts = Object.entries({ itemsRestored, itemsTotal, warnings, errors }).filter(
    ([, v]) => v !== undefined,
  );
  return {
    backupName,
    restoreName: restore,
    phase,
    ...(started ? { startedAt: started } : {}),
    ...(completed ? { completedAt: completed } : {}),
    ...(Object.fromEntries(counts) as Pick<
      HcpClusterRestoreStatus,
      "itemsRestored" | "itemsTotal" | "warnings" | "errors"
    >),
    ...(failureReason && phase !== "Completed" ? { failureReason } : {}),
  };
}

/** status.restore of a backup not of this cluster (asked at create, when the CRD cannot tell). */
function notOwn(names: ClusterNames, backupName: string, restore: string): HcpClusterRestoreStatus {
  return {
    backupName,
    restoreName: restore,
    phase: "FailedValidation",
    failureReason: `spec.restore.backupName "${backupName}" is not a backup of this cluster: its backups are named ${backupNamePrefix(names)}<yyyyMMddHHmmss>`,
  };
}

/**
 * status.restore: none without spec.restore; the report when it is about the asked backup; else
 * what the status said of the same Restore (a report can be missing for a moment, e.g. while the
 * agent reconnects); else New.
 */
export function restoreStatus(
  cluster: HcpCluster,
  names: ClusterNames,
  report: RestoreReport,
): HcpClusterRestoreStatus | undefined {
  const backupName = cluster.spec.restore?.backupName;
  if (!backupName) return undefined;
  const name = restoreName(names, backupName);
  if (!ownBackup(names, backupName)) return notOwn(names, backupName, name);
  if (report.backupName === backupName && report.phase) return reported(report, report.phase, name);
  const previous = cluster.status?.restore;
  if (previous?.restoreName === name) return previous;
  return { backupName, restoreName: name, phase: "New" };
}

/** status.restore from the cluster's work as observed (observeHostedCluster). */
export function observedRestore(
  cluster: HcpCluster,
  names: ClusterNames,
  work: ManifestWorkObject,
): { status?: HcpClusterRestoreStatus } {
  const backupName = cluster.spec.restore?.backupName;
  if (!backupName) return {};
  const fb = feedbackOf(work, { kind: RESTORE_KIND, name: restoreName(names, backupName) });
  const status = restoreStatus(cluster, names, restoreReport(fb));
  return status ? { status } : {};
}

/**
 * Whether a restore is asked and has not ended: the HostedCluster stays paused meanwhile. With the
 * cluster's names, a backup not of this cluster is never underway (the work carries no Restore).
 */
export function restoreUnderway(cluster: HcpCluster, names?: ClusterNames): boolean {
  const backupName = cluster.spec.restore?.backupName;
  if (!backupName || (names && !ownBackup(names, backupName))) return false;
  const status = cluster.status?.restore;
  return !(status?.backupName === backupName && RESTORE_END_PHASES.has(status.phase));
}

/**
 * The HostedCluster's spec.pausedUntil while a restore is underway: HyperShift's disaster-recovery
 * practice, so its operator does not reconcile the control plane while Velero rewrites it.
 */
export function restorePause(cluster: HcpCluster, names: ClusterNames): { pausedUntil?: string } {
  return restoreUnderway(cluster, names) ? { pausedUntil: "true" } : {};
}

/**
 * What the work is built from of the restore (work-template.ts WorkInputs): empty without one, so
 * a cluster that never restored keeps its inputs' digest.
 */
export function restoreInput(cluster: HcpCluster): string {
  const backupName = cluster.spec.restore?.backupName;
  if (!backupName) return "";
  return `${backupName}:${restoreUnderway(cluster) ? "underway" : "ended"}`;
}

export interface RestoreEvent {
  type: EventSeverity;
  reason: "RestoreStarted" | "RestoreCompleted" | "RestoreFailed";
  message: string;
}

function describeCounts(s: HcpClusterRestoreStatus): string {
  const parts = [`${s.itemsRestored ?? 0} objects restored`];
  if (s.warnings) parts.push(`${s.warnings} warnings`);
  if (s.errors) parts.push(`${s.errors} errors`);
  return parts.join(", ");
}

function endEvent(s: HcpClusterRestoreStatus): RestoreEvent {
  const from = `backup ${s.backupName} (Restore ${VELERO_NAMESPACE}/${s.restoreName})`;
  const why = s.failureReason ? `: ${s.failureReason}` : "";
  switch (s.phase) {
    case "Completed":
      return {
        type: "Normal",
        reason: "RestoreCompleted",
        message: `Restored from ${from}, ${describeCounts(s)}; the HostedCluster resumes`,
      };
    case "PartiallyFailed":
      return {
        type: "Warning",
        reason: "RestoreFailed",
        message: `The restore from ${from} partially failed, ${describeCounts(s)}${why}; the HostedCluster resumes`,
      };
    case "FailedValidation":
      return {
        type: "Warning",
        reason: "RestoreFailed",
        message: `Velero refused the restore from ${from}${why}; nothing was restored and the HostedCluster resumes`,
      };
    default:
      return {
        type: "Warning",
        reason: "RestoreFailed",
        message: `The restore from ${from} failed${why}; the HostedCluster resumes`,
      };
  }
}

function startEvent(s: HcpClusterRestoreStatus): RestoreEvent {
  return {
    type: "Normal",
    reason: "RestoreStarted",
    message: `Restoring from backup ${s.backupName} (Restore ${VELERO_NAMESPACE}/${s.restoreName}); the HostedCluster is paused until it ends`,
  };
}

/**
 * The events a status.restore change deserves: RestoreStarted when Velero starts the asked Restore,
 * RestoreCompleted or RestoreFailed when it ends (a start the reports skipped, one that ended
 * between two of them, is told first: it did start); nothing for a report that repeats the last.
 */
export function restoreEvents(
  before: HcpClusterRestoreStatus | undefined,
  after: HcpClusterRestoreStatus | undefined,
): RestoreEvent[] {
  if (!after) return [];
  const same = before?.restoreName === after.restoreName;
  const started = same && before.phase !== "New";
  if (!RESTORE_END_PHASES.has(after.phase))
    return after.phase === "InProgress" && !started ? [startEvent(after)] : [];
  if (same && RESTORE_END_PHASES.has(before.phase)) return [];
  const skipped = !started && after.phase !== "FailedValidation";
  return [...(skipped ? [startEvent(after)] : []), endEvent(after)];
}
