/**
 * The hcp.aro.dev CRDs against the service cluster's real kube-apiserver: the samples are accepted
 * and defaulted, every validation rule refuses a bad object with 422 and a message naming the field
 * and the reason, immutable fields stay put while mutable ones change, and the status and scale
 * subresources, printer columns, short names and category work.
 */
import { CustomObjectsApi, type V1Scale } from "@kubernetes/client-node";
import { loadAll } from "js-yaml";
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { KubeApiError, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import {
  GROUP,
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  ExternalAuthResource,
  VERSION,
  type ExternalAuth,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { crdType, readCrds } from "../../hack/harness/crds.ts";
import { repoCrdDir } from "../../hack/harness/region.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { clusterInfo, kubeConfigFor, kubectlPath } from "../support/region.ts";

const exec = promisify(execFile);
const samplesDir = fileURLToPath(new URL("../../config/samples/", import.meta.url));
const client = clientFor("service");

const resourceOf: Record<string, ResourceType> = {
  HcpCluster: HcpClusterResource,
  NodePool: NodePoolResource,
  ExternalAuth: ExternalAuthResource,
  ManagementCluster: ManagementClusterResource,
};

/** Every object in config/samples, by metadata.name. */
async function loadSamples(): Promise<Map<string, KubeObject>> {
  const byName = new Map<string, KubeObject>();
  for (const file of (await readdir(samplesDir)).filter((f) => f.endsWith(".yaml")).sort()) {
    if (file === "kustomization.yaml") continue;
    for (const doc of loadAll(await readFile(join(samplesDir, file), "utf8")) as KubeObject[]) {
      byName.set(doc.metadata.name ?? "", doc);
    }
  }
  return byName;
}

const samples = await loadSamples();

function sample<T extends KubeObject>(name: string): T {
  const found = samples.get(name);
  if (!found) throw new Error(`config/samples has no object named ${name}`);
  return structuredClone(found) as T;
}

let suffixCounter = 0;

/** One test's world: its namespace and the cluster-scoped objects it made, all removed afterwards. */
interface Scope {
  ns: string;
  created: Array<{ type: ResourceType; name: string; namespace?: string }>;
  removeNamespace(): Promise<void>;
}

let scope: Scope;

beforeEach(async () => {
  const ns = await tempNamespace(client, "crds");
  scope = { ns: ns.name, created: [], removeNamespace: () => ns.remove() };
});

afterEach(async () => {
  // No namespace controller runs in the test region, so delete objects explicitly, then the namespace.
  for (const o of scope.created.reverse()) await client.delete(o.type, o);
  await scope.removeNamespace();
});

/** Places the object in the test's namespace (or renames a cluster-scoped one uniquely) and creates it. */
async function create<T extends KubeObject>(obj: T): Promise<T> {
  const type = resourceOf[obj.kind ?? ""];
  if (!type) throw new Error(`no resource type for kind ${obj.kind}`);
  if (type.namespaced) obj.metadata.namespace = scope.ns;
  else if (!obj.metadata.name?.includes(scope.ns))
    obj.metadata.name = `${obj.metadata.name}-${scope.ns}-${suffixCounter++}`;
  const created = await client.create(type, obj);
  scope.created.push({ type, name: created.metadata.name ?? "", namespace: created.metadata.namespace });
  return created;
}

function patch<T extends KubeObject>(obj: T, body: unknown): Promise<T> {
  const type = resourceOf[obj.kind ?? ""]!;
  return client.mergePatch<T>(
    type,
    { name: obj.metadata.name ?? "", namespace: obj.metadata.namespace },
    body,
  );
}

/** Awaits a call the apiserver must refuse with 422 Unprocessable Entity naming the field and reason. */
async function expectInvalid(call: Promise<unknown>, needles: string[]): Promise<void> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the apiserver accepted the object").toBeInstanceOf(KubeApiError);
  const apiErr = err as KubeApiError;
  expect(apiErr.code, apiErr.message).toBe(422);
  for (const needle of needles) expect(apiErr.message).toContain(needle);
}

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";
const OTHER_SUB = "0a1b2c3d-0000-4000-8000-000000000001";
const subnet = (sub: string, rg: string): string =>
  `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;

describe("samples", () => {
  it("are accepted as written and defaulted where fields were left out", async () => {
    const objects = [...samples.values()].map((o) => structuredClone(o));
    expect(objects.map((o) => o.kind).sort()).toEqual([
      "ExternalAuth",
      "HcpCluster",
      "ManagementCluster",
      "ManagementCluster",
      "NodePool",
      "NodePool",
    ]);
    for (const obj of objects) {
      const created = await create(obj);
      expect(created.spec).toMatchObject(obj.spec as object);
    }
    const batch = await client.get<NodePool>(NodePoolResource, "demo-batch", scope.ns);
    expect(batch.spec.platform.azure.osDisk).toEqual({
      sizeGiB: 64,
      diskStorageAccountType: "Premium_LRS",
      diskType: "Managed",
    });
    expect(batch.spec.autoRepair).toBe(true);
    expect(batch.spec.replicas).toBeUndefined();
  });

  it("a minimal HcpCluster, NodePool and ManagementCluster get the documented defaults", async () => {
    const cluster = sample<HcpCluster>("demo");
    delete cluster.spec.network;
    delete cluster.spec.api;
    delete cluster.spec.version.channelGroup;
    delete cluster.spec.platform.azure.outboundType;
    const c = await create(cluster);
    expect(c.spec.network).toEqual({
      networkType: "OVNKubernetes",
      podCidr: "10.128.0.0/14",
      serviceCidr: "172.30.0.0/16",
      machineCidr: "10.0.0.0/16",
      hostPrefix: 23,
    });
    expect(c.spec.api).toEqual({ visibility: "Public" });
    expect(c.spec.fips).toBe(false);
    expect(c.spec.clusterImageRegistry).toEqual({ state: "Enabled" });
    expect(c.spec.version.channelGroup).toBe("stable");
    expect(c.spec.version.upgradePolicy).toBe("Manual");
    expect(c.spec.platform.azure.outboundType).toBe("LoadBalancer");

    // A partial network keeps what was given and defaults the rest.
    const partial = sample<HcpCluster>("demo");
    partial.metadata.name = "partial";
    partial.spec.network = { podCidr: "10.64.0.0/12", hostPrefix: 24 };
    const p = await create(partial);
    expect(p.spec.network).toMatchObject({
      podCidr: "10.64.0.0/12",
      hostPrefix: 24,
      serviceCidr: "172.30.0.0/16",
    });

    const pool = await create<NodePool>({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "NodePool",
      metadata: { name: "minimal" },
      spec: { clusterRef: { name: "demo" }, platform: { azure: { vmSize: "Standard_D4s_v3" } }, replicas: 0 },
    });
    expect(pool.spec.platform.azure).toEqual({
      vmSize: "Standard_D4s_v3",
      osDisk: { sizeGiB: 64, diskStorageAccountType: "Premium_LRS", diskType: "Managed" },
      encryptionAtHost: false,
    });
    expect(pool.spec.autoRepair).toBe(true);

    const mgmt = await create<ManagementCluster>({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "ManagementCluster",
      metadata: { name: "minimal" },
      spec: { consumerName: "minimal", capacity: { maxHostedClusters: 0 } },
    });
    expect(mgmt.spec.schedulable).toBe(true);
  });
});

interface CreateCase<T> {
  name: string;
  mutate: (obj: T) => void;
  expected: string[];
}

/** HyperShift's CEL on oidcProviders, and ARO HCP's bounds, at the CR (the frontend checks first). */
const authCreateCases: Array<CreateCase<ExternalAuth>> = [
  {
    name: "an http issuer",
    mutate: (a) => void (a.spec.issuer.url = "http://login.example.com/v2.0"),
    expected: ["spec.issuer.url", "must be an https URL"],
  },
  {
    name: "an issuer with a query",
    mutate: (a) => void (a.spec.issuer.url = "https://login.example.com/v2.0?tenant=x"),
    expected: ["spec.issuer.url", "must not have a query"],
  },
  {
    name: "eleven audiences",
    mutate: (a) => void (a.spec.issuer.audiences = Array.from({ length: 11 }, (_, i) => `app-${i}`)),
    expected: ["spec.issuer.audiences", "must have at most 10 items"],
  },
  {
    name: "a username prefix without prefixPolicy Prefix",
    mutate: (a) => void (a.spec.claim.mappings.username.prefix = "entra:"),
    expected: [
      "spec.claim.mappings.username",
      "prefix must be set when prefixPolicy is Prefix, and only then",
    ],
  },
  {
    name: "two clients of the same component",
    mutate: (a) => void a.spec.clients!.push({ ...a.spec.clients![0]!, clientId: "other" }),
    expected: ["spec.clients[2]", "Duplicate value"],
  },
  {
    name: "a Public console client",
    mutate: (a) => void (a.spec.clients![0]!.type = "Public"),
    expected: ["spec.clients[0].type", "must be Confidential for the console"],
  },
  {
    name: "a Confidential client other than the console",
    mutate: (a) => void (a.spec.clients![1]!.type = "Confidential"),
    expected: ["spec.clients[1].type", "Public for every other component"],
  },
];

const clusterCreateCases: Array<CreateCase<HcpCluster>> = [
  {
    name: "a pod CIDR that is not a CIDR",
    mutate: (c) => void (c.spec.network!.podCidr = "10.128.0.0/33"),
    expected: [
      "spec.network.podCidr",
      'spec.network.podCidr must be a valid IPv4 CIDR such as 10.0.0.0/16, not "10.128.0.0/33"',
    ],
  },
  {
    name: "an IPv6 service CIDR",
    mutate: (c) => void (c.spec.network!.serviceCidr = "fd02::/112"),
    expected: ['spec.network.serviceCidr must be a valid IPv4 CIDR such as 10.0.0.0/16, not "fd02::/112"'],
  },
  {
    name: "a machine CIDR with host bits set",
    mutate: (c) => void (c.spec.network!.machineCidr = "10.0.0.1/16"),
    expected: ["spec.network.machineCidr 10.0.0.1/16 has host bits set; give the network address"],
  },
  {
    name: "a service CIDR inside the pod CIDR",
    mutate: (c) => void (c.spec.network!.serviceCidr = "10.130.0.0/16"),
    expected: [
      "spec.network.serviceCidr 10.130.0.0/16 overlaps spec.network.podCidr 10.128.0.0/14",
      "must not overlap",
    ],
  },
  {
    name: "a machine CIDR that contains the pod CIDR",
    mutate: (c) => void (c.spec.network!.machineCidr = "10.0.0.0/8"),
    expected: ["spec.network.machineCidr 10.0.0.0/8 overlaps spec.network.podCidr 10.128.0.0/14"],
  },
  {
    name: "a machine CIDR inside the service CIDR",
    mutate: (c) => void (c.spec.network!.machineCidr = "172.30.16.0/24"),
    expected: ["spec.network.machineCidr 172.30.16.0/24 overlaps spec.network.serviceCidr 172.30.0.0/16"],
  },
  {
    name: "a host prefix shorter than the pod CIDR's prefix",
    mutate: (c) => void (c.spec.network!.hostPrefix = 12),
    expected: [
      "spec.network.hostPrefix must not be shorter than the prefix length of spec.network.podCidr 10.128.0.0/14",
    ],
  },
  {
    name: "a host prefix longer than /30",
    mutate: (c) => void (c.spec.network!.hostPrefix = 31),
    expected: ["spec.network.hostPrefix", "should be less than or equal to 30"],
  },
  {
    name: "an unknown network type",
    mutate: (c) => void (c.spec.network!.networkType = "Calico" as "Other"),
    expected: ["spec.network.networkType", 'Unsupported value: "Calico"'],
  },
  {
    name: "a base domain prefix longer than 15 characters",
    mutate: (c) => void (c.spec.dns.baseDomainPrefix = "averyverylongprefix"),
    expected: ["spec.dns.baseDomainPrefix must be a DNS label of at most 15 characters"],
  },
  {
    name: "a base domain prefix starting with a digit",
    mutate: (c) => void (c.spec.dns.baseDomainPrefix = "1demo"),
    expected: ["spec.dns.baseDomainPrefix must be a DNS label", 'that starts with a letter, not "1demo"'],
  },
  {
    name: "a base domain that is not a lowercase DNS name",
    mutate: (c) => void (c.spec.dns.baseDomain = "Example.COM"),
    expected: ['spec.dns.baseDomain must be a lowercase DNS name such as example.com, not "Example.COM"'],
  },
  {
    name: "a version that is not major.minor[.patch]",
    mutate: (c) => void (c.spec.version.id = "latest"),
    expected: ['spec.version.id must be an OpenShift version such as 4.19 or 4.19.7, not "latest"'],
  },
  {
    name: "a version whose numbers overflow an int",
    mutate: (c) => void (c.spec.version.id = "99999999999999999999.1"),
    expected: ['spec.version.id "99999999999999999999.1" has a number of more than 9 digits'],
  },
  {
    name: "an unknown channel group",
    mutate: (c) => void (c.spec.version.channelGroup = "beta" as "stable"),
    expected: ["spec.version.channelGroup", 'Unsupported value: "beta"'],
  },
  {
    name: "an unknown upgrade policy",
    mutate: (c) => void (c.spec.version.upgradePolicy = "Automatic" as "Manual"),
    expected: ["spec.version.upgradePolicy", 'Unsupported value: "Automatic"'],
  },
  {
    name: "a subscription ID that is not a UUID",
    mutate: (c) => void (c.spec.platform.azure.subscriptionId = "my-subscription"),
    expected: ["spec.platform.azure.subscriptionId must be a UUID"],
  },
  {
    name: "a tenant ID that is not a UUID",
    mutate: (c) => void (c.spec.platform.azure.tenantId = "contoso"),
    expected: ["spec.platform.azure.tenantId must be a UUID"],
  },
  {
    name: "a subnet ID that is not an ARM subnet ID",
    mutate: (c) =>
      void (c.spec.platform.azure.subnetId = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet`),
    expected: [
      "spec.platform.azure.subnetId must be an Azure subnet resource ID: /subscriptions/<id>/resourceGroups/<group>",
    ],
  },
  {
    name: "a subnet in another subscription",
    mutate: (c) => void (c.spec.platform.azure.subnetId = subnet(OTHER_SUB, "net")),
    expected: [
      `spec.platform.azure.subnetId must be in the cluster's subscription ${SUB}, not in ${OTHER_SUB}`,
    ],
  },
  {
    name: "a network security group ID that is not an ARM NSG ID",
    mutate: (c) => void (c.spec.platform.azure.networkSecurityGroupId = subnet(SUB, "net")),
    expected: [
      "spec.platform.azure.networkSecurityGroupId must be an Azure network security group resource ID",
    ],
  },
  {
    name: "the subnet's resource group as managed resource group",
    mutate: (c) => void (c.spec.platform.azure.managedResourceGroup = "Demo-Customer"),
    expected: [
      "spec.platform.azure.managedResourceGroup must not be the resource group of the subnet (Demo-Customer)",
    ],
  },
  {
    name: "a managed resource group name Azure refuses",
    mutate: (c) => void (c.spec.platform.azure.managedResourceGroup = "managed."),
    expected: [
      "spec.platform.azure.managedResourceGroup must be an Azure resource group name",
      "not ending in '.'",
    ],
  },
  {
    name: "a location that is not an Azure region name",
    mutate: (c) => void (c.spec.platform.azure.location = "East US"),
    expected: ["spec.platform.azure.location must be an Azure region name such as eastus", 'not "East US"'],
  },
  {
    name: "an operator identity that is not a user-assigned identity ID",
    mutate: (c) => void (c.spec.platform.azure.identities.controlPlaneOperators.ingress = subnet(SUB, "ids")),
    expected: [
      "spec.platform.azure.identities.controlPlaneOperators[ingress]",
      "spec.platform.azure.identities.controlPlaneOperators values must be user-assigned identity resource IDs",
    ],
  },
  {
    name: "an operator name that is not a DNS label",
    mutate: (c) => {
      const ids = c.spec.platform.azure.identities.dataPlaneOperators!;
      ids.Disk_CSI = ids["disk-csi-driver"]!;
    },
    expected: ["spec.platform.azure.identities.dataPlaneOperators keys must be operator names"],
  },
  {
    name: "no control-plane operator identities",
    mutate: (c) => void (c.spec.platform.azure.identities.controlPlaneOperators = {}),
    expected: ["spec.platform.azure.identities.controlPlaneOperators", "should have at least 1 properties"],
  },
  {
    name: "a service identity that is not a user-assigned identity ID",
    mutate: (c) => void (c.spec.platform.azure.identities.serviceManagedIdentity = "demo-service"),
    expected: [
      "spec.platform.azure.identities.serviceManagedIdentity must be a user-assigned identity resource ID",
    ],
  },
  {
    name: "an outbound type other than LoadBalancer",
    mutate: (c) => void (c.spec.platform.azure.outboundType = "UserDefinedRouting" as "LoadBalancer"),
    expected: ["spec.platform.azure.outboundType", 'Unsupported value: "UserDefinedRouting"'],
  },
  {
    name: "an unknown API visibility",
    mutate: (c) => void (c.spec.api = { visibility: "Internal" as "Public" }),
    expected: ["spec.api.visibility", 'Unsupported value: "Internal"'],
  },
  {
    name: "a node drain timeout over a week",
    mutate: (c) => void (c.spec.nodeDrainTimeoutMinutes = 20_000),
    expected: ["spec.nodeDrainTimeoutMinutes", "should be less than or equal to 10080"],
  },
  {
    name: "a selector expression In without values",
    mutate: (c) =>
      void (c.spec.placement = {
        managementClusterSelector: { matchExpressions: [{ key: "tier", operator: "In" }] },
      }),
    expected: [
      "spec.placement.managementClusterSelector.matchExpressions: operators In and NotIn need values",
    ],
  },
  {
    name: "a placement label key with a space",
    mutate: (c) =>
      void (c.spec.placement = { managementClusterSelector: { matchLabels: { "bad key": "x" } } }),
    expected: ['spec.placement.managementClusterSelector.matchLabels key "bad key" is not a valid label key'],
  },
  {
    name: "a placement label value with invalid characters",
    mutate: (c) =>
      void (c.spec.placement = { managementClusterSelector: { matchLabels: { tier: "gold!" } } }),
    expected: [
      "spec.placement.managementClusterSelector.matchLabels values must be valid label values",
      'not "gold!"',
    ],
  },
  {
    name: "a placement expression key that is not a qualified name",
    mutate: (c) =>
      void (c.spec.placement = {
        managementClusterSelector: { matchExpressions: [{ key: "-tier", operator: "Exists" }] },
      }),
    expected: [
      'spec.placement.managementClusterSelector.matchExpressions key "-tier" is not a valid label key',
    ],
  },
  {
    name: "a placement expression value with invalid characters",
    mutate: (c) =>
      void (c.spec.placement = {
        managementClusterSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["a b"] }] },
      }),
    expected: [
      "spec.placement.managementClusterSelector.matchExpressions values must be valid label values",
      'not "a b"',
    ],
  },
  {
    name: "a name longer than ARO HCP allows",
    mutate: (c) => void (c.metadata.name = "c".repeat(55)),
    expected: [`metadata.name "${"c".repeat(55)}" must be a DNS label of at most 54 characters`],
  },
  {
    name: "no platform",
    mutate: (c) => void delete (c.spec as Partial<HcpCluster["spec"]>).platform,
    expected: ["spec.platform: Required value"],
  },
  {
    name: "an authorized CIDR that is neither an address nor a CIDR block",
    mutate: (c) => void (c.spec.api = { authorizedCIDRs: ["10.0.0.0/8", "10.0.0.0/33"] }),
    expected: [
      "spec.api.authorizedCIDRs[1]",
      "spec.api.authorizedCIDRs entries must be IPv4 or IPv6 addresses or CIDR blocks",
      'not "10.0.0.0/33"',
    ],
  },
  {
    name: "an authorized IPv6 address with an embedded IPv4 address (HyperShift refuses it)",
    mutate: (c) => void (c.spec.api = { authorizedCIDRs: ["::ffff:10.0.0.1"] }),
    expected: ["spec.api.authorizedCIDRs[0]", 'not "::ffff:10.0.0.1"'],
  },
  {
    name: "501 authorized CIDRs",
    mutate: (c) =>
      void (c.spec.api = {
        authorizedCIDRs: Array.from({ length: 501 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`),
      }),
    expected: ["spec.api.authorizedCIDRs", "must have at most 500 items"],
  },
  {
    name: "an image registry state that is neither Enabled nor Disabled",
    mutate: (c) => void (c.spec.clusterImageRegistry = { state: "Off" as "Disabled" }),
    expected: ["spec.clusterImageRegistry.state", 'Unsupported value: "Off"'],
  },
  {
    name: "an image digest mirror longer than HyperShift takes",
    mutate: (c) =>
      void (c.spec.imageDigestMirrors = [{ source: "registry.redhat.io", mirrors: ["m".repeat(256)] }]),
    expected: ["spec.imageDigestMirrors[0].mirrors[0]", "may not be more than 255"],
  },
  {
    name: "an image digest mirror source without mirrors",
    mutate: (c) => void (c.spec.imageDigestMirrors = [{ source: "registry.redhat.io", mirrors: [] }]),
    expected: ["spec.imageDigestMirrors[0].mirrors", "should have at least 1 items"],
  },
  {
    name: "an image digest mirror given twice for one source",
    mutate: (c) =>
      void (c.spec.imageDigestMirrors = [
        { source: "registry.redhat.io", mirrors: ["a.example.com", "a.example.com"] },
      ]),
    expected: ["spec.imageDigestMirrors[0].mirrors[1]", "Duplicate value"],
  },
  {
    name: "241 image digest mirror sources",
    mutate: (c) =>
      void (c.spec.imageDigestMirrors = Array.from({ length: 241 }, (_, i) => ({
        source: `r${i}.example.com`,
        mirrors: ["m.example.com"],
      }))),
    expected: ["spec.imageDigestMirrors", "must have at most 240 items"],
  },
  {
    name: "a negative autoscaler node limit",
    mutate: (c) => void (c.spec.autoscaling = { maxNodesTotal: -1 }),
    expected: ["spec.autoscaling.maxNodesTotal", "should be greater than or equal to 0"],
  },
  {
    name: "an autoscaler provision time past int32",
    mutate: (c) => void (c.spec.autoscaling = { maxNodeProvisionTimeSeconds: 2 ** 31 }),
    expected: ["spec.autoscaling.maxNodeProvisionTimeSeconds", "should be less than or equal to 2147483647"],
  },
  {
    name: "an authorized CIDR given twice",
    mutate: (c) => void (c.spec.api = { authorizedCIDRs: ["10.0.0.0/8", "10.0.0.0/8"] }),
    expected: ["spec.api.authorizedCIDRs[1]", "Duplicate value"],
  },
];

const poolCreateCases: Array<CreateCase<NodePool>> = [
  {
    name: "a disk encryption set ID that is not one",
    mutate: (p) => {
      p.spec.platform.azure.osDisk = {
        encryptionSetId: "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/disks/d",
      };
    },
    expected: ["spec.platform.azure.osDisk.encryptionSetId must be a disk encryption set's ID"],
  },
  {
    name: "an OS disk type other than Managed or Ephemeral",
    mutate: (p) => {
      p.spec.platform.azure.osDisk = { diskType: "Local" as "Managed" };
    },
    expected: ["spec.platform.azure.osDisk.diskType: Unsupported value", '"Managed", "Ephemeral"'],
  },
  {
    name: "both replicas and autoScaling",
    mutate: (p) => void (p.spec.autoScaling = { min: 1, max: 3 }),
    expected: ["spec.replicas: Invalid value", "spec.replicas and spec.autoScaling are mutually exclusive"],
  },
  {
    name: "neither replicas nor autoScaling",
    mutate: (p) => void delete p.spec.replicas,
    expected: [
      "one of spec.replicas (a fixed node count, may be 0) or spec.autoScaling (a min..max range) is required",
    ],
  },
  {
    name: "autoScaling min above max",
    mutate: (p) => {
      delete p.spec.replicas;
      p.spec.autoScaling = { min: 4, max: 2 };
    },
    expected: [
      "spec.autoScaling.min: Invalid value",
      "spec.autoScaling.min must not be greater than spec.autoScaling.max",
    ],
  },
  {
    name: "autoScaling max 0",
    mutate: (p) => {
      delete p.spec.replicas;
      p.spec.autoScaling = { min: 0, max: 0 };
    },
    expected: ["spec.autoScaling.max", "should be greater than or equal to 1"],
  },
  {
    name: "negative replicas",
    mutate: (p) => void (p.spec.replicas = -1),
    expected: ["spec.replicas", "should be greater than or equal to 0"],
  },
  {
    name: "a VM size that is not an Azure VM size",
    mutate: (p) => void (p.spec.platform.azure.vmSize = "large"),
    expected: ['spec.platform.azure.vmSize must be an Azure VM size such as Standard_D8s_v3, not "large"'],
  },
  {
    name: "an OS disk smaller than 64 GiB",
    mutate: (p) => void (p.spec.platform.azure.osDisk = { sizeGiB: 32 }),
    expected: ["spec.platform.azure.osDisk.sizeGiB", "should be greater than or equal to 64"],
  },
  {
    name: "an unknown disk storage account type",
    mutate: (p) =>
      void (p.spec.platform.azure.osDisk = { diskStorageAccountType: "UltraSSD_LRS" as "Premium_LRS" }),
    expected: ["spec.platform.azure.osDisk.diskStorageAccountType", 'Unsupported value: "UltraSSD_LRS"'],
  },
  {
    name: "availability zone 4",
    mutate: (p) => void (p.spec.platform.azure.availabilityZone = "4" as "1"),
    expected: ["spec.platform.azure.availabilityZone", 'Unsupported value: "4"'],
  },
  {
    name: "a subnet ID that is not an ARM subnet ID",
    mutate: (p) => void (p.spec.platform.azure.subnetId = "nodes"),
    expected: ["spec.platform.azure.subnetId must be an Azure subnet resource ID"],
  },
  {
    name: "a label key with a space",
    mutate: (p) => void (p.spec.labels = { "bad key": "x" }),
    expected: ['spec.labels key "bad key" is not a valid label key'],
  },
  {
    name: "a label value that is too long",
    mutate: (p) => void (p.spec.labels = { tier: "v".repeat(64) }),
    expected: ["spec.labels.tier: Too long: may not be more than 63 bytes"],
  },
  {
    name: "a label value with invalid characters",
    mutate: (p) => void (p.spec.labels = { tier: "gold!" }),
    expected: ["spec.labels[tier]", "spec.labels values must be valid label values", 'not "gold!"'],
  },
  {
    name: "a taint with an unknown effect",
    mutate: (p) => void (p.spec.taints = [{ key: "dedicated", value: "x", effect: "NoWay" as "NoSchedule" }]),
    expected: ["spec.taints[0].effect", 'Unsupported value: "NoWay"'],
  },
  {
    name: "a taint key that is not a qualified name",
    mutate: (p) => void (p.spec.taints = [{ key: "not valid/", effect: "NoSchedule" }]),
    expected: ['spec.taints key "not valid/" is not a valid taint key'],
  },
  {
    name: "two taints with the same key and effect",
    mutate: (p) =>
      void (p.spec.taints = [
        { key: "dedicated", value: "a", effect: "NoSchedule" },
        { key: "dedicated", value: "b", effect: "NoSchedule" },
      ]),
    expected: ["spec.taints[1]", "Duplicate value"],
  },
  {
    name: "no cluster reference",
    mutate: (p) => void delete (p.spec as Partial<NodePool["spec"]>).clusterRef,
    expected: ["spec.clusterRef: Required value"],
  },
  {
    name: "a version that is not major.minor[.patch]",
    mutate: (p) => void (p.spec.version = { id: "4" }),
    expected: ['spec.version.id must be an OpenShift version such as 4.19 or 4.19.7, not "4"'],
  },
  {
    name: "a version whose numbers overflow an int",
    mutate: (p) => void (p.spec.version = { id: "4.19.99999999999999999999" }),
    expected: ['spec.version.id "4.19.99999999999999999999" has a number of more than 9 digits'],
  },
];

const mgmtCreateCases: Array<CreateCase<ManagementCluster>> = [
  {
    name: "a consumer name with capitals and underscores",
    mutate: (m) => void (m.spec.consumerName = "Mgmt_1"),
    expected: ["spec.consumerName must be a DNS label", 'not "Mgmt_1"'],
  },
  {
    name: "a consumer name starting with a dash",
    mutate: (m) => void (m.spec.consumerName = "-mgmt"),
    expected: ["spec.consumerName must be a DNS label", "because it names a namespace and MQTT topics"],
  },
  {
    name: "negative capacity",
    mutate: (m) => void (m.spec.capacity.maxHostedClusters = -1),
    expected: ["spec.capacity.maxHostedClusters", "should be greater than or equal to 0"],
  },
  {
    name: "no capacity",
    mutate: (m) => void delete (m.spec as Partial<ManagementCluster["spec"]>).capacity,
    expected: ["spec.capacity: Required value"],
  },
  {
    name: "a region that is not an Azure region name",
    mutate: (m) => void (m.spec.region = "West Europe"),
    expected: ["spec.region must be an Azure region name such as eastus", 'not "West Europe"'],
  },
  {
    name: "a placement label key that is not a qualified name",
    mutate: (m) => void (m.spec.labels = { "-tier": "standard" }),
    expected: ['spec.labels key "-tier" is not a valid label key'],
  },
];

/** A label key of 200 KB: refused, and the refusal quotes only its start (64 characters and "…"). */
const HUGE_KEY = `example.com/${"k".repeat(200 * 1024)}`;
const hugeKeyQuoted = `"${HUGE_KEY.slice(0, 64)}…"`;

const hugeKeyCases: Array<{ name: string; object: () => KubeObject; expected: string[] }> = [
  {
    name: "HcpCluster placement selector",
    object: () => {
      const c = sample<HcpCluster>("demo");
      c.spec.placement = { managementClusterSelector: { matchLabels: { [HUGE_KEY]: "x" } } };
      return c;
    },
    expected: [
      `spec.placement.managementClusterSelector.matchLabels key ${hugeKeyQuoted} is not a valid label key`,
    ],
  },
  {
    name: "HcpCluster placement expression",
    object: () => {
      const c = sample<HcpCluster>("demo");
      c.spec.placement = {
        managementClusterSelector: { matchExpressions: [{ key: HUGE_KEY, operator: "Exists" }] },
      };
      return c;
    },
    expected: ["spec.placement.managementClusterSelector.matchExpressions[0].key", "Too long"],
  },
  {
    name: "NodePool labels",
    object: () => {
      const p = sample<NodePool>("demo-workers");
      p.spec.labels = { [HUGE_KEY]: "x" };
      return p;
    },
    expected: [`spec.labels key ${hugeKeyQuoted} is not a valid label key`],
  },
  {
    name: "NodePool taints",
    object: () => {
      const p = sample<NodePool>("demo-workers");
      p.spec.taints = [{ key: HUGE_KEY, effect: "NoSchedule" }];
      return p;
    },
    expected: ["spec.taints[0].key", "Too long"],
  },
  {
    name: "ManagementCluster labels",
    object: () => {
      const m = sample<ManagementCluster>("mgmt-1");
      m.spec.labels = { [HUGE_KEY]: "x" };
      return m;
    },
    expected: [`spec.labels key ${hugeKeyQuoted} is not a valid label key`],
  },
];

describe("a label key of 200 KB is refused with a message that quotes only its start", () => {
  it.each(hugeKeyCases)("$name", async ({ object, expected }) => {
    const err = await create(object()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, "the apiserver accepted the object").toBeInstanceOf(KubeApiError);
    const apiErr = err as KubeApiError;
    expect(apiErr.code, apiErr.message.slice(0, 2000)).toBe(422);
    for (const needle of expected) expect(apiErr.message).toContain(needle);
    expect(apiErr.message.length).toBeLessThan(4096);
  });
});

describe("creating invalid objects is refused with 422 and a message naming the field and reason", () => {
  it.each(clusterCreateCases)("HcpCluster: $name", async ({ mutate, expected }) => {
    const c = sample<HcpCluster>("demo");
    mutate(c);
    await expectInvalid(create(c), expected);
  });

  it.each(poolCreateCases)("NodePool: $name", async ({ mutate, expected }) => {
    const p = sample<NodePool>("demo-workers");
    mutate(p);
    await expectInvalid(create(p), expected);
  });

  it.each(authCreateCases)("ExternalAuth: $name", async ({ mutate, expected }) => {
    const a = sample<ExternalAuth>("demo-entra");
    mutate(a);
    await expectInvalid(create(a), expected);
  });

  it.each(mgmtCreateCases)("ManagementCluster: $name", async ({ mutate, expected }) => {
    const m = sample<ManagementCluster>("mgmt-1");
    mutate(m);
    await expectInvalid(create(m), expected);
  });
});

interface UpdateCase {
  name: string;
  sample: string;
  patch: unknown;
  expected: string[];
}

const identity = (name: string): string =>
  `/subscriptions/${SUB}/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${name}`;

const refusedUpdates: UpdateCase[] = [
  {
    name: "HcpCluster spec.network",
    sample: "demo",
    patch: { spec: { network: { hostPrefix: 24 } } },
    expected: ["spec.network: Invalid value", "spec.network is immutable after creation"],
  },
  {
    name: "HcpCluster spec.fips",
    sample: "demo",
    patch: { spec: { fips: true } },
    expected: ["spec.fips: Invalid value", "spec.fips is immutable after creation"],
  },
  {
    name: "HcpCluster spec.clusterImageRegistry.state",
    sample: "demo",
    patch: { spec: { clusterImageRegistry: { state: "Disabled" } } },
    expected: ["spec.clusterImageRegistry.state is immutable after creation"],
  },
  {
    name: "HcpCluster spec.dns",
    sample: "demo",
    patch: { spec: { dns: { baseDomainPrefix: "other" } } },
    expected: ["spec.dns is immutable after creation"],
  },
  {
    name: "HcpCluster spec.dns (adding baseDomain)",
    sample: "demo",
    patch: { spec: { dns: { baseDomain: "example.com" } } },
    expected: ["spec.dns is immutable after creation"],
  },
  {
    name: "HcpCluster spec.api.visibility",
    sample: "demo",
    patch: { spec: { api: { visibility: "Private" } } },
    expected: ["spec.api.visibility is immutable after creation"],
  },
  {
    name: "HcpCluster spec.platform.azure.location",
    sample: "demo",
    patch: { spec: { platform: { azure: { location: "westeurope" } } } },
    expected: ["spec.platform.azure.location is immutable after creation"],
  },
  {
    name: "HcpCluster spec.platform.azure.subscriptionId",
    sample: "demo",
    patch: { spec: { platform: { azure: { subscriptionId: OTHER_SUB } } } },
    expected: ["spec.platform.azure.subscriptionId is immutable after creation"],
  },
  {
    name: "HcpCluster spec.platform.azure.subnetId",
    sample: "demo",
    patch: {
      spec: { platform: { azure: { subnetId: subnet(SUB, "demo-customer").replace("nodes", "other") } } },
    },
    expected: ["spec.platform.azure.subnetId is immutable after creation"],
  },
  {
    name: "HcpCluster spec.platform.azure.managedResourceGroup",
    sample: "demo",
    patch: { spec: { platform: { azure: { managedResourceGroup: "elsewhere" } } } },
    expected: ["spec.platform.azure.managedResourceGroup is immutable after creation"],
  },
  {
    name: "HcpCluster spec.platform.azure.tenantId (removal)",
    sample: "demo",
    patch: { spec: { platform: { azure: { tenantId: null } } } },
    expected: ["spec.platform.azure.tenantId is immutable after creation"],
  },
  {
    name: "HcpCluster spec.version.id going backwards",
    sample: "demo",
    patch: { spec: { version: { id: "4.18" } } },
    expected: ["spec.version.id cannot move back from 4.19 to 4.18: OpenShift does not support downgrades"],
  },
  {
    name: "HcpCluster spec.version.id skipping a minor",
    sample: "demo",
    patch: { spec: { version: { id: "4.21" } } },
    expected: [
      "spec.version.id cannot move from 4.19 to 4.21: a cluster moves one minor version at a time (to the next minor first)",
    ],
  },
  {
    name: "NodePool spec.clusterRef",
    sample: "demo-workers",
    patch: { spec: { clusterRef: { name: "other" } } },
    expected: ["spec.clusterRef is immutable after creation; a node pool cannot move to another cluster"],
  },
  {
    name: "NodePool spec.platform.azure.osDisk",
    sample: "demo-workers",
    patch: { spec: { platform: { azure: { osDisk: { sizeGiB: 256 } } } } },
    expected: ["spec.platform.azure.osDisk is immutable after creation"],
  },
  {
    name: "NodePool spec.platform.azure.availabilityZone",
    sample: "demo-workers",
    patch: { spec: { platform: { azure: { availabilityZone: "2" } } } },
    expected: ["spec.platform.azure.availabilityZone is immutable after creation"],
  },
  {
    name: "NodePool spec.platform.azure.availabilityZone (adding one)",
    sample: "demo-batch",
    patch: { spec: { platform: { azure: { availabilityZone: "2" } } } },
    expected: ["spec.platform.azure.availabilityZone is immutable after creation"],
  },
  {
    name: "NodePool spec.platform.azure.encryptionAtHost",
    sample: "demo-batch",
    patch: { spec: { platform: { azure: { encryptionAtHost: false } } } },
    expected: ["spec.platform.azure.encryptionAtHost is immutable after creation"],
  },
  {
    name: "NodePool spec.version.id going backwards",
    sample: "demo-workers",
    patch: { spec: { version: { id: "4.17.3" } } },
    expected: ["spec.version.id cannot move back from 4.19 to 4.17.3"],
  },
  {
    name: "NodePool with autoScaling given replicas too",
    sample: "demo-batch",
    patch: { spec: { replicas: 3 } },
    expected: ["spec.replicas and spec.autoScaling are mutually exclusive"],
  },
  {
    name: "ManagementCluster spec.consumerName",
    sample: "mgmt-1",
    patch: { spec: { consumerName: "mgmt-9" } },
    expected: ["spec.consumerName is immutable after creation"],
  },
];

const allowedUpdates: Array<{
  name: string;
  sample: string;
  patch: unknown;
  check: (o: KubeObject) => void;
}> = [
  {
    name: "HcpCluster: upgrade, new operator identity, placement, paused, drain timeout, authorized CIDRs, image digest mirrors, autoscaling",
    sample: "demo",
    patch: {
      spec: {
        version: { id: "4.20", channelGroup: "fast" },
        platform: { azure: { identities: { controlPlaneOperators: { kms: identity("kms") } } } },
        placement: { managementClusterSelector: { matchExpressions: [{ key: "tier", operator: "Exists" }] } },
        paused: true,
        nodeDrainTimeoutMinutes: 0,
        api: { authorizedCIDRs: ["203.0.113.7", "2001:db8::/32"] },
        imageDigestMirrors: [{ source: "registry.redhat.io", mirrors: ["mirror.example.com/rh"] }],
        autoscaling: { maxNodesTotal: 10, podPriorityThreshold: -100 },
      },
    },
    check: (o) => {
      const c = o as HcpCluster;
      expect(c.spec.api).toEqual({ visibility: "Public", authorizedCIDRs: ["203.0.113.7", "2001:db8::/32"] });
      expect(c.spec.version).toEqual({ id: "4.20", channelGroup: "fast", upgradePolicy: "Manual" });
      expect(c.spec.platform.azure.identities.controlPlaneOperators.kms).toBe(identity("kms"));
      expect(c.spec.paused).toBe(true);
    },
  },
  {
    name: "NodePool: vmSize, replicas, labels, taints, autoRepair, z-stream upgrade",
    sample: "demo-workers",
    patch: {
      spec: {
        version: { id: "4.19.7" },
        platform: { azure: { vmSize: "Standard_D16s_v5" } },
        replicas: 0,
        labels: { "example.com/team": "a" },
        taints: [{ key: "dedicated", effect: "NoExecute" }],
        autoRepair: false,
      },
    },
    check: (o) => {
      const p = o as NodePool;
      expect(p.spec.platform.azure.vmSize).toBe("Standard_D16s_v5");
      expect(p.spec.replicas).toBe(0);
    },
  },
  {
    name: "HcpCluster: Azure identifiers in another casing (ARM's IDs ignore case)",
    sample: "demo",
    patch: {
      spec: {
        platform: {
          azure: {
            subscriptionId: SUB.toUpperCase(),
            subnetId: subnet(SUB, "demo-customer").replace("/vnet/", "/demo-vnet/").toUpperCase(),
            managedResourceGroup: "AROHCP-DEMO-MANAGED",
          },
        },
      },
    },
    check: (o) => {
      expect((o as HcpCluster).spec.platform.azure.subscriptionId).toBe(SUB.toUpperCase());
      expect((o as HcpCluster).spec.platform.azure.subnetId).toContain("/DEMO-VNET/");
    },
  },
  {
    name: "NodePool: switching from a fixed size to autoscaling",
    sample: "demo-workers",
    patch: { spec: { replicas: null, autoScaling: { min: 0, max: 10 } } },
    check: (o) => expect((o as NodePool).spec.autoScaling).toEqual({ min: 0, max: 10 }),
  },
  {
    name: "ManagementCluster: cordon, capacity, labels, region",
    sample: "mgmt-2",
    patch: {
      spec: {
        schedulable: false,
        capacity: { maxHostedClusters: 0 },
        labels: { tier: "canary" },
        region: "westus3",
      },
    },
    check: (o) =>
      expect((o as ManagementCluster).spec).toMatchObject({
        schedulable: false,
        capacity: { maxHostedClusters: 0 },
      }),
  },
];

describe("updates", () => {
  it.each(refusedUpdates)("changing $name is refused", async ({ sample: name, patch: body, expected }) => {
    const created = await create(sample(name));
    await expectInvalid(patch(created, body), expected);
  });

  it.each(allowedUpdates)("$name are accepted", async ({ sample: name, patch: body, check }) => {
    const created = await create(sample(name));
    check(await patch(created, body));
  });
});

describe("a node pool version the controller holds back", () => {
  const held = (version?: string) => ({
    ...(version ? { version } : {}),
    conditions: [
      {
        type: "ValidVersion",
        status: "False",
        reason: "WaitingForControlPlane",
        message: "The nodes move to 4.20.2 once the control plane runs it (now 4.19.7)",
        lastTransitionTime: "2026-01-01T00:00:00Z",
        observedGeneration: 1,
      },
    ],
  });

  async function heldPool(version?: string): Promise<NodePool> {
    const pool = sample<NodePool>("demo-workers");
    pool.spec.version = { id: "4.20" };
    const created = await create(pool);
    const ref = { name: created.metadata.name!, namespace: scope.ns };
    return client.mergePatch<NodePool>(NodePoolResource, ref, { status: held(version) }, "status");
  }

  it("never reached the nodes, so it may move back", async () => {
    const pool = await heldPool();
    const fixed = await patch(pool, { spec: { version: { id: "4.19" } } });
    expect(fixed.spec.version?.id).toBe("4.19");
  });

  it("may move back no further than the version the nodes run", async () => {
    const pool = await heldPool("4.19.7");
    await expectInvalid(patch(pool, { spec: { version: { id: "4.18" } } }), [
      "spec.version.id: Invalid value",
      "spec.version.id cannot move back from 4.20 to 4.18: OpenShift does not support downgrades",
    ]);
    expect((await patch(pool, { spec: { version: { id: "4.19.9" } } })).spec.version?.id).toBe("4.19.9");
  });
});

describe("status subresource", () => {
  it("ignores status on the main resource and validates it on /status", async () => {
    const cluster = sample<HcpCluster>("demo");
    cluster.status = { phase: "Ready" };
    const created = await create(cluster);
    expect(created.status).toBeUndefined();

    const status = {
      phase: "Provisioning",
      observedGeneration: 1,
      managementCluster: "mgmt-1",
      conditions: [
        {
          type: "Ready",
          status: "False",
          reason: "Provisioning",
          message: "placing",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    };
    const ref = { name: "demo", namespace: scope.ns };
    const updated = await client.mergePatch<HcpCluster>(HcpClusterResource, ref, { status }, "status");
    expect(updated.status).toMatchObject(status);
    expect(updated.metadata.generation).toBe(1);

    await expectInvalid(
      client.mergePatch(HcpClusterResource, ref, { status: { phase: "Exploded" } }, "status"),
      ["status.phase", 'Unsupported value: "Exploded"'],
    );
    await expectInvalid(
      client.mergePatch(
        HcpClusterResource,
        ref,
        {
          status: {
            conditions: [
              {
                type: "Ready",
                status: "Maybe",
                reason: "X",
                message: "",
                lastTransitionTime: "2026-01-01T00:00:00Z",
              },
            ],
          },
        },
        "status",
      ),
      ["status.conditions[0].status", 'Unsupported value: "Maybe"'],
    );
  });
});

describe("NodePool scale subresource", () => {
  const scaleApi = (): CustomObjectsApi => kubeConfigFor("service").makeApiClient(CustomObjectsApi);
  const at = (
    name: string,
  ): { group: string; version: string; plural: string; namespace: string; name: string } => ({
    group: GROUP,
    version: VERSION,
    plural: NodePoolResource.plural,
    namespace: scope.ns,
    name,
  });

  it("reads spec.replicas and status.replicas and writes spec.replicas", async () => {
    await create(sample("demo-workers"));
    await client.mergePatch(
      NodePoolResource,
      { name: "demo-workers", namespace: scope.ns },
      { status: { replicas: 1 } },
      "status",
    );

    const scale = (await scaleApi().getNamespacedCustomObjectScale(at("demo-workers"))) as V1Scale;
    expect(scale.kind).toBe("Scale");
    expect(scale.spec?.replicas).toBe(2);
    expect(scale.status?.replicas).toBe(1);

    scale.spec = { replicas: 5 };
    await scaleApi().replaceNamespacedCustomObjectScale({ ...at("demo-workers"), body: scale });
    const pool = await client.get<NodePool>(NodePoolResource, "demo-workers", scope.ns);
    expect(pool.spec.replicas).toBe(5);
  });

  it("kubectl scale works, and scaling an autoscaling pool is refused with the exclusivity message", async () => {
    await create(sample("demo-workers"));
    await create(sample("demo-batch"));
    const kubectl = (...args: string[]): Promise<{ stdout: string }> =>
      exec(kubectlPath(), ["--kubeconfig", clusterInfo("service").kubeconfigPath, "-n", scope.ns, ...args]);

    await kubectl("scale", "nodepools.hcp.aro.dev/demo-workers", "--replicas=3");
    expect((await client.get<NodePool>(NodePoolResource, "demo-workers", scope.ns)).spec.replicas).toBe(3);

    const failed = await kubectl("scale", "nodepools.hcp.aro.dev/demo-batch", "--replicas=3").then(
      () => undefined,
      (e: unknown) => e as { stderr: string },
    );
    expect(failed?.stderr).toContain("spec.replicas and spec.autoScaling are mutually exclusive");
  });
});

describe("names, printer columns and category", () => {
  const expectedColumns: Record<string, Array<[string, string]>> = {
    "hcpclusters.hcp.aro.dev": [
      ["Version", ".status.version"],
      ["Phase", ".status.phase"],
      ["Ready", '.status.conditions[?(@.type=="Ready")].status'],
      ["Management Cluster", ".status.managementCluster"],
      ["API URL", ".status.apiURL"],
      ["Age", ".metadata.creationTimestamp"],
    ],
    "nodepools.hcp.aro.dev": [
      ["Cluster", ".spec.clusterRef.name"],
      ["Desired", ".spec.replicas"],
      ["Current", ".status.replicas"],
      ["Autoscaling", ".spec.autoScaling"],
      ["Version", ".status.version"],
      ["Phase", ".status.phase"],
      ["Age", ".metadata.creationTimestamp"],
    ],
    "managementclusters.hcp.aro.dev": [
      ["Consumer", ".spec.consumerName"],
      ["Schedulable", ".spec.schedulable"],
      ["Load", ".status.hostedClusters"],
      ["Capacity", ".spec.capacity.maxHostedClusters"],
      ["Connected", '.status.conditions[?(@.type=="Connected")].status'],
      ["Last Heard", ".status.agent.lastHeardTime"],
      ["Certificate Expires", ".status.agent.brokerCertificate.notAfter"],
      ["Phase", ".status.phase"],
      ["Age", ".metadata.creationTimestamp"],
    ],
  };

  interface CrdView {
    spec: {
      scope: string;
      names: { shortNames?: string[]; categories?: string[] };
      versions: Array<{
        name: string;
        served: boolean;
        storage: boolean;
        subresources?: { status?: object; scale?: { specReplicasPath: string; statusReplicasPath: string } };
        additionalPrinterColumns?: Array<{ name: string; jsonPath: string }>;
      }>;
    };
  }

  it.each(Object.keys(expectedColumns))("%s serves v1alpha1 with its printer columns", async (name) => {
    const crd = await client.get<KubeObject & CrdView>(crdType, name);
    const [version] = crd.spec.versions;
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: "v1alpha1", served: true, storage: true });
    expect(version!.subresources?.status).toEqual({});
    expect((version!.additionalPrinterColumns ?? []).map((c) => [c.name, c.jsonPath])).toEqual(
      expectedColumns[name],
    );
    expect(crd.spec.names.categories).toEqual(["hcp"]);
  });

  it("short names, scopes and the scale subresource are as designed", async () => {
    const get = (n: string): Promise<KubeObject & CrdView> => client.get<KubeObject & CrdView>(crdType, n);
    const [cluster, pool, mgmt] = await Promise.all(Object.keys(expectedColumns).map(get));
    expect(cluster!.spec.names.shortNames).toEqual(["hcp", "hcpc"]);
    expect(pool!.spec.names.shortNames).toEqual(["hnp", "hcpnp"]);
    expect(pool!.spec.names.shortNames).not.toContain("np");
    expect(mgmt!.spec.names.shortNames).toEqual(["mgmt"]);
    expect([cluster!.spec.scope, pool!.spec.scope, mgmt!.spec.scope]).toEqual([
      "Namespaced",
      "Namespaced",
      "Cluster",
    ]);
    expect(pool!.spec.versions[0]!.subresources?.scale).toEqual({
      specReplicasPath: ".spec.replicas",
      statusReplicasPath: ".status.replicas",
    });
  });

  it("kubectl prints the columns with values, and `kubectl get hcp` lists the whole category", async () => {
    for (const name of ["demo", "demo-workers", "demo-batch", "mgmt-1"]) await create(sample(name));
    await client.mergePatch(
      HcpClusterResource,
      { name: "demo", namespace: scope.ns },
      {
        status: {
          phase: "Ready",
          version: "4.19.7",
          managementCluster: "mgmt-1",
          apiURL: "https://api.demo.example.com:443",
        },
      },
      "status",
    );
    const kubectl = async (...args: string[]): Promise<string[]> => {
      const { stdout } = await exec(kubectlPath(), [
        "--kubeconfig",
        clusterInfo("service").kubeconfigPath,
        "-n",
        scope.ns,
        ...args,
      ]);
      return stdout.trim().split("\n");
    };
    const words = (line: string | undefined): string[] => (line ?? "").trim().split(/\s{2,}/);

    const clusters = await kubectl("get", "hcpc");
    expect(words(clusters[0])).toEqual([
      "NAME",
      "VERSION",
      "PHASE",
      "READY",
      "MANAGEMENT CLUSTER",
      "API URL",
      "AGE",
    ]);
    expect(words(clusters[1]).slice(0, 5)).toEqual([
      "demo",
      "4.19.7",
      "Ready",
      "mgmt-1",
      "https://api.demo.example.com:443",
    ]);

    const pools = await kubectl("get", "hnp");
    expect(words(pools[0])).toEqual([
      "NAME",
      "CLUSTER",
      "DESIRED",
      "CURRENT",
      "AUTOSCALING",
      "VERSION",
      "PHASE",
      "AGE",
    ]);
    expect(words(pools[1]).slice(0, 3)).toEqual(["demo-batch", "demo", '{"max":5,"min":1}']);
    expect(words(pools[2]).slice(0, 3)).toEqual(["demo-workers", "demo", "2"]);

    const mgmt = await kubectl(
      "get",
      "mgmt",
      scope.created.find((o) => o.type === ManagementClusterResource)!.name,
    );
    expect(words(mgmt[0])).toEqual([
      "NAME",
      "CONSUMER",
      "SCHEDULABLE",
      "LOAD",
      "CAPACITY",
      "CONNECTED",
      "AGE",
    ]);
    expect(words(mgmt[1]).slice(1, 3)).toEqual(["mgmt-1", "true"]);

    const category = await kubectl("get", "hcp", "-o", "name");
    expect(category).toEqual(
      expect.arrayContaining([
        "hcpcluster.hcp.aro.dev/demo",
        "nodepool.hcp.aro.dev/demo-workers",
        "nodepool.hcp.aro.dev/demo-batch",
      ]),
    );
    expect(category.some((l) => l.startsWith("managementcluster.hcp.aro.dev/"))).toBe(true);
  });
});

describe("a version stored before the digit limit stays fixable", () => {
  // Objects stored under an older, laxer rule (here "99999999999999999999.1", which int() cannot
  // read) must still take a label, a status write and a fix: a transition rule that fails to
  // evaluate would leave only delete. A copy of the CRD in a group of its own lets the test store
  // such an object under the old rule, then serve the real rules over it.
  const LEGACY_GROUP = "legacy.hcp.aro.dev";
  const OLD_VERSION_RULE = String.raw`self.matches(r"^[0-9]+\.[0-9]+(\.[0-9]+)?$")`;
  const crdFiles = { HcpCluster: "hcp.aro.dev_hcpclusters.yaml", NodePool: "hcp.aro.dev_nodepools.yaml" };
  const installed = new Set<string>();

  interface SchemaNode {
    properties?: Record<string, SchemaNode>;
    pattern?: string;
    "x-kubernetes-validations"?: Array<{ rule: string; message?: string; messageExpression?: string }>;
  }
  interface CrdBody {
    spec: {
      group: string;
      names: { plural: string; kind: string; shortNames?: string[]; categories?: string[] };
      versions: Array<{ schema: { openAPIV3Schema: SchemaNode } }>;
    };
  }

  /** The kind's CRD moved to LEGACY_GROUP; `lax` puts back the rule that let any digit count in. */
  async function legacyCrd(kind: keyof typeof crdFiles, lax: boolean): Promise<KubeObject & CrdBody> {
    const [crd] = (await readCrds([join(repoCrdDir, crdFiles[kind])])) as Array<KubeObject & CrdBody>;
    const names = crd!.spec.names;
    crd!.metadata = { name: `${names.plural}.${LEGACY_GROUP}` };
    crd!.spec.group = LEGACY_GROUP;
    delete names.shortNames;
    delete names.categories;
    if (lax) {
      const id =
        crd!.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!.properties!.version!.properties!.id!;
      delete id.pattern;
      id["x-kubernetes-validations"] = [{ rule: OLD_VERSION_RULE, message: "spec.version.id: the old rule" }];
    }
    return crd!;
  }

  const legacyType = (kind: keyof typeof crdFiles, plural: string): ResourceType => ({
    group: LEGACY_GROUP,
    version: VERSION,
    kind,
    plural,
    namespaced: true,
  });

  /** Applies the CRD and waits until a create of `probe` gets the answer the schema should give. */
  async function serve(crd: KubeObject & CrdBody, probe: KubeObject, accepted: boolean): Promise<void> {
    await client.apply(crdType, crd, { fieldManager: "crds-test", force: true });
    installed.add(crd.metadata.name!);
    const type = legacyType(crd.spec.names.kind as keyof typeof crdFiles, crd.spec.names.plural);
    await eventually(
      `${crd.metadata.name} serving the ${accepted ? "old" : "new"} version rule`,
      async () => {
        const outcome = await client.create(type, structuredClone(probe)).then(
          async (o) => (await client.delete(type, { name: o.metadata.name!, namespace: scope.ns }), 201),
          (e: unknown) => (e instanceof KubeApiError ? e.code : 0),
        );
        return accepted ? outcome === 201 : outcome === 422;
      },
    );
  }

  afterAll(async () => {
    for (const name of installed) await client.delete(crdType, { name });
  });

  it.each([
    ["HcpCluster", "demo"],
    ["NodePool", "demo-workers"],
  ] as const)("%s: label, status write and a fix back to 4.19 succeed", async (kind, sampleName) => {
    const lax = await legacyCrd(kind, true);
    const type = legacyType(kind, lax.spec.names.plural);
    const bad = sample<KubeObject & { spec: { version?: { id: string } } }>(sampleName);
    bad.apiVersion = `${LEGACY_GROUP}/${VERSION}`;
    bad.metadata.namespace = scope.ns;
    bad.spec.version = { id: "99999999999999999999.1" };
    const probe = { ...structuredClone(bad), metadata: { name: "probe", namespace: scope.ns } };

    await serve(lax, probe, true);
    await client.create(type, bad);
    scope.created.push({ type, name: sampleName, namespace: scope.ns });
    await serve(await legacyCrd(kind, false), probe, false);

    const ref = { name: sampleName, namespace: scope.ns };
    const labelled = await client.mergePatch(type, ref, { metadata: { labels: { touched: "yes" } } });
    expect(labelled.metadata.labels).toEqual({ touched: "yes" });
    const status = { phase: "Failed", observedGeneration: 1 };
    const written = await client.mergePatch<HcpCluster>(type, ref, { status }, "status");
    expect(written.status).toMatchObject(status);
    const fixed = await client.mergePatch<HcpCluster>(type, ref, { spec: { version: { id: "4.19" } } });
    expect(fixed.spec.version.id).toBe("4.19");
    // Once readable, the version is held to the downgrade rule again.
    await expectInvalid(client.mergePatch(type, ref, { spec: { version: { id: "4.18" } } }), [
      "spec.version.id cannot move back from 4.19 to 4.18",
    ]);
  });
});

describe("customer-managed etcd encryption (spec.etcd.dataEncryption)", () => {
  const KEY_VERSION = "0123456789abcdef0123456789abcdef";
  /** The demo cluster with a customer's key and the kms identity that uses it. */
  function encrypted(): HcpCluster {
    const c = sample<HcpCluster>("demo");
    c.spec.platform.azure.identities.controlPlaneOperators.kms = identity("kms");
    c.spec.etcd = {
      dataEncryption: {
        keyManagementMode: "CustomerManaged",
        customerManaged: { kms: { vaultName: "kv-demo", activeKey: { name: "etcd", version: KEY_VERSION } } },
      },
    };
    return c;
  }
  const cm = (c: HcpCluster) => c.spec.etcd!.dataEncryption!.customerManaged!;

  it("defaults the encryption type and the vault's visibility, and PlatformManaged for an empty block", async () => {
    const c = await create(encrypted());
    expect(cm(c)).toEqual({
      encryptionType: "KMS",
      kms: { vaultName: "kv-demo", visibility: "Public", activeKey: { name: "etcd", version: KEY_VERSION } },
    });
    const plain = sample<HcpCluster>("demo");
    plain.metadata.name = "plain";
    plain.spec.dns.baseDomainPrefix = "plain";
    plain.spec.etcd = { dataEncryption: {} as never };
    expect((await create(plain)).spec.etcd).toEqual({
      dataEncryption: { keyManagementMode: "PlatformManaged" },
    });
  });

  it.each<CreateCase<HcpCluster>>([
    {
      name: "CustomerManaged without customerManaged",
      mutate: (c) => delete c.spec.etcd!.dataEncryption!.customerManaged,
      expected: [
        "spec.etcd.dataEncryption",
        "spec.etcd.dataEncryption.customerManaged is required when keyManagementMode is CustomerManaged",
      ],
    },
    {
      name: "PlatformManaged with customerManaged",
      mutate: (c) => void (c.spec.etcd!.dataEncryption!.keyManagementMode = "PlatformManaged"),
      expected: [
        "spec.etcd.dataEncryption.customerManaged must not be set when keyManagementMode is PlatformManaged",
      ],
    },
    {
      name: "a vault name with a double hyphen",
      mutate: (c) => void (cm(c).kms.vaultName = "kv--demo"),
      expected: [
        "spec.etcd.dataEncryption.customerManaged.kms.vaultName",
        'must be an Azure Key Vault name (3-24 letters, digits and single hyphens, starting with a letter and ending with a letter or digit), not "kv--demo"',
      ],
    },
    {
      name: "a vault name of 25 characters",
      mutate: (c) => void (cm(c).kms.vaultName = "k".repeat(25)),
      expected: ["spec.etcd.dataEncryption.customerManaged.kms.vaultName must be an Azure Key Vault name"],
    },
    {
      name: "a key name with a slash",
      mutate: (c) => void (cm(c).kms.activeKey.name = "etcd/other"),
      expected: [
        "spec.etcd.dataEncryption.customerManaged.kms.activeKey.name",
        'must be an Azure Key Vault key name (1-127 letters, digits and hyphens), not "etcd/other"',
      ],
    },
    {
      name: "an empty key version",
      mutate: (c) => void (cm(c).kms.activeKey.version = ""),
      expected: ["spec.etcd.dataEncryption.customerManaged.kms.activeKey.version must be a key version"],
    },
    {
      name: "a visibility ARO HCP does not know",
      mutate: (c) => void (cm(c).kms.visibility = "Internal" as never),
      expected: [
        "spec.etcd.dataEncryption.customerManaged.kms.visibility",
        'supported values: "Public", "Private"',
      ],
    },
    {
      name: "customer-managed keys without the kms identity",
      mutate: (c) => delete c.spec.platform.azure.identities.controlPlaneOperators.kms,
      expected: [
        "spec.platform.azure.identities.controlPlaneOperators",
        "must have a kms identity when spec.etcd.dataEncryption.keyManagementMode is CustomerManaged",
      ],
    },
  ])("refuses $name", async ({ mutate, expected }) => {
    const c = encrypted();
    mutate(c);
    await expectInvalid(create(c), expected);
  });

  it.each([
    {
      name: "the key management mode",
      patch: {
        spec: { etcd: { dataEncryption: { keyManagementMode: "PlatformManaged", customerManaged: null } } },
      },
      expected: ["spec.etcd.dataEncryption.keyManagementMode is immutable after creation"],
    },
    {
      name: "the vault",
      patch: { spec: { etcd: { dataEncryption: { customerManaged: { kms: { vaultName: "kv-other" } } } } } },
      expected: ["spec.etcd.dataEncryption.customerManaged.kms.vaultName is immutable after creation"],
    },
    {
      name: "the vault's visibility",
      patch: { spec: { etcd: { dataEncryption: { customerManaged: { kms: { visibility: "Private" } } } } } },
      expected: ["spec.etcd.dataEncryption.customerManaged.kms.visibility is immutable after creation"],
    },
    {
      name: "the key's name",
      patch: {
        spec: { etcd: { dataEncryption: { customerManaged: { kms: { activeKey: { name: "other" } } } } } },
      },
      expected: [
        "spec.etcd.dataEncryption.customerManaged.kms.activeKey.name is immutable after creation; rotate the key by changing its version",
      ],
    },
    {
      name: "removing the encryption",
      patch: { spec: { etcd: null } },
      expected: ["spec.etcd.dataEncryption cannot be removed once set"],
    },
    {
      name: "dropping the kms identity",
      patch: { spec: { platform: { azure: { identities: { controlPlaneOperators: { kms: null } } } } } },
      expected: [
        "must have a kms identity when spec.etcd.dataEncryption.keyManagementMode is CustomerManaged",
      ],
    },
  ])("refuses changing $name", async ({ patch: body, expected }) => {
    const created = await create(encrypted());
    await expectInvalid(patch(created, body), expected);
  });

  it("takes a new key version (a rotation), and customer-managed keys on a cluster made before the field", async () => {
    const created = await create(encrypted());
    const next = "fedcba9876543210fedcba9876543210";
    const rotated = await patch(created, {
      spec: { etcd: { dataEncryption: { customerManaged: { kms: { activeKey: { version: next } } } } } },
    });
    expect(cm(rotated).kms.activeKey).toEqual({ name: "etcd", version: next });
    // A cluster stored without the field (an older frontend kept it in the ARM annotation) gets it once.
    const older = sample<HcpCluster>("demo");
    older.metadata.name = "older";
    older.spec.dns.baseDomainPrefix = "older";
    older.spec.platform.azure.identities.controlPlaneOperators.kms = identity("kms");
    const adopted = await patch(await create(older), { spec: { etcd: encrypted().spec.etcd } });
    expect(adopted.spec.etcd?.dataEncryption?.keyManagementMode).toBe("CustomerManaged");
  });
});

describe("the ingress and the VNet integration subnet (spec.ingress, spec.platform.azure.vnetIntegrationSubnetId)", () => {
  const demoSubnet = (name: string, vnet = "demo-vnet", rg = "demo-customer", sub = SUB): string =>
    `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Network/virtualNetworks/${vnet}/subnets/${name}`;
  /** The demo cluster with a VNet integration subnet beside its node subnet. */
  function integrated(): HcpCluster {
    const c = sample<HcpCluster>("demo");
    c.spec.platform.azure.vnetIntegrationSubnetId = demoSubnet("integration");
    return c;
  }

  it("defaults the ingress to Public and takes a Private API with a VNet integration subnet", async () => {
    expect((await create(sample<HcpCluster>("demo"))).spec.ingress).toEqual({ type: "Public" });
    const c = integrated();
    c.metadata.name = "private";
    c.spec.dns.baseDomainPrefix = "private";
    c.spec.api = { visibility: "Private" };
    c.spec.ingress = { type: "Private" };
    const created = await create(c);
    expect(created.spec.ingress).toEqual({ type: "Private" });
    expect(created.spec.platform.azure.vnetIntegrationSubnetId).toBe(demoSubnet("integration"));
    const disabled = integrated();
    disabled.metadata.name = "disabled";
    disabled.spec.dns.baseDomainPrefix = "disabled";
    disabled.spec.version.id = "4.20";
    disabled.spec.ingress = { type: "Disabled" };
    expect((await create(disabled)).spec.ingress).toEqual({ type: "Disabled" });
  });

  it.each<CreateCase<HcpCluster>>([
    {
      name: "an ingress type ARO HCP does not know",
      mutate: (c) => void (c.spec.ingress = { type: "Internal" as never }),
      expected: ["spec.ingress.type", 'supported values: "Public", "Private", "Disabled"'],
    },
    {
      name: "a disabled ingress before OpenShift 4.20",
      mutate: (c) => void (c.spec.ingress = { type: "Disabled" }),
      expected: [
        "spec.ingress.type",
        "spec.ingress.type Disabled needs OpenShift 4.20 or newer (HyperShift disables the Ingress and Console capabilities from 4.20 on), not spec.version.id 4.19",
      ],
    },
    {
      name: "a Private API without a VNet integration subnet",
      mutate: (c) => {
        delete c.spec.platform.azure.vnetIntegrationSubnetId;
        c.spec.api = { visibility: "Private" };
      },
      expected: [
        "spec.platform.azure.vnetIntegrationSubnetId",
        "spec.platform.azure.vnetIntegrationSubnetId is required when spec.api.visibility is Private",
      ],
    },
    {
      name: "a VNet integration subnet that is not a subnet ID",
      mutate: (c) => void (c.spec.platform.azure.vnetIntegrationSubnetId = "integration"),
      expected: ["spec.platform.azure.vnetIntegrationSubnetId must be an Azure subnet resource ID"],
    },
    {
      name: "the node subnet as the VNet integration subnet (in another casing)",
      mutate: (c) =>
        void (c.spec.platform.azure.vnetIntegrationSubnetId = c.spec.platform.azure.subnetId.toUpperCase()),
      expected: [
        "spec.platform.azure.vnetIntegrationSubnetId",
        "must not be spec.platform.azure.subnetId: the VNet integration subnet is dedicated to the control plane",
      ],
    },
    {
      name: "a VNet integration subnet in another virtual network",
      mutate: (c) =>
        void (c.spec.platform.azure.vnetIntegrationSubnetId = demoSubnet("integration", "other")),
      expected: [
        "spec.platform.azure.vnetIntegrationSubnetId must be a subnet of the virtual network of spec.platform.azure.subnetId",
      ],
    },
    {
      name: "a VNet integration subnet in another subscription",
      mutate: (c) =>
        void (c.spec.platform.azure.vnetIntegrationSubnetId = demoSubnet(
          "integration",
          "demo-vnet",
          "demo-customer",
          OTHER_SUB,
        )),
      expected: [
        `spec.platform.azure.vnetIntegrationSubnetId must be in the cluster's subscription ${SUB}, not in ${OTHER_SUB}`,
      ],
    },
    {
      name: "a VNet integration subnet in the managed resource group",
      mutate: (c) => {
        c.spec.platform.azure.subnetId = demoSubnet("nodes", "demo-vnet", "arohcp-demo-managed");
        c.spec.platform.azure.vnetIntegrationSubnetId = demoSubnet(
          "integration",
          "demo-vnet",
          "arohcp-demo-managed",
        );
      },
      expected: [
        "spec.platform.azure.vnetIntegrationSubnetId must not be in spec.platform.azure.managedResourceGroup",
      ],
    },
  ])("refuses $name", async ({ mutate, expected }) => {
    const c = integrated();
    mutate(c);
    await expectInvalid(create(c), expected);
  });

  it.each([
    {
      name: "the ingress type",
      patch: { spec: { ingress: { type: "Private" } } },
      expected: ["spec.ingress.type is immutable after creation"],
    },
    {
      name: "the VNet integration subnet",
      patch: { spec: { platform: { azure: { vnetIntegrationSubnetId: demoSubnet("other") } } } },
      expected: ["spec.platform.azure.vnetIntegrationSubnetId is immutable after creation"],
    },
    {
      name: "removing the VNet integration subnet",
      patch: { spec: { platform: { azure: { vnetIntegrationSubnetId: null } } } },
      expected: ["spec.platform.azure.vnetIntegrationSubnetId cannot be removed once set"],
    },
  ])("refuses changing $name", async ({ patch: body, expected }) => {
    const created = await create(integrated());
    await expectInvalid(patch(created, body), expected);
  });

  it("takes the subnet's casing changing, and a subnet set once on a cluster made before the field", async () => {
    const created = await create(integrated());
    const recased = await patch(created, {
      spec: { platform: { azure: { vnetIntegrationSubnetId: demoSubnet("INTEGRATION") } } },
    });
    expect(recased.spec.platform.azure.vnetIntegrationSubnetId).toBe(demoSubnet("INTEGRATION"));
    // An older frontend kept it in the ARM annotation; the frontend moves it into the spec.
    const older = sample<HcpCluster>("demo");
    older.metadata.name = "older";
    older.spec.dns.baseDomainPrefix = "older";
    const adopted = await patch(await create(older), {
      spec: { platform: { azure: { vnetIntegrationSubnetId: demoSubnet("integration") } } },
    });
    expect(adopted.spec.platform.azure.vnetIntegrationSubnetId).toBe(demoSubnet("integration"));
  });
});
