/**
 * `GET /providers/Microsoft.RedHatOpenShift/operations`: the operations this provider offers, as
 * ARM lists them for RBAC and the portal (one per action on each resource type this frontend
 * serves). Tenant-wide and the same in every api-version, as ARO HCP answers it.
 */
import type { Reply } from "../arm-request.ts";
import { PROVIDER } from "../resource-id.ts";

const DISPLAY_PROVIDER = "Azure Red Hat OpenShift";

interface ResourceTypeDisplay {
  /** Under the provider, e.g. "hcpOpenShiftClusters". */
  type: string;
  plural: string;
  singular: string;
}

const CLUSTERS: ResourceTypeDisplay = {
  type: "hcpOpenShiftClusters",
  plural: "hosted control plane OpenShift clusters",
  singular: "a hosted control plane OpenShift cluster",
};
const NODE_POOLS: ResourceTypeDisplay = {
  type: "hcpOpenShiftClusters/nodePools",
  plural: "node pools",
  singular: "a node pool",
};
const EXTERNAL_AUTHS: ResourceTypeDisplay = {
  type: "hcpOpenShiftClusters/externalAuths",
  plural: "external auths",
  singular: "an external authentication provider",
};
const VERSIONS: ResourceTypeDisplay = {
  type: "locations/hcpOpenShiftVersions",
  plural: "OpenShift versions",
  singular: "the OpenShift versions offered in a location",
};
const ROLE_SETS: ResourceTypeDisplay = {
  type: "locations/hcpOperatorIdentityRoleSets",
  plural: "operator identity role sets",
  singular: "the operator identities and roles an OpenShift version needs",
};
const STATUSES: ResourceTypeDisplay = {
  type: "locations/hcpOperationStatuses",
  plural: "operation statuses",
  singular: "the status of an asynchronous operation",
};
const RESULTS: ResourceTypeDisplay = {
  type: "locations/hcpOperationResults",
  plural: "operation results",
  singular: "the result of an asynchronous operation",
};

type Verb = "read" | "write" | "delete";
const VERB_TEXT: Record<Verb, { imperative: string; third: string }> = {
  read: { imperative: "Read", third: "Reads" },
  write: { imperative: "Create or update", third: "Creates or updates" },
  delete: { imperative: "Delete", third: "Deletes" },
};

function operation(r: ResourceTypeDisplay, verb: Verb) {
  return {
    name: `${PROVIDER}/${r.type}/${verb}`,
    isDataAction: false,
    display: {
      provider: DISPLAY_PROVIDER,
      resource: r.plural,
      operation: `${VERB_TEXT[verb].imperative} ${r.singular}`,
      description: `${VERB_TEXT[verb].third} ${r.singular}.`,
    },
  };
}

export const PROVIDER_OPERATIONS = [
  {
    name: `${PROVIDER}/register/action`,
    isDataAction: false,
    display: {
      provider: DISPLAY_PROVIDER,
      resource: DISPLAY_PROVIDER,
      operation: "Register the subscription with the resource provider",
      description: "Registers the subscription so that it can create OpenShift clusters.",
    },
  },
  ...(["read", "write", "delete"] as const).flatMap((verb) => [
    operation(CLUSTERS, verb),
    operation(NODE_POOLS, verb),
    operation(EXTERNAL_AUTHS, verb),
  ]),
  ...[VERSIONS, ROLE_SETS, STATUSES, RESULTS].map((r) => operation(r, "read")),
  {
    name: `${PROVIDER}/operations/read`,
    isDataAction: false,
    display: {
      provider: DISPLAY_PROVIDER,
      resource: "operations",
      operation: "List the resource provider's operations",
      description: "Lists the operations of the resource provider.",
    },
  },
];

export function listProviderOperations(): Promise<Reply> {
  return Promise.resolve({ status: 200, body: { value: PROVIDER_OPERATIONS } });
}
