/**
 * A cluster whose settings a frontend from before their spec fields kept only in the ARM-only
 * annotation, on the real service apiserver: GET shows only what is in effect, and a frontend that
 * starts moves the settings that may still change (and the VNet integration subnet, which the
 * served schemas require) into the spec, where the cluster controller carries them to the
 * HostedCluster.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { ARM_ANNOTATIONS } from "../../operators/api/v1alpha1/index.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import { clientFor } from "../support/fixtures.ts";
import { clusterBody, clusterPath, withCustomerKey } from "../support/frontend.ts";
import {
  removeSubscription,
  settleCluster,
  startFrontendFixture,
  type FrontendFixture,
} from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
const rg = "rg-adopt";
let fixture: FrontendFixture;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

const SETTINGS = {
  api: { visibility: "Public", authorizedCidrs: ["192.0.2.0/24", "198.51.100.7"] },
  autoscaling: { maxNodesTotal: 12 },
  imageDigestMirrors: [{ source: "quay.io/openshift", mirrors: ["mirror.example.com/openshift"] }],
};

beforeAll(async () => {
  fixture = await startFrontendFixture({ client: service, name: "frontend-adopt" });
  expect((await fixture.putSubscription(sub, "Registered")).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  await removeSubscription(service, sub);
});

describe("settings kept in the ARM annotation by an older frontend", () => {
  it("are not shown while not in effect, and are moved into the spec when a frontend starts", async () => {
    const path = clusterPath(sub, rg, "legacy");
    const body = clusterBody(sub) as Json;
    body.properties = { ...body.properties, ...SETTINGS };
    const created = await fixture.arm.send("PUT", path, { body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // Made as an older frontend left it: the settings in the annotation, none in the spec.
    const ref = { name: clusterCRName(rg, "legacy"), namespace: subscriptionNamespace(sub) };
    const cr = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    const props = JSON.parse(cr.metadata.annotations?.[ARM_ANNOTATIONS.properties] ?? "{}") as Json;
    await service.mergePatch(HcpClusterResource, ref, {
      metadata: { annotations: { [ARM_ANNOTATIONS.properties]: JSON.stringify({ ...props, ...SETTINGS }) } },
      spec: { api: { authorizedCIDRs: null }, autoscaling: null, imageDigestMirrors: null },
    });
    const shown = (await fixture.arm.send("GET", path)).body as Json;
    expect(shown.properties.api.authorizedCidrs).toBeUndefined();
    expect(shown.properties.autoscaling).toBeUndefined();

    const arm = await fixture.restart();
    expect(await fixture.fe.frontend.adopted).toBeGreaterThanOrEqual(1);
    const adopted = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    expect(adopted.spec.api?.authorizedCIDRs).toEqual(SETTINGS.api.authorizedCidrs);
    expect(adopted.spec.autoscaling).toMatchObject({ maxNodesTotal: 12 });
    expect(adopted.spec.imageDigestMirrors).toEqual(SETTINGS.imageDigestMirrors);
    const left = JSON.parse(adopted.metadata.annotations?.[ARM_ANNOTATIONS.properties] ?? "{}") as Json;
    expect(left.autoscaling).toBeUndefined();
    expect(left.api?.authorizedCidrs).toBeUndefined();
    const got = (await arm.send("GET", path)).body as Json;
    expect(got.properties.api.authorizedCidrs).toEqual(adopted.spec.api?.authorizedCIDRs);
  });

  it("a customer's etcd key is moved into the spec, where HyperShift gets it", async () => {
    const kms = { vaultName: "kv-legacy", visibility: "Public", activeKey: { name: "etcd", version: "v1" } };
    const body = withCustomerKey(clusterBody(sub, { prefix: "legacy-kms" }), sub, kms) as Json;
    const etcd = body.properties.etcd as Json;
    delete body.properties.etcd;
    const path = clusterPath(sub, rg, "legacy-kms");
    const created = await fixture.arm.send("PUT", path, { body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // An older frontend kept the key in the annotation alone: not in effect, and not shown.
    const ref = { name: clusterCRName(rg, "legacy-kms"), namespace: subscriptionNamespace(sub) };
    const cr = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    const props = JSON.parse(cr.metadata.annotations?.[ARM_ANNOTATIONS.properties] ?? "{}") as Json;
    await service.mergePatch(HcpClusterResource, ref, {
      metadata: { annotations: { [ARM_ANNOTATIONS.properties]: JSON.stringify({ ...props, etcd }) } },
    });
    expect(((await fixture.arm.send("GET", path)).body as Json).properties.etcd).toBeUndefined();

    const arm = await fixture.restart();
    expect(await fixture.fe.frontend.adopted).toBe(1);
    const adopted = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    expect(adopted.spec.etcd?.dataEncryption).toEqual({
      keyManagementMode: "CustomerManaged",
      customerManaged: { encryptionType: "KMS", kms },
    });
    const left = JSON.parse(adopted.metadata.annotations?.[ARM_ANNOTATIONS.properties] ?? "{}") as Json;
    expect(left.etcd).toBeUndefined();
    expect(((await arm.send("GET", path)).body as Json).properties.etcd).toEqual(etcd);
  });

  it("the VNet integration subnet is moved into the spec; an ingress type fixed at creation is not", async () => {
    const path = clusterPath(sub, rg, "legacy-net");
    // A 2024-06-10-preview PUT leaves the spec without the subnet, as an older frontend did.
    const body = clusterBody(sub, { prefix: "legacy-net" }) as Json;
    const subnet = body.properties.platform.vnetIntegrationSubnetId as string;
    delete body.properties.platform.vnetIntegrationSubnetId;
    const created = await fixture.arm.send("PUT", path, { body, apiVersion: "2024-06-10-preview" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const ref = { name: clusterCRName(rg, "legacy-net"), namespace: subscriptionNamespace(sub) };
    const cr = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    expect(cr.spec.platform.azure.vnetIntegrationSubnetId).toBeUndefined();
    const props = JSON.parse(cr.metadata.annotations?.[ARM_ANNOTATIONS.properties] ?? "{}") as Json;
    const legacy = { ...props, ingress: { type: "Private" }, platform: { vnetIntegrationSubnetId: subnet } };
    await service.mergePatch(HcpClusterResource, ref, {
      metadata: { annotations: { [ARM_ANNOTATIONS.properties]: JSON.stringify(legacy) } },
    });
    // Neither is in effect, so GET shows neither: the ingress is the Public the cluster has.
    const before = ((await fixture.arm.send("GET", path)).body as Json).properties;
    expect(before.platform.vnetIntegrationSubnetId).toBeUndefined();
    expect(before.ingress).toEqual({ type: "Public" });

    const arm = await fixture.restart();
    expect(await fixture.fe.frontend.adopted).toBe(1);
    const adopted = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    expect(adopted.spec.platform.azure.vnetIntegrationSubnetId).toBe(subnet);
    expect(adopted.spec.ingress).toEqual({ type: "Public" });
    const left = JSON.parse(adopted.metadata.annotations?.[ARM_ANNOTATIONS.properties] ?? "{}") as Json;
    expect(left.platform).toBeUndefined();
    const after = ((await arm.send("GET", path)).body as Json).properties;
    expect(after.platform.vnetIntegrationSubnetId).toBe(subnet);
    // The cluster can be PUT again: the subnet the served schemas require is there, unchanged.
    await settleCluster(service, { sub, rg, name: "legacy-net" });
    const again = await arm.send("PUT", path, { body: clusterBody(sub, { prefix: "legacy-net" }) });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });
});
