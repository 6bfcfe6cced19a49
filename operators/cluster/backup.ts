/**
 * Backups of a hosted control plane as ARO HCP takes them (its docs/backups.md): one Velero
 * Schedule per cluster in the `velero` namespace of its management cluster, covering the cluster's
 * two namespaces, carried in the cluster's work; its status comes back through the work's
 * feedback onto status.backup and the condition BackupsHealthy.
 *
 * Velero's Schedule status says when the last Backup started, never how it ended. Whatever plays
 * Velero's reporter on the management cluster (here the HyperShift simulator, velero.ts there)
 * annotates the Schedule with its last Backup's phase, its failure and the last completion
 * (LAST_BACKUP_ANNOTATIONS); without them, a backup that started counts as taken.
 */
import type { BackupSpec, HcpCluster, HcpClusterBackupStatus } from "../api/v1alpha1/index.ts";
import { DEFAULT_BACKUP } from "../api/v1alpha1/index.ts";
import type { ClusterNames } from "../api/v1alpha1/clusternames.ts";
import type { JsonPath, ManifestConfigOption } from "../api/work/v1.ts";
import {
  SCHEDULE_KIND,
  ScheduleResource,
  VELERO_API_VERSION,
  VELERO_NAMESPACE,
  type Schedule,
} from "../api/velero/v1/index.ts";
import type { ConditionInput } from "../runtime/conditions.ts";
import { cronError, parseCron, periodAfter } from "./backup-cron.ts";

export const BACKUPS_HEALTHY = "BackupsHealthy";

/** On the Schedule, written by Velero's reporter: how its newest Backup ended. */
export const LAST_BACKUP_ANNOTATIONS = {
  /** The newest Backup's phase (Completed, Failed, PartiallyFailed, …). */
  phase: "backups.hcp.aro.dev/last-backup-phase",
  /** Its failureReason when it failed. */
  failure: "backups.hcp.aro.dev/last-backup-failure",
  /** RFC 3339: when the newest Completed Backup completed. */
  completed: "backups.hcp.aro.dev/last-completed-backup",
  /** The names of the newest Completed Backups, newest first, comma-separated (at most RECENT_BACKUPS_MAX). */
  recent: "backups.hcp.aro.dev/recent-completed-backups",
} as const;

/** How many completed backups status.backup.recent names (the CRD's maxItems). */
export const RECENT_BACKUPS_MAX = 10;

/** Feedback names of the Schedule in a cluster's work. */
export const BACKUP_FEEDBACK = {
  phase: "schedulePhase",
  lastBackup: "lastBackup",
  validationError: "validationError",
  paused: "schedulePaused",
  created: "scheduleCreated",
  lastPhase: "lastBackupPhase",
  lastFailure: "lastBackupFailure",
  lastCompleted: "lastCompletedBackup",
  recent: "recentBackups",
} as const;

const annotationPath = (key: string): string => `.metadata.annotations['${key}']`;

/** Scalars only: the first validation error stands for them all (OCM reads one value per path). */
export const BACKUP_FEEDBACK_PATHS: JsonPath[] = [
  { name: BACKUP_FEEDBACK.phase, path: ".status.phase" },
  { name: BACKUP_FEEDBACK.lastBackup, path: ".status.lastBackup" },
  { name: BACKUP_FEEDBACK.validationError, path: ".status.validationErrors[0]" },
  { name: BACKUP_FEEDBACK.paused, path: ".spec.paused" },
  { name: BACKUP_FEEDBACK.created, path: ".metadata.creationTimestamp" },
  { name: BACKUP_FEEDBACK.lastPhase, path: annotationPath(LAST_BACKUP_ANNOTATIONS.phase) },
  { name: BACKUP_FEEDBACK.lastFailure, path: annotationPath(LAST_BACKUP_ANNOTATIONS.failure) },
  { name: BACKUP_FEEDBACK.lastCompleted, path: annotationPath(LAST_BACKUP_ANNOTATIONS.completed) },
  { name: BACKUP_FEEDBACK.recent, path: annotationPath(LAST_BACKUP_ANNOTATIONS.recent) },
];

/** spec.backup with the CRD's defaults. */
export function backupSettings(cluster: HcpCluster): Required<BackupSpec> {
  return { ...DEFAULT_BACKUP, ...cluster.spec.backup };
}

/** One per cluster; the cluster ID keeps it unique on a management cluster and short enough for a label value. */
export function backupScheduleName(names: ClusterNames): string {
  return `${names.clusterID}-backup`;
}

/** The Velero Schedule of the cluster's two namespaces. */
export function backupScheduleManifest(cluster: HcpCluster, names: ClusterNames): Schedule {
  const { paused, schedule, retentionHours } = backupSettings(cluster);
  return {
    apiVersion: VELERO_API_VERSION,
    kind: SCHEDULE_KIND,
    metadata: {
      name: backupScheduleName(names),
      namespace: VELERO_NAMESPACE,
      labels: {
        "api.openshift.com/id": names.clusterID,
        "api.openshift.com/name": cluster.metadata.name ?? "",
      },
    },
    spec: {
      schedule,
      paused,
      template: {
        includedNamespaces: [names.hostedClusterNamespace, names.controlPlaneNamespace],
        // Velero's own rendering of a Go duration, so a read back compares equal.
        ttl: `${retentionHours}h0m0s`,
        snapshotVolumes: true,
      },
    },
  };
}

/** The work's feedback rule for the Schedule. */
export function backupFeedbackConfig(names: ClusterNames): ManifestConfigOption {
  return {
    resourceIdentifier: {
      group: ScheduleResource.group,
      resource: ScheduleResource.plural,
      name: backupScheduleName(names),
      namespace: VELERO_NAMESPACE,
    },
    feedbackRules: [{ type: "JSONPaths", jsonPaths: BACKUP_FEEDBACK_PATHS }],
  };
}

/** What the Schedule reported; absent fields were not reported. */
export interface BackupReport {
  phase?: string;
  lastBackup?: string;
  validationError?: string;
  paused?: boolean;
  created?: string;
  lastPhase?: string;
  lastFailure?: string;
  lastCompleted?: string;
  /** Newest first. */
  recent?: string[];
}

function text(v: unknown): string | undefined {
  return typeof v === "string" && v ? v : undefined;
}

/** The reporter's comma-separated list, as names (at most RECENT_BACKUPS_MAX, malformed ones dropped). */
function recentOf(v: unknown): string[] | undefined {
  const list = text(v)
    ?.split(",")
    .map((n) => n.trim())
    .filter((n) => /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(n));
  return list?.length ? list.slice(0, RECENT_BACKUPS_MAX) : undefined;
}

/** The Schedule's feedback values (feedbackOf) as a report. */
export function backupReport(fb: Record<string, unknown>): BackupReport {
  const paused = fb[BACKUP_FEEDBACK.paused];
  const entries = {
    phase: text(fb[BACKUP_FEEDBACK.phase]),
    lastBackup: text(fb[BACKUP_FEEDBACK.lastBackup]),
    validationError: text(fb[BACKUP_FEEDBACK.validationError]),
    paused: typeof paused === "boolean" ? paused : undefined,
    created: text(fb[BACKUP_FEEDBACK.created]),
    lastPhase: text(fb[BACKUP_FEEDBACK.lastPhase]),
    lastFailure: text(fb[BACKUP_FEEDBACK.lastFailure]),
    lastCompleted: text(fb[BACKUP_FEEDBACK.lastCompleted]),
    recent: recentOf(fb[BACKUP_FEEDBACK.recent]),
  };
  const report: BackupReport = Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
  return report;
}

const FAILED_PHASES = new Set(["Failed", "PartiallyFailed", "FailedValidation"]);

export interface BackupVerdict {
  status: HcpClusterBackupStatus;
  condition: ConditionInput;
  /** When BackupsHealthy turns False unless a backup comes first: look again then. */
  overdueAt?: number;
}

function hours(ms: number): string {
  const h = ms / 3_600_000;
  return h >= 1 ? `${Number(h.toFixed(1))}h` : `${Math.round(ms / 60_000)}m`;
}

/**
 * status.backup and BackupsHealthy from the report: Unknown until Velero reports the Schedule;
 * False when Velero refused it, when it is paused, when the newest backup failed, or when no
 * backup completed within twice the schedule's period; True otherwise.
 */
export function backupVerdict(cluster: HcpCluster, report: BackupReport, now: number): BackupVerdict {
  const settings = backupSettings(cluster);
  const paused = report.paused ?? settings.paused;
  const status: HcpClusterBackupStatus = {
    ...(report.phase ? { phase: report.phase } : {}),
    ...(report.lastBackup ? { lastBackupTime: report.lastBackup } : {}),
    paused,
    ...(report.validationError ? { message: report.validationError } : {}),
    ...(report.recent ? { recent: report.recent } : {}),
  };
  const verdict: VerdictOf = (s, reason, message, overdueAt) => ({
    status,
    condition: { type: BACKUPS_HEALTHY, status: s, reason, message },
    ...(overdueAt !== undefined ? { overdueAt } : {}),
  });
  return refusal(report, paused, verdict) ?? freshness(settings.schedule, report, now, verdict);
}

type VerdictOf = (
  s: ConditionInput["status"],
  reason: string,
  message: string,
  overdueAt?: number,
) => BackupVerdict;

/** Why no backup can be counted on, before any time is looked at: no report, refused, paused, failed. */
function refusal(report: BackupReport, paused: boolean, verdict: VerdictOf): BackupVerdict | undefined {
  if (!report.phase || report.phase === "New")
    return verdict("Unknown", "AwaitingReport", "Velero has not reported the backup Schedule yet");
  if (report.phase === "FailedValidation")
    return verdict(
      "False",
      "FailedValidation",
      `Velero refused the backup Schedule: ${report.validationError ?? "no reason given"}`,
    );
  if (paused)
    return verdict("False", "Paused", "Backups are paused (spec.backup.paused); those taken are kept");
  if (report.lastPhase && FAILED_PHASES.has(report.lastPhase))
    return verdict(
      "False",
      "BackupFailed",
      `The last backup ended ${report.lastPhase}: ${report.lastFailure ?? "no reason given"}`,
    );
  return undefined;
}

/** True while a backup completed within twice the period; BackupOverdue after. */
function freshness(
  schedule: string,
  report: BackupReport,
  now: number,
  verdict: (
    s: ConditionInput["status"],
    reason: string,
    message: string,
    overdueAt?: number,
  ) => BackupVerdict,
): BackupVerdict {
  const bad = cronError(schedule);
  if (bad) return verdict("False", "FailedValidation", `spec.backup.schedule: ${bad}`);
  // With no reporter's annotations a started backup counts; before any, the Schedule's creation.
  const last = report.lastCompleted ?? (report.lastPhase ? undefined : report.lastBackup);
  const since = Date.parse(last ?? report.created ?? "");
  if (Number.isNaN(since)) return verdict("Unknown", "AwaitingFirstBackup", "No backup has completed yet");
  const period = periodAfter(parseCron(schedule), new Date(since));
  if (period === undefined)
    return verdict("False", "FailedValidation", `spec.backup.schedule "${schedule}" never fires`);
  const overdueAt = since + 2 * period;
  if (now > overdueAt)
    return verdict(
      "False",
      "BackupOverdue",
      last
        ? `The last backup completed at ${last}, more than twice the schedule's period (${hours(period)}) ago`
        : `No backup has completed since the Schedule was created at ${report.created ?? ""}, twice the schedule's period (${hours(period)}) ago`,
    );
  if (!last) return verdict("Unknown", "AwaitingFirstBackup", "No backup has completed yet", overdueAt);
  return verdict("True", "BackupsCompleting", `The last backup completed at ${last}`, overdueAt);
}
