/**
 * The operators of a cluster that run as the customer's user-assigned managed identities, which
 * OpenShift versions need each, whether always or only once a feature that uses it is enabled,
 * and the Azure built-in roles each identity must hold; served as
 * `locations/{loc}/hcpOperatorIdentityRoleSets[/{major.minor}]`. The facts are ARO HCP's (its
 * cluster-scoped identities configuration): every operator from OpenShift 4.19, the key
 * management one (KMS) on enablement of customer-managed etcd keys.
 */
import { CloudError, CODES } from "./errors.ts";
import type { ArmRequest, Reply } from "./arm-request.ts";
import { PROVIDER } from "./resource-id.ts";
import { compareVersions } from "../releases/catalog.ts";
import type { CatalogReader } from "./openshift-versions.ts";

export const ROLE_SET_TYPE = `${PROVIDER}/locations/hcpOperatorIdentityRoleSets`;

export type IdentityRequired = "Always" | "OnEnablement";

interface RoleDefinition {
  name: string;
  resourceId: string;
}

interface OperatorIdentity {
  /** The key in controlPlaneOperators / dataPlaneOperators. */
  name: string;
  required: IdentityRequired;
  /** The first OpenShift major.minor that uses it. */
  since: string;
  role: RoleDefinition;
}

const role = (name: string, guid: string): RoleDefinition => ({
  name,
  resourceId: `/providers/Microsoft.Authorization/roleDefinitions/${guid}`,
});

const ROLES = {
  clusterApi: role(
    "Azure Red Hat OpenShift Hosted Control Planes Cluster API Provider",
    "88366f10-ed47-4cc0-9fab-c8a06148393e",
  ),
  controlPlane: role(
    "Azure Red Hat OpenShift Hosted Control Planes Control Plane Operator",
    "fc0c873f-45e9-4d0d-a7d1-585aab30c6ed",
  ),
  cloudControllerManager: role(
    "Azure Red Hat OpenShift Cloud Controller Manager",
    "a1f96423-95ce-4224-ab27-4e3dc72facd4",
  ),
  ingress: role("Azure Red Hat OpenShift Cluster Ingress Operator", "0336e1d3-7a87-462b-b6db-342b63f7802c"),
  disk: role("Azure Red Hat OpenShift Disk Storage Operator", "5b7237c5-45e1-49d6-bc18-a1f62f400748"),
  file: role("Azure Red Hat OpenShift File Storage Operator", "0d7aedc0-15fd-4a67-a412-efad370c947e"),
  imageRegistry: role(
    "Azure Red Hat OpenShift Image Registry Operator",
    "8b32b316-c2f5-4ddf-b05b-83dacd2d08b5",
  ),
  network: role("Azure Red Hat OpenShift Network Operator", "be7a6435-15ae-4171-8f30-4a343eff9e8f"),
  keyVaultCryptoUser: role("Key Vault Crypto User", "12338af0-0e69-4776-bea7-57ae8d297424"),
};

const always = (name: string, r: RoleDefinition): OperatorIdentity => ({
  name,
  required: "Always",
  since: "4.19",
  role: r,
});

export const CONTROL_PLANE_OPERATORS: readonly OperatorIdentity[] = [
  always("cluster-api-azure", ROLES.clusterApi),
  always("control-plane", ROLES.controlPlane),
  always("cloud-controller-manager", ROLES.cloudControllerManager),
  always("ingress", ROLES.ingress),
  always("disk-csi-driver", ROLES.disk),
  always("file-csi-driver", ROLES.file),
  always("image-registry", ROLES.imageRegistry),
  always("cloud-network-config", ROLES.network),
  { name: "kms", required: "OnEnablement", since: "4.19", role: ROLES.keyVaultCryptoUser },
];

export const DATA_PLANE_OPERATORS: readonly OperatorIdentity[] = [
  always("disk-csi-driver", ROLES.disk),
  always("file-csi-driver", ROLES.file),
  always("image-registry", ROLES.imageRegistry),
];

/** The operators an OpenShift major.minor uses, as the role set lists them. */
function operatorsOf(list: readonly OperatorIdentity[], minor: string) {
  return list
    .filter((o) => compareVersions(minor, o.since) >= 0)
    .map((o) => ({ name: o.name, required: o.required, roleDefinitions: [{ ...o.role }] }));
}

/** The major.minor versions the catalog offers, newest first. */
function minorsOf(versions: readonly string[]): string[] {
  return [...new Set(versions.map((v) => v.split(".").slice(0, 2).join(".")))];
}

function roleSet(req: ArmRequest, minor: string): Record<string, unknown> {
  const { subscriptionId, location } = req.params;
  return {
    id: `/subscriptions/${subscriptionId}/providers/${PROVIDER}/locations/${location}/hcpOperatorIdentityRoleSets/${minor}`,
    name: minor,
    type: ROLE_SET_TYPE,
    properties: {
      controlPlaneOperators: operatorsOf(CONTROL_PLANE_OPERATORS, minor),
      dataPlaneOperators: operatorsOf(DATA_PLANE_OPERATORS, minor),
    },
  };
}

/** One role set per OpenShift major.minor the catalog offers (those with operator identities). */
export async function getRoleSets(reader: CatalogReader, req: ArmRequest): Promise<Reply> {
  const catalog = await reader.read();
  const minors = minorsOf(catalog?.catalog.releases.map((r) => r.version) ?? []).filter(
    (m) => operatorsOf(CONTROL_PLANE_OPERATORS, m).length > 0,
  );
  const wanted = req.params["roleSet"];
  if (wanted === undefined) return { status: 200, body: { value: minors.map((m) => roleSet(req, m)) } };
  if (!minors.includes(wanted))
    throw new CloudError(404, {
      code: CODES.ResourceNotFound,
      message: `The operator identity role set '${wanted.slice(0, 100)}' is not offered in location '${req.params["location"] ?? ""}'; role sets are named by OpenShift version: ${minors.join(", ") || "none"}.`,
    });
  return { status: 200, body: roleSet(req, wanted) };
}
