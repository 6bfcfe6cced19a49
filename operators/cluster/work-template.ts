/**
 * Which template revision a cluster's work is built from, and whether a work built from an older
 * one may be rewritten now. After an operators upgrade that changes the rendering, rewriting every
 * work at the first reconcile would send every HostedCluster change to the management clusters at
 * once, outside every customer's window. So a work whose cluster did not change (same inputs) and
 * whose revision is older is held until a RefreshWorkTemplate maintenance run raises the
 * cluster's allowed revision; a work whose cluster changed is written at once, with the new
 * template, as a customer's edit always was.
 */
import { createHash } from "node:crypto";
import {
  WORK_TEMPLATE_ALLOWED_ANNOTATION,
  WORK_TEMPLATE_ANNOTATIONS,
  type HcpCluster,
  type HcpClusterWorkTemplateStatus,
} from "../api/v1alpha1/index.ts";
import type { KubeObject } from "../runtime/kube.ts";
import type { ConditionInput } from "../runtime/conditions.ts";

const WORK_TEMPLATE_CONDITION = "WorkTemplateCurrent";

/**
 * What a cluster's work is built from besides the template. Keep this list stable: a change to
 * it makes every work look as if its cluster changed, and they are all written at once.
 */
export interface WorkInputs {
  generation: number;
  release: { version: string; image: string };
  consumer: string;
  signingKeyId: string;
  /** The ExternalAuths the work carries, as its annotation records them (name=generation,…). */
  externalAuths: string;
  /** The etcd keys the work carries, as its annotation records them. */
  etcdKeys: string;
  /**
   * The restore asked and whether it is underway (restore.ts restoreInput): its end unpauses the
   * HostedCluster without a spec change. Empty without one, and then left out of the digest, so a
   * cluster that never restored keeps the digest it had.
   */
  restore?: string;
}

/** A short digest of the inputs, recorded on the work. */
export function inputsDigest(inputs: WorkInputs): string {
  const ordered = [
    inputs.generation,
    inputs.release.version,
    inputs.release.image,
    inputs.consumer,
    inputs.signingKeyId,
    inputs.externalAuths,
    inputs.etcdKeys,
    ...(inputs.restore ? [inputs.restore] : []),
  ];
  return createHash("sha256").update(JSON.stringify(ordered)).digest("base64url").slice(0, 22);
}

/** The annotations the work carries: its revision and its inputs' digest. */
export function templateAnnotations(revision: number, digest: string): Record<string, string> {
  return {
    [WORK_TEMPLATE_ANNOTATIONS.revision]: String(revision),
    [WORK_TEMPLATE_ANNOTATIONS.inputs]: digest,
  };
}

/** A non-negative integer annotation, or undefined when absent or malformed. */
function integerAnnotation(obj: KubeObject | undefined, key: string): number | undefined {
  const raw = obj?.metadata.annotations?.[key];
  if (raw === undefined || !/^\d{1,9}$/.test(raw)) return undefined;
  return Number(raw);
}

/** The revision a stored work was built from; 0 for a work written before revisions were recorded. */
export function workRevisionOf(work: KubeObject): number {
  return integerAnnotation(work, WORK_TEMPLATE_ANNOTATIONS.revision) ?? 0;
}

/** The revision a RefreshWorkTemplate run allowed the cluster's work to be rewritten to; 0 for none. */
export function allowedRevisionOf(cluster: HcpCluster): number {
  return integerAnnotation(cluster, WORK_TEMPLATE_ALLOWED_ANNOTATION) ?? 0;
}

export interface HoldInput {
  /** The cluster's work as stored (the cache), if any. */
  stored: KubeObject | undefined;
  cluster: HcpCluster;
  /** The digest of what the work would be built from now. */
  digest: string;
  /** The revision this controller builds. */
  revision: number;
  /** The ID of the signing key the work would carry now. */
  signingKeyId: string;
}

export type HoldDecision =
  | { write: true; why: "NoWork" | "Current" | "Allowed" | "ClusterChanged" }
  | { write: false; workRevision: number };

/**
 * For a work from before digests were recorded: the cluster's status says its current generation
 * was reconciled (so its work was written for this spec) and the management cluster carries the
 * signing key the work would carry (a rotation's switch is not held).
 */
function unchangedSinceLegacyWork(cluster: HcpCluster, signingKeyId: string): boolean {
  const status = cluster.status;
  return (
    status?.observedGeneration === cluster.metadata.generation &&
    status?.serviceAccountSigningKey?.appliedKeyId === signingKeyId
  );
}

/**
 * Whether the work may be written now. Held only when all of these hold: a work exists, it was
 * built from an older revision, no RefreshWorkTemplate run allowed the current one, and its
 * cluster did not change since (the same inputs digest, or unchangedSinceLegacyWork).
 */
export function templateHold(input: HoldInput): HoldDecision {
  const { stored, cluster, digest, revision } = input;
  if (!stored) return { write: true, why: "NoWork" };
  const workRevision = workRevisionOf(stored);
  if (workRevision >= revision) return { write: true, why: "Current" };
  if (allowedRevisionOf(cluster) >= revision) return { write: true, why: "Allowed" };
  const recorded = stored.metadata.annotations?.[WORK_TEMPLATE_ANNOTATIONS.inputs];
  const unchanged =
    recorded !== undefined ? recorded === digest : unchangedSinceLegacyWork(cluster, input.signingKeyId);
  return unchanged ? { write: false, workRevision } : { write: true, why: "ClusterChanged" };
}

/** The status field: the work's revision (after this reconcile's write, if any) and the current one. */
export function workTemplateStatus(workRevision: number, revision: number): HcpClusterWorkTemplateStatus {
  return { workRevision, currentRevision: revision };
}

/** WorkTemplateCurrent from the status field. */
export function workTemplateCondition(t: HcpClusterWorkTemplateStatus): ConditionInput {
  if (t.workRevision >= t.currentRevision)
    return {
      type: WORK_TEMPLATE_CONDITION,
      status: "True",
      reason: "Current",
      message: `The HostedCluster work is built from template revision ${t.currentRevision}`,
    };
  return {
    type: WORK_TEMPLATE_CONDITION,
    status: "False",
    reason: "OlderTemplate",
    message: `The HostedCluster work was built from template revision ${t.workRevision}; only the template changed since, so revision ${t.currentRevision} waits for a RefreshWorkTemplate maintenance run`,
  };
}
