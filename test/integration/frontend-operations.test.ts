/**
 * The ARM frontend's resource lifecycle and asynchronous operations against the real service
 * apiserver, with no controllers running: the test writes the CRs' status the way the cluster and
 * node pool controllers do, and watches the operations follow it. Also conflicts, DELETE
 * superseding an operation, LIST paging, and a frontend restart with an operation in flight.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { configMapType } from "../../operators/releases/catalog.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import { summaryConditions, writeSummaryStatus, type SummaryState } from "../support/summary-conditions.ts";
import type { ResourceType } from "../../operators/runtime/kube.ts";
import { clientFor, namespaceType } from "../support/fixtures.ts";
import { clusterBody, clusterPath, nodePoolBody, nodePoolPath, type ArmClient } from "../support/frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
const ns = subscriptionNamespace(sub);
const rg = "Rg-Ops";
let fixture: FrontendFixture;
let arm: ArmClient;
/** Operations of the first cluster, polled again once later ones replaced them. */
const earlier: { url: string; status: string }[] = [];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, "Z");

/** Writes status as a controller would: observedGeneration = the current generation. */
function setStatus(type: ResourceType, name: string, state: SummaryState, extra: Json = {}): Promise<void> {
  return writeSummaryStatus(service, type, { name, namespace: ns }, { state, extra: () => extra });
}

beforeAll(async () => {
  fixture = await startFrontendFixture({
    client: service,
    name: "frontend-ops",
    pageSize: 2,
    headers: {
      "x-ms-home-tenant-id": "72f988bf-86f1-41af-91ab-2d7cd011db47",
      "x-ms-client-object-id": "caller-1",
    },
  });
  arm = fixture.arm;
  const r = await fixture.putSubscription(sub, "Registered", "72f988bf-86f1-41af-91ab-2d7cd011db47");
  expect(r.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  for (const t of [HcpClusterResource, NodePoolResource]) {
    const list = await service.listAll(t, { namespace: ns });
    for (const o of list.items) await service.delete(t, { name: o.metadata.name!, namespace: ns });
  }
  await service.delete(namespaceType, { name: ns });
});

describe("cluster and node pool operations", () => {
  const cluster = clusterPath(sub, rg, "Ops-Cluster");
  const crName = clusterCRName(rg, "Ops-Cluster");

  it("creates a cluster: 201 Accepted, operation Accepted → Provisioning → Succeeded with the CR's status", async () => {
    const r = await arm.send("PUT", cluster, {
      body: clusterBody(sub, { prefix: "opsone" }),
      headers: {
        "x-ms-correlation-request-id": "corr-1",
        "x-ms-client-request-id": "client-1",
        "x-ms-arm-resource-system-data": JSON.stringify({
          createdBy: "someone@example.com",
          createdByType: "User",
        }),
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const body = r.body as Json;
    expect(body.properties.provisioningState).toBe("Accepted");
    expect(body.id).toBe(cluster);
    expect(body.name).toBe("Ops-Cluster");
    expect(body.type).toBe("Microsoft.RedHatOpenShift/hcpOpenShiftClusters");
    expect(body.systemData).toMatchObject({ createdBy: "someone@example.com" });
    expect(body.systemData.createdAt).toBeTypeOf("string");
    expect(r.headers["location"]).toBeUndefined();
    const status = r.headers["azure-asyncoperation"]!;
    expect(status).toMatch(
      new RegExp(
        `^https://127\\.0\\.0\\.1:\\d+/subscriptions/${sub}/providers/Microsoft\\.RedHatOpenShift/locations/eastus/hcpOperationStatuses/[0-9a-f-]{36}\\?api-version=2026-06-30-preview$`,
      ),
    );

    const cr = await service.get<HcpCluster>(HcpClusterResource, crName, ns);
    expect(cr.metadata.annotations).toMatchObject({
      "hcp.aro.dev/correlation-request-id": "corr-1",
      "hcp.aro.dev/client-request-id": "client-1",
      "hcp.aro.dev/arm-resource-id": cluster,
    });
    expect(cr.spec.platform.azure.subscriptionId).toBe(sub);
    expect(cr.spec.platform.azure.tenantId).toBe("72f988bf-86f1-41af-91ab-2d7cd011db47");

    expect(((await arm.send("GET", status)).body as Json).status).toBe("Accepted");
    await setStatus(HcpClusterResource, crName, "progressing");
    expect(((await arm.send("GET", status)).body as Json).status).toBe("Provisioning");
    const result = status.replace("hcpOperationStatuses", "hcpOperationResults");
    const pending = await arm.send("GET", result);
    expect(pending.status).toBe(202);
    expect(pending.headers["location"]).toContain("hcpOperationResults");
    await setStatus(HcpClusterResource, crName, "ready", {
      version: "4.19.7",
      apiURL: "https://api.opsone.hcp.example.com:443",
      consoleURL: "https://console-openshift-console.apps.opsone.hcp.example.com",
    });
    const done = await arm.send("GET", status);
    expect(done.body).toMatchObject({ status: "Succeeded", name: status.split("/").pop()!.split("?")[0] });
    expect((done.body as Json).endTime).toBeTypeOf("string");
    expect((await arm.send("GET", status)).body).toEqual(done.body);
    earlier.push({ url: status, status: "Succeeded" });
    const final = await arm.send("GET", result);
    expect(final.status).toBe(201);
    expect((final.body as Json).properties.provisioningState).toBe("Succeeded");

    const got = (await arm.send("GET", cluster)).body as Json;
    expect(got.properties).toMatchObject({
      provisioningState: "Succeeded",
      version: { id: "4.19", channelGroup: "stable" },
      dns: { baseDomainPrefix: "opsone", baseDomain: "hcp.example.com" },
      api: {
        url: "https://api.opsone.hcp.example.com:443",
        visibility: "Public",
        authorizedCidrs: ["10.0.0.0/8"],
      },
      console: { url: "https://console-openshift-console.apps.opsone.hcp.example.com" },
      network: { networkType: "OVNKubernetes", podCidr: "10.128.0.0/14", hostPrefix: 23 },
      ingress: { type: "Public" },
      clusterImageRegistry: { state: "Enabled" },
      cryptoRestrictions: "None",
    });
    expect((got.properties.status.conditions as Json[]).map((c) => String(c.type))).toContain("Available");
    expect(got.tags).toEqual({ team: "hcp" });
    expect(got.identity.type).toBe("UserAssigned");
  });

  it("the same cluster in the 2024-06-10-preview shape", async () => {
    const got = (await arm.send("GET", cluster, { apiVersion: "2024-06-10-preview" })).body as Json;
    expect(got.properties.ingress).toBeUndefined();
    expect(got.properties.status).toBeUndefined();
    expect(got.properties.platform.vnetIntegrationSubnetId).toBeUndefined();
    expect(got.properties.provisioningState).toBe("Succeeded");
  });

  it("refuses a node pool while its cluster provisions, then creates, scales and deletes it", async () => {
    const pool = nodePoolPath(sub, rg, "Ops-Cluster", "Workers");
    const poolCR = nodePoolCRName(rg, "Ops-Cluster", "Workers");
    await setStatus(HcpClusterResource, crName, "progressing");
    const busy = await arm.send("PUT", pool, { body: nodePoolBody() });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({
      error: { code: "Conflict", message: "Cannot create resource while parent resource is provisioning" },
    });
    await setStatus(HcpClusterResource, crName, "ready");

    const created = await arm.send("PUT", pool, { body: nodePoolBody({ replicas: 2 }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const again = await arm.send("PATCH", pool, { body: { properties: { replicas: 3 } } });
    expect(again.status).toBe(409);
    expect((again.body as Json).error.message).toBe('Cannot update resource while resource is "accepted"');
    await setStatus(NodePoolResource, poolCR, "ready");
    expect((await arm.poll(created.headers["azure-asyncoperation"]!)).status).toBe("Succeeded");

    const patched = await arm.send("PATCH", pool, { body: { properties: { replicas: 3 } } });
    expect(patched.status).toBe(202);
    expect(patched.headers["location"]).toContain("hcpOperationResults");
    expect((patched.body as Json).properties).toMatchObject({ replicas: 3, provisioningState: "Accepted" });
    expect((patched.body as Json).properties.labels).toEqual([{ key: "role", value: "worker" }]);
    expect((await service.get<NodePool>(NodePoolResource, poolCR, ns)).spec.replicas).toBe(3);
    await setStatus(NodePoolResource, poolCR, "ready");
    expect((await arm.poll(patched.headers["azure-asyncoperation"]!)).status).toBe("Succeeded");
    const result = await arm.send("GET", patched.headers["location"]!);
    expect(result.status).toBe(200);
    // The create, replaced by the PATCH, still answers as it ended.
    expect((await arm.send("GET", created.headers["azure-asyncoperation"]!)).body).toMatchObject({
      status: "Succeeded",
    });

    const list = await arm.send("GET", `${clusterPath(sub, rg, "Ops-Cluster")}/nodePools`);
    expect(((list.body as Json).value as Json[]).map((p) => String(p.name))).toEqual(["Workers"]);

    const del = await arm.send("DELETE", pool);
    expect(del.status).toBe(202);
    expect(del.headers["location"]).toBeDefined();
    expect((await arm.poll(del.headers["azure-asyncoperation"]!)).status).toBe("Succeeded");
    expect((await arm.send("GET", del.headers["location"]!)).status).toBe(204);
    expect((await arm.send("GET", pool)).status).toBe(404);
    expect((await arm.send("DELETE", pool)).status).toBe(204);
    // Earlier operations outlive the node pool.
    for (const url of [created.headers["azure-asyncoperation"]!, patched.headers["azure-asyncoperation"]!])
      expect(((await arm.send("GET", url)).body as Json).status).toBe("Succeeded");
  });

  it("carries a failed cluster's error into the operation", async () => {
    const r = await arm.send("PATCH", cluster, { body: { properties: { nodeDrainTimeoutMinutes: 45 } } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await setStatus(HcpClusterResource, crName, "degraded");
    const op = await arm.poll(r.headers["azure-asyncoperation"]!);
    expect(op).toMatchObject({
      status: "Failed",
      error: { code: "InvalidSubnet", message: "the subnet does not exist" },
    });
    const result = await arm.send("GET", r.headers["location"]!);
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ error: { code: "InternalServerError" } });
    earlier.push({ url: r.headers["azure-asyncoperation"]!, status: "Failed" });
  });

  it("DELETE supersedes a running update (Canceled), and a second DELETE is a conflict", async () => {
    await setStatus(HcpClusterResource, crName, "ready");
    // A PUT that leaves out create-only fields (DNS prefix, ingress) keeps them.
    const update = await arm.send("PUT", cluster, { body: clusterBody(sub, { version: "4.20" }) });
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    expect((update.body as Json).properties).toMatchObject({
      provisioningState: "Accepted",
      version: { id: "4.20" },
      dns: { baseDomainPrefix: "opsone" },
      ingress: { type: "Public" },
    });
    // The test's CR has no finalizer; add one so the cluster stays in Deleting.
    await service.mergePatch(
      HcpClusterResource,
      { name: crName, namespace: ns },
      { metadata: { finalizers: ["test/hold"] } },
    );
    const del = await arm.send("DELETE", cluster);
    expect(del.status).toBe(202);
    expect(await arm.poll(update.headers["azure-asyncoperation"]!)).toMatchObject({
      status: "Canceled",
      error: { code: "Canceled", message: "This operation was superseded by another" },
    });
    expect(((await arm.send("GET", del.headers["azure-asyncoperation"]!)).body as Json).status).toBe(
      "Deleting",
    );
    expect(((await arm.send("GET", cluster)).body as Json).properties.provisioningState).toBe("Deleting");
    const twice = await arm.send("DELETE", cluster);
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({
      error: { code: "Conflict", message: "Resource is already deleting" },
    });
    const put = await arm.send("PUT", cluster, { body: clusterBody(sub, { prefix: "opsone" }) });
    expect(put.status).toBe(409);
    const inflight = await arm.send("PUT", clusterPath(sub, rg, "inflight"), { body: clusterBody(sub) });
    expect(inflight.status).toBe(201);

    // A new frontend (a restart) answers the operation in flight.
    const arm2 = await fixture.restart();
    const statusUrl = new URL(del.headers["azure-asyncoperation"]!);
    const path = statusUrl.pathname + statusUrl.search;
    expect(((await arm2.send("GET", path)).body as Json).status).toBe("Deleting");
    const created = new URL(inflight.headers["azure-asyncoperation"]!);
    expect(((await arm2.send("GET", created.pathname + created.search)).body as Json).status).toBe(
      "Accepted",
    );
    await service.mergePatch(
      HcpClusterResource,
      { name: crName, namespace: ns },
      { metadata: { finalizers: null } },
    );
    expect((await arm2.poll(path)).status).toBe("Succeeded");
    expect((await arm2.send("GET", cluster)).status).toBe(404);
    // The cluster's earlier operations outlive it, as they ended.
    for (const op of earlier) {
      const u = new URL(op.url);
      expect(((await arm2.send("GET", u.pathname + u.search)).body as Json).status).toBe(op.status);
    }
    await arm.close();
    arm = arm2;
  });

  it("hides an operation from another tenant or client", async () => {
    const r = await arm.send("PUT", clusterPath(sub, rg, "hidden"), { body: clusterBody(sub) });
    expect(r.status).toBe(201);
    const url = new URL(r.headers["azure-asyncoperation"]!);
    const other = await arm.send("GET", url.pathname + url.search, {
      headers: { "x-ms-client-object-id": "someone-else" },
    });
    expect(other.status).toBe(404);
    expect(other.headers["x-ms-error-code"]).toBe("NotFound");
  });
});

describe("a node pool held on a version ahead of its cluster", () => {
  const heldCluster = clusterPath(sub, rg, "Held-Cluster");

  /** The node pool controller's status for a pool whose version waits for the control plane. */
  async function holdOnVersion(name: string): Promise<void> {
    const cr = await service.get<NodePool>(NodePoolResource, name, ns);
    const generation = cr.metadata.generation ?? 1;
    const valid: Condition = {
      type: "ValidVersion",
      status: "False",
      reason: "WaitingForControlPlane",
      message: "The nodes move to 4.20.2 once the control plane runs it (now 4.19.7)",
      lastTransitionTime: now(),
      observedGeneration: generation,
    };
    await service.mergePatch(
      NodePoolResource,
      { name, namespace: ns },
      {
        status: {
          observedGeneration: generation,
          conditions: [...summaryConditions("progressing", generation), valid],
        },
      },
      "status",
    );
  }

  beforeAll(async () => {
    // Asked for 4.20 while the control plane still runs 4.19.7: a pool on 4.20 may be created, and
    // waits for the control plane.
    const r = await arm.send("PUT", heldCluster, {
      body: clusterBody(sub, { prefix: "held", version: "4.20" }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    await setStatus(HcpClusterResource, clusterCRName(rg, "Held-Cluster"), "ready", { version: "4.19.7" });
  });

  it.each([
    ["PATCH", "Patched", { properties: { version: { id: "4.19" } } }, 202],
    ["PUT", "Put", nodePoolBody({ version: "4.19" }), 200],
  ] as const)("%s fixes the version while other changes wait (409)", async (method, name, fix, status) => {
    const pool = nodePoolPath(sub, rg, "Held-Cluster", name);
    const poolCR = nodePoolCRName(rg, "Held-Cluster", name);
    const created = await arm.send("PUT", pool, { body: nodePoolBody({ version: "4.20" }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await holdOnVersion(poolCR);
    expect(((await arm.send("GET", pool)).body as Json).properties.provisioningState).toBe("Provisioning");

    // Anything but a new version is an operation on a busy resource.
    const scale = await arm.send("PATCH", pool, { body: { properties: { replicas: 5 } } });
    expect(scale.status).toBe(409);
    expect((scale.body as Json).error.message).toBe(
      'Cannot update resource while resource is "provisioning"',
    );
    const same = await arm.send("PUT", pool, { body: nodePoolBody({ version: "4.20", replicas: 5 }) });
    expect(same.status).toBe(409);

    const fixed = await arm.send(method, pool, { body: fix });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(status);
    expect((fixed.body as Json).properties).toMatchObject({
      version: { id: "4.19" },
      provisioningState: "Accepted",
    });
    expect((await service.get<NodePool>(NodePoolResource, poolCR, ns)).spec.version?.id).toBe("4.19");
    // The create it replaced ends as superseded; the fix runs on.
    expect(((await arm.send("GET", created.headers["azure-asyncoperation"]!)).body as Json).status).toBe(
      "Canceled",
    );
    await setStatus(NodePoolResource, poolCR, "ready");
    expect((await arm.poll(fixed.headers["azure-asyncoperation"]!)).status).toBe("Succeeded");
  });
});

describe("LIST", () => {
  it("pages clusters by resource group and by subscription with nextLink", async () => {
    for (const name of ["list-a", "list-b", "list-c"]) {
      const r = await arm.send("PUT", clusterPath(sub, "rg-list", name), { body: clusterBody(sub) });
      expect(r.status).toBe(201);
    }
    const names: string[] = [];
    let next: string | undefined =
      `/subscriptions/${sub}/resourceGroups/RG-LIST/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters`;
    let pages = 0;
    while (next) {
      const page = await arm.send("GET", next);
      expect(page.status).toBe(200);
      const body = page.body as Json;
      names.push(...(body.value as Json[]).map((c) => c.name as string));
      next = body.nextLink;
      pages++;
    }
    expect(names.sort()).toEqual(["list-a", "list-b", "list-c"]);
    expect(pages).toBeGreaterThan(1);

    const all: string[] = [];
    next = `/subscriptions/${sub}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters`;
    while (next) {
      const body = (await arm.send("GET", next)).body as Json;
      all.push(...(body.value as Json[]).map((c) => c.name as string));
      next = body.nextLink;
    }
    expect(all).toEqual(expect.arrayContaining(["list-a", "list-b", "list-c", "hidden"]));
  });
});

void configMapType;
void namespaceType;
