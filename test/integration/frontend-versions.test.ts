/**
 * Every served api-version against the real service apiserver, each from a body shaped like ARO
 * HCP's examples of that version: PUT, GET, LIST, PATCH and DELETE of a cluster and a node pool,
 * the version's defaults and required fields, and a cluster written through one version read and
 * replaced through another: a field a version does not know never appears in its responses and
 * survives its PUTs. No controllers run; the test writes the CRs' status as they would.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, NodePoolResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { API_VERSIONS, type ApiVersion } from "../../operators/frontend/api-version-schemas.ts";
import { clusterCRName, nodePoolCRName, subscriptionNamespace } from "../../operators/frontend/names.ts";
import type { ResourceType } from "../../operators/runtime/kube.ts";
import { identityClientId } from "../../operators/hcp/identities.ts";
import { clientFor, namespaceType } from "../support/fixtures.ts";
import {
  assignedIdentities,
  clusterPath,
  nodePoolPath,
  uami,
  type ArmClient,
  type ArmResponse,
} from "../support/frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
const ns = subscriptionNamespace(sub);
const rg = "rg-versions";
const TENANT = "8b1d2c3e-4f50-4a6b-9c7d-0e1f2a3b4c5d";
let fixture: FrontendFixture;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

const since2025 = (v: ApiVersion): boolean => v !== "2024-06-10-preview";
const since2026 = (v: ApiVersion): boolean => v === "2026-06-30-preview" || v === "2026-09-01-preview";

/** The etcd encryption each version's examples send: a customer key, in that version's shape. */
function etcd(v: ApiVersion): Json {
  const kms = since2025(v)
    ? { vaultName: "kv-customer", visibility: "Public", activeKey: { name: "etcd-key", version: "v1" } }
    : { activeKey: { vaultName: "kv-customer", name: "etcd-key", version: "v1" } };
  return {
    dataEncryption: {
      keyManagementMode: "CustomerManaged",
      customerManaged: { encryptionType: "KMS", kms },
    },
  };
}

/** A cluster body of one version, written after ARO HCP's CreateOrUpdate example of it. */
function exampleCluster(v: ApiVersion, prefix: string): Json {
  const net = `/subscriptions/${sub}/resourceGroups/customer-network/providers/Microsoft.Network`;
  const operators = {
    "control-plane": uami(sub, `${prefix}-cp`),
    "cluster-api-azure": uami(sub, `${prefix}-capz`),
    "cloud-controller-manager": uami(sub, `${prefix}-ccm`),
    ingress: uami(sub, `${prefix}-ingress`),
    "disk-csi-driver": uami(sub, `${prefix}-disk`),
    "file-csi-driver": uami(sub, `${prefix}-file`),
    "image-registry": uami(sub, `${prefix}-registry`),
    "cloud-network-config": uami(sub, `${prefix}-cnc`),
  };
  const service = uami(sub, `${prefix}-service`);
  return {
    location: "westus3",
    tags: { env: "versions" },
    identity: assignedIdentities(operators, service),
    properties: {
      version: { id: "4.19", channelGroup: "stable" },
      dns: { baseDomainPrefix: prefix },
      network: { networkType: "OVNKubernetes", podCidr: "10.128.0.0/14", hostPrefix: 23 },
      api: { visibility: "Public", authorizedCidrs: ["192.0.2.0/24"] },
      platform: {
        subnetId: `${net}/virtualNetworks/vnet/subnets/workers`,
        ...(since2025(v)
          ? { vnetIntegrationSubnetId: `${net}/virtualNetworks/vnet/subnets/integration` }
          : {}),
        networkSecurityGroupId: `${net}/networkSecurityGroups/workers-nsg`,
        operatorsAuthentication: {
          userAssignedIdentities: {
            controlPlaneOperators: operators,
            dataPlaneOperators: { "disk-csi-driver": uami(sub, `${prefix}-dp-disk`) },
            serviceManagedIdentity: service,
          },
        },
      },
      autoscaling: { maxNodesTotal: 30, maxPodGracePeriodSeconds: 600 },
      etcd: etcd(v),
      ...(since2025(v)
        ? { imageDigestMirrors: [{ source: "quay.io/team", mirrors: ["mirror.example.com/team"] }] }
        : {}),
      nodeDrainTimeoutMinutes: 30,
      clusterImageRegistry: { state: "Enabled" },
      ...(since2026(v) ? { ingress: { type: "Private" }, cryptoRestrictions: "FIPS" } : {}),
    },
  };
}

/** A node pool body of one version, after ARO HCP's NodePools CreateOrUpdate example. */
function examplePool(v: ApiVersion): Json {
  return {
    location: "westus3",
    properties: {
      version: { id: "4.19", channelGroup: "stable" },
      platform: {
        vmSize: "Standard_D4s_v3",
        enableEncryptionAtHost: false,
        osDisk: {
          sizeGiB: 128,
          diskStorageAccountType: "Premium_LRS",
          ...(since2025(v) ? { diskType: "Managed" } : {}),
        },
        availabilityZone: "1",
      },
      replicas: 2,
      autoRepair: true,
      labels: [{ key: "tier", value: "app" }],
      taints: [{ key: "gpu", value: "true", effect: "NoSchedule" }],
      nodeDrainTimeoutMinutes: 10,
    },
  };
}

const ISSUER_BASE = "https://eastus.oic.hcp.example.com/";

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, "Z");

/** Writes the CR's status as its controller would when it has done what the generation asks. */
async function settle(type: ResourceType, name: string): Promise<void> {
  const cr = await service.get<HcpCluster>(type, name, ns);
  const generation = cr.metadata.generation ?? 1;
  const c = (t: string, status: "True" | "False") => ({
    type: t,
    status,
    reason: "AsExpected",
    message: "AsExpected",
    lastTransitionTime: now(),
    observedGeneration: generation,
  });
  await service.mergePatch(
    type,
    { name, namespace: ns },
    {
      status: {
        observedGeneration: generation,
        conditions: [c("Ready", "True"), c("Progressing", "False"), c("Degraded", "False")],
        ...(type === HcpClusterResource ? { issuerURL: `${ISSUER_BASE}${TENANT}/${cr.metadata.uid}` } : {}),
      },
    },
    "status",
  );
}

function expect2xx(r: ArmResponse, status: number): Json {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body as Json;
}

/** The field targets of a 400, sorted. */
function targets(r: ArmResponse): string[] {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  const e = (r.body as Json).error;
  const details = (e.details as Json[] | undefined) ?? [e];
  return details.map((d) => String(d.target)).sort();
}

beforeAll(async () => {
  fixture = await startFrontendFixture({
    client: service,
    name: "frontend-versions",
    headers: { "x-ms-home-tenant-id": TENANT },
  });
  arm = fixture.arm;
  expect((await fixture.putSubscription(sub, "Registered")).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  for (const t of [HcpClusterResource, NodePoolResource]) {
    const list = await service.listAll(t, { namespace: ns }).catch(() => ({ items: [] }));
    for (const o of list.items) await service.delete(t, { name: o.metadata.name!, namespace: ns });
  }
  await service.delete(namespaceType, { name: ns });
});

describe.each(API_VERSIONS)("api-version %s", (v) => {
  const name = `c-${v.slice(0, 10)}`;
  const cluster = clusterPath(sub, rg, name);
  const pool = nodePoolPath(sub, rg, name, "apps");
  const prefix = `v${v.slice(2, 4)}${v.slice(5, 7)}${v.slice(8, 10)}`;

  it("creates, reads and lists a cluster in the version's shape, with its defaults", async () => {
    const created = expect2xx(
      await arm.send("PUT", cluster, { apiVersion: v, body: exampleCluster(v, prefix) }),
      201,
    );
    const got = expect2xx(await arm.send("GET", cluster, { apiVersion: v }), 200);
    expect(got).toEqual(created);
    const p = got.properties as Json;
    expect(p).toMatchObject({
      provisioningState: "Accepted",
      version: { id: "4.19", channelGroup: "stable" },
      autoscaling: { maxNodesTotal: 30, maxPodGracePeriodSeconds: 600 },
      nodeDrainTimeoutMinutes: 30,
      etcd: etcd(v),
    });
    // Fields the version does not know are not shown; those it knows are, defaults included.
    expect("ingress" in p, "ingress").toBe(since2026(v));
    expect("cryptoRestrictions" in p, "cryptoRestrictions").toBe(since2026(v));
    expect("imageDigestMirrors" in p, "imageDigestMirrors").toBe(since2025(v));
    expect("vnetIntegrationSubnetId" in p.platform, "vnetIntegrationSubnetId").toBe(since2025(v));
    if (since2026(v)) expect(p).toMatchObject({ ingress: { type: "Private" }, cryptoRestrictions: "FIPS" });
    const kms = p.etcd.dataEncryption.customerManaged.kms as Json;
    expect("vaultName" in kms).toBe(since2025(v));
    expect("vaultName" in kms.activeKey).toBe(!since2025(v));

    const list = expect2xx(
      await arm.send(
        "GET",
        `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters`,
        {
          apiVersion: v,
        },
      ),
      200,
    );
    expect((list.value as Json[]).find((c) => c.name === name)).toEqual(got);
  });

  it("shows the cluster's OIDC issuer from the CR's status, read-only", async () => {
    await settle(HcpClusterResource, clusterCRName(rg, name));
    const cr = await service.get<HcpCluster>(HcpClusterResource, clusterCRName(rg, name), ns);
    const got = expect2xx(await arm.send("GET", cluster, { apiVersion: v }), 200);
    expect((got.properties as Json).platform.issuerUrl).toBe(`${ISSUER_BASE}${TENANT}/${cr.metadata.uid}`);
    expect(cr.status?.issuerURL).toBe((got.properties as Json).platform.issuerUrl);
  });

  it("patches the cluster, and creates, patches, lists and deletes a node pool", async () => {
    await settle(HcpClusterResource, clusterCRName(rg, name));
    const patched = expect2xx(
      await arm.send("PATCH", cluster, {
        apiVersion: v,
        body: { properties: { nodeDrainTimeoutMinutes: 45 } },
      }),
      202,
    );
    expect(patched.properties.nodeDrainTimeoutMinutes).toBe(45);
    await settle(HcpClusterResource, clusterCRName(rg, name));

    const created = expect2xx(await arm.send("PUT", pool, { apiVersion: v, body: examplePool(v) }), 201);
    const osDisk = created.properties.platform.osDisk as Json;
    expect(osDisk).toMatchObject({ sizeGiB: 128, diskStorageAccountType: "Premium_LRS" });
    expect("diskType" in osDisk).toBe(since2025(v));
    expect("status" in created.properties).toBe(false); // no conditions before the controller's
    await settle(NodePoolResource, nodePoolCRName(rg, name, "apps"));

    const scaled = expect2xx(
      await arm.send("PATCH", pool, { apiVersion: v, body: { properties: { replicas: 3 } } }),
      202,
    );
    expect(scaled.properties).toMatchObject({ replicas: 3, labels: [{ key: "tier", value: "app" }] });
    await settle(NodePoolResource, nodePoolCRName(rg, name, "apps"));
    const got = expect2xx(await arm.send("GET", pool, { apiVersion: v }), 200);
    expect("status" in got.properties).toBe(since2026(v));

    const list = expect2xx(await arm.send("GET", `${cluster}/nodePools`, { apiVersion: v }), 200);
    expect((list.value as Json[]).map((p) => String(p.name))).toEqual(["apps"]);
    expect((await arm.send("DELETE", pool, { apiVersion: v })).status).toBe(202);
    expect((await arm.send("DELETE", cluster, { apiVersion: v })).status).toBe(202);
  });
});

describe("required fields and values per version", () => {
  const put = (v: ApiVersion, name: string, body: Json) =>
    arm.send("PUT", clusterPath(sub, rg, name), { apiVersion: v, body });

  it("requires version.id and the VNet integration subnet from 2025-12-23-preview", async () => {
    for (const v of API_VERSIONS) {
      const body = exampleCluster(v, "noversion");
      delete body.properties.version;
      delete body.properties.platform.vnetIntegrationSubnetId;
      const r = await put(v, `no-version-${v.slice(0, 4)}${v.slice(5, 7)}`, body);
      if (!since2025(v)) {
        // 2024-06-10-preview: the catalog's newest stable version, no VNet integration subnet.
        expect(expect2xx(r, 201).properties.version.id).toBe("4.20");
        continue;
      }
      expect(targets(r)).toEqual(["properties.platform.vnetIntegrationSubnetId", "properties.version"]);
      const withoutId = exampleCluster(v, "noversion");
      withoutId.properties.version = { channelGroup: "stable" };
      expect(targets(await put(v, "no-version-id", withoutId))).toEqual(["properties.version.id"]);
    }
  });

  it("requires a node pool's version.id when a version is sent, from 2025-12-23-preview", async () => {
    const name = "pool-parent";
    expect2xx(await put("2026-06-30-preview", name, exampleCluster("2026-06-30-preview", "poolparent")), 201);
    await settle(HcpClusterResource, clusterCRName(rg, name));
    for (const v of API_VERSIONS) {
      const body = examplePool(v);
      body.properties.version = { channelGroup: "stable" };
      const r = await arm.send("PUT", nodePoolPath(sub, rg, name, `p${v.slice(2, 4)}${v.slice(5, 7)}`), {
        apiVersion: v,
        body,
      });
      if (since2025(v)) expect(targets(r)).toEqual(["properties.version.id"]);
      else expect2xx(r, 201);
    }
  });

  it("takes PlatformManaged etcd keys (the default) until 2026-06-30-preview, which requires CustomerManaged", async () => {
    for (const v of API_VERSIONS) {
      const body = exampleCluster(v, "platformkeys");
      delete body.properties.etcd;
      const name = `platform-keys-${v.slice(0, 4)}${v.slice(5, 7)}`;
      const r = await put(v, name, body);
      const created = expect2xx(r, 201).properties as Json;
      if (!since2026(v)) {
        expect(created.etcd).toEqual({ dataEncryption: { keyManagementMode: "PlatformManaged" } });
        continue;
      }
      expect(created.etcd).toBeUndefined();
      const platform = exampleCluster(v, "platformkeys");
      platform.properties.etcd = { dataEncryption: { keyManagementMode: "PlatformManaged" } };
      expect(targets(await put(v, `${name}-x`, platform))).toEqual([
        "properties.etcd.dataEncryption.keyManagementMode",
      ]);
      const noMode = exampleCluster(v, "platformkeys");
      delete noMode.properties.etcd.dataEncryption.keyManagementMode;
      expect(targets(await put(v, `${name}-y`, noMode))).toEqual([
        "properties.etcd.dataEncryption.keyManagementMode",
      ]);
    }
  });

  it("requires kms.vaultName and kms.visibility from 2025-12-23-preview, activeKey.vaultName before", async () => {
    const old = exampleCluster("2024-06-10-preview", "kms");
    delete old.properties.etcd.dataEncryption.customerManaged.kms.activeKey.vaultName;
    expect(targets(await put("2024-06-10-preview", "kms-2024", old))).toEqual([
      "properties.etcd.dataEncryption.customerManaged.kms.activeKey.vaultName",
    ]);
    const body = exampleCluster("2025-12-23-preview", "kms");
    delete body.properties.etcd.dataEncryption.customerManaged.kms.visibility;
    expect(targets(await put("2025-12-23-preview", "kms-2025", body))).toEqual([
      "properties.etcd.dataEncryption.customerManaged.kms.visibility",
    ]);
  });

  it("keeps a 2024-06-10-preview cluster's version.id create-only; later versions change it", async () => {
    const name = "version-change";
    expect2xx(await put("2025-12-23-preview", name, exampleCluster("2025-12-23-preview", "vchange")), 201);
    await settle(HcpClusterResource, clusterCRName(rg, name));
    const path = clusterPath(sub, rg, name);
    const body = { properties: { version: { id: "4.20" } } };
    expect(targets(await arm.send("PATCH", path, { apiVersion: "2024-06-10-preview", body }))).toEqual([
      "properties.version.id",
    ]);
    const r = await arm.send("PATCH", path, { apiVersion: "2025-12-23-preview", body });
    expect(expect2xx(r, 202).properties.version.id).toBe("4.20");
  });
});

describe("one cluster through every version", () => {
  const name = "shared";
  const path = clusterPath(sub, rg, name);

  it("shows each version its fields, and a PUT through any version keeps those it does not know", async () => {
    expect2xx(await arm.send("PUT", path, { body: exampleCluster("2026-06-30-preview", "shared") }), 201);
    await settle(HcpClusterResource, clusterCRName(rg, name));
    const hub = expect2xx(await arm.send("GET", path), 200);
    const newest = expect2xx(await arm.send("GET", path, { apiVersion: "2026-09-01-preview" }), 200);
    expect(newest).toEqual(hub);

    let drain = 60;
    for (const v of API_VERSIONS) {
      // What the version shows, sent back with one change: a PUT as a client of that version makes it.
      const seen = expect2xx(await arm.send("GET", path, { apiVersion: v }), 200);
      drain += 1;
      seen.properties.nodeDrainTimeoutMinutes = drain;
      expect2xx(await arm.send("PUT", path, { apiVersion: v, body: seen }), 200);
      await settle(HcpClusterResource, clusterCRName(rg, name));
      const after = expect2xx(await arm.send("GET", path), 200);
      expect(after.properties, v).toMatchObject({
        nodeDrainTimeoutMinutes: drain,
        ingress: { type: "Private" },
        cryptoRestrictions: "FIPS",
        imageDigestMirrors: [{ source: "quay.io/team", mirrors: ["mirror.example.com/team"] }],
        platform: { vnetIntegrationSubnetId: hub.properties.platform.vnetIntegrationSubnetId },
        etcd: hub.properties.etcd,
      });
    }
    const old = expect2xx(await arm.send("GET", path, { apiVersion: "2024-06-10-preview" }), 200);
    const properties = old.properties as Json;
    for (const field of ["ingress", "cryptoRestrictions", "imageDigestMirrors", "status"])
      expect(Object.keys(properties), field).not.toContain(field);
    expect(Object.keys(properties.platform as Json)).not.toContain("vnetIntegrationSubnetId");
  });
});

describe("identities", () => {
  const OPS = "properties.platform.operatorsAuthentication.userAssignedIdentities";
  const put = (v: ApiVersion, name: string, body: Json) =>
    arm.send("PUT", clusterPath(sub, rg, name), { apiVersion: v, body });
  const assigned = (body: Json): Json => body.identity.userAssignedIdentities as Json;

  it("refuses, in every version, an operator identity that is not assigned to the cluster", async () => {
    for (const v of API_VERSIONS) {
      const body = exampleCluster(v, "unassigned");
      delete assigned(body)[uami(sub, "unassigned-ingress")];
      const r = await put(v, `unassigned-${v.slice(0, 4)}${v.slice(5, 7)}`, body);
      expect(targets(r)).toEqual([`${OPS}.controlPlaneOperators.ingress`]);
      expect((r.body as Json).error.message).toContain("is not assigned to the cluster");
    }
    const noIdentity = exampleCluster("2026-06-30-preview", "none");
    delete noIdentity.identity;
    expect(targets(await put("2026-06-30-preview", "no-identity", noIdentity))).toHaveLength(9);
  });

  it("refuses an assigned identity no operator uses, one used twice, and an assigned data plane identity", async () => {
    const v = "2026-06-30-preview";
    const unused = exampleCluster(v, "unused");
    const spare = uami(sub, "spare");
    assigned(unused)[spare] = {};
    expect(targets(await put(v, "unused", unused))).toEqual([`identity.userAssignedIdentities.${spare}`]);

    const shared = exampleCluster(v, "shared2");
    const ops = shared.properties.platform.operatorsAuthentication.userAssignedIdentities as Json;
    const file = uami(sub, "shared2-file");
    ops.controlPlaneOperators["file-csi-driver"] = uami(sub, "shared2-disk");
    delete assigned(shared)[file];
    const r = await put(v, "shared-identity", shared);
    expect(targets(r)).toEqual([`identity.userAssignedIdentities.${uami(sub, "shared2-disk")}`]);
    expect((r.body as Json).error.message).toContain("used more than once");

    const dataPlane = exampleCluster(v, "dataplane");
    assigned(dataPlane)[uami(sub, "dataplane-dp-disk")] = {};
    expect(targets(await put(v, "data-plane", dataPlane))).toEqual([
      `identity.userAssignedIdentities.${uami(sub, "dataplane-dp-disk")}`,
      `${OPS}.dataPlaneOperators.disk-csi-driver`,
    ]);
  });

  it("matches identity IDs whatever their case, and shows each one's principal and client IDs and the tenant", async () => {
    const v = "2025-12-23-preview";
    const body = exampleCluster(v, "details");
    const ccm = uami(sub, "details-ccm");
    delete assigned(body)[ccm];
    assigned(body)[ccm.toUpperCase()] = { principalId: "forged", clientId: "forged" };
    const created = expect2xx(await put(v, "details", body), 201);
    expect(created.identity.tenantId).toBe(TENANT);
    const entries = Object.entries(assigned(created));
    expect(entries).toHaveLength(9);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const [id, e] of entries) {
      expect(e.principalId).toMatch(uuid);
      expect(e.principalId).not.toBe(e.clientId);
      // The client ID the HostedCluster's operators are given for this identity.
      expect(e.clientId).toBe(identityClientId(id));
    }
    const got = expect2xx(await arm.send("GET", clusterPath(sub, rg, "details"), { apiVersion: v }), 200);
    expect(got.identity).toEqual(created.identity);
  });
});
