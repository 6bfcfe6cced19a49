import { describe, expect, it } from "vitest";
import { PodNetworkInstanceResource, PodNetworkResource } from "../api/acn/v1alpha1.ts";
import {
  SWIFT_POD_NETWORK_INSTANCE_ANNOTATION,
  type HostedCluster,
} from "../api/hypershift/v1beta1/index.ts";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import type { Manifest } from "../api/work/v1.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import type { Release } from "../releases/catalog.ts";
import { sampleCluster, sampleRegion } from "../../test/support/samples.ts";
import { hostedClusterWork } from "./hostedcluster.ts";
import { runsWithoutIngress, VNET_INTEGRATION_INSTANCE } from "./networking.ts";
import { newSigningKey } from "./oidc.ts";

/** A real key: the work names its key ID on the signing key's Secret. */
const signingKey = await newSigningKey();

const release: Release = {
  version: "4.20.3",
  image: "quay.io/openshift-release-dev/ocp-release:4.20.3-multi",
  channelGroups: ["stable"],
};
const INTEGRATION_SUBNET =
  "/subscriptions/6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10/resourceGroups/demo-customer/providers/Microsoft.Network/virtualNetworks/demo-vnet/subnets/integration";

function cluster(mutate: (c: HcpCluster) => void = () => undefined): HcpCluster {
  const c = sampleCluster();
  c.metadata.namespace = "customer";
  c.metadata.uid = "0b0e5c6e-4f7d-4e43-9d7a-000000000002";
  mutate(c);
  return c;
}

function work(c: HcpCluster): Manifest[] {
  const region = sampleRegion();
  const w = hostedClusterWork({
    cluster: c,
    names: clusterNames(c, region),
    release,
    region,
    consumer: "mgmt-1",
    oidc: { issuerURL: "https://oidc.example.com/t/c", signingKey },
  });
  return w.spec?.workload?.manifests ?? [];
}

function hostedClusterIn(manifests: Manifest[]): HostedCluster {
  const hc = manifests.find((m) => m.kind === "HostedCluster");
  if (!hc) throw new Error("the work carries no HostedCluster");
  return hc as unknown as HostedCluster;
}

describe("the ingress type reaches the HostedCluster", () => {
  it("Private publishes the default ingress controller on an internal load balancer", () => {
    const hc = hostedClusterIn(work(cluster((c) => (c.spec.ingress = { type: "Private" }))));
    expect(hc.spec.operatorConfiguration).toEqual({
      ingressOperator: {
        endpointPublishingStrategy: {
          type: "LoadBalancerService",
          loadBalancer: { scope: "Internal", dnsManagementPolicy: "Managed" },
        },
      },
    });
    expect(hc.spec.capabilities).toBeUndefined();
  });

  it("Public (given or defaulted) leaves HyperShift's default, an external load balancer", () => {
    for (const c of [cluster((x) => (x.spec.ingress = { type: "Public" })), cluster()]) {
      const hc = hostedClusterIn(work(c));
      expect(hc.spec.operatorConfiguration).toBeUndefined();
      expect(hc.spec.capabilities).toBeUndefined();
    }
  });

  it("Disabled turns off the Ingress and Console capabilities, after a disabled image registry", () => {
    const off = hostedClusterIn(work(cluster((c) => (c.spec.ingress = { type: "Disabled" }))));
    expect(off.spec.capabilities).toEqual({ disabled: ["Console", "Ingress"] });
    expect(off.spec.operatorConfiguration).toBeUndefined();
    const both = hostedClusterIn(
      work(
        cluster((c) => {
          c.spec.ingress = { type: "Disabled" };
          c.spec.clusterImageRegistry = { state: "Disabled" };
        }),
      ),
    );
    expect(both.spec.capabilities).toEqual({ disabled: ["ImageRegistry", "Console", "Ingress"] });
  });

  it("OpenShift runs without an ingress from 4.20 on", () => {
    expect(["4.20.0", "4.20", "4.21.3", "5.0.1"].map(runsWithoutIngress)).toEqual([true, true, true, true]);
    expect(["4.19.9", "4.2.0", "3.11.0"].map(runsWithoutIngress)).toEqual([false, false, false]);
  });
});

describe("the VNet integration subnet becomes Swift networking on the management cluster", () => {
  const c = cluster((x) => (x.spec.platform.azure.vnetIntegrationSubnetId = INTEGRATION_SUBNET));
  const names = clusterNames(c, sampleRegion());
  const manifests = work(c);

  it("a PodNetwork for the subnet and an instance of it in the control plane's namespace, made first", () => {
    const kinds = manifests.map((m) => `${m.kind}/${m.metadata?.namespace ?? ""}/${m.metadata?.name}`);
    const hostedCluster = kinds.findIndex((k) => k.startsWith("HostedCluster/"));
    const swift = [
      `Namespace//${names.controlPlaneNamespace}`,
      `${PodNetworkResource.kind}//${names.controlPlaneNamespace}`,
      `${PodNetworkInstanceResource.kind}/${names.controlPlaneNamespace}/${VNET_INTEGRATION_INSTANCE}`,
    ];
    for (const k of swift) expect(kinds.indexOf(k), k).toBeGreaterThanOrEqual(0);
    for (const k of swift)
      expect(kinds.indexOf(k), `${k} before the HostedCluster`).toBeLessThan(hostedCluster);
    const byKind = (kind: string) => manifests.find((m) => m.kind === kind) as Record<string, unknown>;
    expect(byKind("PodNetwork")).toMatchObject({
      apiVersion: "multitenancy.acn.azure.com/v1alpha1",
      spec: { subnetResourceID: INTEGRATION_SUBNET, deviceType: "acn.azure.com/vnet-nic" },
    });
    expect(byKind("PodNetworkInstance")).toMatchObject({
      spec: { podNetworkConfigs: [{ podNetwork: names.controlPlaneNamespace }] },
    });
  });

  it("the HostedCluster's annotation names the instance its router joins", () => {
    expect(hostedClusterIn(manifests).metadata.annotations).toEqual({
      [SWIFT_POD_NETWORK_INSTANCE_ANNOTATION]: VNET_INTEGRATION_INSTANCE,
    });
  });

  it("without the subnet: no Swift objects and no annotation", () => {
    const plain = work(cluster());
    expect(plain.filter((m) => m.apiVersion === "multitenancy.acn.azure.com/v1alpha1")).toEqual([]);
    expect(plain.filter((m) => m.kind === "Namespace").map((m) => m.metadata?.name)).toEqual([
      clusterNames(cluster(), sampleRegion()).hostedClusterNamespace,
    ]);
    expect(hostedClusterIn(plain).metadata.annotations).toBeUndefined();
  });
});
