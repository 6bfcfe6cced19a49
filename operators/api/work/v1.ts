/**
 * ManifestWork (work.open-cluster-management.io/v1), the Open Cluster Management work API that the
 * service cluster serves and Maestro carries. Mirrors crds/work.open-cluster-management.io_manifestworks.yaml,
 * which is schema-compatible with OCM's CRD. JSON names are OCM's.
 *
 * Over CloudEvents no API server applies CRD defaults, so code that reads a ManifestWork from the
 * wire must treat every defaulted field (marked "default") as possibly absent.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";

export const WORK_GROUP = "work.open-cluster-management.io";
export const WORK_VERSION = "v1";
export const WORK_API_VERSION = `${WORK_GROUP}/${WORK_VERSION}` as const;
export const MANIFEST_WORK_KIND = "ManifestWork";

export const ManifestWorkResource = {
  group: WORK_GROUP,
  version: WORK_VERSION,
  kind: MANIFEST_WORK_KIND,
  plural: "manifestworks",
  namespaced: true,
} as const satisfies ResourceType;

/** Finalizer OCM's hub puts on a ManifestWork until the agent has cleaned up. */
export const MANIFEST_WORK_CLEANUP_FINALIZER = "cluster.open-cluster-management.io/manifest-work-cleanup";

/** A ManifestWork whole or as cached (CachedManifestWork): what code that reads only metadata and status takes. */
export interface ManifestWorkObject extends KubeObject {
  apiVersion?: typeof WORK_API_VERSION;
  kind?: typeof MANIFEST_WORK_KIND;
  status?: ManifestWorkStatus;
}

export interface ManifestWork extends ManifestWorkObject {
  spec?: ManifestWorkSpec;
}

/**
 * A ManifestWork as the service cluster's informer caches it: the spec, most of a work's bytes
 * (manifests, feedback rules, update strategies), is summarised as the number of manifests. Only
 * maestro-server needs the spec, once per generation sent, and it reads it from the apiserver
 * then; every other reader wants metadata and status.
 */
export interface CachedManifestWork extends ManifestWorkObject {
  spec?: { workload?: { manifestCount: number } };
}

/** The informer transform that makes a CachedManifestWork. */
export function summariseWorkSpec(work: ManifestWork): CachedManifestWork {
  const { spec, ...rest } = work;
  if (!spec) return rest;
  return { ...rest, spec: { workload: { manifestCount: spec.workload?.manifests?.length ?? 0 } } };
}

/** A complete Kubernetes object inside a ManifestWork (x-kubernetes-embedded-resource). */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; [field: string]: unknown };
  [field: string]: unknown;
}

export interface ManifestWorkSpec {
  workload?: { manifests?: Manifest[] };
  deleteOption?: DeleteOption;
  manifestConfigs?: ManifestConfigOption[];
  executor?: ManifestWorkExecutor;
}

export type DeletePropagationPolicy = "Foreground" | "Orphan" | "SelectivelyOrphan";

export interface DeleteOption {
  /** default "Foreground". */
  propagationPolicy?: DeletePropagationPolicy;
  selectivelyOrphans?: { orphaningRules?: ResourceIdentifier[] };
  /** Delete the work this long after it is Complete. */
  ttlSecondsAfterFinished?: number;
}

/** An object of the work by group, resource (plural), name and namespace ("" = core / cluster-scoped). */
export interface ResourceIdentifier {
  group?: string;
  resource: string;
  name: string;
  namespace?: string;
}

export interface ManifestConfigOption {
  resourceIdentifier: ResourceIdentifier;
  feedbackRules?: FeedbackRule[];
  updateStrategy?: UpdateStrategy;
  /** A list map keyed by condition. */
  conditionRules?: ConditionRule[];
  /** default "Poll". */
  feedbackScrapeType?: "Poll" | "Watch";
}

export type FeedbackRuleType = "WellKnownStatus" | "JSONPaths";

export interface FeedbackRule {
  type: FeedbackRuleType;
  /** For JSONPaths; a list map keyed by name. */
  jsonPaths?: JsonPath[];
}

export interface JsonPath {
  name: string;
  /** API version to read the object at; empty means the preferred version. */
  version?: string;
  /** kubectl-style JSONPath below .status. */
  path: string;
}

export type UpdateStrategyType = "Update" | "CreateOnly" | "ServerSideApply" | "ReadOnly";

export interface UpdateStrategy {
  /** default "Update" (also the agent's choice when no manifestConfig matches). */
  type: UpdateStrategyType;
  serverSideApply?: ServerSideApplyConfig;
}

export interface ServerSideApplyConfig {
  force?: boolean;
  /** default "work-agent"; must start with "work-agent". */
  fieldManager?: string;
  /** A list map keyed by condition. */
  ignoreFields?: IgnoreField[];
}

export type IgnoreFieldsCondition = "OnSpokePresent" | "OnSpokeChange";

export interface IgnoreField {
  /** default "OnSpokePresent". */
  condition: IgnoreFieldsCondition;
  /** At least one. */
  jsonPaths: string[];
}

export type ConditionRuleType = "WellKnownConditions" | "CEL";

export interface ConditionRule {
  /** Condition type the rule sets; required non-empty for CEL rules. */
  condition: string;
  type: ConditionRuleType;
  celExpressions?: string[];
  message?: string;
  messageExpression?: string;
}

export interface ManifestWorkExecutor {
  subject?: {
    type: "ServiceAccount";
    serviceAccount?: { namespace: string; name: string };
  };
}

/** metav1.Condition. */
export interface WorkCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** Work-level condition types; Deleted exists only on the CloudEvents wire. */
export const WORK_CONDITION_TYPES = {
  Applied: "Applied",
  Available: "Available",
  Progressing: "Progressing",
  Degraded: "Degraded",
  Complete: "Complete",
  Deleting: "Deleting",
  Deleted: "Deleted",
} as const;

/** Per-manifest condition types. */
export const MANIFEST_CONDITION_TYPES = {
  Applied: "Applied",
  Available: "Available",
  StatusFeedbackSynced: "StatusFeedbackSynced",
  Progressing: "Progressing",
  Degraded: "Degraded",
  Complete: "Complete",
} as const;

export interface ManifestWorkStatus {
  /** A list map keyed by type. */
  conditions?: WorkCondition[];
  resourceStatus?: { manifests?: ManifestCondition[] };
}

export interface ManifestCondition {
  resourceMeta: ManifestResourceMeta;
  statusFeedback?: { values?: FeedbackValue[] };
  conditions: WorkCondition[];
}

export interface ManifestResourceMeta {
  /** Index of the manifest in spec.workload.manifests. */
  ordinal: number;
  group?: string;
  version?: string;
  kind?: string;
  resource?: string;
  name?: string;
  namespace?: string;
}

export interface FeedbackValue {
  name: string;
  fieldValue: FieldValue;
}

export type FieldValue =
  | { type: "Integer"; integer?: number }
  | { type: "String"; string?: string }
  | { type: "Boolean"; boolean?: boolean }
  /** JSON text of a list or object; up to 1 MiB here (OCM's CRD: 1024). */
  | { type: "JsonRaw"; jsonRaw?: string };
