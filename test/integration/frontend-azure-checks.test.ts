/**
 * Creates through the ARM frontend are checked against the customer's Azure first (the ARM
 * emulator, read with the real SDK clients), against the real service apiserver: a cluster whose
 * identity is missing, whose operator lacks its role, whose KMS key or key version is unknown, a
 * node pool whose VM size is not offered in its zone or that would pass the vCPU quota (new, or
 * grown by a PATCH) are each a 400 naming the ARM field, and nothing is written; a customer that
 * set everything up is accepted; preflight reports the same; Azure failing is a 503 with
 * Retry-After, not a refusal.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArmEmulator, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { assignmentName, setUpCustomerAzure } from "../../hack/harness/customer-azure.ts";
import { HcpClusterResource, NodePoolResource } from "../../operators/api/v1alpha1/index.ts";
import type { AzureClients } from "../../operators/azure/clients.ts";
import {
  clusterCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import { clientFor } from "../support/fixtures.ts";
import { writeSummaryStatus } from "../support/summary-conditions.ts";
import {
  clusterBody,
  clusterPath,
  nodePoolBody,
  nodePoolPath,
  type ArmResponse,
} from "../support/frontend.ts";
import {
  createSettledCluster,
  removeSubscription,
  settleCluster,
  startFrontendFixture,
  type FrontendFixture,
} from "../support/frontend-fixture.ts";

const service = clientFor("service");
const rg = "rg-azure";
const OPERATORS = "properties.platform.operatorsAuthentication.userAssignedIdentities";
const KMS = "properties.etcd.dataEncryption.customerManaged.kms";
const CCM_ROLE = "a1f96423-95ce-4224-ab27-4e3dc72facd4";
const subscriptions: string[] = [];

let workDir: string;
let emu: ArmEmulator;
let fixture: FrontendFixture;
let azure: AzureClients;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "frontend-azure-"));
  emu = await startArmEmulator({ workDir, asyncDelayMs: 20 });
  fixture = await startFrontendFixture({ client: service, name: "frontend-azure", arm: emu });
  azure = fixture.azure!;
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  await Promise.all(subscriptions.map((s) => removeSubscription(service, s)));
  await emu?.stop();
  await rm(workDir, { recursive: true, force: true });
});

/** A registered subscription whose customer made what clusterBody names. */
async function customer(): Promise<string> {
  const sub = randomUUID();
  subscriptions.push(sub);
  expect((await fixture.putSubscription(sub, "Registered")).status).toBe(200);
  return sub;
}

/** The refusal's error, checked to be a 400 naming `target` (alone, or among several). */
function refused(r: ArmResponse, target: string): Json {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  const error = (r.body as Json).error as Json;
  const all = [error, ...((error.details as Json[] | undefined) ?? [])];
  const found = all.find((e) => e.target === target);
  expect(found, JSON.stringify(error)).toBeDefined();
  expect(["InvalidRequestContent", "MultipleErrorsOccurred"]).toContain(error.code);
  return found!;
}

const clusterCR = (sub: string, name: string) =>
  service.find(HcpClusterResource, clusterCRName(rg, name), subscriptionNamespace(sub));

describe("a cluster create", () => {
  it("is accepted when the customer's identities exist and hold their roles; a PUT of it again reads nothing in Azure", async () => {
    const sub = await customer();
    const r = await fixture.arm.send("PUT", clusterPath(sub, rg, "ok"), { body: clusterBody(sub) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(emu.requests({ method: "GET", path: `/subscriptions/${sub}/` }).length).toBeGreaterThan(0);
    await settleCluster(service, { sub, rg, name: "ok" });
    emu.clearRequests();
    const again = await fixture.arm.send("PUT", clusterPath(sub, rg, "ok"), { body: clusterBody(sub) });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(emu.requests({ path: `/subscriptions/${sub}/` })).toEqual([]);
  });

  it("is refused naming an operator whose identity does not exist, and writes nothing", async () => {
    const sub = await customer();
    await azure.identities(sub).userAssignedIdentities.delete("identities", "cp-ccm");
    const r = await fixture.arm.send("PUT", clusterPath(sub, rg, "noid"), { body: clusterBody(sub) });
    const e = refused(r, `${OPERATORS}.controlPlaneOperators.cloud-controller-manager`);
    expect(e.message).toContain("does not exist");
    expect(await clusterCR(sub, "noid")).toBeUndefined();
  });

  it("is refused naming an operator that lacks its role on the subnet", async () => {
    const sub = await customer();
    const body = clusterBody(sub) as Json;
    const subnet = String(body.properties.platform.subnetId);
    const principal =
      (await azure.identities(sub).userAssignedIdentities.get("identities", "cp-ccm")).principalId ?? "";
    const role = `/subscriptions/${sub}/providers/Microsoft.Authorization/roleDefinitions/${CCM_ROLE}`;
    await azure.authorization(sub).roleAssignments.delete(subnet, assignmentName(principal, role, subnet));
    const r = await fixture.arm.send("PUT", clusterPath(sub, rg, "norole"), { body });
    const e = refused(r, `${OPERATORS}.controlPlaneOperators.cloud-controller-manager`);
    expect(e.message).toContain("Azure Red Hat OpenShift Cloud Controller Manager");
    expect(e.message).toContain(`the subnet '${subnet}'`);
    expect(await clusterCR(sub, "norole")).toBeUndefined();
  });

  describe("with a customer-managed etcd key", () => {
    /** The body with etcd encrypted by key `etcd` of the subscription's vault, set up in Azure. */
    async function kmsCluster(): Promise<{ sub: string; body: Json }> {
      const sub = await customer();
      const body = clusterBody(sub) as Json;
      const kmsId = String(
        body.properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators.ingress,
      ).replace(/[^/]+$/, "cp-kms");
      body.properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators.kms =
        kmsId;
      body.identity.userAssignedIdentities[kmsId] = {};
      body.properties.etcd = {
        dataEncryption: {
          keyManagementMode: "CustomerManaged",
          customerManaged: {
            encryptionType: "KMS",
            kms: {
              vaultName: `kv-${sub.slice(0, 8)}`,
              visibility: "Public",
              activeKey: { name: "etcd", version: "0" },
            },
          },
        },
      };
      const made = await setUpCustomerAzure(azure, sub, body);
      body.properties.etcd.dataEncryption.customerManaged.kms.activeKey.version = made.key?.version;
      return { sub, body };
    }

    it("is accepted when the vault, key and version exist", async () => {
      const { sub, body } = await kmsCluster();
      const r = await fixture.arm.send("PUT", clusterPath(sub, rg, "kms"), { body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    });

    it("is refused naming an unknown key", async () => {
      const { sub, body } = await kmsCluster();
      body.properties.etcd.dataEncryption.customerManaged.kms.activeKey.name = "nokey";
      const r = await fixture.arm.send("PUT", clusterPath(sub, rg, "nokey"), { body });
      expect(refused(r, `${KMS}.activeKey.name`).message).toContain("'nokey' does not exist");
    });

    it("is refused naming an unknown key version, also on a PATCH that rotates to it", async () => {
      const { sub, body } = await kmsCluster();
      const good = String(body.properties.etcd.dataEncryption.customerManaged.kms.activeKey.version);
      body.properties.etcd.dataEncryption.customerManaged.kms.activeKey.version =
        "00000000000000000000000000000000";
      const r = await fixture.arm.send("PUT", clusterPath(sub, rg, "nover"), { body });
      expect(refused(r, `${KMS}.activeKey.version`).message).toContain("has no version");

      body.properties.etcd.dataEncryption.customerManaged.kms.activeKey.version = good;
      await createSettledCluster(fixture.arm, service, { sub, rg, name: "rotate" }, { body });
      const rotated = await fixture.arm.send("PATCH", clusterPath(sub, rg, "rotate"), {
        body: {
          properties: {
            etcd: {
              dataEncryption: {
                customerManaged: { kms: { activeKey: { version: "ffffffffffffffffffffffffffffffff" } } },
              },
            },
          },
        },
      });
      refused(rotated, `${KMS}.activeKey.version`);
    });
  });

  it("is a 503 with Retry-After while Azure fails, not a refusal, and accepted once it answers", async () => {
    const sub = await customer();
    const fault = emu.faults.serverError({ path: "/roleAssignments" }, { times: 1_000 });
    try {
      const r = await fixture.arm.send("PUT", clusterPath(sub, rg, "outage"), { body: clusterBody(sub) });
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect((r.body as Json).error.code).toBe("ServiceUnavailable");
      expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
      expect(await clusterCR(sub, "outage")).toBeUndefined();
    } finally {
      fault.clear();
    }
    const again = await fixture.arm.send("PUT", clusterPath(sub, rg, "outage"), { body: clusterBody(sub) });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  });
});

describe("a node pool", () => {
  let sub: string;
  beforeAll(async () => {
    sub = await customer();
    await createSettledCluster(fixture.arm, service, { sub, rg, name: "pools" });
  });
  const pool = (name: string, properties: Json): Promise<ArmResponse> => {
    const body = nodePoolBody() as Json;
    body.properties = {
      ...body.properties,
      ...properties,
      platform: { ...body.properties.platform, ...properties.platform },
    };
    return fixture.arm.send("PUT", nodePoolPath(sub, rg, "pools", name), { body });
  };

  it("is refused naming the zone when its VM size is not offered there", async () => {
    emu.compute.restrict({ size: "Standard_D8s_v3", location: "eastus", zones: ["3"], subscriptionId: sub });
    const r = await pool("zone3", { platform: { vmSize: "Standard_D8s_v3", availabilityZone: "3" } });
    expect(refused(r, "properties.platform.availabilityZone").message).toContain("zone '3'");
    expect(
      await service.find(NodePoolResource, nodePoolCRName(rg, "pools", "zone3"), subscriptionNamespace(sub)),
    ).toBeUndefined();
    const zone1 = await pool("zone1", { platform: { vmSize: "Standard_D8s_v3", availabilityZone: "1" } });
    expect(zone1.status, JSON.stringify(zone1.body)).toBe(201);
  });

  it("is refused naming the VM size when it is not offered in the location", async () => {
    const r = await pool("nosize", { platform: { vmSize: "Standard_X999_v9" } });
    refused(r, "properties.platform.vmSize");
  });

  it("is refused naming replicas beyond the vCPU quota, new or grown by a PATCH", async () => {
    // The family has 40 vCPUs left: five D8s_v3.
    emu.compute.setUsage(sub, "eastus", { name: "standardDSv3Family", current: 60, limit: 100 });
    const big = await pool("big", { replicas: 6 });
    expect(refused(big, "properties.replicas").message).toContain("needs 48 more vCPUs");
    const small = await pool("small", { replicas: 1 });
    expect(small.status, JSON.stringify(small.body)).toBe(201);
    // Settled as its controller would leave it, the pool takes a PATCH: 6 more nodes do not fit, 4 do.
    const ref = { name: nodePoolCRName(rg, "pools", "small"), namespace: subscriptionNamespace(sub) };
    await writeSummaryStatus(service, NodePoolResource, ref, { state: "ready" });
    const path = nodePoolPath(sub, rg, "pools", "small");
    const grown = await fixture.arm.send("PATCH", path, { body: { properties: { replicas: 7 } } });
    expect(refused(grown, "properties.replicas").message).toContain("needs 48 more vCPUs");
    const fits = await fixture.arm.send("PATCH", path, { body: { properties: { replicas: 5 } } });
    expect(fits.status, JSON.stringify(fits.body)).toBe(202);
  });
});

describe("preflight", () => {
  it("reports what a create would refuse, per resource, and a 503 while Azure fails", async () => {
    const sub = await customer();
    const url = `/subscriptions/${sub}/resourcegroups/${rg}/providers/Microsoft.RedHatOpenShift/deployments/dep/preflight`;
    const cluster = {
      name: "pf",
      type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
      apiVersion: "2026-06-30-preview",
      ...clusterBody(sub),
    };
    const ok = await fixture.arm.send("POST", url, { body: { resources: [cluster] }, apiVersion: null });
    expect(ok.body).toEqual({ status: "Succeeded" });

    await azure.identities(sub).userAssignedIdentities.delete("identities", "cp-ingress");
    const pool = {
      name: "pf/np",
      type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools",
      apiVersion: "2026-06-30-preview",
      ...nodePoolBody(),
      properties: { ...(nodePoolBody() as Json).properties, platform: { vmSize: "Standard_X999_v9" } },
    };
    const bad = await fixture.arm.send("POST", url, {
      body: { resources: [cluster, pool] },
      apiVersion: null,
    });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ status: "Failed", error: { code: "MultipleErrorsOccurred" } });
    const [forCluster, forPool] = (bad.body as Json).error.details as Json[];
    expect(forCluster).toMatchObject({ target: clusterPath(sub, rg, "pf") });
    expect(forCluster!.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ target: `${OPERATORS}.controlPlaneOperators.ingress` }),
      ]),
    );
    expect(forPool!.details).toEqual([expect.objectContaining({ target: "properties.platform.vmSize" })]);

    const fault = emu.faults.throttle(
      { path: "/Microsoft.Compute/skus" },
      { times: 1_000, retryAfterSeconds: 20 },
    );
    try {
      const throttled = await fixture.arm.send("POST", url, {
        body: { resources: [pool] },
        apiVersion: null,
      });
      expect(throttled.status).toBe(503);
      expect(throttled.headers["retry-after"]).toBe("20");
    } finally {
      fault.clear();
    }
  });
});
