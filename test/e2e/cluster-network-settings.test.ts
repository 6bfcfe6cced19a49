/**
 * A cluster's ingress type and VNet integration subnet reach the management cluster and Azure,
 * read at the far end: a cluster created through the ARM frontend with a private ingress, and one
 * created with `kubectl apply` without an ingress, each with a VNet integration subnet. On the
 * management cluster: the HostedCluster's ingress publishing, capabilities and Swift annotation,
 * the PodNetwork and PodNetworkInstance it names. In the ARM emulator: the load balancer frontend
 * in the node subnet at a private address (no public IP in front of the ingress), no load balancer
 * at all without an ingress, and where the records point. Refusals name the field; deleting both
 * leaves nothing in Azure or on the management cluster, and the customer's subnets free.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { dump } from "js-yaml";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ArmResourceRecord } from "../../hack/harness/arm-emulator/index.ts";
import {
  PodNetworkInstanceResource,
  PodNetworkResource,
  type PodNetwork,
  type PodNetworkInstance,
} from "../../operators/api/acn/v1alpha1.ts";
import {
  SWIFT_POD_NETWORK_INSTANCE_ANNOTATION,
  controlPlaneNamespaceName,
  type HostedCluster,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { createAzureClients, OWNER_TAG, type AzureClients } from "../../operators/azure/index.ts";
import { VNET_INTEGRATION_INSTANCE } from "../../operators/cluster/networking.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { clusterBody, clusterPath, type ArmClient } from "../support/frontend.ts";
import { clusterInfo, kubectlPath } from "../support/region.ts";
import { sampleCluster } from "../support/samples.ts";
import {
  hostedClusterOf,
  LIFECYCLE_MS,
  startSettingsE2e,
  type SettingsE2e,
} from "../support/settings-e2e.ts";
import type { TestStack } from "../support/stack.ts";

const exec = promisify(execFile);
const service = clientFor("service");
const sub = randomUUID();
const armNamespace = subscriptionNamespace(sub);
const customer = `network-${process.pid}`;
const rg = "E2E-Network";
const armPrefix = `nw${process.pid % 100000}`;
const kubectlPrefix = `nk${process.pid % 100000}`;

let scratch: { path: string; remove(): Promise<void> };
let running: TestStack;
let e2e: SettingsE2e | undefined;
let arm: ArmClient;
let azure: AzureClients;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

const subnetOf = (subscription: string, group: string, vnet: string, name: string): string =>
  `/subscriptions/${subscription}/resourceGroups/${group}/providers/Microsoft.Network/virtualNetworks/${vnet}/subnets/${name}`;

/** The customer's network, made before the cluster as a customer does: node and integration subnets. */
async function customerNetwork(subscription: string, group: string, vnet: string): Promise<void> {
  await azure.resources(subscription).resourceGroups.createOrUpdate(group, { location: "eastus" });
  await azure.network(subscription).virtualNetworks.beginCreateOrUpdateAndWait(group, vnet, {
    location: "eastus",
    addressSpace: { addressPrefixes: ["10.0.0.0/16"] },
    subnets: [
      { name: "nodes", addressPrefix: "10.0.0.0/24" },
      {
        name: "integration",
        addressPrefix: "10.0.1.0/24",
        delegations: [{ name: "aro-hcp", serviceName: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters" }],
      },
    ],
  });
}

/** A Ready HcpCluster, its management cluster's client, and its HostedCluster read there. */
/** The Swift objects on the management cluster: the PodNetwork for the subnet and its instance. */
async function expectSwift(mgmt: KubeClient, hc: HostedCluster, subnet: string): Promise<void> {
  expect(hc.metadata.annotations?.[SWIFT_POD_NETWORK_INSTANCE_ANNOTATION]).toBe(VNET_INTEGRATION_INSTANCE);
  const controlPlane = controlPlaneNamespaceName(hc.metadata.namespace ?? "", hc.metadata.name ?? "");
  const instance = await mgmt.find<PodNetworkInstance>(
    PodNetworkInstanceResource,
    VNET_INTEGRATION_INSTANCE,
    controlPlane,
  );
  const podNetwork = instance?.spec.podNetworkConfigs[0]?.podNetwork ?? "";
  expect(podNetwork, "the instance names a PodNetwork").not.toBe("");
  expect((await mgmt.find<PodNetwork>(PodNetworkResource, podNetwork))?.spec.subnetResourceID).toBe(subnet);
  // HyperShift (here its simulator) marks the control plane's namespace it finds already made.
  const ns = await mgmt.find(namespaceType, controlPlane);
  expect(ns?.metadata.labels?.["hypershift.openshift.io/hosted-control-plane"]).toBe("true");
}

/** The cluster's resources in the emulator: its managed resource group's, and any tagged as its. */
function azureOf(cr: HcpCluster): ArmResourceRecord[] {
  const group = cr.spec.platform.azure.managedResourceGroup.toLowerCase();
  return running.arm
    .resources()
    .filter((r) => r.resourceGroup.toLowerCase() === group || r.tags[OWNER_TAG] === cr.metadata.uid);
}

const ofType = (resources: ArmResourceRecord[], type: string) =>
  resources.filter((r) => r.type.toLowerCase() === type.toLowerCase());

function aRecord(resources: ArmResourceRecord[], name: string): string[] | undefined {
  const found = ofType(resources, "Microsoft.Network/dnszones/A").find((r) => r.name === name);
  return found
    ? (found.properties["ARecords"] as Array<{ ipv4Address: string }>).map((a) => a.ipv4Address)
    : undefined;
}

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(kubectlPath(), ["--kubeconfig", clusterInfo("service").kubeconfigPath, ...args]);
}

async function kubectlApply(obj: HcpCluster): Promise<void> {
  const file = join(scratch.path, `apply-${Date.now()}.yaml`);
  await writeFile(file, dump(obj));
  await kubectl("apply", "-f", file);
}

/** The sample cluster in the customer namespace, its ingress Disabled on 4.20, with an integration subnet. */
function kubectlCluster(version = "4.20"): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "no-ingress", namespace: customer };
  c.spec.dns.baseDomainPrefix = kubectlPrefix;
  c.spec.platform.azure.managedResourceGroup = `no-ingress-${process.pid}-managed`;
  c.spec.version = { id: version, channelGroup: "stable" };
  c.spec.ingress = { type: "Disabled" };
  c.spec.platform.azure.vnetIntegrationSubnetId = c.spec.platform.azure.subnetId.replace(
    /nodes$/,
    "integration",
  );
  delete c.spec.placement;
  return c;
}

beforeAll(async () => {
  e2e = await startSettingsE2e({
    name: "network",
    sub,
    customer,
    async beforeFrontend(stack) {
      running = stack;
      azure = await createAzureClients({
        armEndpoint: stack.arm.endpoint,
        authorityHost: stack.arm.endpoint,
        caFile: stack.arm.caPath,
        credential: {
          tenantId: stack.arm.tenantId,
          clientId: stack.arm.clientId,
          clientSecret: stack.arm.clientSecret,
        },
        registry: new Registry(),
      });
      await customerNetwork(sub, "customer-net", "vnet");
      const sample = sampleCluster().spec.platform.azure;
      const [, , sampleSub = "", , sampleGroup = "", , , , sampleVnet = ""] = sample.subnetId.split("/");
      await customerNetwork(sampleSub, sampleGroup, sampleVnet);
    },
  });
  scratch = e2e.scratch;
  arm = e2e.arm;
}, 180_000);

afterAll(async () => {
  await e2e?.stop();
});

describe("the ingress type and the VNet integration subnet reach the far ends", () => {
  const path = clusterPath(sub, rg, "Private");
  const nodes = subnetOf(sub, "customer-net", "vnet", "nodes");
  const integration = subnetOf(sub, "customer-net", "vnet", "integration");

  it("through ARM, a private ingress: internal publishing, Swift, a frontend in the node subnet and no public IP in front of it", async () => {
    const body = clusterBody(sub, { prefix: armPrefix }) as Json;
    body.properties.ingress = { type: "Private" };
    expect(body.properties.platform.vnetIntegrationSubnetId).toBe(integration);
    const r = await arm.send("PUT", path, { body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const op = await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250);
    expect(op, JSON.stringify(op)).toMatchObject({ status: "Succeeded" });

    const { cr, mgmt, hc } = await hostedClusterOf(clusterCRName(rg, "Private"), armNamespace);
    expect(hc.spec.operatorConfiguration?.ingressOperator?.endpointPublishingStrategy).toEqual({
      type: "LoadBalancerService",
      loadBalancer: { scope: "Internal", dnsManagementPolicy: "Managed" },
    });
    expect(hc.spec.capabilities?.disabled).toBeUndefined();
    await expectSwift(mgmt, hc, integration);

    const resources = azureOf(cr);
    const [lb, ...moreLbs] = ofType(resources, "Microsoft.Network/loadBalancers");
    expect(moreLbs).toEqual([]);
    const frontends = (lb?.properties["frontendIPConfigurations"] ?? []) as Json[];
    expect(frontends.map((f): unknown => f.properties)).toEqual([
      expect.objectContaining({
        subnet: expect.objectContaining({ id: nodes }),
        privateIPAddress: "10.0.0.4",
      }),
    ]);
    expect(frontends[0]?.properties.publicIPAddress).toBeUndefined();
    // The one public IP is the API's: no load balancer uses it.
    const pips = ofType(resources, "Microsoft.Network/publicIPAddresses");
    expect(pips.map((p) => [p.name, p.properties["ipConfiguration"]])).toEqual([
      [`${armPrefix}-api-pip`, undefined],
    ]);
    const apiIp = pips[0]?.properties["ipAddress"] as string;
    expect(aRecord(resources, "*.apps")).toEqual(["10.0.0.4"]);
    expect(aRecord(resources, "api")).toEqual([apiIp]);
    expect(cr.status?.azure).toMatchObject({ apiIP: apiIp, ingressIP: "10.0.0.4" });
    expect(cr.status?.conditions?.find((c) => c.type === "IngressReady")?.message).toBe(
      `Ingress at 10.0.0.4 (private) through ${armPrefix}-ingress-lb; the API at ${apiIp} (${armPrefix}-api-pip)`,
    );

    const got = (await arm.send("GET", path)).body as Json;
    expect(got.properties.ingress).toEqual({ type: "Private" });
    expect(got.properties.platform.vnetIntegrationSubnetId).toBe(integration);
  });

  it("with kubectl, no ingress on 4.20: Ingress and Console disabled, Swift, no load balancer and no *.apps record", async () => {
    const c = kubectlCluster();
    await kubectlApply(c);
    const { cr, mgmt, hc } = await hostedClusterOf("no-ingress", customer);
    expect(hc.spec.capabilities).toEqual({ disabled: ["Console", "Ingress"] });
    expect(hc.spec.operatorConfiguration).toBeUndefined();
    await expectSwift(mgmt, hc, c.spec.platform.azure.vnetIntegrationSubnetId!);

    const resources = azureOf(cr);
    expect(ofType(resources, "Microsoft.Network/loadBalancers")).toEqual([]);
    const pips = ofType(resources, "Microsoft.Network/publicIPAddresses");
    expect(pips.map((p) => p.name)).toEqual([`${kubectlPrefix}-api-pip`]);
    expect(aRecord(resources, "api")).toEqual([pips[0]?.properties["ipAddress"]]);
    expect(aRecord(resources, "*.apps")).toBeUndefined();
    expect(cr.status?.apiURL).toBeDefined();
    expect(cr.status?.consoleURL, "no console without an ingress").toBeUndefined();
  });

  it("refuses what HyperShift or ARO HCP could not take, naming the field", async () => {
    const refused = async (body: Json, target: string, apiVersion?: string) => {
      const r = await arm.send("PUT", clusterPath(sub, rg, `bad-${randomUUID().slice(0, 8)}`), {
        body,
        ...(apiVersion ? { apiVersion } : {}),
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(JSON.stringify(r.body)).toContain(target);
      expect(JSON.stringify(r.body)).not.toContain("spec.");
      return JSON.stringify(r.body);
    };
    const sameSubnet = clusterBody(sub, { prefix: "badsame" }) as Json;
    sameSubnet.properties.platform.vnetIntegrationSubnetId = nodes;
    expect(await refused(sameSubnet, "properties.platform.vnetIntegrationSubnetId")).toContain(
      "must not be properties.platform.subnetId",
    );
    const oldDisabled = clusterBody(sub, { prefix: "badoff" }) as Json;
    oldDisabled.properties.ingress = { type: "Disabled" };
    expect(await refused(oldDisabled, "properties.ingress.type")).toContain("needs OpenShift 4.20 or newer");
    // 2024-06-10-preview has no VNet integration subnet: ARO HCP refuses a private API there.
    const privateApi = clusterBody(sub, { prefix: "badpriv" }) as Json;
    privateApi.properties.api = { visibility: "Private" };
    delete privateApi.properties.platform.vnetIntegrationSubnetId;
    expect(
      await refused(privateApi, "properties.platform.vnetIntegrationSubnetId", "2024-06-10-preview"),
    ).toContain("required when properties.api.visibility is Private");

    const changed = await arm.send("PATCH", path, { body: { properties: { ingress: { type: "Public" } } } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(400);
    expect(JSON.stringify(changed.body)).toContain("properties.ingress.type");

    const early = kubectlCluster("4.19");
    early.metadata.name = "too-early";
    early.spec.dns.baseDomainPrefix = `${kubectlPrefix}e`;
    await expect(kubectlApply(early)).rejects.toMatchObject({
      stderr: expect.stringContaining("spec.ingress.type Disabled needs OpenShift 4.20 or newer"),
    });
  });

  it("deleting both leaves nothing in Azure or on the management cluster, and frees the customer's subnets", async () => {
    const armCr = await service.get<HcpCluster>(
      HcpClusterResource,
      clusterCRName(rg, "Private"),
      armNamespace,
    );
    const kubectlCr = await service.get<HcpCluster>(HcpClusterResource, "no-ingress", customer);
    const swiftOf = (cr: HcpCluster) => ({
      mgmt: clientFor(cr.status!.managementCluster!),
      name: controlPlaneNamespaceName(cr.status!.hostedClusterNamespace!, cr.spec.dns.baseDomainPrefix),
    });
    const deleted = await arm.send("DELETE", path);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(202);
    await kubectl("delete", "hcpcluster", "no-ingress", "-n", customer, "--wait=false");
    for (const cr of [armCr, kubectlCr]) {
      await eventually(
        `HcpCluster ${cr.metadata.namespace}/${cr.metadata.name} gone`,
        async () =>
          (await service.find(HcpClusterResource, cr.metadata.name!, cr.metadata.namespace)) === undefined,
        LIFECYCLE_MS,
      );
      expect(azureOf(cr), "the cluster's Azure resources").toEqual([]);
      const { mgmt, name } = swiftOf(cr);
      expect(await mgmt.find(PodNetworkResource, name), "the PodNetwork").toBeUndefined();
    }
    // Nothing of the clusters uses the customer's subnets: their network can go.
    await azure.network(sub).virtualNetworks.beginDeleteAndWait("customer-net", "vnet");
  });
});
