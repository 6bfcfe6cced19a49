/**
 * Velero's Schedule, Backup, Restore and BackupStorageLocation (`velero.io/v1`), the subset this project
 * writes and reads: the management clusters serve the CRDs of `github.com/vmware-tanzu/velero@v1.18.3`
 * (`config/crd/v1/bases/`, hack/harness/upstream.ts). JSON names are Velero's. ARO HCP runs one
 * Schedule per hosted cluster in the `velero` namespace of its management cluster, covering the
 * cluster's two namespaces (ARO HCP's docs/backups.md).
 */
import type { KubeObject, ResourceType } from "../../meta/v1.ts";

export const VELERO_GROUP = "velero.io";
export const VELERO_VERSION = "v1";
export const VELERO_API_VERSION = `${VELERO_GROUP}/${VELERO_VERSION}` as const;
export const SCHEDULE_KIND = "Schedule";
export const BACKUP_KIND = "Backup";
export const RESTORE_KIND = "Restore";

/** Where Velero runs and keeps its Schedules and Backups on a management cluster. */
export const VELERO_NAMESPACE = "velero";

/** The label Velero puts on each Backup a Schedule made, naming the Schedule. */
export const SCHEDULE_NAME_LABEL = "velero.io/schedule-name";
/** The label naming the BackupStorageLocation a Backup went to. */
export const STORAGE_LOCATION_LABEL = "velero.io/storage-location";

/** Has no status subresource in v1.18.3 (`subresources: {}`): status is written with the object. */
export const ScheduleResource = {
  group: VELERO_GROUP,
  version: VELERO_VERSION,
  kind: SCHEDULE_KIND,
  plural: "schedules",
  namespaced: true,
} as const satisfies ResourceType;

/** Has no status subresource: status is written with the object. */
export const BackupResource = {
  group: VELERO_GROUP,
  version: VELERO_VERSION,
  kind: BACKUP_KIND,
  plural: "backups",
  namespaced: true,
} as const satisfies ResourceType;

/** Has no status subresource: status is written with the object. */
export const RestoreResource = {
  group: VELERO_GROUP,
  version: VELERO_VERSION,
  kind: RESTORE_KIND,
  plural: "restores",
  namespaced: true,
} as const satisfies ResourceType;

export const BackupStorageLocationResource = {
  group: VELERO_GROUP,
  version: VELERO_VERSION,
  kind: "BackupStorageLocation",
  plural: "backupstoragelocations",
  namespaced: true,
} as const satisfies ResourceType;

/** What a Backup takes; a Schedule's template is one. */
export interface BackupSpec {
  includedNamespaces?: string[];
  /** A Go duration ("168h0m0s"): how long the Backup is kept. */
  ttl?: string;
  /** The BackupStorageLocation; none: the one marked default. */
  storageLocation?: string;
  snapshotVolumes?: boolean;
}

export type SchedulePhase = "New" | "Enabled" | "FailedValidation";

export interface Schedule extends KubeObject {
  spec: {
    /** A cron expression (5 fields, or a descriptor such as @every 1h). Required. */
    schedule: string;
    template: BackupSpec;
    paused?: boolean;
    /** Velero backs up at once when a Schedule is created (or unpaused) unless this is true. */
    skipImmediately?: boolean;
    useOwnerReferencesInBackup?: boolean;
  };
  status?: {
    phase?: SchedulePhase;
    /** RFC 3339: when the last Backup of this Schedule was created. */
    lastBackup?: string;
    lastSkipped?: string;
    validationErrors?: string[];
  };
}

export type BackupPhase =
  | "New"
  | "Queued"
  | "ReadyToStart"
  | "FailedValidation"
  | "InProgress"
  | "WaitingForPluginOperations"
  | "WaitingForPluginOperationsPartiallyFailed"
  | "Finalizing"
  | "FinalizingPartiallyFailed"
  | "Completed"
  | "PartiallyFailed"
  | "Failed"
  | "Deleting";

export interface Backup extends KubeObject {
  spec: BackupSpec;
  status?: {
    phase?: BackupPhase;
    startTimestamp?: string;
    completionTimestamp?: string;
    /** When the Backup is past its TTL and goes. */
    expiration?: string;
    failureReason?: string;
    validationErrors?: string[];
  };
}

export type RestorePhase =
  | "New"
  | "FailedValidation"
  | "InProgress"
  | "WaitingForPluginOperations"
  | "WaitingForPluginOperationsPartiallyFailed"
  | "Finalizing"
  | "FinalizingPartiallyFailed"
  | "Completed"
  | "PartiallyFailed"
  | "Failed";

export interface Restore extends KubeObject {
  spec: {
    /** The Backup to restore from (or scheduleName: its newest completed one). */
    backupName?: string;
    /** Velero fills it in from the Backup's schedule label. */
    scheduleName?: string;
    includedNamespaces?: string[];
    /** "update": objects that exist are updated to the backup's copy; "none" (default): left alone. */
    existingResourcePolicy?: "none" | "update";
    restorePVs?: boolean;
  };
  status?: {
    phase?: RestorePhase;
    validationErrors?: string[];
    warnings?: number;
    errors?: number;
    failureReason?: string;
    startTimestamp?: string;
    completionTimestamp?: string;
    /** Best effort, as Velero says. */
    progress?: { totalItems?: number; itemsRestored?: number };
  };
}

export interface BackupStorageLocation extends KubeObject {
  spec: {
    /** "azure" for the Azure plugin. */
    provider: string;
    default?: boolean;
    objectStorage: {
      /** For Azure: the blob container. */
      bucket: string;
      prefix?: string;
      /** Base64 of a PEM bundle to trust for the storage endpoint. */
      caCert?: string;
    };
    /** The Azure plugin's: storageAccount, resourceGroup, storageAccountURI, … */
    config?: Record<string, string>;
    /** The Secret key holding the plugin's credentials file (KEY=value lines). */
    credential?: { name: string; key: string };
  };
  status?: { phase?: "Available" | "Unavailable"; message?: string };
}
