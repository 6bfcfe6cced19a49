/** The internal cluster ⇄ HcpCluster CR. */
import { describe, expect, it } from "vitest";
import { cluster } from "../../../test/support/azure-check-fixtures.ts";
import { clusterBody } from "../../../test/support/frontend.ts";
import { toInternalProperties } from "../api/conversion.ts";
import type { JsonObject } from "../api/json.ts";
import { SCHEMAS } from "../api/registry.ts";
import { applyDefaults, readValue } from "../api/schema-walks.ts";
import { formatResourceId, type ResourceId } from "../resource-id.ts";
import { clusterFromCR, clusterToCR, defaultClusterProperties } from "./cluster.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";
const schema = SCHEMAS["2026-06-30-preview"].cluster;

describe("cluster translation", () => {
  const id: ResourceId = { kind: "cluster", subscriptionId: SUB, resourceGroup: "rg", cluster: "Demo" };

  it("round-trips a cluster through the CR, ARM-only properties in an annotation", () => {
    const body = clusterBody(SUB, { prefix: "demo" }) as JsonObject;
    const doc = applyDefaults(schema, readValue(schema, body, "", [])) as JsonObject;
    const properties = defaultClusterProperties(
      id,
      toInternalProperties(doc, "2026-06-30-preview", "cluster"),
    );
    const hub = {
      id: formatResourceId(id),
      name: "Demo",
      type: "t",
      location: "eastus",
      tags: { a: "b" },
      properties,
    };
    const out = clusterToCR(hub, { id, namespace: "ns", name: "demo-x", annotations: {} });
    expect(out.spec.platform.azure).toMatchObject({ subscriptionId: SUB, location: "eastus" });
    expect(out.spec.platform.azure.managedResourceGroup).toMatch(/^arohcp-demo-/);
    expect(out.spec.api).toEqual({ visibility: "Public", authorizedCIDRs: ["10.0.0.0/8"] });
    expect(out.spec.fips).toBe(false);
    expect(out.spec.clusterImageRegistry).toEqual({ state: "Enabled" });
    expect(out.spec.ingress).toEqual({ type: "Public" });
    expect(out.spec.platform.azure.vnetIntegrationSubnetId).toMatch(/\/subnets\/integration$/);
    // Every property the body has reaches the spec: nothing is left for the annotation.
    expect(JSON.parse(out.metadata.annotations!["hcp.aro.dev/arm-properties"]!)).toEqual({});
    const back = clusterFromCR(out);
    expect(back.tags).toEqual({ a: "b" });
    expect(back.properties).toMatchObject({ ...properties, provisioningState: "Accepted" });
  });

  it("maps cryptoRestrictions FIPS to spec.fips and back", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const fips = clusterToCR({ ...hub, properties: cluster({ cryptoRestrictions: "FIPS" }) }, ctx);
    expect(fips.spec.fips).toBe(true);
    expect(fips.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(fips).properties.cryptoRestrictions).toBe("FIPS");
    // Stored objects have the CRD's default; a cluster stored with FIPS only in the annotation never got it.
    const stale = clusterToCR({ ...hub, properties: cluster({ cryptoRestrictions: "None" }) }, ctx);
    stale.metadata.annotations!["hcp.aro.dev/arm-properties"] = '{"cryptoRestrictions":"FIPS"}';
    expect(clusterFromCR(stale).properties.cryptoRestrictions).toBe("None");
  });

  it("maps ingress.type and the VNet integration subnet to the spec and back, never from the annotation", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const subnet = `/subscriptions/${SUB}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/swift`;
    const cr = clusterToCR(
      {
        ...hub,
        properties: cluster({
          ingress: { type: "Private" },
          platform: { ...cluster().platform, vnetIntegrationSubnetId: subnet },
        }),
      },
      ctx,
    );
    expect(cr.spec.ingress).toEqual({ type: "Private" });
    expect(cr.spec.platform.azure.vnetIntegrationSubnetId).toBe(subnet);
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties).toMatchObject({
      ingress: { type: "Private" },
      platform: { vnetIntegrationSubnetId: subnet },
    });
    // Kept only in the annotation by an older frontend: not in effect, so not shown (adopt-settings.ts).
    const stale = clusterToCR({ ...hub, properties: cluster({ ingress: { type: "Public" } }) }, ctx);
    stale.metadata.annotations!["hcp.aro.dev/arm-properties"] = JSON.stringify({
      ingress: { type: "Disabled" },
      platform: { vnetIntegrationSubnetId: subnet },
    });
    const shown = clusterFromCR(stale).properties;
    expect(shown.ingress).toEqual({ type: "Public" });
    expect(shown.platform?.vnetIntegrationSubnetId).toBeUndefined();
  });

  it("maps clusterImageRegistry.state to the spec and back", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const cr = clusterToCR(
      { ...hub, properties: cluster({ clusterImageRegistry: { state: "Disabled" } }) },
      ctx,
    );
    expect(cr.spec.clusterImageRegistry).toEqual({ state: "Disabled" });
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties.clusterImageRegistry).toEqual({ state: "Disabled" });
  });

  it("maps imageDigestMirrors to the spec and back", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const imageDigestMirrors = [
      { source: "registry.redhat.io", mirrors: ["a.example.com/rh", "b.example.com/rh"] },
    ];
    const cr = clusterToCR({ ...hub, properties: cluster({ imageDigestMirrors }) }, ctx);
    expect(cr.spec.imageDigestMirrors).toEqual(imageDigestMirrors);
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties.imageDigestMirrors).toEqual(imageDigestMirrors);
  });

  it("maps etcd encryption to the spec and back, and GET shows what the spec holds alone", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const etcd = {
      dataEncryption: {
        keyManagementMode: "CustomerManaged",
        customerManaged: {
          encryptionType: "KMS",
          kms: { vaultName: "kv-demo", visibility: "Private", activeKey: { name: "etcd", version: "v1" } },
        },
      },
    } as const;
    const cr = clusterToCR({ ...hub, properties: cluster({ etcd }) }, ctx);
    expect(cr.spec.etcd).toEqual(etcd);
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties.etcd).toEqual(etcd);
    const platform = { dataEncryption: { keyManagementMode: "PlatformManaged" } };
    expect(clusterToCR({ ...hub, properties: cluster({ etcd: platform }) }, ctx).spec.etcd).toEqual(platform);
    // A key left in the annotation by an older frontend is not in effect: GET does not show it.
    cr.spec.etcd = undefined;
    cr.metadata.annotations!["hcp.aro.dev/arm-properties"] = JSON.stringify({ etcd });
    expect(clusterFromCR(cr).properties.etcd).toBeUndefined();
  });

  it("maps autoscaling to the spec and back", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const autoscaling = {
      maxNodesTotal: 50,
      maxPodGracePeriodSeconds: 300,
      maxNodeProvisionTimeSeconds: 900,
      podPriorityThreshold: -5,
    };
    const cr = clusterToCR({ ...hub, properties: cluster({ autoscaling }) }, ctx);
    expect(cr.spec.autoscaling).toEqual(autoscaling);
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties.autoscaling).toEqual(autoscaling);
  });

  it("refuses ARM-only properties too large for the CR's annotations, naming the largest", () => {
    const hub = { ...clusterBody(SUB), id: "/x", name: "c", type: "t" } as unknown as Parameters<
      typeof clusterToCR
    >[0];
    (hub.properties as JsonObject)["imageDigestMirrors"] = [{ source: "s", mirrors: ["m".repeat(200_000)] }];
    const id: ResourceId = { kind: "cluster", subscriptionId: SUB, resourceGroup: "rg", cluster: "c" };
    expect(() => clusterToCR(hub, { id, namespace: "ns", name: "c", annotations: {} })).toThrow(
      expect.objectContaining({ body: expect.objectContaining({ target: "properties.imageDigestMirrors" }) }),
    );
  });
});
