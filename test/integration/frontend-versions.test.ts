/**
 * Every served api-version against the real service apiserver, each from a body shaped like ARO
 * HCP's examples of that version: PUT, GET, LIST, PATCH and DELETE of a cluster and a node pool,
 * the version's defaults and required fields, and a cluster written through one version read and
 * replaced through another: a field a version does not know never appears in its responses and
 * survives its PUTs. No controllers run; the test writes the CRs' status as they would.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  ExternalAuthResource,
  HcpClusterResource,
  NodePoolResource,
  type BreakglassCredential,
  type HcpCluster,
} from "../../operators/api/v1alpha1/index.ts";
import { API_VERSIONS, type ApiVersion } from "../../operators/frontend/api/registry.ts";
import {
  clusterCRName,
  externalAuthCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import { certificateRequest } from "../../operators/hcp/pkcs10.ts";
import type { ResourceType } from "../../operators/runtime/kube.ts";
import { identityClientId } from "../../operators/hcp/identities.ts";
import { clientFor, namespaceType } from "../support/fixtures.ts";
import {
  assignedIdentities,
  clusterPath,
  externalAuthBody,
  externalAuthPath,
  nodePoolPath,
  uami,
  type ArmClient,
  type ArmResponse,
} from "../support/frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";
import { writeSummaryStatus } from "../support/summary-conditions.ts";

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
    // The key management plugin's identity: its examples encrypt etcd with a customer's key.
    kms: uami(sub, `${prefix}-kms`),
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
function settle(type: ResourceType, name: string, extra: Json = {}): Promise<void> {
  return writeSummaryStatus(
    service,
    type,
    { name, namespace: ns },
    {
      state: "ready",
      extra: (cr) => ({
        ...(type === HcpClusterResource ? { issuerURL: `${ISSUER_BASE}${TENANT}/${cr.metadata.uid}` } : {}),
        ...extra,
      }),
    },
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
  for (const t of [
    ExternalAuthResource,
    BreakglassCredentialResource,
    BreakglassRevocationResource,
    NodePoolResource,
    HcpClusterResource,
  ]) {
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
      // Each version's cluster its own prefix: a region refuses a prefix another cluster has.
      const prefix = `pk${v.slice(2, 4)}${v.slice(5, 7)}`;
      const body = exampleCluster(v, prefix);
      delete body.properties.etcd;
      const name = `platform-keys-${v.slice(0, 4)}${v.slice(5, 7)}`;
      const r = await put(v, name, body);
      const created = expect2xx(r, 201).properties as Json;
      if (!since2026(v)) {
        expect(created.etcd).toEqual({ dataEncryption: { keyManagementMode: "PlatformManaged" } });
        continue;
      }
      expect(created.etcd).toBeUndefined();
      const platform = exampleCluster(v, `${prefix}x`);
      platform.properties.etcd = { dataEncryption: { keyManagementMode: "PlatformManaged" } };
      expect(targets(await put(v, `${name}-x`, platform))).toEqual([
        "properties.etcd.dataEncryption.keyManagementMode",
      ]);
      const noMode = exampleCluster(v, `${prefix}y`);
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

describe("defaults and bounds per version", () => {
  it("defaults ingress.type to Public and cryptoRestrictions to None from 2026-06-30-preview, shown only there", async () => {
    for (const v of API_VERSIONS) {
      const name = `defaults-${v.slice(0, 4)}${v.slice(5, 7)}`;
      const body = exampleCluster(v, `d${v.slice(2, 4)}${v.slice(5, 7)}`);
      delete body.properties.ingress;
      delete body.properties.cryptoRestrictions;
      const created = expect2xx(
        await arm.send("PUT", clusterPath(sub, rg, name), { apiVersion: v, body }),
        201,
      );
      const p = created.properties as Json;
      if (since2026(v)) expect(p).toMatchObject({ ingress: { type: "Public" }, cryptoRestrictions: "None" });
      else
        for (const field of ["ingress", "cryptoRestrictions"])
          expect(Object.keys(p), field).not.toContain(field);
      // Whatever version created it, the newest shows the defaults a cluster of its own would have.
      const hub = expect2xx(await arm.send("GET", clusterPath(sub, rg, name)), 200);
      expect(hub.properties, v).toMatchObject({ ingress: { type: "Public" }, cryptoRestrictions: "None" });
    }
  });

  it("defaults a node pool's osDisk.diskType to Managed whatever version created it; 4095 GiB is every version's bound", async () => {
    const name = "disk-parent";
    expect2xx(
      await arm.send("PUT", clusterPath(sub, rg, name), {
        apiVersion: "2026-06-30-preview",
        body: exampleCluster("2026-06-30-preview", "diskparent"),
      }),
      201,
    );
    await settle(HcpClusterResource, clusterCRName(rg, name));
    for (const v of API_VERSIONS) {
      const pool = nodePoolPath(sub, rg, name, `d${v.slice(2, 4)}${v.slice(5, 7)}`);
      const body = { location: "westus3", properties: { platform: { vmSize: "Standard_D4s_v3" } } };
      const created = expect2xx(await arm.send("PUT", pool, { apiVersion: v, body }), 201).properties as Json;
      // ARO HCP's defaults: 64 GiB Premium_LRS, auto-repaired; diskType shown from 2025-12-23-preview.
      expect(created).toMatchObject({
        autoRepair: true,
        platform: { osDisk: { sizeGiB: 64, diskStorageAccountType: "Premium_LRS" } },
      });
      expect(created.platform.osDisk.diskType).toBe(since2025(v) ? "Managed" : undefined);
      const hub = expect2xx(await arm.send("GET", pool), 200);
      expect(hub.properties.platform.osDisk.diskType, v).toBe("Managed");
      // The OpenAPI says 4095 from 2026-06-30-preview only; ARO HCP's validation holds every version to it.
      const big = examplePool(v);
      big.properties.platform.osDisk.sizeGiB = 4096;
      const r = await arm.send("PUT", nodePoolPath(sub, rg, name, `b${v.slice(2, 4)}${v.slice(5, 7)}`), {
        apiVersion: v,
        body: big,
      });
      expect(targets(r)).toEqual(["properties.platform.osDisk.sizeGiB"]);
    }
  });

  it("keeps a node pool's diskType through a PUT and a PATCH of 2024-06-10-preview, which does not show it", async () => {
    const name = "disk-parent";
    const pool = nodePoolPath(sub, rg, name, "ephemeral");
    const body = examplePool("2026-06-30-preview");
    body.properties.platform.osDisk.diskType = "Ephemeral";
    expect2xx(await arm.send("PUT", pool, { body }), 201);
    await settle(NodePoolResource, nodePoolCRName(rg, name, "ephemeral"));
    const old = "2024-06-10-preview";
    const seen = expect2xx(await arm.send("GET", pool, { apiVersion: old }), 200);
    expect(Object.keys(seen.properties.platform.osDisk as Json)).not.toContain("diskType");
    seen.properties.replicas = 5;
    expect2xx(await arm.send("PUT", pool, { apiVersion: old, body: seen }), 200);
    await settle(NodePoolResource, nodePoolCRName(rg, name, "ephemeral"));
    expect2xx(await arm.send("PATCH", pool, { apiVersion: old, body: { properties: { replicas: 6 } } }), 202);
    const after = expect2xx(await arm.send("GET", pool), 200);
    expect(after.properties).toMatchObject({ replicas: 6, platform: { osDisk: { diskType: "Ephemeral" } } });
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
    expect(targets(await put("2026-06-30-preview", "no-identity", noIdentity))).toHaveLength(10);
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
    expect(entries).toHaveLength(10);
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

/** The operation's status, read at its Azure-AsyncOperation URL in the version that started it. */
async function operationStatus(r: ArmResponse, v: ApiVersion): Promise<Json> {
  const url = r.headers["azure-asyncoperation"] ?? "";
  expect(new URL(url).searchParams.get("api-version")).toBe(v);
  return expect2xx(await arm.send("GET", url), 200);
}

/** An external auth after ARO HCP's ExternalAuths CreateOrUpdate example: Entra ID, console and CLI clients. */
const exampleExternalAuth = (app: string): Json => externalAuthBody({ tenant: TENANT, app });

const PLACEHOLDER_CERT = "-----BEGIN CERTIFICATE-----\nTUlJQg==\n-----END CERTIFICATE-----\n";
const PLACEHOLDER_CA = "-----BEGIN CERTIFICATE-----\nQ0FDQQ==\n-----END CERTIFICATE-----\n";

/**
 * The operations the blocks above leave out, in every served version: operation status and
 * result, LIST by subscription, a node pool replaced by PUT, external auths (PUT create and
 * replace, PATCH, GET, LIST, DELETE, 409 while the cluster provisions), both credential actions,
 * hcpOpenShiftVersions, hcpOperatorIdentityRoleSets, the provider's operations and a preflight
 * naming the version. The controllers' part is played by writing the CRs' status.
 */
describe.each(API_VERSIONS)("api-version %s: every other operation", (v) => {
  const tag = `${v.slice(2, 4)}${v.slice(5, 7)}${v.slice(8, 10)}`;
  const name = `ops-${tag}`;
  const cluster = clusterPath(sub, rg, name);
  const crName = clusterCRName(rg, name);
  const auth = externalAuthPath(sub, rg, name, "entra");
  const authCR = externalAuthCRName(rg, name, "entra");
  const app = randomUUID();

  it("creates a cluster whose operation status answers in the version; an external auth waits for it (409)", async () => {
    const created = await arm.send("PUT", cluster, { apiVersion: v, body: exampleCluster(v, `o${tag}`) });
    expect2xx(created, 201);
    expect((await operationStatus(created, v)).status).toBe("Accepted");
    const early = await arm.send("PUT", auth, { apiVersion: v, body: exampleExternalAuth(app) });
    expect(early.status, JSON.stringify(early.body)).toBe(409);
    expect((early.body as Json).error.code).toBe("Conflict");
    await settle(HcpClusterResource, crName);
    const done = await operationStatus(created, v);
    expect(done).toMatchObject({ status: "Succeeded" });
    expect(String(done.id)).toContain("/hcpOperationStatuses/");
  });

  it("lists the cluster by subscription in the version's shape, and answers a PATCH's result", async () => {
    const got = expect2xx(await arm.send("GET", cluster, { apiVersion: v }), 200);
    const all = expect2xx(
      await arm.send(
        "GET",
        `/subscriptions/${sub}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters`,
        {
          apiVersion: v,
        },
      ),
      200,
    );
    expect((all.value as Json[]).find((c) => c.id === got.id)).toEqual(got);

    const patched = await arm.send("PATCH", cluster, {
      apiVersion: v,
      body: { tags: { env: "versions", patched: v } },
    });
    expect2xx(patched, 202);
    const result = patched.headers["location"] ?? "";
    expect(new URL(result).searchParams.get("api-version")).toBe(v);
    await settle(HcpClusterResource, crName);
    expect((await operationStatus(patched, v)).status).toBe("Succeeded");
    const final = expect2xx(await arm.send("GET", result), 200);
    expect(final).toEqual(expect2xx(await arm.send("GET", cluster, { apiVersion: v }), 200));
    expect(final.tags).toEqual({ env: "versions", patched: v });
    expect("ingress" in final.properties).toBe(since2026(v));
  });

  it("replaces a node pool with a PUT of what the version shows", async () => {
    const pool = nodePoolPath(sub, rg, name, "replace");
    expect2xx(await arm.send("PUT", pool, { apiVersion: v, body: examplePool(v) }), 201);
    await settle(NodePoolResource, nodePoolCRName(rg, name, "replace"));
    const seen = expect2xx(await arm.send("GET", pool, { apiVersion: v }), 200);
    seen.properties.replicas = 4;
    seen.properties.labels = [{ key: "tier", value: "batch" }];
    const replaced = expect2xx(await arm.send("PUT", pool, { apiVersion: v, body: seen }), 200);
    expect(replaced.properties).toMatchObject({ replicas: 4, labels: [{ key: "tier", value: "batch" }] });
    await settle(NodePoolResource, nodePoolCRName(rg, name, "replace"));
    expect((await operationStatus(await arm.send("DELETE", pool, { apiVersion: v }), v)).status).toBe(
      "Succeeded",
    );
  });

  it("creates, reads, lists, replaces, patches and deletes an external auth in the version's shape", async () => {
    const created = await arm.send("PUT", auth, { apiVersion: v, body: exampleExternalAuth(app) });
    const body = expect2xx(created, 201);
    expect(body).toMatchObject({
      id: auth,
      name: "entra",
      type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths",
      properties: { provisioningState: "Accepted", issuer: { audiences: [app] } },
    });
    for (const field of ["location", "tags", "identity"])
      expect(Object.keys(body), field).not.toContain(field);
    await settle(ExternalAuthResource, authCR);
    expect((await operationStatus(created, v)).status).toBe("Succeeded");

    // The read-only state: one Available `condition` before 2026-06-30-preview, `status.conditions` since.
    const got = expect2xx(await arm.send("GET", auth, { apiVersion: v }), 200);
    expect(got.properties.provisioningState).toBe("Succeeded");
    expect("status" in got.properties, "status").toBe(since2026(v));
    expect("condition" in got.properties, "condition").toBe(!since2026(v));
    if (since2026(v))
      expect((got.properties.status.conditions as Json[]).map((c) => String(c.type)).sort()).toEqual([
        "Available",
        "Degraded",
        "Progressing",
      ]);
    else expect(got.properties.condition).toMatchObject({ type: "Available", status: "True" });
    const list = expect2xx(await arm.send("GET", `${cluster}/externalAuths`, { apiVersion: v }), 200);
    expect(list.value).toEqual([got]);

    // What the version shows, sent back with another audience, replaces it.
    const second = randomUUID();
    got.properties.issuer.audiences = [app, second];
    const replaced = await arm.send("PUT", auth, { apiVersion: v, body: got });
    expect(expect2xx(replaced, 200).properties.issuer.audiences).toEqual([app, second]);
    await settle(ExternalAuthResource, authCR);
    expect((await operationStatus(replaced, v)).status).toBe("Succeeded");

    // A validation rule's type may be left out: RequiredClaim is ARO HCP's default.
    const rule = { requiredClaim: { claim: "tid", requiredValue: TENANT } };
    const patched = await arm.send("PATCH", auth, {
      apiVersion: v,
      body: {
        properties: {
          claim: {
            mappings: { username: { claim: "upn", prefixPolicy: "NoPrefix" } },
            validationRules: [rule],
          },
        },
      },
    });
    expect(expect2xx(patched, 202).properties.claim).toMatchObject({
      mappings: { username: { claim: "upn" } },
      validationRules: [{ type: "RequiredClaim", ...rule }],
    });
    await settle(ExternalAuthResource, authCR);
    expect((await operationStatus(patched, v)).status).toBe("Succeeded");
    const result = expect2xx(await arm.send("GET", patched.headers["location"] ?? ""), 200);
    expect(result.properties).toMatchObject({
      issuer: { audiences: [app, second] },
      claim: { mappings: { username: { claim: "upn" }, groups: { claim: "groups" } } },
    });
    expect("status" in result.properties).toBe(since2026(v));

    const deleted = await arm.send("DELETE", auth, { apiVersion: v });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(202);
    expect((await operationStatus(deleted, v)).status).toBe("Succeeded");
    expect((await arm.send("GET", auth, { apiVersion: v })).status).toBe(404);
  });

  it("requests an admin credential: 202, then {kubeconfig, expirationTimestamp} at the operation's result", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const csr = await certificateRequest(privateKey, { commonName: "system:customer-break-glass:alice" });
    // 2026-09-01-preview's action takes the client's own request; earlier ones take no body.
    const body = v === "2026-09-01-preview" ? { certificateSigningRequest: csr } : undefined;
    const r = await arm.send("POST", `${cluster}/requestAdminCredential`, {
      apiVersion: v,
      ...(body ? { body } : {}),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const result = r.headers["location"] ?? "";
    expect(result).toContain("/hcpOperationResults/");
    expect(new URL(result).searchParams.get("api-version")).toBe(v);
    const pending = await operationStatus(r, v);
    expect(pending.status).toBe("Accepted");

    const credential = `arm-${String(pending.name).toLowerCase()}`;
    const cr = await service.get<BreakglassCredential>(BreakglassCredentialResource, credential, ns);
    expect(cr.spec.certificateSigningRequest).toBe(body ? csr : undefined);
    const expires = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
    await settle(BreakglassCredentialResource, credential, {
      certificate: PLACEHOLDER_CERT,
      expirationTimestamp: expires,
      serverCA: PLACEHOLDER_CA,
    });
    expect((await operationStatus(r, v)).status).toBe("Succeeded");
    const answer = expect2xx(await arm.send("GET", result), 200);
    expect(Object.keys(answer).sort()).toEqual(["expirationTimestamp", "kubeconfig"]);
    expect(answer.expirationTimestamp).toBe(expires);
    const config = JSON.parse(String(answer.kubeconfig)) as Json;
    const user = config.users[0].user as Json;
    expect(Buffer.from(String(user["client-certificate-data"]), "base64").toString()).toBe(PLACEHOLDER_CERT);
    expect(
      Buffer.from(String(config.clusters[0].cluster["certificate-authority-data"]), "base64").toString(),
    ).toBe(PLACEHOLDER_CA);
  });

  it("revokes credentials: 202, and the operation's result is 204 once the revocation is done", async () => {
    const r = await arm.send("POST", `${cluster}/revokeCredentials`, { apiVersion: v });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const pending = await operationStatus(r, v);
    expect(pending.status).toBe("Accepted");
    await settle(BreakglassRevocationResource, `arm-${String(pending.name).toLowerCase()}`, {
      revocationTimestamp: now(),
    });
    expect((await operationStatus(r, v)).status).toBe("Succeeded");
    expect((await arm.send("GET", r.headers["location"] ?? "")).status).toBe(204);
  });

  it("serves hcpOpenShiftVersions, hcpOperatorIdentityRoleSets and the provider's operations as the hub does", async () => {
    const location = `/subscriptions/${sub}/providers/Microsoft.RedHatOpenShift/locations/westus3`;
    const paths = [
      `${location}/hcpOpenShiftVersions`,
      `${location}/hcpOpenShiftVersions/4.19.7`,
      `${location}/hcpOperatorIdentityRoleSets`,
      `${location}/hcpOperatorIdentityRoleSets/4.19`,
      "/providers/Microsoft.RedHatOpenShift/operations",
    ];
    for (const path of paths) {
      const got = expect2xx(await arm.send("GET", path, { apiVersion: v }), 200);
      expect(got, path).toEqual(expect2xx(await arm.send("GET", path), 200));
    }
    const versions = expect2xx(await arm.send("GET", paths[0]!, { apiVersion: v }), 200).value as Json[];
    expect(versions.length).toBeGreaterThan(0);
    // endOfLifeTimestamp is required in every version's schema; the shipped catalog gives each one.
    for (const version of versions)
      expect(Object.keys(version.properties as Json).sort()).toEqual([
        "channelGroup",
        "enabled",
        "endOfLifeTimestamp",
      ]);
    const roleSet = expect2xx(await arm.send("GET", paths[3]!, { apiVersion: v }), 200);
    expect(Object.keys(roleSet.properties as Json).sort()).toEqual([
      "controlPlaneOperators",
      "dataPlaneOperators",
    ]);
  });

  it("preflights a deployment of the version's cluster and node pool bodies", async () => {
    const url = `/subscriptions/${sub}/resourcegroups/${rg}/providers/Microsoft.RedHatOpenShift/deployments/d${tag}/preflight`;
    const resources = [
      {
        name: `pf-${tag}`,
        type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
        apiVersion: v,
        ...exampleCluster(v, `p${tag}`),
      },
      {
        name: `pf-${tag}/pool`,
        type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools",
        apiVersion: v,
        ...examplePool(v),
      },
    ];
    const ok = await arm.send("POST", url, { apiVersion: null, body: { resources } });
    expect(ok.body).toEqual({ status: "Succeeded" });
    // The version's required set applies: a body without version.id passes only in 2024-06-10-preview.
    const noVersion = structuredClone(resources[0]!) as Json;
    delete noVersion.properties.version;
    const r = expect2xx(
      await arm.send("POST", url, { apiVersion: null, body: { resources: [noVersion] } }),
      200,
    );
    if (!since2025(v)) expect(r).toEqual({ status: "Succeeded" });
    else expect(JSON.stringify(r.error)).toContain("properties.version");
  });
});
