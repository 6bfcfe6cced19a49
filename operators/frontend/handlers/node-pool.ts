/**
 * nodePools: what a node pool adds to the shared flow (resources.ts). Its version must be in the
 * catalog, at most two minors behind its cluster's (OpenShift's skew policy) and, for a new one,
 * not ahead of its control plane; its VM size and the vCPU quota must be in the customer's Azure.
 */
import { compareVersions, poolTooFarBehind } from "../../releases/catalog.ts";
import { isExternalAuth, isNodePool, type ArmCR } from "../mapping/common.ts";
import { versionSpec } from "../mapping/cluster.ts";
import { fieldErrors } from "../errors.ts";
import type { InternalResource, NodePoolProperties } from "../api/internal.ts";
import { checkVersion } from "../versions/openshift-versions.ts";
import type { BodyChange, KindRules } from "./body.ts";
import type { ResourceDeps } from "./deps.ts";

async function checkPoolCatalog(deps: ResourceDeps, change: BodyChange<"nodePool">): Promise<void> {
  const catalog = await deps.catalog.read();
  const version = change.properties.version;
  if (version?.id === undefined) return;
  const errors = checkVersion(catalog, versionSpec(version), "properties.version.id");
  if (errors.length > 0) throw fieldErrors(errors);
}

/** The customer's Azure: a new pool's VM size in its zone and the vCPU quota; a growing one's quota. */
async function checkAzure(deps: ResourceDeps, change: BodyChange<"nodePool">): Promise<void> {
  const { id, doc, properties, stored } = change;
  await deps.azure?.nodePool({
    subscriptionId: id.subscriptionId,
    location: stored?.location ?? doc.location ?? "",
    properties,
    ...(stored ? { stored: stored.properties } : {}),
  });
}

/**
 * The newest version a new node pool may ask for: its cluster's, or the release its control plane
 * is asked to run when that is newer (upgradePolicy AutomaticPatch moves it past the spec).
 */
function controlPlaneCeiling(parent: ArmCR | undefined, clusterVersion: string): string {
  const cluster = parent && !isNodePool(parent) && !isExternalAuth(parent) ? parent : undefined;
  const desired = cluster?.status?.desiredVersion;
  return desired && compareVersions(desired, clusterVersion) > 0 ? desired : clusterVersion;
}

/**
 * Not more than two minors behind the cluster's version; a new pool not ahead of it either: it
 * could never roll out (the controller holds a pool that would run ahead of its control plane).
 */
function checkPoolVersion(
  parent: ArmCR | undefined,
  resource: InternalResource<NodePoolProperties>,
  isNew: boolean,
): InternalResource<NodePoolProperties> {
  const wanted = resource.properties.version?.id;
  const clusterVersion = parent && "version" in parent.spec ? parent.spec.version?.id : undefined;
  if (!wanted || !clusterVersion) return resource;
  const behind = poolTooFarBehind(wanted, clusterVersion);
  if (behind)
    throw fieldErrors([
      { target: "properties.version.id", message: `Node pool version ${wanted} is too old: ${behind}` },
    ]);
  const ceiling = controlPlaneCeiling(parent, clusterVersion);
  if (!isNew || compareVersions(wanted, ceiling) <= 0) return resource;
  throw fieldErrors([
    {
      target: "properties.version.id",
      message: `Node pool version ${wanted} is newer than its cluster's version ${ceiling}; a node pool cannot run ahead of its control plane`,
    },
  ]);
}

export const nodePoolRules: KindRules<"nodePool"> = {
  async checkBody(deps, change) {
    await checkPoolCatalog(deps, change);
    await checkAzure(deps, change);
  },
  checkWithParent: checkPoolVersion,
};
