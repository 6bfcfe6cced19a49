/**
 * The operators of a cluster that run as the customer's user-assigned managed identities, which
 * OpenShift versions need each, whether always or only once a feature that uses it is enabled,
 * and the Azure built-in roles each identity must hold; served as
 * `locations/{loc}/hcpOperatorIdentityRoleSets[/{major.minor}]`. The facts are ARO HCP's (its
 * cluster-scoped identities configuration): every operator from OpenShift 4.19, the key
 * management one (KMS) on enablement of customer-managed etcd keys. Each role is held on the
 * customer's resources the operator acts on (ARO HCP's role assignments for a cluster: the
 * subnet, its virtual network, the network security group, the key vault); an operator that acts
 * only in the managed resource group has none to hold beforehand. The service managed identity
 * holds its own role on the network, Reader over each control plane operator's identity and the
 * federated credential role over each data plane operator's identity (checked in role-assignments.ts).
 */
import { CloudError, CODES } from "../errors.ts";
import type { ArmRequest, Reply } from "../arm-request.ts";
import { PROVIDER } from "../resource-id.ts";
import { compareVersions } from "../../releases/catalog.ts";
import type { CatalogReader } from "../versions/openshift-versions.ts";

export const ROLE_SET_TYPE = `${PROVIDER}/locations/hcpOperatorIdentityRoleSets`;

export type IdentityRequired = "Always" | "OnEnablement";

export interface RoleDefinition {
  name: string;
  resourceId: string;
}

/** A customer's resource a role is held on; the vnet is the subnet's. */
export type RoleScope = "subnet" | "vnet" | "networkSecurityGroup" | "keyVault";

export interface OperatorIdentity {
  /** The key in controlPlaneOperators / dataPlaneOperators. */
  name: string;
  required: IdentityRequired;
  /** The first OpenShift major.minor that uses it. */
  since: string;
  role: RoleDefinition;
  /** Where the customer assigns `role` to the identity before the create (or on a scope above). */
  scopes: readonly RoleScope[];
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
  serviceManagedIdentity: role(
    "Azure Red Hat OpenShift Hosted Control Planes Service Managed Identity",
    "c0ff367d-66d8-445e-917c-583feb0ef0d4",
  ),
  reader: role("Reader", "acdd72a7-3385-48ef-bd42-f606fba81ae7"),
  federatedCredential: role(
    "Azure Red Hat OpenShift Federated Credential",
    "ef318e2a-8334-4a05-9e4a-295a196c6a6e",
  ),
};

const always = (name: string, r: RoleDefinition, scopes: readonly RoleScope[] = []): OperatorIdentity => ({
  name,
  required: "Always",
  since: "4.19",
  role: r,
  scopes,
});

export const CONTROL_PLANE_OPERATORS: readonly OperatorIdentity[] = [
  always("cluster-api-azure", ROLES.clusterApi, ["subnet"]),
  always("control-plane", ROLES.controlPlane, ["vnet", "networkSecurityGroup"]),
  always("cloud-controller-manager", ROLES.cloudControllerManager, ["subnet", "networkSecurityGroup"]),
  always("ingress", ROLES.ingress, ["subnet"]),
  always("disk-csi-driver", ROLES.disk),
  always("file-csi-driver", ROLES.file, ["subnet", "networkSecurityGroup"]),
  always("image-registry", ROLES.imageRegistry),
  always("cloud-network-config", ROLES.network, ["subnet", "vnet"]),
  {
    name: "kms",
    required: "OnEnablement",
    since: "4.19",
    role: ROLES.keyVaultCryptoUser,
    scopes: ["keyVault"],
  },
];

export const DATA_PLANE_OPERATORS: readonly OperatorIdentity[] = [
  always("disk-csi-driver", ROLES.disk),
  always("file-csi-driver", ROLES.file, ["subnet", "networkSecurityGroup"]),
  always("image-registry", ROLES.imageRegistry),
];

/**
 * The roles of the service managed identity: its own on the network, Reader over every control
 * plane operator's identity, the federated credential role over every data plane operator's.
 */
export const SERVICE_MANAGED_IDENTITY_ROLES = {
  network: {
    role: ROLES.serviceManagedIdentity,
    scopes: ["vnet", "subnet", "networkSecurityGroup"] as const,
  },
  controlPlaneIdentities: ROLES.reader,
  dataPlaneIdentities: ROLES.federatedCredential,
};

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
