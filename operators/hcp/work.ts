/**
 * The ManifestWorks the controllers send: one shape for all — manifests applied server-side by the
 * agent, deleted in the foreground, with JSONPath feedback on the one object the controller
 * watches, and optionally objects only read for their feedback (OCM's ReadOnly) — so they cannot
 * drift apart.
 */
import { isDeepStrictEqual } from "node:util";
import type { ManagementCluster } from "../api/v1alpha1/index.ts";
import type { ObjectWriter } from "../runtime/apply.ts";
import type { Lister } from "../runtime/informer.ts";
import type { ResourceType } from "../runtime/kube.ts";
import {
  MANIFEST_WORK_CLEANUP_FINALIZER,
  ManifestWorkResource,
  WORK_API_VERSION,
  type JsonPath,
  type Manifest,
  type ManifestWork,
  type ManifestWorkObject,
} from "../api/work/v1.ts";

/** A typed object as a work manifest (which needs apiVersion and kind set). */
export function asManifest(obj: { apiVersion?: string; kind?: string; metadata: object }): Manifest {
  if (!obj.apiVersion || !obj.kind) throw new Error("a manifest needs apiVersion and kind");
  return obj as unknown as Manifest;
}

export interface WorkSpec {
  name: string;
  /** The management cluster's consumer name: the namespace of the work. */
  consumer: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  manifests: Manifest[];
  /** The object whose status comes back, and the JSONPaths that carry it. */
  feedback: Feedback;
  /**
   * Objects the management cluster has that the work only reads (OCM's ReadOnly strategy: never
   * written, never deleted) for what their feedback carries back.
   */
  readOnly?: Array<Feedback & { manifest: Manifest }>;
}

interface Feedback {
  type: ResourceType;
  name: string;
  namespace: string;
  paths: JsonPath[];
}

const identifier = (f: Feedback) => ({
  group: f.type.group,
  resource: f.type.plural,
  name: f.name,
  namespace: f.namespace,
});

export function manifestWork(spec: WorkSpec): ManifestWork {
  const { feedback } = spec;
  const readOnly = spec.readOnly ?? [];
  return {
    apiVersion: WORK_API_VERSION,
    kind: ManifestWorkResource.kind,
    metadata: {
      name: spec.name,
      namespace: spec.consumer,
      labels: spec.labels,
      annotations: spec.annotations,
      // maestro-server's own finalizer, there from the create: it would add it before publishing
      // anyway (and still does for works other senders make), and that patch was one more write
      // per work, and one more event for every controller watching works.
      finalizers: [MANIFEST_WORK_CLEANUP_FINALIZER],
    },
    spec: {
      workload: { manifests: [...spec.manifests, ...readOnly.map((r) => r.manifest)] },
      deleteOption: { propagationPolicy: "Foreground" },
      manifestConfigs: [
        {
          resourceIdentifier: identifier(feedback),
          updateStrategy: {
            type: "ServerSideApply",
            serverSideApply: { force: true, fieldManager: "work-agent" },
          },
          feedbackRules: [{ type: "JSONPaths", jsonPaths: feedback.paths }],
        },
        ...readOnly.map((r) => ({
          resourceIdentifier: identifier(r),
          updateStrategy: { type: "ReadOnly" as const },
          feedbackRules: [{ type: "JSONPaths" as const, jsonPaths: r.paths }],
        })),
      ],
    },
  };
}

/** Where a work is, or would be had it been applied: its name, in its consumer's namespace. */
export interface WorkRef {
  name: string;
  namespace: string;
}

/**
 * The consumer (namespace of the works) of the ManagementCluster a cluster is placed on, or
 * undefined when it is placed nowhere known.
 */
export function placedConsumer(
  managementClusters: Lister<ManagementCluster>,
  placedOn: string | undefined,
): string | undefined {
  if (!placedOn) return undefined;
  return managementClusters.list().find((m) => m.metadata.name === placedOn)?.spec.consumerName;
}

/**
 * A deletion's step for an owner's works: deletes those the cache shows; when it shows none, the
 * one the owner would have by its name. The cache's word is not enough to let an owner go: it lags
 * behind the apiserver (a watch relisting after an apiserver restart), and a work applied moments
 * before would be orphaned. A DELETE by name settles it: 404 means gone. Resolves with the
 * namespace of the works still there (the caller waits for their agent), or undefined when none is.
 */
export async function deleteOwnedWorks(
  writer: Pick<ObjectWriter, "delete">,
  cached: readonly ManifestWorkObject[],
  expected: WorkRef | undefined,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (cached.length > 0) {
    await deleteWorks(writer, cached, signal);
    return cached[0]?.metadata.namespace ?? "";
  }
  if (expected && (await writer.delete(ManifestWorkResource, expected, { signal })))
    return expected.namespace;
  return undefined;
}

/**
 * Deletes the works that are not being deleted yet. maestro-server keeps each until its agent
 * confirms Deleted, so the caller waits for them to disappear from its informer.
 */
export async function deleteWorks(
  writer: Pick<ObjectWriter, "delete">,
  works: readonly ManifestWorkObject[],
  signal: AbortSignal,
): Promise<void> {
  for (const w of works.filter((w) => !w.metadata.deletionTimestamp))
    await writer.delete(
      ManifestWorkResource,
      { name: w.metadata.name ?? "", namespace: w.metadata.namespace },
      { signal },
    );
}

/** Whether a work's spec (generation), labels, annotations or deletion changed. */
export function workMetadataMoved(before: ManifestWorkObject, after: ManifestWorkObject): boolean {
  const b = before.metadata;
  const a = after.metadata;
  return (
    b.generation !== a.generation ||
    b.deletionTimestamp !== a.deletionTimestamp ||
    !isDeepStrictEqual(b.labels, a.labels) ||
    !isDeepStrictEqual(b.annotations, a.annotations)
  );
}

/**
 * Whether a change of a work is one its sender reads: workMetadataMoved, or its status.
 * maestro-server's finalizer and the managedFields of a write are not, and waking the sender for
 * them cost a reconcile that changed nothing.
 */
export function workChangeWakesSender(before: ManifestWorkObject, after: ManifestWorkObject): boolean {
  return workMetadataMoved(before, after) || !isDeepStrictEqual(before.status, after.status);
}
