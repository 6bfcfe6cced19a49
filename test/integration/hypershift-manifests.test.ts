/**
 * Every shape of HostedCluster and NodePool the controllers produce is accepted by the real
 * HyperShift CRDs (OpenAPI schema and CEL rules) installed on a management cluster: public and
 * private clusters, private and disabled ingresses, the Swift annotation, fixed, autoscaling,
 * labelled and tainted, and zero-sized node pools; and a VNet integration subnet's PodNetwork and
 * PodNetworkInstance by the (stand-in) Azure Container Networking CRDs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PodNetworkInstanceResource,
  PodNetworkResource,
  type PodNetwork,
  type PodNetworkInstance,
} from "../../operators/api/acn/v1alpha1.ts";
import {
  HostedClusterResource,
  SWIFT_POD_NETWORK_INSTANCE_ANNOTATION,
  NodePoolResource as HyperShiftNodePoolResource,
  type HostedCluster,
  type NodePool as HyperShiftNodePool,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import type { HcpCluster, NodePool } from "../../operators/api/v1alpha1/index.ts";
import { hostedClusterManifest, SIGNING_KEY_SECRET_NAME } from "../../operators/cluster/hostedcluster.ts";
import { swiftManifests, VNET_INTEGRATION_INSTANCE } from "../../operators/cluster/networking.ts";
import { issuerURL } from "../../operators/cluster/oidc.ts";
import { clusterNames, type RegionSettings } from "../../operators/api/v1alpha1/clusternames.ts";
import { hyperShiftNodePool } from "../../operators/nodepool/nodepool.ts";
import type { Release } from "../../operators/releases/catalog.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { clientFor, tempNamespace } from "../support/fixtures.ts";
import { sampleAutoscalingPool, sampleCluster, sampleFixedPool } from "../support/samples.ts";

const region: RegionSettings = {
  environment: "test",
  baseDomain: "hcp.example.com",
  managedIdentitiesKeyVault: "kv-test",
  pullSecret: '{"auths":{}}',
};
const release: Release = {
  version: "4.19.7",
  image: "quay.io/openshift-release-dev/ocp-release:4.19.7-multi",
  channelGroups: ["stable"],
};
const release420: Release = {
  version: "4.20.3",
  image: "quay.io/openshift-release-dev/ocp-release:4.20.3-multi",
  channelGroups: ["stable"],
};

let mgmt: KubeClient;
let ns: { name: string; remove(): Promise<void> };
let n = 0;

/** A sample cluster with a uid, so names derive as they do for a stored object. */
function cluster(mutate: (c: HcpCluster) => void = () => undefined): HcpCluster {
  const c = sampleCluster();
  c.metadata.namespace = "customer";
  c.metadata.uid = `0b0e5c6e-4f7d-4e43-9d7a-${String(100000000000 + n++).slice(-12)}`;
  mutate(c);
  return c;
}

/** Creates the object for real in the test namespace (names made unique there), then reads it back. */
async function accepted<T extends HostedCluster | HyperShiftNodePool>(obj: T): Promise<T> {
  const type = obj.kind === "HostedCluster" ? HostedClusterResource : HyperShiftNodePoolResource;
  obj.metadata.namespace = ns.name;
  return mgmt.create<T>(type, obj);
}

beforeAll(async () => {
  mgmt = clientFor("mgmt-1");
  ns = await tempNamespace(mgmt, "hs-shapes");
});

afterAll(async () => {
  await ns?.remove();
});

describe("HostedCluster shapes", () => {
  it("a public cluster with every identity, its issuer and signing key", async () => {
    const c = cluster();
    const issuer = issuerURL("https://oidc.example.com/", c);
    const hc = await accepted(
      hostedClusterManifest(c, clusterNames(c, region), release, { region, issuerURL: issuer }),
    );
    expect(hc.spec.platform.azure?.azureAuthenticationConfig).toMatchObject({
      azureAuthenticationConfigType: "ManagedIdentities",
    });
    expect(hc.spec.clusterID).toBe(c.metadata.uid);
    // The CRD's rule that serviceAccountSigningKey needs issuerURL holds.
    expect(hc.spec.issuerURL).toBe(issuer);
    expect(hc.spec.serviceAccountSigningKey).toEqual({ name: SIGNING_KEY_SECRET_NAME });
  });

  it("a private cluster without data-plane identities and a custom network", async () => {
    const c = cluster((x) => {
      x.spec.dns.baseDomainPrefix = "priv";
      x.spec.api = { visibility: "Private" };
      x.spec.network = { podCidr: "10.200.0.0/14", serviceCidr: "172.40.0.0/16", hostPrefix: 24 };
      delete x.spec.platform.azure.identities.dataPlaneOperators;
    });
    const issuer = issuerURL("https://oidc.example.com", c);
    const hc = await accepted(
      hostedClusterManifest(c, clusterNames(c, region), release, { region, issuerURL: issuer }),
    );
    expect(hc.spec.platform.azure?.topology).toBe("Private");
  });

  it("a cluster with every setting a user can send", async () => {
    const c = cluster((x) => {
      x.spec.dns.baseDomainPrefix = "full";
      x.spec.api = {
        visibility: "Public",
        authorizedCIDRs: ["10.0.0.0/8", "203.0.113.7", "2001:db8::/32", "::1"],
      };
      x.spec.fips = true;
      x.spec.clusterImageRegistry = { state: "Disabled" };
      x.spec.autoscaling = {
        maxNodesTotal: 50,
        maxPodGracePeriodSeconds: 300,
        maxNodeProvisionTimeSeconds: 900,
        podPriorityThreshold: -5,
      };
      x.spec.imageDigestMirrors = [
        { source: "quay.io/openshift-release-dev/ocp-release", mirrors: ["mirror.example.com/ocp/release"] },
        { source: "registry.redhat.io", mirrors: ["a.example.com/rh", "b.example.com/rh"] },
      ];
    });
    const issuer = issuerURL("https://oidc.example.com", c);
    const hc = await accepted(
      hostedClusterManifest(c, clusterNames(c, region), release, { region, issuerURL: issuer }),
    );
    expect(hc.spec.networking.apiServer?.allowedCIDRBlocks).toEqual([
      "10.0.0.0/8",
      "203.0.113.7/32",
      "2001:db8::/32",
      "::1/128",
    ]);
    expect(hc.spec.fips).toBe(true);
    expect(hc.spec.capabilities).toEqual({ disabled: ["ImageRegistry"] });
    expect(hc.spec.imageContentSources).toEqual(c.spec.imageDigestMirrors);
    expect(hc.spec.autoscaling).toMatchObject({
      maxNodesTotal: 50,
      maxPodGracePeriod: 300,
      maxNodeProvisionTime: "900s",
      podPriorityThreshold: -5,
    });
  });

  it("a customer's etcd key during a rotation: HyperShift's CRD takes the active and backup keys as sent", async () => {
    const c = cluster((x) => {
      x.spec.dns.baseDomainPrefix = "kms";
      x.spec.etcd = {
        dataEncryption: {
          keyManagementMode: "CustomerManaged",
          customerManaged: {
            kms: { vaultName: "kv-demo", visibility: "Private", activeKey: { name: "etcd", version: "2" } },
          },
        },
      };
    });
    const key = (keyVersion: string) => ({ keyVaultName: "kv-demo", keyName: "etcd", keyVersion });
    const issuer = issuerURL("https://oidc.example.com", c);
    const hc = await accepted(
      hostedClusterManifest(c, clusterNames(c, region), release, {
        region,
        issuerURL: issuer,
        etcdKeys: { active: key("2"), backup: key("1") },
      }),
    );
    expect(hc.spec.secretEncryption).toEqual({
      type: "kms",
      kms: {
        provider: "Azure",
        azure: {
          activeKey: key("2"),
          backupKey: key("1"),
          kms: { credentialsSecretName: "kms-kms", objectEncoding: "utf-8" },
          keyVaultAccess: "Private",
        },
      },
    });
  });
});

describe("NodePool shapes", () => {
  const c = cluster();
  const names = clusterNames(c, region);
  const shapes: Array<[string, (p: NodePool) => void]> = [
    ["fixed replicas", () => undefined],
    ["scaled to zero", (p) => (p.spec.replicas = 0)],
    [
      "labels, taints, drain timeout, encryption at host and its own subnet",
      (p) => {
        p.spec.labels = { "node-role.kubernetes.io/infra": "", team: "a" };
        p.spec.taints = [{ key: "dedicated", value: "infra", effect: "NoSchedule" }];
        p.spec.nodeDrainTimeoutMinutes = 15;
        p.spec.platform.azure.encryptionAtHost = true;
        p.spec.platform.azure.subnetId = c.spec.platform.azure.subnetId.replace(/nodes$/, "infra");
      },
    ],
    [
      "an ephemeral OS disk encrypted by a disk encryption set",
      (p) => {
        const sub = c.spec.platform.azure.subscriptionId;
        p.spec.platform.azure.osDisk = {
          diskType: "Ephemeral",
          encryptionSetId: `/subscriptions/${sub}/resourceGroups/keys/providers/Microsoft.Compute/diskEncryptionSets/des-1`,
        };
      },
    ],
  ];
  for (const [what, mutate] of shapes)
    it(what, async () => {
      const pool = sampleFixedPool();
      pool.metadata.name = `pool-${n++}`;
      mutate(pool);
      const np = await accepted(hyperShiftNodePool(pool, c, names, release));
      expect(np.spec.clusterName).toBe(names.hostedClusterName);
    });

  it("autoscaling", async () => {
    const pool = sampleAutoscalingPool();
    pool.metadata.name = `pool-${n++}`;
    const np = await accepted(hyperShiftNodePool(pool, c, names, release));
    expect(np.spec.autoScaling).toEqual(pool.spec.autoScaling);
    expect(np.spec.replicas).toBeUndefined();
  });
});

describe("the ingress and the VNet integration subnet", () => {
  const integration = (c: HcpCluster): string =>
    c.spec.platform.azure.subnetId.replace(/nodes$/, "integration");

  it("a private API and ingress with a VNet integration subnet: internal publishing, the Swift annotation", async () => {
    const c = cluster((x) => {
      x.spec.dns.baseDomainPrefix = "swift";
      x.spec.api = { visibility: "Private" };
      x.spec.ingress = { type: "Private" };
      x.spec.platform.azure.vnetIntegrationSubnetId = integration(x);
    });
    const hc = await accepted(
      hostedClusterManifest(c, clusterNames(c, region), release, {
        region,
        issuerURL: issuerURL("https://oidc.example.com", c),
      }),
    );
    expect(hc.spec.operatorConfiguration?.ingressOperator?.endpointPublishingStrategy).toEqual({
      type: "LoadBalancerService",
      loadBalancer: { scope: "Internal", dnsManagementPolicy: "Managed" },
    });
    expect(hc.metadata.annotations?.[SWIFT_POD_NETWORK_INSTANCE_ANNOTATION]).toBe(VNET_INTEGRATION_INSTANCE);
  });

  it("no ingress on 4.20: Ingress and Console disabled beside the image registry", async () => {
    const c = cluster((x) => {
      x.spec.dns.baseDomainPrefix = "noingress";
      x.spec.version.id = "4.20";
      x.spec.ingress = { type: "Disabled" };
      x.spec.clusterImageRegistry = { state: "Disabled" };
    });
    const hc = await accepted(
      hostedClusterManifest(c, clusterNames(c, region), release420, {
        region,
        issuerURL: issuerURL("https://oidc.example.com", c),
      }),
    );
    expect(hc.spec.capabilities).toEqual({ disabled: ["ImageRegistry", "Console", "Ingress"] });
    // Why Console goes too: HyperShift refuses Ingress alone.
    const alone = structuredClone(hc);
    alone.metadata = { name: "ingress-alone" };
    alone.spec.capabilities = { disabled: ["Ingress"] };
    await expect(accepted(alone)).rejects.toThrow(
      "Ingress capability can only be disabled if Console capability is also disabled",
    );
  });

  it("the work's PodNetwork and PodNetworkInstance are taken by the management cluster", async () => {
    const c = cluster((x) => {
      x.spec.dns.baseDomainPrefix = "swiftobjs";
      x.spec.platform.azure.vnetIntegrationSubnetId = integration(x);
    });
    const names = clusterNames(c, region);
    const [, podNetwork, instance] = swiftManifests(c, { ...names, controlPlaneNamespace: ns.name });
    const pn = await mgmt.create<PodNetwork>(PodNetworkResource, podNetwork as unknown as PodNetwork);
    try {
      expect(pn.spec).toMatchObject({
        subnetResourceID: integration(c),
        deviceType: "acn.azure.com/vnet-nic",
      });
      const pni = await mgmt.create<PodNetworkInstance>(
        PodNetworkInstanceResource,
        instance as unknown as PodNetworkInstance,
      );
      expect(pni.spec.podNetworkConfigs).toEqual([{ podNetwork: ns.name, podIPReservationSize: 0 }]);
    } finally {
      await mgmt.delete(PodNetworkResource, { name: ns.name });
    }
  });
});
