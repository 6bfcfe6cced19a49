/**
 * The metav1 shapes every API type is built from: object metadata, the object envelope, a
 * resource's REST identity and the status condition. They live in the API layer so that the API
 * types depend on nothing else; the runtime's client and condition helper re-export them.
 */

/** Identifies a resource type: enough to build its REST paths. */
export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  /** With foreground deletion, the owner stays until this dependent is gone. */
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
}

/** Who wrote which fields (server-side apply's bookkeeping); fieldsV1 is left opaque. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: "Apply" | "Update";
  apiVersion?: string;
  time?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export type ConditionStatus = "True" | "False" | "Unknown";

/** metav1.Condition; the CRDs keep conditions as a list map keyed by type. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  /** RFC 3339, whole seconds, UTC: "2024-05-01T12:00:00Z". */
  lastTransitionTime: string;
  /** CamelCase machine-readable cause; always set. */
  reason: string;
  message: string;
}
