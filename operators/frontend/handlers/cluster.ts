/**
 * hcpOpenShiftClusters: what a cluster adds to the shared flow (resources.ts). A new one gets the
 * service's defaults; its operator identities follow the identity rules; its version must be in
 * the catalog and, when it changes, reachable on the update graph; a new one's DNS prefix must be
 * free in the region; its identities, their roles and its KMS key must be in the customer's
 * Azure. Deleting it ends the running operations of its node pools and external auths.
 */
import type { ExternalAuth, HcpCluster, NodePool, VersionSpec } from "../../api/v1alpha1/index.ts";
import { clusterVersionHold } from "../versions/cluster-version.ts";
import { defaultClusterProperties, versionSpec } from "../mapping/cluster.ts";
import { isExternalAuth, isNodePool } from "../mapping/common.ts";
import { fieldErrors } from "../errors.ts";
import type { ClusterProperties } from "../api/internal.ts";
import type { VersionedBody } from "../api/conversion.ts";
import { checkOperatorIdentities } from "../checks/managed-identities.ts";
import { ARM_LABELS } from "../../api/v1alpha1/index.ts";
import { checkVersion, defaultVersion, type Catalog } from "../versions/openshift-versions.ts";
import type { ResourceId } from "../resource-id.ts";
import { checkDnsPrefixFree, crType } from "../service-cluster.ts";
import type { BodyChange, KindRules } from "./body.ts";
import type { ResourceDeps } from "./deps.ts";
import { findCR, targetOf, type Target } from "./target.ts";

function checkIdentities(doc: VersionedBody, properties: ClusterProperties): void {
  const errors = checkOperatorIdentities(doc.identity, properties);
  if (errors.length > 0) throw fieldErrors(errors);
}

/** The same version id and channel group (stable when none is named). */
function sameVersion(a: { id?: string; channelGroup?: string } | undefined, b: VersionSpec): boolean {
  return a?.id === b.id && (a.channelGroup ?? "stable") === (b.channelGroup ?? "stable");
}

/** The stored cluster and its node pools, which a change of its version is planned with. */
async function clusterAndPools(
  deps: ResourceDeps,
  id: ResourceId,
): Promise<{ existing: HcpCluster; pools: NodePool[] } | undefined> {
  const t = targetOf(id);
  const existing = await findCR(deps.client, "cluster", t);
  if (!existing || isNodePool(existing) || isExternalAuth(existing)) return undefined;
  const pools = await deps.client.list<NodePool>(crType("nodePool"), {
    namespace: t.namespace,
    labelSelector: `${ARM_LABELS.cluster}=${t.name}`,
  });
  return { existing, pools: pools.items };
}

/**
 * A cluster's version on the update graph (cluster-version.ts): a new one offered and not past
 * its end of life; a changed one reachable from what the cluster runs, leaving no node pool more
 * than two minors behind. An unchanged version is not judged again: a cluster on a release past
 * its end of life keeps running and takes other updates.
 */
async function checkOnGraph(
  deps: ResourceDeps,
  { id, stored }: BodyChange<"cluster">,
  catalog: Catalog,
  version: VersionSpec,
): Promise<void> {
  if (stored && sameVersion(stored.properties.version, version)) return;
  const cluster = stored ? await clusterAndPools(deps, id) : undefined;
  const hold = clusterVersionHold({
    catalog: catalog.catalog,
    version,
    ...cluster,
    now: (deps.now ?? Date.now)(),
  });
  if (hold) throw fieldErrors([{ target: "properties.version.id", message: hold.message }]);
}

/**
 * The version must be in the catalog and on the update graph; a 2024-06-10-preview cluster
 * without one gets the newest stable.
 */
async function checkClusterVersion(deps: ResourceDeps, change: BodyChange<"cluster">): Promise<void> {
  const { properties } = change;
  const catalog = await deps.catalog.read();
  const version = properties.version;
  if (version?.id === undefined) {
    const newest = defaultVersion(catalog, version?.channelGroup);
    if (!newest)
      throw fieldErrors([
        { target: "properties.version.id", message: "Missing required field 'properties.version.id'" },
      ]);
    properties.version = { ...(version ?? {}), id: newest };
    return;
  }
  if (catalog) return checkOnGraph(deps, change, catalog, versionSpec(version));
  const errors = checkVersion(catalog, versionSpec(version), "properties.version.id");
  if (errors.length > 0) throw fieldErrors(errors);
}

/** A new cluster's DNS prefix must be free in the region. */
async function checkDnsPrefix(
  deps: ResourceDeps,
  id: ResourceId,
  properties: ClusterProperties,
): Promise<void> {
  const prefix = properties.dns?.baseDomainPrefix;
  if (prefix !== undefined) await checkDnsPrefixFree(deps.client, prefix, targetOf(id));
}

/**
 * What the customer's Azure must hold for a new cluster: its identities, their roles and its KMS
 * key; on an update, the identities it names anew and a changed key.
 */
async function checkAzure(deps: ResourceDeps, change: BodyChange<"cluster">): Promise<void> {
  const { id, doc, properties, stored } = change;
  await deps.azure?.cluster({
    subscriptionId: id.subscriptionId,
    identity: doc.identity,
    properties,
    ...(stored ? { stored: stored.properties } : {}),
  });
}

/**
 * Node pools and external auths go with their cluster (the cluster controller deletes them); their
 * running operations end.
 */
async function cancelChildren(deps: ResourceDeps, t: Target): Promise<void> {
  for (const kind of ["nodePool", "externalAuth"] as const) {
    const children = await deps.client.listAll<NodePool | ExternalAuth>(crType(kind), {
      namespace: t.namespace,
      labelSelector: `${ARM_LABELS.cluster}=${t.name}`,
    });
    for (const c of children.items) await deps.operations.retire(t.namespace, c);
  }
}

export const clusterRules: KindRules<"cluster"> = {
  createDefaults: defaultClusterProperties,
  async checkBody(deps, change) {
    checkIdentities(change.doc, change.properties);
    await checkClusterVersion(deps, change);
    // Last, once the body is known good: a look-up across the region, then Azure.
    if (!change.stored) await checkDnsPrefix(deps, change.id, change.properties);
    await checkAzure(deps, change);
  },
  beforeDelete: cancelChildren,
};
