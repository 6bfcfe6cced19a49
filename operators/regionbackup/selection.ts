/**
 * What a region backup holds: the region's own objects, which nothing can derive again, and none of
 * what the controllers derive from them. One table, read by the backup (what to list) and by the
 * restore (in which order to create, and whether to write a status):
 *
 * | kind                          | which                                                        | tier |
 * |-------------------------------|--------------------------------------------------------------|------|
 * | Namespace                     | labelled hcp.aro.dev/arm-subscription (the subscriptions'),   | 0    |
 * |                               | and every namespace holding an object below                  |      |
 * | Secret                        | operators' namespace, labelled hcp.aro.dev/signing-key-of     | 1    |
 * |                               | (the clusters' service-account signing keyrings)             |      |
 * | Secret                        | operators' namespace, labelled hcp.aro.dev/breakglass (the    | 1    |
 * |                               | key and request the service made for a break-glass credential)|      |
 * | ConfigMap                     | any namespace, labelled hcp.aro.dev/arm-operation (ARM        | 1    |
 * |                               | operations `op-<id>`, frozen or still running deletes)       |      |
 * | ConfigMap                     | operators' namespace, hcp-release-catalog                    | 1    |
 * | ConfigMap                     | operators' namespace, labelled hcp.aro.dev/deleted-cluster   | 1    |
 * |                               | (soft-deleted clusters' records, for undelete and the purge) |      |
 * | ManagementCluster             | all                                                          | 2    |
 * | HcpCluster                    | all                                                          | 3    |
 * | NodePool, ExternalAuth,       | all                                                          | 4    |
 * | BreakglassCredential/-Revocation, MaintenanceTask/-Run, Rollout | all                        |      |
 *
 * Not held: a break-glass credential's kubeconfig Secret in the customer's namespace (the
 * operators may not read Secrets outside their own; it lives a day at most and is requested
 * again), ManifestWorks (each controller writes its work again from the CR), Events and Leases
 * (history and liveness, not state), the release graph's ConfigMap hcp-release-graph (derived from
 * the catalog), the orphan sweep's report (derived from Azure).
 *
 * The labels are the controllers' own (cluster/oidc.ts SIGNING_KEY_LABEL, api WORK_LABELS.breakglass
 * and ARM_LABELS); this folder is a library and may not import a controller, so the signing-key
 * label is written out here and the integration test holds it equal to the controller's.
 */
import { ConfigMapResource, NamespaceResource, SecretResource } from "../api/core.ts";
import type { KubeObject, ResourceType } from "../api/meta/v1.ts";
import {
  ARM_LABELS,
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  ExternalAuthResource,
  HcpClusterResource,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  ManagementClusterResource,
  NodePoolResource,
  RolloutResource,
  WORK_LABELS,
} from "../api/v1alpha1/index.ts";
import { DELETED_CLUSTER_LABEL } from "../api/v1alpha1/deleted-cluster.ts";
import { CATALOG_CONFIGMAP } from "../releases/catalog.ts";

/** cluster/oidc.ts SIGNING_KEY_LABEL: on each signing keyring Secret, the owning HcpCluster's uid. */
export const SIGNING_KEY_LABEL = "hcp.aro.dev/signing-key-of";

/** One list the backup makes. */
export interface SelectionEntry {
  type: ResourceType;
  /** Restore order: a lower tier is created first. */
  tier: number;
  /** In the operators' namespace only; else every namespace (or cluster-scoped). */
  operatorsNamespaceOnly?: boolean;
  labelSelector?: string;
  /** Only this object by name. */
  name?: string;
  /** Whether the status is written back through /status. */
  status: boolean;
  /** Why it is held, for the docs and the summary. */
  why: string;
}

const crd = (type: ResourceType, tier: number, why: string): SelectionEntry => ({
  type,
  tier,
  status: true,
  why,
});

/** Everything but the namespaces, which follow from what is listed here (namespacesOf). */
export const SELECTION: readonly SelectionEntry[] = [
  {
    type: SecretResource,
    tier: 1,
    operatorsNamespaceOnly: true,
    labelSelector: SIGNING_KEY_LABEL,
    status: false,
    why: "service-account signing keyrings",
  },
  {
    type: SecretResource,
    tier: 1,
    operatorsNamespaceOnly: true,
    labelSelector: WORK_LABELS.breakglass,
    status: false,
    why: "break-glass keys",
  },
  {
    type: ConfigMapResource,
    tier: 1,
    labelSelector: ARM_LABELS.operation,
    status: false,
    why: "ARM operations",
  },
  {
    type: ConfigMapResource,
    tier: 1,
    operatorsNamespaceOnly: true,
    name: CATALOG_CONFIGMAP,
    status: false,
    why: "the release catalog",
  },
  {
    type: ConfigMapResource,
    tier: 1,
    operatorsNamespaceOnly: true,
    labelSelector: DELETED_CLUSTER_LABEL,
    status: false,
    why: "soft-deleted clusters",
  },
  crd(ManagementClusterResource, 2, "management clusters"),
  crd(HcpClusterResource, 3, "hosted clusters"),
  crd(NodePoolResource, 4, "node pools"),
  crd(ExternalAuthResource, 4, "external auths"),
  crd(BreakglassCredentialResource, 4, "break-glass credentials"),
  crd(BreakglassRevocationResource, 4, "break-glass revocations"),
  crd(MaintenanceTaskResource, 4, "maintenance tasks"),
  crd(MaintenanceRunResource, 4, "maintenance runs"),
  crd(RolloutResource, 4, "rollouts"),
];

/** The hcp.aro.dev kinds: a restore needs each one's CRD, and refuses while any cluster exists. */
export const REGION_KINDS: readonly ResourceType[] = SELECTION.filter((e) => e.status).map((e) => e.type);

/** Namespaces: the subscriptions' by label; those holding a held object are added by name. */
export const NAMESPACES: SelectionEntry = {
  type: NamespaceResource,
  tier: 0,
  labelSelector: ARM_LABELS.subscription,
  status: false,
  why: "customer (subscription) namespaces",
};

const ALL_TYPES = [NAMESPACES, ...SELECTION];

/** `group/kind`, the key of a type in a document ("" group for core). */
export function typeKey(t: Pick<ResourceType, "group" | "kind">): string {
  return `${t.group}/${t.kind}`;
}

/** The selection's type for an apiVersion and kind, or undefined for a kind a backup never holds. */
export function typeOf(apiVersion: string | undefined, kind: string | undefined): SelectionEntry | undefined {
  const group = (apiVersion ?? "").includes("/") ? (apiVersion ?? "").split("/")[0] : "";
  return ALL_TYPES.find((e) => e.type.kind === kind && e.type.group === group);
}

/** The selection's entry of a document's type key. */
export function entryOfKey(key: string): SelectionEntry | undefined {
  return ALL_TYPES.find((e) => typeKey(e.type) === key);
}

/** Set by the apiserver: never stored, never sent back. */
const SERVER_SET = [
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "managedFields",
  "generation",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
] as const;

/**
 * The object as it is stored: without what the apiserver sets, with spec, status, labels,
 * annotations, finalizers and ownerReferences (whose uids the restore maps to the new owners).
 */
export function stripServerSet(obj: KubeObject, t: ResourceType): KubeObject {
  const metadata: Record<string, unknown> = { ...obj.metadata };
  for (const field of SERVER_SET) delete metadata[field];
  const apiVersion = t.group ? `${t.group}/${t.version}` : t.version;
  return { ...obj, apiVersion, kind: t.kind, metadata };
}
