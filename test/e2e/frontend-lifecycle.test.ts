/**
 * A cluster's life through the ARM frontend, with every controller, the maestro agents and the
 * HyperShift simulator running (startStack): ARM-style HTTPS requests create a cluster and a node
 * pool, operations are polled to Succeeded, GET shows what ARM expects, a PATCH scales the pool,
 * a failing HyperShift fails an update with its reason, and a DELETE takes everything away.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArmEmulator, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { startStorageEmulator, type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import { startStack, type Stack } from "../../hack/harness/stack.ts";
import { HostedClusterResource } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import {
  clusterCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "../support/fixtures.ts";
import { clusterBody, clusterPath, nodePoolBody, nodePoolPath, type ArmClient } from "../support/frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";
import { brokerCredentials, clusterInfo, region } from "../support/region.ts";

const LIFECYCLE_MS = 90_000;
const FAIL_ANNOTATION = "hypershift-simulator.hcp.aro.dev/fail";
const service = clientFor("service");
const sub = randomUUID();
const ns = subscriptionNamespace(sub);
const rg = "E2E-Frontend";
const prefix = `fe${process.pid % 100000}`;

let scratch: { path: string; remove(): Promise<void> };
let armEmulator: ArmEmulator;
let storage: StorageEmulator;
let stack: Stack;
let fixture: FrontendFixture;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

beforeAll(async () => {
  scratch = await scratchDir("frontend-e2e");
  armEmulator = await startArmEmulator({ workDir: scratch.path, asyncDelayMs: 100 });
  storage = await startStorageEmulator({ workDir: scratch.path, verifyBearer: armEmulator.verifyBearer });
  stack = await startStack({
    serviceKubeconfig: clusterInfo("service").kubeconfigPath,
    management: ["mgmt-1", "mgmt-2"].map((name) => ({
      name,
      kubeconfigPath: clusterInfo(name).kubeconfigPath,
    })),
    broker: { url: region().broker.url, credentials: brokerCredentials },
    arm: armEmulator,
    storage,
    namespace: `hcp-fe-e2e-${process.pid}`,
    simulator: { provisionDelayMs: 1_000, deleteDelayMs: 300 },
  });
  fixture = await startFrontendFixture({
    client: service,
    name: "frontend-e2e",
    scratchPath: scratch.path,
    catalogNamespace: stack.namespace,
    headers: { "x-ms-home-tenant-id": "72f988bf-86f1-41af-91ab-2d7cd011db47" },
    // Creates are checked against the customer's Azure, as ARO HCP's are; the fixture sets it up.
    arm: armEmulator,
  });
  arm = fixture.arm;
  const r = await fixture.putSubscription(sub, "Registered", "72f988bf-86f1-41af-91ab-2d7cd011db47");
  expect(r.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await fixture?.stop();
  await stack?.stop();
  await armEmulator?.stop();
  await storage?.stop();
  await service.delete(namespaceType, { name: ns }).catch(() => undefined);
  await scratch?.remove();
});

describe("ARM lifecycle through the frontend", () => {
  const cluster = clusterPath(sub, rg, "E2E-Cluster");
  const pool = nodePoolPath(sub, rg, "E2E-Cluster", "Workers");
  let clusterUid = "";

  it("creates a cluster and polls its operation to Succeeded; GET shows what ARM expects", async () => {
    const r = await arm.send("PUT", cluster, {
      body: clusterBody(sub, { prefix }),
      headers: { "x-ms-correlation-request-id": "e2e-corr", "x-ms-client-request-id": "e2e-client" },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect((r.body as Json).properties.provisioningState).toBe("Accepted");
    const op = await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250);
    expect(op, JSON.stringify(op)).toMatchObject({ status: "Succeeded" });

    const got = (await arm.send("GET", cluster)).body as Json;
    expect(got.properties).toMatchObject({
      provisioningState: "Succeeded",
      version: { id: "4.19", channelGroup: "stable" },
      api: { url: `https://api.${prefix}.hcp.example.com:443`, visibility: "Public" },
      console: { url: `https://console-openshift-console.apps.${prefix}.hcp.example.com` },
      dns: { baseDomainPrefix: prefix, baseDomain: "hcp.example.com" },
    });
    expect(got.properties.status.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "Available", status: "True" })]),
    );
    const cr = await service.get<HcpCluster>(HcpClusterResource, clusterCRName(rg, "E2E-Cluster"), ns);
    expect(cr.metadata.annotations).toMatchObject({
      "hcp.aro.dev/correlation-request-id": "e2e-corr",
      "hcp.aro.dev/client-request-id": "e2e-client",
    });
    expect(cr.status?.version).toBe("4.19.7");
    // The issuer: under the region's Front Door (the storage emulator's website), tenant then cluster ID.
    const tenant = cr.spec.platform.azure.tenantId;
    expect(got.properties.platform.issuerUrl).toBe(`${storage.webEndpoint}${tenant}/${cr.metadata.uid}`);
    expect(cr.status?.issuerURL).toBe(got.properties.platform.issuerUrl);
    clusterUid = cr.metadata.uid!;
  });

  it("creates a node pool, then PATCHes its replicas", async () => {
    const r = await arm.send("PUT", pool, { body: nodePoolBody({ replicas: 1 }) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect((await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe("Succeeded");
    const patched = await arm.send("PATCH", pool, { body: { properties: { replicas: 2 } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(202);
    expect((await arm.poll(patched.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe(
      "Succeeded",
    );
    const got = (await arm.send("GET", pool)).body as Json;
    expect(got.properties).toMatchObject({
      provisioningState: "Succeeded",
      replicas: 2,
      platform: { vmSize: "Standard_D8s_v3" },
    });
    const cr = await service.get<NodePool>(
      NodePoolResource,
      nodePoolCRName(rg, "E2E-Cluster", "Workers"),
      ns,
    );
    expect(cr.status).toMatchObject({ replicas: 2, readyReplicas: 2 });
  });

  it("fails an update with HyperShift's reason while the hosted cluster is degraded", async () => {
    const cr = await service.get<HcpCluster>(HcpClusterResource, clusterCRName(rg, "E2E-Cluster"), ns);
    const mgmt = clientFor(cr.status!.managementCluster!);
    const hc = { name: prefix, namespace: cr.status!.hostedClusterNamespace! };
    await mgmt.mergePatch(HostedClusterResource, hc, {
      metadata: { annotations: { [FAIL_ANNOTATION]: "EtcdQuorumLost: etcd lost quorum" } },
    });
    await eventually(
      "the cluster Failed in ARM",
      async () => ((await arm.send("GET", cluster)).body as Json).properties.provisioningState === "Failed",
      LIFECYCLE_MS,
    );
    const r = await arm.send("PATCH", cluster, { body: { properties: { nodeDrainTimeoutMinutes: 30 } } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const op = await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250);
    expect(op).toMatchObject({ status: "Failed", error: { code: "HostedClusterEtcdQuorumLost" } });
    expect((op["error"] as Json).message).toContain("etcd lost quorum");
    await mgmt.mergePatch(HostedClusterResource, hc, {
      metadata: { annotations: { [FAIL_ANNOTATION]: null } },
    });
    await eventually(
      "the cluster Succeeded again",
      async () =>
        ((await arm.send("GET", cluster)).body as Json).properties.provisioningState === "Succeeded",
      LIFECYCLE_MS,
    );
  });

  it("deletes the cluster with its node pool; the operation Succeeds and GET is 404", async () => {
    const r = await arm.send("DELETE", cluster);
    expect(r.status).toBe(202);
    expect(r.headers["location"]).toContain("hcpOperationResults");
    expect(((await arm.send("GET", cluster)).body as Json).properties.provisioningState).toBe("Deleting");
    expect((await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe("Succeeded");
    expect((await arm.send("GET", r.headers["location"]!)).status).toBe(204);
    expect((await arm.send("GET", cluster)).status).toBe(404);
    expect((await arm.send("GET", pool)).status).toBe(404);
    expect(
      await service.find(NodePoolResource, nodePoolCRName(rg, "E2E-Cluster", "Workers"), ns),
    ).toBeUndefined();
    // Its issuer's documents are gone (the controllers serve every cluster of the region: only its own count).
    expect(storage.blobs().filter((b) => b.name.includes(clusterUid))).toEqual([]);
  });
});
