/** Which roles a cluster's identities must hold where, and when an assignment reaches a scope. */
import { describe, expect, it } from "vitest";
import {
  cluster,
  id,
  NET,
  NSG,
  OPERATORS,
  SUB,
  SUBNET,
  VNET,
} from "../../../test/support/azure-check-fixtures.ts";
import { clusterScopes, covers, missingRoles, roleNeeds } from "./role-assignments.ts";

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
