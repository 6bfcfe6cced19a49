/**
 * ARO HCP's conflict rules (B.3): ARM allows one operation at a time on a resource, none under a
 * parent cluster that is not settled, and a DELETE is refused only while one is deleting. An
 * operation past its deadline leaves the resource Failed, which takes the next request.
 */
import {
  type HcpCluster,
  isTerminal,
  type ProvisioningState,
  resourceState,
} from "../../api/v1alpha1/index.ts";
import { isExternalAuth, isNodePool, type ArmCR } from "../mapping/common.ts";
import { conflict, resourceNotFound, type CloudError } from "../errors.ts";
import type { InternalResource } from "../api/internal.ts";
import { clusterOf, resourceType, type ResourceId } from "../resource-id.ts";
import type { ResourceDeps } from "./deps.ts";
import { findCR, targetOf, type Target } from "./target.ts";

const stateWord = (s: ProvisioningState): string => (s === "Deleting" ? "deleting" : "provisioning");

export const busy = (state: ProvisioningState): CloudError =>
  conflict(`Cannot update resource while resource is "${state.toLowerCase()}"`);

/**
 * A node pool whose controller holds its current version back (ValidVersion False at this
 * generation: ahead of the control plane, unknown, a downgrade): no rollout runs for it.
 */
function heldOnVersion(cr: ArmCR): boolean {
  if (!isNodePool(cr)) return false;
  const valid = cr.status?.conditions?.find((c) => c.type === "ValidVersion");
  return valid?.status === "False" && valid.observedGeneration === cr.metadata.generation;
}

/** 409 unless the parent cluster of a node pool or external auth is settled. */
export async function checkParent(
  deps: ResourceDeps,
  id: ResourceId,
  verb: "create" | "update" | "delete",
): Promise<ArmCR | undefined> {
  if (id.kind === "cluster") return undefined;
  const parentId = clusterOf(id);
  const parent = await findCR(deps.client, "cluster", targetOf(parentId));
  if (!parent) throw resourceNotFound(resourceType("cluster"), parentId.cluster, id.resourceGroup);
  const { state } = resourceState(parent);
  if (state === "Accepted" || state === "Provisioning" || state === "Deleting")
    throw conflict(`Cannot ${verb} resource while parent resource is ${stateWord(state)}`);
  // A parent whose delete ran past its deadline (Failed) is still going: nothing new goes under it.
  if (parent.metadata.deletionTimestamp && verb !== "delete")
    throw conflict(`Cannot ${verb} resource while parent resource is deleting`);
  return parent;
}

/**
 * 409 while an operation runs on the resource. A node pool held on its version has nothing under
 * way for it, so the change that gets it out, a new version, passes; true when only that change
 * may (checkVersionFix, once the body is read).
 */
export function checkSettled(cr: ArmCR): boolean {
  const { state } = resourceState(cr);
  if (isTerminal(state)) return false;
  if (heldOnVersion(cr)) return true;
  throw busy(state);
}

export function checkVersionFix(cr: ArmCR, stored: InternalResource, resource: InternalResource): void {
  if (resource.properties.version?.id === stored.properties.version?.id) throw busy(resourceState(cr).state);
}

/** The cluster of a credential action, settled: 409 while it is not, as for any other change. */
export async function settledCluster(
  deps: ResourceDeps,
  id: ResourceId,
): Promise<{ cluster: HcpCluster; t: Target }> {
  const t = targetOf(id);
  const cr = await findCR(deps.client, "cluster", t);
  if (!cr || isNodePool(cr) || isExternalAuth(cr))
    throw resourceNotFound(resourceType("cluster"), id.cluster, id.resourceGroup);
  const { state } = resourceState(cr);
  if (!isTerminal(state)) throw busy(state);
  if (cr.metadata.deletionTimestamp) throw busy("Deleting");
  return { cluster: cr, t };
}
