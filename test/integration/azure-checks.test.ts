/**
 * The frontend's checks of a customer's Azure (operators/frontend/checks/) with the real
 * Azure SDK clients over https against the ARM emulator: identities, role assignments at their
 * scopes or above, a customer-managed etcd key, VM sizes per location and zone, vCPU quota; each
 * refusal a 400 naming the ARM field, several at once; Azure failing, throttling or hanging a 503
 * with Retry-After, never a refusal.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArmEmulator, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { assignmentName, setUpCustomerAzure } from "../../hack/harness/customer-azure.ts";
import { createAzureClients, type AzureClients } from "../../operators/azure/index.ts";
import type { ClusterProperties, NodePoolProperties } from "../../operators/frontend/api/internal.ts";
import type { Identity } from "../../operators/frontend/api/arm-resource.ts";
import { AzureCheckError, AzureChecks } from "../../operators/frontend/checks/azure-checks.ts";
import type { CloudErrorBody } from "../../operators/frontend/errors.ts";
import { silentLogger } from "../../operators/runtime/logger.ts";
import { clusterBody, nodePoolBody } from "../support/frontend.ts";

const OPERATORS = "properties.platform.operatorsAuthentication.userAssignedIdentities";
const KMS = "properties.etcd.dataEncryption.customerManaged.kms";
const CCM_ROLE = "a1f96423-95ce-4224-ab27-4e3dc72facd4";

let workDir: string;
let emu: ArmEmulator;
let azure: AzureClients;
let checks: AzureChecks;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "azure-checks-"));
  emu = await startArmEmulator({ workDir, asyncDelayMs: 20 });
  azure = await createAzureClients({
    armEndpoint: emu.endpoint,
    authorityHost: emu.endpoint,
    caFile: emu.caPath,
    credential: { tenantId: emu.tenantId, clientId: emu.clientId, clientSecret: emu.clientSecret },
    retry: { maxRetries: 1, retryDelayMs: 10, maxRetryDelayMs: 20, maxRetryAfterMs: 100 },
    requestTimeoutMs: 3_000,
    registry: new Registry(),
  });
  checks = new AzureChecks({ clients: azure, log: silentLogger, budgetMs: 5_000 });
});

afterAll(async () => {
  emu.faults.clear();
  await emu.stop();
  await rm(workDir, { recursive: true, force: true });
});

interface Kms {
  vaultName: string;
  visibility: "Public";
  activeKey: { name: string; version: string };
}

interface Cluster {
  sub: string;
  identity: Identity;
  properties: ClusterProperties;
  /** The body's KMS key (the object in `properties`), when it has one. */
  kms?: Kms;
}

const uamiId = (sub: string, name: string): string =>
  `/subscriptions/${sub}/resourceGroups/identities/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${name}`;

/** Etcd encrypted with a key of a vault of the subscription, and the KMS operator's identity. */
function withKms(c: Cluster): Kms {
  const kms: Kms = {
    vaultName: `kv-${c.sub.slice(0, 8)}`,
    visibility: "Public",
    activeKey: { name: "etcd", version: "0" },
  };
  c.properties.etcd = {
    dataEncryption: { keyManagementMode: "CustomerManaged", customerManaged: { encryptionType: "KMS", kms } },
  };
  const ids = c.properties.platform?.operatorsAuthentication?.userAssignedIdentities;
  if (ids?.controlPlaneOperators) ids.controlPlaneOperators["kms"] = uamiId(c.sub, "cp-kms");
  if (c.identity.userAssignedIdentities) c.identity.userAssignedIdentities[uamiId(c.sub, "cp-kms")] = {};
  return kms;
}

/** A cluster body of a new subscription, its customer resources set up unless `bare`. */
async function customerCluster(opts: { bare?: boolean; kms?: boolean } = {}): Promise<Cluster> {
  const sub = randomUUID();
  const body = clusterBody(sub) as { identity: Identity; properties: ClusterProperties };
  const c: Cluster = { sub, identity: body.identity, properties: body.properties };
  if (opts.kms) c.kms = withKms(c);
  if (opts.bare) return c;
  const made = await setUpCustomerAzure(azure, sub, c, { tenantId: emu.tenantId });
  if (made.key && c.kms) c.kms.activeKey.version = made.key.version;
  return c;
}

/** The refusal of a check, or undefined when it passed. */
async function refusal(check: Promise<void>): Promise<AzureCheckError | undefined> {
  try {
    await check;
    return undefined;
  } catch (err) {
    if (err instanceof AzureCheckError) return err;
    throw err;
  }
}

function targets(body: CloudErrorBody): string[] {
  return (body.details ?? [body]).map((d) => d.target ?? "").sort();
}

const checkCluster = (c: Cluster) =>
  refusal(checks.cluster({ subscriptionId: c.sub, identity: c.identity, properties: c.properties }));

describe("a cluster's identities and their roles", () => {
  it("passes when every identity exists and holds its roles", async () => {
    const c = await customerCluster();
    expect(await checkCluster(c)).toBeUndefined();
  });

  it("refuses every identity and role of a customer that set nothing up, all in one 400", async () => {
    const e = await checkCluster(await customerCluster({ bare: true }));
    expect(e?.status).toBe(400);
    expect(e?.body.code).toBe("MultipleErrorsOccurred");
    // 8 control plane, 3 data plane, the service managed identity: each does not exist.
    expect(targets(e!.body)).toHaveLength(12);
    expect(
      e?.body.details?.every(
        (d) => d.code === "InvalidRequestContent" && d.message.includes("does not exist"),
      ),
    ).toBe(true);
  });

  it("names an identity that was deleted", async () => {
    const c = await customerCluster();
    await azure.identities(c.sub).userAssignedIdentities.delete("identities", "cp-ccm");
    const e = await checkCluster(c);
    expect(e?.status).toBe(400);
    expect(e?.body).toMatchObject({
      code: "InvalidRequestContent",
      target: `${OPERATORS}.controlPlaneOperators.cloud-controller-manager`,
    });
    expect(e?.body.message).toContain("cp-ccm' does not exist");
  });

  it("names the operator whose role is missing on a scope, and takes one on a scope above", async () => {
    const c = await customerCluster();
    const nsg = c.properties.platform?.networkSecurityGroupId ?? "";
    const principal =
      (await azure.identities(c.sub).userAssignedIdentities.get("identities", "cp-ccm")).principalId ?? "";
    const roleId = `/subscriptions/${c.sub}/providers/Microsoft.Authorization/roleDefinitions/${CCM_ROLE}`;
    await azure.authorization(c.sub).roleAssignments.delete(nsg, assignmentName(principal, roleId, nsg));
    const e = await checkCluster(c);
    expect(e?.body).toMatchObject({ target: `${OPERATORS}.controlPlaneOperators.cloud-controller-manager` });
    expect(e?.body.message).toContain("Azure Red Hat OpenShift Cloud Controller Manager");
    expect(e?.body.message).toContain(`the network security group '${nsg}'`);

    // The same role on the NSG's resource group reaches the NSG.
    const group = nsg.split("/providers/")[0] ?? "";
    await azure
      .authorization(c.sub)
      .roleAssignments.create(group, randomUUID(), { roleDefinitionId: roleId, principalId: principal });
    expect(await checkCluster(c)).toBeUndefined();
  });

  it("reads role assignments at, above and below a scope as ARM lists them", async () => {
    const c = await customerCluster();
    const principal =
      (await azure.identities(c.sub).userAssignedIdentities.get("identities", "service")).principalId ?? "";
    const listed = [];
    for await (const a of azure.authorization(c.sub).roleAssignments.listForScope(`/subscriptions/${c.sub}`, {
      filter: `principalId eq '${principal}'`,
    }))
      listed.push(a);
    // Its role on the vnet, subnet and NSG; Reader on 8 control plane identities; 3 federated credentials.
    expect(listed).toHaveLength(14);
    const subnet = c.properties.platform?.subnetId ?? "";
    const atSubnet = [];
    for await (const a of azure
      .authorization(c.sub)
      .roleAssignments.listForScope(subnet, { filter: "atScope()" }))
      atSubnet.push(a);
    expect(atSubnet.every((a) => subnet.toLowerCase().startsWith((a.scope ?? "").toLowerCase()))).toBe(true);
    expect(atSubnet.length).toBeGreaterThan(0);
  });
});

describe("a cluster update", () => {
  it("checks an identity it names anew, and the roles it and the service managed identity over it need", async () => {
    const c = await customerCluster();
    const stored = structuredClone(c.properties);
    const update = { subscriptionId: c.sub, identity: c.identity, properties: c.properties, stored };
    // An identity deleted since the create is not this update's business.
    await azure.identities(c.sub).userAssignedIdentities.delete("identities", "cp-disk");
    expect(await refusal(checks.cluster(update))).toBeUndefined();

    const operators =
      c.properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators;
    operators["ingress"] = uamiId(c.sub, "cp-ingress-2");
    const missing = await refusal(checks.cluster(update));
    expect(missing?.body).toMatchObject({
      target: `${OPERATORS}.controlPlaneOperators.ingress`,
      message: expect.stringContaining("cp-ingress-2' does not exist"),
    });

    await azure
      .identities(c.sub)
      .userAssignedIdentities.createOrUpdate("identities", "cp-ingress-2", { location: "eastus" });
    const roles = await refusal(checks.cluster(update));
    expect(roles?.status).toBe(400);
    expect(targets(roles!.body)).toEqual([
      `${OPERATORS}.controlPlaneOperators.ingress`,
      `${OPERATORS}.serviceManagedIdentity`,
    ]);
    expect(roles?.body.details?.map((d) => d.message).join("\n")).toContain("Reader");

    await setUpCustomerAzure(azure, c.sub, c);
    expect(await refusal(checks.cluster(update))).toBeUndefined();
  });
});

describe("role assignments in the emulator", () => {
  it("are extension resources: not among a group's resources, gone with the group", async () => {
    const sub = randomUUID();
    const group = `/subscriptions/${sub}/resourceGroups/scope`;
    await azure.resources(sub).resourceGroups.createOrUpdate("scope", { location: "eastus" });
    const name = randomUUID();
    const roleDefinitionId = `/subscriptions/${sub}/providers/Microsoft.Authorization/roleDefinitions/${CCM_ROLE}`;
    const principalId = randomUUID();
    await azure.authorization(sub).roleAssignments.create(group, name, { roleDefinitionId, principalId });
    const again = azure
      .authorization(sub)
      .roleAssignments.create(group, randomUUID(), { roleDefinitionId, principalId });
    await expect(again).rejects.toMatchObject({ code: "RoleAssignmentExists", statusCode: 409 });
    expect((await azure.authorization(sub).roleAssignments.get(group, name)).principalId).toBe(principalId);
    const listed = [];
    for await (const r of azure.resources(sub).resources.listByResourceGroup("scope")) listed.push(r);
    expect(listed).toEqual([]);
    await azure.resources(sub).resourceGroups.beginDeleteAndWait("scope", { updateIntervalInMs: 10 });
    await expect(azure.authorization(sub).roleAssignments.get(group, name)).rejects.toMatchObject({
      statusCode: 404,
    });
  });
});

describe("a customer-managed etcd key", () => {
  it("passes when the vault, key and version exist and the KMS identity may use them", async () => {
    expect(await checkCluster(await customerCluster({ kms: true }))).toBeUndefined();
  });

  it.each<[string, string, (k: Kms) => void]>([
    ["vault", `${KMS}.vaultName`, (k) => void (k.vaultName = "nowhere")],
    ["key", `${KMS}.activeKey.name`, (k) => void (k.activeKey.name = "other")],
    [
      "version",
      `${KMS}.activeKey.version`,
      (k) => void (k.activeKey.version = "0123456789abcdef0123456789abcdef"),
    ],
  ])("refuses an unknown %s naming %s", async (_what, target, change) => {
    const c = await customerCluster({ kms: true });
    change(c.kms!);
    const e = await checkCluster(c);
    expect(e?.status).toBe(400);
    expect(e?.body).toMatchObject({ code: "InvalidRequestContent", target });
  });

  it("refuses a KMS identity without Key Vault Crypto User on the vault", async () => {
    const c = await customerCluster({ kms: true });
    const kmsId = uamiId(c.sub, "cp-kms");
    const principal =
      (await azure.identities(c.sub).userAssignedIdentities.get("identities", "cp-kms")).principalId ?? "";
    for await (const a of azure.authorization(c.sub).roleAssignments.listForScope(`/subscriptions/${c.sub}`, {
      filter: `principalId eq '${principal}'`,
    }))
      await azure.authorization(c.sub).roleAssignments.delete(a.scope ?? "", a.name ?? "");
    const e = await checkCluster(c);
    expect(e?.body).toMatchObject({ target: `${OPERATORS}.controlPlaneOperators.kms` });
    expect(e?.body.message).toContain(kmsId);
    expect(e?.body.message).toContain("Key Vault Crypto User");
  });

  it("checks a changed key version on an update, and nothing else", async () => {
    const c = await customerCluster({ kms: true });
    const stored = structuredClone(c.properties);
    await azure.identities(c.sub).userAssignedIdentities.delete("identities", "cp-ccm");
    const update = { subscriptionId: c.sub, identity: c.identity, properties: c.properties, stored };
    expect(await refusal(checks.cluster(update))).toBeUndefined();
    c.kms!.activeKey.version = "ffffffffffffffffffffffffffffffff";
    expect((await refusal(checks.cluster(update)))?.body.target).toBe(`${KMS}.activeKey.version`);
  });
});

describe("a node pool's VM size and vCPU quota", () => {
  const pool = (patch: Partial<NodePoolProperties> = {}): NodePoolProperties => {
    const p = nodePoolBody().properties as NodePoolProperties;
    return { ...p, ...patch, platform: { ...p.platform, ...patch.platform } };
  };
  const check = (sub: string, properties: NodePoolProperties, stored?: NodePoolProperties) =>
    refusal(
      checks.nodePool({
        subscriptionId: sub,
        location: "East US",
        properties,
        ...(stored ? { stored } : {}),
      }),
    );

  it("passes a size offered in the zone within the quota", async () => {
    expect(
      await check(randomUUID(), pool({ platform: { vmSize: "Standard_D8s_v3", availabilityZone: "2" } })),
    ).toBeUndefined();
  });

  it("refuses a size not offered in the location, and one restricted in the zone", async () => {
    const sub = randomUUID();
    const unknown = await check(sub, pool({ platform: { vmSize: "Standard_Nope_v9" } }));
    expect(unknown?.status).toBe(400);
    expect(unknown?.body.target).toBe("properties.platform.vmSize");
    emu.compute.restrict({ size: "Standard_D8s_v3", location: "eastus", zones: ["3"], subscriptionId: sub });
    const e = await check(sub, pool({ platform: { vmSize: "Standard_D8s_v3", availabilityZone: "3" } }));
    expect(e?.status).toBe(400);
    expect(e?.body.target).toBe("properties.platform.availabilityZone");
    expect(e?.body.message).toContain("it is in zones 1, 2");
    // Another subscription is not restricted.
    expect(
      await check(randomUUID(), pool({ platform: { vmSize: "Standard_D8s_v3", availabilityZone: "3" } })),
    ).toBeUndefined();
  });

  it("refuses a pool beyond the family's quota, and a pool that grows beyond it, naming what grows", async () => {
    const sub = randomUUID();
    emu.compute.setUsage(sub, "eastus", { name: "standardDSv3Family", current: 90, limit: 100 });
    // 2 × 8 vCPUs on 90 of 100.
    const e = await check(sub, pool({ replicas: 2 }));
    expect(e?.status).toBe(400);
    expect(e?.body.target).toBe("properties.replicas");
    expect(e?.body.message).toContain("needs 16 more vCPUs of 'Standard DSv3 Family vCPUs'");
    expect(await check(sub, pool({ replicas: 1 }))).toBeUndefined();
    // Growing from 1 to 2 nodes asks for 8 more: fits; to an autoscaling max of 3, 16 more: does not.
    expect(await check(sub, pool({ replicas: 2 }), pool({ replicas: 1 }))).toBeUndefined();
    const grown = await check(
      sub,
      pool({ replicas: 0, autoScaling: { min: 1, max: 3 } }),
      pool({ replicas: 1 }),
    );
    expect(grown?.body.target).toBe("properties.autoScaling.max");
    // Shrinking is never refused.
    expect(await check(sub, pool({ replicas: 0 }), pool({ replicas: 5 }))).toBeUndefined();
  });

  it("refuses a pool beyond the total regional vCPUs", async () => {
    const sub = randomUUID();
    emu.compute.setUsage(sub, "eastus", { name: "cores", current: 10, limit: 20 });
    const e = await check(sub, pool({ replicas: 2 }));
    expect(e?.body.message).toContain("'Total Regional vCPUs'");
  });
});

describe("Azure not answering", () => {
  it("is a 503 with Retry-After on server errors, never a refusal", async () => {
    const c = await customerCluster();
    const fault = emu.faults.serverError({ path: "userAssignedIdentities" }, { times: 100 });
    try {
      const e = await checkCluster(c);
      expect(e?.status).toBe(503);
      expect(e?.body.code).toBe("ServiceUnavailable");
      expect(Number(e?.headers["retry-after"])).toBeGreaterThan(0);
    } finally {
      fault.clear();
    }
    expect(await checkCluster(c)).toBeUndefined();
  });

  it("passes on the throttle's Retry-After", async () => {
    const fault = emu.faults.throttle(
      { path: "/Microsoft.Compute/skus" },
      { times: 100, retryAfterSeconds: 30 },
    );
    try {
      const e = await refusal(
        checks.nodePool({
          subscriptionId: randomUUID(),
          location: "eastus",
          properties: nodePoolBody().properties as NodePoolProperties,
        }),
      );
      expect(e?.status).toBe(503);
      expect(e?.headers["retry-after"]).toBe("30");
    } finally {
      fault.clear();
    }
  });

  it("gives up within its budget when Azure hangs", async () => {
    const c = await customerCluster();
    const quick = new AzureChecks({ clients: azure, log: silentLogger, budgetMs: 300 });
    const hang = emu.faults.hangRequest({ path: "roleAssignments" });
    try {
      const started = Date.now();
      const e = await refusal(
        quick.cluster({ subscriptionId: c.sub, identity: c.identity, properties: c.properties }),
      );
      expect(e?.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      hang.release();
    }
  });
});
