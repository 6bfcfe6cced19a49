/**
 * The rules of azure-checks.ts without Azure: which roles a cluster's identities must hold where,
 * when an assignment reaches a scope, what a VM size's restrictions and a quota refuse, how many
 * nodes a pool asks for, and what a customer-managed key needs.
 */
import { describe, expect, it } from "vitest";
import type { ClusterProperties, NodePoolProperties } from "./api/internal.ts";
import {
  checkQuota,
  checkVmSize,
  clusterChange,
  clusterScopes,
  covers,
  identityUses,
  keyErrors,
  kmsIdentityErrors,
  kmsOf,
  missingRoles,
  poolNeeds,
  roleNeeds,
  type VmSku,
} from "./azure-checks.ts";

const SUB = "11111111-2222-4333-8444-555555555555";
const NET = `/subscriptions/${SUB}/resourceGroups/net/providers/Microsoft.Network`;
const SUBNET = `${NET}/virtualNetworks/vnet/subnets/nodes`;
const VNET = `${NET}/virtualNetworks/vnet`;
const NSG = `${NET}/networkSecurityGroups/nsg`;
const OPERATORS = "properties.platform.operatorsAuthentication.userAssignedIdentities";
const id = (name: string): string =>
  `/subscriptions/${SUB}/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${name}`;

function cluster(extra: Partial<ClusterProperties> = {}): ClusterProperties {
  return {
    platform: {
      subnetId: SUBNET,
      networkSecurityGroupId: NSG,
      operatorsAuthentication: {
        userAssignedIdentities: {
          controlPlaneOperators: {
            "cloud-controller-manager": id("ccm"),
            "disk-csi-driver": id("disk"),
            "control-plane": id("cp"),
          },
          dataPlaneOperators: { "file-csi-driver": id("dp-file") },
          serviceManagedIdentity: id("smi"),
        },
      },
    },
    ...extra,
  };
}

describe("roleNeeds", () => {
  const needs = roleNeeds(cluster(), clusterScopes(cluster()));
  const of = (name: string) =>
    needs.filter((n) => n.identity === id(name)).map((n) => `${n.role.name} @ ${n.scope}`);

  it("asks each operator for its role on the customer's resources it acts on", () => {
    expect(of("ccm")).toEqual([
      `Azure Red Hat OpenShift Cloud Controller Manager @ ${SUBNET}`,
      `Azure Red Hat OpenShift Cloud Controller Manager @ ${NSG}`,
    ]);
    expect(of("cp")).toEqual([
      `Azure Red Hat OpenShift Hosted Control Planes Control Plane Operator @ ${VNET}`,
      `Azure Red Hat OpenShift Hosted Control Planes Control Plane Operator @ ${NSG}`,
    ]);
    expect(of("dp-file")).toEqual([
      `Azure Red Hat OpenShift File Storage Operator @ ${SUBNET}`,
      `Azure Red Hat OpenShift File Storage Operator @ ${NSG}`,
    ]);
    // The disk driver acts in the managed resource group only: nothing to hold beforehand.
    expect(of("disk")).toEqual([]);
  });

  it("asks the service managed identity for its role on the network and over every operator's identity", () => {
    expect(of("smi")).toEqual([
      `Azure Red Hat OpenShift Hosted Control Planes Service Managed Identity @ ${VNET}`,
      `Azure Red Hat OpenShift Hosted Control Planes Service Managed Identity @ ${SUBNET}`,
      `Azure Red Hat OpenShift Hosted Control Planes Service Managed Identity @ ${NSG}`,
      `Reader @ ${id("ccm")}`,
      `Reader @ ${id("disk")}`,
      `Reader @ ${id("cp")}`,
      `Azure Red Hat OpenShift Federated Credential @ ${id("dp-file")}`,
    ]);
    expect(needs.every((n) => n.target.startsWith(OPERATORS))).toBe(true);
  });

  it("asks the KMS identity for Key Vault Crypto User on the vault, once it is known", () => {
    const p = cluster();
    const ops = p.platform?.operatorsAuthentication?.userAssignedIdentities?.controlPlaneOperators;
    if (ops) ops["kms"] = id("kms");
    const vault = `/subscriptions/${SUB}/resourceGroups/kv/providers/Microsoft.KeyVault/vaults/v`;
    expect(roleNeeds(p, clusterScopes(p)).filter((n) => n.identity === id("kms"))).toEqual([]);
    expect(roleNeeds(p, clusterScopes(p, vault)).filter((n) => n.identity === id("kms"))).toEqual([
      expect.objectContaining({
        scope: vault,
        role: expect.objectContaining({ name: "Key Vault Crypto User" }),
      }),
    ]);
  });
});

describe("identityUses", () => {
  it("names each identity once, at its operator's field first, in any casing", () => {
    const uses = identityUses(
      { type: "UserAssigned", userAssignedIdentities: { [id("CCM").toUpperCase()]: {}, [id("extra")]: {} } },
      cluster(),
    );
    expect(uses.map((u) => u.target)).toEqual([
      `${OPERATORS}.controlPlaneOperators.cloud-controller-manager`,
      `${OPERATORS}.controlPlaneOperators.disk-csi-driver`,
      `${OPERATORS}.controlPlaneOperators.control-plane`,
      `${OPERATORS}.dataPlaneOperators.file-csi-driver`,
      `${OPERATORS}.serviceManagedIdentity`,
      `identity.userAssignedIdentities.${id("extra")}`,
    ]);
  });
});

describe("covers and missingRoles", () => {
  it.each([
    [SUBNET, SUBNET, true],
    [VNET, SUBNET, true],
    [`/subscriptions/${SUB}`, SUBNET, true],
    [`/subscriptions/${SUB}/resourceGroups/NET`, SUBNET, true],
    [`${NET}/virtualNetworks/vnet2`, `${NET}/virtualNetworks/vnet`, false],
    [SUBNET, VNET, false],
  ])("an assignment on %s reaches %s: %s", (held, scope, expected) => {
    expect(covers(held, scope)).toBe(expected);
  });

  it("names each identity lacking a role once, with every scope it lacks it on", () => {
    const needs = roleNeeds(cluster(), clusterScopes(cluster())).filter((n) => n.identity === id("ccm"));
    const role = needs[0]!.role.resourceId;
    expect(
      missingRoles(needs, () => [
        { scope: `/subscriptions/${SUB}/resourceGroups/net`, roleDefinitionId: role },
      ]),
    ).toEqual([]);
    const errors = missingRoles(needs, () => [
      { scope: `${NET}/virtualNetworks/other`, roleDefinitionId: role },
    ]);
    expect(errors).toEqual([
      {
        target: `${OPERATORS}.controlPlaneOperators.cloud-controller-manager`,
        message: expect.stringContaining(`on the subnet '${SUBNET}' and the network security group '${NSG}'`),
      },
    ]);
    // Another role on the scope does not count; an identity that could not be read is not judged.
    expect(
      missingRoles(needs, () => [{ scope: SUBNET, roleDefinitionId: "/providers/x/roleDefinitions/other" }]),
    ).toHaveLength(1);
    expect(missingRoles(needs, () => undefined)).toEqual([]);
  });
});

describe("checkVmSize", () => {
  const sku = (extra: Partial<VmSku> = {}): VmSku => ({
    resourceType: "virtualMachines",
    name: "Standard_D8s_v3",
    family: "standardDSv3Family",
    locationInfo: [{ location: "eastus", zones: ["1", "2", "3"] }],
    capabilities: [{ name: "vCPUs", value: "8" }],
    restrictions: [],
    ...extra,
  });

  it("finds a size offered in the location and zone, in any casing", () => {
    expect(checkVmSize([sku()], { vmSize: "standard_d8s_V3", location: "eastus", zone: "2" })).toEqual({
      sku: sku(),
    });
  });

  it.each<[string, VmSku[], string | undefined, string]>([
    ["unknown size", [sku({ name: "Standard_D4s_v3" })], undefined, "properties.platform.vmSize"],
    [
      "other location",
      [sku({ locationInfo: [{ location: "westus3", zones: ["1"] }] })],
      undefined,
      "properties.platform.vmSize",
    ],
    [
      "restricted in the location",
      [
        sku({
          restrictions: [
            {
              type: "Location",
              restrictionInfo: { locations: ["eastus"] },
              reasonCode: "NotAvailableForSubscription",
            },
          ],
        }),
      ],
      "1",
      "properties.platform.vmSize",
    ],
    [
      "zone not offered",
      [sku({ locationInfo: [{ location: "eastus", zones: ["1"] }] })],
      "3",
      "properties.platform.availabilityZone",
    ],
    [
      "zone restricted",
      [sku({ restrictions: [{ type: "Zone", restrictionInfo: { locations: ["eastus"], zones: ["3"] } }] })],
      "3",
      "properties.platform.availabilityZone",
    ],
  ])("refuses: %s", (_what, skus, zone, target) => {
    const found = checkVmSize(skus, { vmSize: "Standard_D8s_v3", location: "eastus", zone });
    expect("errors" in found && found.errors.map((e) => e.target)).toEqual([target]);
  });
});

describe("quota", () => {
  const usages = [
    { name: { value: "cores", localizedValue: "Total Regional vCPUs" }, currentValue: 10, limit: 100 },
    {
      name: { value: "standardDSv3Family", localizedValue: "Standard DSv3 Family vCPUs" },
      currentValue: 40,
      limit: 48,
    },
  ];
  const want = {
    family: "standardDSv3Family",
    location: "eastus",
    target: "properties.replicas",
    what: "The pool",
  };

  it("passes current + requested up to the limit, refuses one more, per line", () => {
    expect(checkQuota(usages, { ...want, more: 8 })).toEqual([]);
    expect(checkQuota(usages, { ...want, more: 9 })).toEqual([
      {
        target: "properties.replicas",
        message: expect.stringContaining(
          "needs 9 more vCPUs of 'Standard DSv3 Family vCPUs' in location 'eastus', but the subscription uses 40 of its quota of 48",
        ),
      },
    ]);
    expect(checkQuota(usages, { ...want, family: "other", more: 91 })).toHaveLength(1);
  });

  const pool = (p: Partial<NodePoolProperties>): NodePoolProperties => ({
    platform: { vmSize: "Standard_D8s_v3" },
    ...p,
  });

  it("asks for a new pool's replicas or autoscaling maximum, a grown pool's growth, nothing for a shrunk one", () => {
    const check = { subscriptionId: SUB, location: "East US" };
    expect(
      poolNeeds({
        ...check,
        properties: pool({ replicas: 3, platform: { vmSize: "Standard_D8s_v3", availabilityZone: "2" } }),
      }),
    ).toMatchObject({
      location: "eastus",
      zone: "2",
      isNew: true,
      moreNodes: 3,
      target: "properties.replicas",
    });
    expect(
      poolNeeds({
        ...check,
        properties: pool({ replicas: 0, autoScaling: { min: 1, max: 5 } }),
        stored: pool({ replicas: 2 }),
      }),
    ).toMatchObject({
      isNew: false,
      moreNodes: 3,
      target: "properties.autoScaling.max",
    });
    expect(
      poolNeeds({ ...check, properties: pool({ replicas: 1 }), stored: pool({ replicas: 2 }) }),
    ).toBeUndefined();
  });
});

describe("a customer-managed key", () => {
  const encrypted = (kms: Record<string, unknown>): ClusterProperties =>
    cluster({
      etcd: {
        dataEncryption: {
          keyManagementMode: "CustomerManaged",
          customerManaged: { encryptionType: "KMS", kms },
        },
      },
    });
  const key = { vaultName: "kv", key: "etcd", version: "v1" };

  it("is read only when etcd is customer-managed", () => {
    expect(kmsOf(cluster())).toBeUndefined();
    expect(kmsOf(encrypted({ vaultName: "kv", activeKey: { name: "etcd", version: "v1" } }))).toEqual(key);
  });

  it.each([
    ["missing", "enabled", "properties.etcd.dataEncryption.customerManaged.kms.activeKey.name"],
    ["disabled", "enabled", "properties.etcd.dataEncryption.customerManaged.kms.activeKey.name"],
    ["enabled", "missing", "properties.etcd.dataEncryption.customerManaged.kms.activeKey.version"],
    ["enabled", "disabled", "properties.etcd.dataEncryption.customerManaged.kms.activeKey.version"],
  ] as const)("a %s key with a %s version is refused naming %s", (k, v, target) => {
    expect(keyErrors(key, k, v).map((e) => e.target)).toEqual([target]);
  });

  it("needs the kms operator's identity, and an access policy to encrypt and decrypt when the vault has no RBAC", () => {
    const p = encrypted({ vaultName: "kv", activeKey: { name: "etcd", version: "v1" } });
    const target = `${OPERATORS}.controlPlaneOperators.kms`;
    expect(kmsIdentityErrors(p, {}, () => undefined).map((e) => e.target)).toEqual([target]);
    const ops = p.platform?.operatorsAuthentication?.userAssignedIdentities?.controlPlaneOperators;
    if (ops) ops["kms"] = id("kms");
    const principal = () => "p-1";
    expect(kmsIdentityErrors(p, { properties: { enableRbacAuthorization: true } }, principal)).toEqual([]);
    const policies = (keys: string[]) => ({
      properties: {
        enableRbacAuthorization: false,
        accessPolicies: [{ objectId: "P-1", permissions: { keys } }],
      },
    });
    expect(kmsIdentityErrors(p, policies(["Encrypt", "Decrypt"]), principal)).toEqual([]);
    expect(kmsIdentityErrors(p, policies(["all"]), principal)).toEqual([]);
    expect(kmsIdentityErrors(p, policies(["encrypt"]), principal).map((e) => e.target)).toEqual([target]);
  });
});

describe("clusterChange", () => {
  const check = (properties: ClusterProperties, stored?: ClusterProperties) => ({
    subscriptionId: SUB,
    identity: undefined,
    properties,
    ...(stored ? { stored } : {}),
  });
  const withKey = (version: string): ClusterProperties =>
    cluster({
      etcd: {
        dataEncryption: {
          keyManagementMode: "CustomerManaged",
          customerManaged: {
            encryptionType: "KMS",
            kms: { vaultName: "kv", activeKey: { name: "etcd", version } },
          },
        },
      },
    });

  it("checks everything on a create, what changed on an update", () => {
    expect(clusterChange(check(cluster()))).toEqual({ identities: true, key: true });
    expect(clusterChange(check(cluster(), cluster()))).toEqual({ identities: false, key: false });
    expect(clusterChange(check(withKey("v2"), withKey("v1")))).toEqual({ identities: false, key: true });
    const moved = cluster();
    const ops = moved.platform?.operatorsAuthentication?.userAssignedIdentities?.controlPlaneOperators;
    if (ops) ops["control-plane"] = id("cp").toUpperCase();
    // The same identity in other casing is no change; another one is.
    expect(clusterChange(check(moved, cluster()))).toEqual({ identities: false, key: false });
    if (ops) ops["control-plane"] = id("cp-2");
    expect(clusterChange(check(moved, cluster()))).toEqual({ identities: true, key: false });
  });
});
