/**
 * externalAuths: what an external auth adds to the shared flow (resources.ts). ARO HCP takes one
 * per cluster (and HyperShift one OIDC provider); it has no location of its own and no version,
 * and nothing of it is in the customer's Azure.
 */
import type { ExternalAuth } from "../../api/v1alpha1/index.ts";
import type { ArmCR } from "../mapping/common.ts";
import { CloudError, CODES } from "../errors.ts";
import type { ExternalAuthProperties, InternalResource } from "../api/internal.ts";
import { ARM_LABELS } from "../../api/v1alpha1/index.ts";
import { crType } from "../service-cluster.ts";
import type { KindRules } from "./body.ts";
import type { ResourceDeps } from "./deps.ts";
import { fromCR, type Target } from "./target.ts";

/** A create while the cluster has an external auth, deleting or not, is refused. */
async function checkOnlyExternalAuth(deps: ResourceDeps, t: Target): Promise<void> {
  const others = await deps.client.list<ExternalAuth>(crType("externalAuth"), {
    namespace: t.namespace,
    labelSelector: `${ARM_LABELS.cluster}=${t.clusterName ?? ""}`,
    limit: 1,
  });
  if (others.items.length === 0) return;
  throw new CloudError(400, {
    code: CODES.InvalidRequestContent,
    message:
      "Forbidden: There are other external auths on the cluster. Only one external auth is allowed per cluster.",
    target: "name",
  });
}

/**
 * A ProxyResource without a location: its operations live in its cluster's. Stored in its
 * envelope, never shown (its schema has no location).
 */
function withParentLocation(
  parent: ArmCR | undefined,
  resource: InternalResource<ExternalAuthProperties>,
): InternalResource<ExternalAuthProperties> {
  if (resource.location || !parent) return resource;
  return { ...resource, location: fromCR("cluster", parent).location };
}

export const externalAuthRules: KindRules<"externalAuth"> = {
  checkBody: () => Promise.resolve(),
  checkCreate: checkOnlyExternalAuth,
  checkWithParent: withParentLocation,
};
