/**
 * The ARM contract rows of the frontend, each against the real service apiserver: mutual TLS,
 * CloudError bodies and X-Ms-Error-Code for every refusal (api-version, media type, body size,
 * names, field validation — the frontend's own and the CRD's), the subscription lifecycle,
 * preflight, versions, and the credential actions this service does not offer. Hostile input and
 * slow clients: frontend-hostile.test.ts.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, NodePoolResource } from "../../operators/api/v1alpha1/index.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import {
  CATALOG_CONFIGMAP,
  CATALOG_KEY,
  ReleaseCatalog,
  configMapType,
} from "../../operators/releases/catalog.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, namespaceType } from "../support/fixtures.ts";
import {
  ArmClient,
  clusterBody,
  clusterPath,
  nodePoolBody,
  nodePoolPath,
  withCustomerKey,
  type TestFrontend,
} from "../support/frontend.ts";
import { settleCluster, startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
const rg = "rg-contract";
let fixture: FrontendFixture;
let fe: TestFrontend;
let arm: ArmClient;
const subscriptions: string[] = [sub];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

async function putSubscription(id: string, state: string): Promise<void> {
  const r = await fixture.putSubscription(id, state);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

/** Asserts a CloudError reply: status, code in body and header, and optionally more of the body. */
function expectError(
  r: { status: number; headers: Record<string, string>; body: unknown },
  status: number,
  code: string,
  more: Json = {},
): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers["x-ms-error-code"]).toBe(code);
  expect(r.headers["content-type"]).toContain("application/json");
  expect(r.body).toMatchObject({ error: { code, ...more } });
  expect((r.body as Json).error.message).toBeTypeOf("string");
}

beforeAll(async () => {
  fixture = await startFrontendFixture({ client: service, name: "frontend-contract" });
  ({ fe, arm } = fixture);
  await putSubscription(sub, "Registered");
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  for (const s of subscriptions) {
    const ns = subscriptionNamespace(s);
    for (const t of [HcpClusterResource, NodePoolResource]) {
      const list = await service.listAll(t, { namespace: ns }).catch(() => ({ items: [] }));
      for (const o of list.items) await service.delete(t, { name: o.metadata.name!, namespace: ns });
    }
    await service.delete(namespaceType, { name: ns });
  }
});

describe("authentication", () => {
  it("answers 401 without a client certificate or with one from another CA, before any handler", async () => {
    for (const identity of ["none", "stranger"] as const) {
      const c = await ArmClient.create(fe.url, fe.certs, { identity });
      for (const path of [clusterPath(sub, rg, "x"), "/healthz", `/subscriptions/${sub}`]) {
        const r = await c.send("PUT", path, { body: clusterBody(sub) });
        expectError(r, 401, "Unauthorized");
      }
      await c.close();
    }
    // Nothing was written.
    expect(
      await service.find(HcpClusterResource, clusterCRName(rg, "x"), subscriptionNamespace(sub)),
    ).toBeUndefined();
  });

  it("serves /healthz and /metrics to ARM", async () => {
    expect((await arm.send("GET", "/healthz", { apiVersion: null })).status).toBe(200);
    const m = await arm.send("GET", "/metrics", { apiVersion: null });
    expect(m.status).toBe(200);
    expect(String(m.body)).toContain("hcp_frontend_requests_total");
    expect(String(m.body)).toContain("hcp_frontend_request_duration_seconds");
  });
});

describe("request checks", () => {
  const path = clusterPath(sub, rg, "checks");

  it("sets X-Ms-Request-Id and echoes the client request ID when asked", async () => {
    const r = await arm.send("GET", path, {
      headers: {
        "x-ms-client-request-id": "abc",
        "x-ms-return-client-request-id": "true",
        "x-ms-correlation-request-id": "corr",
      },
    });
    expect(r.headers["x-ms-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers["x-ms-client-request-id"]).toBe("abc");
    expect(r.headers["x-ms-correlation-request-id"]).toBe("corr");
    expectError(r, 404, "ResourceNotFound", {
      message: `The resource 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters/checks' under resource group '${rg}' was not found.`,
    });
  });

  it("refuses a missing or unknown api-version", async () => {
    expectError(await arm.send("GET", path, { apiVersion: null }), 400, "InvalidParameter", {
      message: "The request is missing required parameter 'api-version'.",
    });
    expectError(await arm.send("GET", path, { apiVersion: "2099-01-01" }), 400, "InvalidResourceType", {
      message:
        "The resource type 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters' could not be found API version '2099-01-01'.",
    });
    // A version in ARO HCP's spec after those served here.
    expectError(
      await arm.send("GET", path, { apiVersion: "2026-10-01-preview" }),
      400,
      "InvalidResourceType",
    );
    expectError(
      await arm.send("PUT", `/subscriptions/${sub}`, { apiVersion: "2024-06-10-preview", body: {} }),
      400,
      "InvalidResourceType",
    );
  });

  it("refuses a content type other than JSON (415), an oversized body (413, naming the limit) and bad JSON (400)", async () => {
    expectError(
      await arm.send("PUT", path, { raw: "<xml/>", headers: { "content-type": "application/xml" } }),
      415,
      "UnsupportedMediaType",
      {
        message:
          "The content media type 'application/xml' is not supported. Only 'application/json' is supported.",
      },
    );
    const big = JSON.stringify({ ...clusterBody(sub), padding: "x".repeat(4 * 1024 * 1024) });
    expectError(await arm.send("PUT", path, { raw: big }), 413, "InvalidResource", {
      message: expect.stringMatching(
        /^The resource definition is invalid: .*limit of 1048576 bytes \(1 MiB\)/,
      ),
    });
    expectError(await arm.send("PUT", path, { raw: "{not json" }), 400, "InvalidRequestContent");
  });

  it("refuses a body whose name differs from the path", async () => {
    expectError(
      await arm.send("PUT", path, { body: { ...clusterBody(sub), name: "other" } }),
      400,
      "InvalidRequestContent",
      {
        target: "name",
      },
    );
  });

  it("refuses bad names in the path", async () => {
    expectError(await arm.send("GET", clusterPath("not-a-uuid", rg, "c")), 400, "InvalidSubscriptionID");
    expectError(
      await arm.send("GET", clusterPath(sub, rg, "9starts-with-digit")),
      400,
      "InvalidResourceName",
    );
    expectError(
      await arm.send("GET", nodePoolPath(sub, rg, "c", "a-name-longer-than-15")),
      400,
      "InvalidResourceName",
    );
    expectError(await arm.send("GET", clusterPath(sub, "bad.", "c")), 400, "InvalidResourceGroupName");
  });

  it("answers unknown paths and methods with CloudErrors", async () => {
    expectError(
      await arm.send("GET", `/subscriptions/${sub}/providers/Microsoft.Compute/virtualMachines`),
      404,
      "NotFound",
    );
    expectError(await arm.send("POST", path, { body: {} }), 405, "MethodNotAllowed");
  });
});

describe("validation", () => {
  it("names every field the frontend refuses (MultipleErrorsOccurred)", async () => {
    const body = clusterBody(sub);
    const p = body["properties"] as Json;
    delete p.platform.subnetId;
    p.api.visibility = "Sideways";
    p.nodeDrainTimeoutMinutes = "ten";
    const r = await arm.send("PUT", clusterPath(sub, rg, "invalid"), { body });
    expectError(r, 400, "MultipleErrorsOccurred", { message: "3 errors occurred" });
    const targets = ((r.body as Json).error.details as Json[]).map((d) => String(d.target)).sort();
    expect(targets).toEqual([
      "properties.api.visibility",
      "properties.nodeDrainTimeoutMinutes",
      "properties.platform.subnetId",
    ]);
    for (const d of (r.body as Json).error.details as Json[]) expect(d.code).toBe("InvalidRequestContent");
  });

  it("gives the CRD's refusals as 400s naming the ARM field", async () => {
    const body = clusterBody(sub);
    (body["properties"] as Json).network = { podCidr: "10.128.0.1/14" };
    const r = await arm.send("PUT", clusterPath(sub, rg, "celrule"), { body });
    expectError(r, 400, "InvalidRequestContent", { target: "properties.network.podCidr" });
    expect((r.body as Json).error.message).toContain("host bits set");

    const overlap = clusterBody(sub);
    (overlap["properties"] as Json).network = { serviceCidr: "10.128.0.0/16" };
    expectError(
      await arm.send("PUT", clusterPath(sub, rg, "celrule"), { body: overlap }),
      400,
      "InvalidRequestContent",
      {
        target: "properties.network.serviceCidr",
      },
    );
    // Nothing is left behind by a refused create: no CR, no operation.
    const ns = subscriptionNamespace(sub);
    expect(await service.find(HcpClusterResource, clusterCRName(rg, "celrule"), ns)).toBeUndefined();
    const ops = await service.list(configMapType, {
      namespace: ns,
      labelSelector: "hcp.aro.dev/arm-operation-target=" + clusterCRName(rg, "celrule"),
    });
    expect(ops.items).toEqual([]);
  });

  it("refuses a version the catalog does not offer", async () => {
    const r = await arm.send("PUT", clusterPath(sub, rg, "badversion"), {
      body: clusterBody(sub, { version: "4.12" }),
    });
    expectError(r, 400, "InvalidRequestContent", { target: "properties.version.id" });
    expect((r.body as Json).error.message).toContain("not offered");
  });

  it("refuses replicas beside autoScaling on a node pool, and changes to create-only fields", async () => {
    const c = clusterPath(sub, rg, "immutable");
    const created = await arm.send("PUT", c, { body: clusterBody(sub, { prefix: "immut" }) });
    expect(created.status).toBe(201);
    await settleCluster(service, { sub, rg, name: "immutable" });
    const changed = await arm.send("PATCH", c, {
      body: { properties: { dns: { baseDomainPrefix: "other" } } },
    });
    expectError(changed, 400, "InvalidRequestContent", { target: "properties.dns.baseDomainPrefix" });
    const pool = nodePoolBody();
    (pool["properties"] as Json).autoScaling = { min: 3, max: 1 };
    const r = await arm.send("PUT", nodePoolPath(sub, rg, "immutable", "auto"), { body: pool });
    expectError(r, 400, "MultipleErrorsOccurred");
    expect(((r.body as Json).error.details as Json[]).map((d) => String(d.target)).sort()).toEqual([
      "properties.autoScaling.max",
      "properties.replicas",
    ]);
    // The cluster asks for 4.19: a new pool on 4.20 could never roll out.
    expectError(
      await arm.send("PUT", nodePoolPath(sub, rg, "immutable", "ahead"), {
        body: nodePoolBody({ version: "4.20" }),
      }),
      400,
      "InvalidRequestContent",
      {
        target: "properties.version.id",
        message:
          "Node pool version 4.20 is newer than its cluster's version 4.19; a node pool cannot run ahead of its control plane",
      },
    );
    expectError(
      await arm.send("PATCH", nodePoolPath(sub, rg, "immutable", "missing"), { body: {} }),
      404,
      "ResourceNotFound",
    );
    expectError(
      await arm.send("PUT", nodePoolPath(sub, rg, "no-cluster", "np"), { body: nodePoolBody() }),
      404,
      "ResourceNotFound",
    );
  });

  it("accepts 2024-06-10-preview bodies: no version (the catalog's newest stable), kms.activeKey.vaultName", async () => {
    const body = withCustomerKey(clusterBody(sub), sub, {
      activeKey: { name: "key", vaultName: "vault", version: "1" },
    });
    const p = body["properties"] as Json;
    delete p.version;
    delete p.platform.vnetIntegrationSubnetId;
    delete p.etcd.dataEncryption.customerManaged.encryptionType;
    const path = clusterPath(sub, rg, "old-version");
    const r = await arm.send("PUT", path, { body, apiVersion: "2024-06-10-preview" });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect((r.body as Json).properties.version.id).toBe("4.20");
    expect((r.body as Json).properties.etcd.dataEncryption.customerManaged.kms).toEqual({
      activeKey: { name: "key", vaultName: "vault", version: "1" },
    });
    const hub = (await arm.send("GET", path)).body as Json;
    expect(hub.properties.etcd.dataEncryption.customerManaged.kms).toMatchObject({
      vaultName: "vault",
      activeKey: { name: "key", version: "1" },
    });
  });
});

describe("credentials, versions and preflight", () => {
  it("refuses the credential actions on a cluster no controller has settled (409), and on none (404)", async () => {
    const c = clusterPath(sub, rg, "unsettled");
    expect((await arm.send("PUT", c, { body: clusterBody(sub, { prefix: "unsettled" }) })).status).toBe(201);
    for (const action of ["requestAdminCredential", "revokeCredentials"]) {
      const r = await arm.send("POST", `${c}/${action}`);
      expectError(r, 409, "Conflict");
      expect((r.body as Json).error.message).toContain("Cannot update resource while resource is");
      expectError(
        await arm.send("POST", `${clusterPath(sub, rg, "nowhere")}/${action}`),
        404,
        "ResourceNotFound",
      );
    }
  });

  it("lists hcpOpenShiftVersions from the catalog", async () => {
    const base = `/subscriptions/${sub}/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOpenShiftVersions`;
    const list = (await arm.send("GET", base)).body as Json;
    expect((list.value as Json[]).map((v) => String(v.name))).toEqual([
      "4.20.2",
      "4.19.10",
      "4.19.7",
      "4.18.22",
    ]);
    const one = await arm.send("GET", `${base}/4.19.7`);
    expect(one.body).toMatchObject({
      id: `${base}/4.19.7`,
      name: "4.19.7",
      type: "Microsoft.RedHatOpenShift/locations/hcpOpenShiftVersions",
      properties: { channelGroup: "stable", enabled: true },
    });
    expectError(await arm.send("GET", `${base}/4.1.0`), 404, "ResourceNotFound");
  });

  it("shows each version's endOfLifeTimestamp from the catalog", async () => {
    const ns = fixture.catalogNamespace;
    const cm = await service.get<KubeObject & { data: Record<string, string> }>(
      configMapType,
      CATALOG_CONFIGMAP,
      ns,
    );
    const base = `/subscriptions/${sub}/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOpenShiftVersions`;
    // As the harness installs the shipped catalog: its end of life moved a year or more from today.
    const installed = ReleaseCatalog.parse(cm.data[CATALOG_KEY]).releases.find((r) => r.version === "4.19.7");
    expect(Date.parse(installed?.endOfLifeTimestamp ?? "")).toBeGreaterThan(Date.now());
    expect(((await arm.send("GET", `${base}/4.19.7`)).body as Json).properties).toMatchObject({
      endOfLifeTimestamp: installed?.endOfLifeTimestamp,
    });
    const yaml = (cm.data[CATALOG_KEY] ?? "").replace(
      /(- version: 4\.19\.7\n(?:\s+\w+: .*\n)*?\s+endOfLifeTimestamp: )\S+/,
      "$12027-02-17T00:00:00Z",
    );
    expect(yaml).toContain("endOfLifeTimestamp: 2027-02-17T00:00:00Z");
    await service.mergePatch(
      configMapType,
      { name: CATALOG_CONFIGMAP, namespace: ns },
      { data: { [CATALOG_KEY]: yaml } },
    );
    // The frontend reads the catalog through a watch: wait until it has seen the change.
    await expect
      .poll(
        async (): Promise<unknown> => ((await arm.send("GET", `${base}/4.19.7`)).body as Json).properties,
        {
          timeout: 10_000,
        },
      )
      .toEqual({ channelGroup: "stable", enabled: true, endOfLifeTimestamp: "2027-02-17T00:00:00Z" });
    const list = ((await arm.send("GET", base)).body as Json).value as Json[];
    expect(list.find((v) => v.name === "4.19.7")?.properties.endOfLifeTimestamp).toBe("2027-02-17T00:00:00Z");
  });

  it("lists the provider's operations tenant-wide, the same for any api-version", async () => {
    const path = "/providers/Microsoft.RedHatOpenShift/operations";
    const r = await arm.send("GET", path, { apiVersion: "2026-09-01-preview" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const value = (r.body as Json).value as Json[];
    expect(value.map((o) => String(o.name))).toEqual(
      expect.arrayContaining([
        "Microsoft.RedHatOpenShift/register/action",
        "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/read",
        "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/write",
        "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/delete",
        "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools/write",
        "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths/delete",
        "Microsoft.RedHatOpenShift/locations/hcpOpenShiftVersions/read",
        "Microsoft.RedHatOpenShift/locations/hcpOperatorIdentityRoleSets/read",
        "Microsoft.RedHatOpenShift/locations/hcpOperationStatuses/read",
        "Microsoft.RedHatOpenShift/operations/read",
      ]),
    );
    for (const o of value) {
      expect(o.isDataAction).toBe(false);
      for (const key of ["provider", "resource", "operation", "description"])
        expect(o.display[key], `${String(o.name)} display.${key}`).toMatch(/\S/);
    }
    // ARO Classic's versions share the namespace: the list does not depend on the version.
    expect((await arm.send("GET", path, { apiVersion: "2020-04-30" })).body).toEqual(r.body);
    expectError(await arm.send("DELETE", path), 405, "MethodNotAllowed");
  });

  it("lists the operator identities and roles of each OpenShift version the catalog offers", async () => {
    const base = `/subscriptions/${sub}/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperatorIdentityRoleSets`;
    const list = await arm.send("GET", base, { apiVersion: "2025-12-23-preview" });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    // 4.18 is offered too, but no operator runs as the customer's identities before 4.19.
    expect(((list.body as Json).value as Json[]).map((s) => String(s.name))).toEqual(["4.20", "4.19"]);
    const one = (await arm.send("GET", `${base}/4.19`)).body as Json;
    expect(one).toMatchObject({
      id: `${base}/4.19`,
      name: "4.19",
      type: "Microsoft.RedHatOpenShift/locations/hcpOperatorIdentityRoleSets",
    });
    const cp = one.properties.controlPlaneOperators as Json[];
    const always = cp.filter((o) => o.required === "Always").map((o) => String(o.name));
    // Every identity the cluster bodies of these tests give is one the version always needs.
    const given = (clusterBody(sub)["properties"] as Json).platform.operatorsAuthentication
      .userAssignedIdentities;
    expect(always.sort()).toEqual(Object.keys(given.controlPlaneOperators as Json).sort());
    expect(cp.find((o) => o.name === "kms")).toMatchObject({
      required: "OnEnablement",
      roleDefinitions: [{ name: "Key Vault Crypto User" }],
    });
    const dp = one.properties.dataPlaneOperators as Json[];
    expect(dp.map((o) => String(o.name)).sort()).toEqual(
      Object.keys(given.dataPlaneOperators as Json).sort(),
    );
    for (const o of [...cp, ...dp])
      expect(o.roleDefinitions[0].resourceId).toMatch(
        /^\/providers\/Microsoft\.Authorization\/roleDefinitions\/[0-9a-f-]{36}$/,
      );
    expectError(await arm.send("GET", `${base}/4.18`), 404, "ResourceNotFound");
    expectError(await arm.send("GET", base, { apiVersion: "2099-01-01" }), 400, "InvalidResourceType", {
      message:
        "The resource type 'Microsoft.RedHatOpenShift/locations/hcpOperatorIdentityRoleSets' could not be found API version '2099-01-01'.",
    });
  });

  it("answers preflight with 200: Succeeded, or Failed with the reasons per resource", async () => {
    const url = `/subscriptions/${sub}/resourcegroups/${rg}/providers/Microsoft.RedHatOpenShift/deployments/dep/preflight`;
    const ok = {
      name: "pf",
      type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
      apiVersion: "2026-06-30-preview",
      ...clusterBody(sub),
    };
    const skipped = [
      {
        name: "[parameters('n')]",
        type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
        apiVersion: "2026-06-30-preview",
      },
      { name: "vm", type: "Microsoft.Compute/virtualMachines", apiVersion: "2024-01-01" },
      { name: "pf2", type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters", apiVersion: "1999-01-01" },
    ];
    const good = await arm.send("POST", url, { body: { resources: [ok, ...skipped] }, apiVersion: null });
    expect(good.status).toBe(200);
    expect(good.body).toEqual({ status: "Succeeded" });

    const badCidr = structuredClone(ok) as Json;
    badCidr.properties.network = { podCidr: "10.128.0.1/14" };
    const badPool = {
      name: "pf/np",
      type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools",
      apiVersion: "2026-06-30-preview",
      location: "eastus",
      properties: { platform: {} },
    };
    // An operator identity not assigned to the cluster: ARO HCP's identity rules apply here too.
    const unassigned = structuredClone(ok) as Json;
    unassigned.name = "pf3";
    const ingress = unassigned.properties.platform.operatorsAuthentication.userAssignedIdentities
      .controlPlaneOperators as Json;
    const given = String(ingress.ingress);
    ingress.ingress = given.replace(/[^/]+$/, "other");
    const bad = await arm.send("POST", url, {
      body: { resources: [badCidr, badPool, unassigned] },
      apiVersion: null,
    });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({
      status: "Failed",
      error: { code: "MultipleErrorsOccurred", message: "Preflight validation failed on multiple resources" },
    });
    const details = (bad.body as Json).error.details as Json[];
    expect(details[0]!).toMatchObject({
      message: "Content validation failed for 'pf'",
      target: clusterPath(sub, rg, "pf"),
    });
    expect(details[0]!.details[0].target).toBe("properties.network.podCidr");
    expect(details[1]!.details[0].target).toBe("properties.platform.vmSize");
    expect((details[2]!.details as Json[]).map((d) => String(d.target))).toEqual([
      "properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators.ingress",
      `identity.userAssignedIdentities.${given}`,
    ]);

    // More resources than an ARM template may hold: refused before any dry run.
    const many = Array.from({ length: 801 }, (_, i) => ({
      name: `vm${i}`,
      type: "Microsoft.Compute/virtualMachines",
      apiVersion: "2024-01-01",
    }));
    expectError(
      await arm.send("POST", url, { body: { resources: many }, apiVersion: null }),
      400,
      "InvalidRequestContent",
      {
        target: "resources",
        message: "A preflight lists at most 800 resources (ARM's template limit), not 801",
      },
    );
  });
});

describe("subscription lifecycle", () => {
  it("validates the subscription document and returns what it stored", async () => {
    const id = randomUUID();
    subscriptions.push(id);
    expectError(
      await arm.send("PUT", `/subscriptions/${id}`, { apiVersion: "2.0", body: { state: "Happy" } }),
      400,
      "MultipleErrorsOccurred",
    );
    expectError(
      await arm.send("GET", `/subscriptions/${id}`, { apiVersion: "2.0" }),
      404,
      "SubscriptionNotFound",
    );
    expectError(await arm.send("GET", clusterPath(id, rg, "c")), 400, "InvalidSubscriptionState", {
      message: `Request is not allowed in unregistered subscription '${id}'.`,
    });
    await putSubscription(id, "Registered");
    const got = await arm.send("GET", `/subscriptions/${id}`, { apiVersion: "2.0" });
    expect(got.body).toMatchObject({ state: "Registered" });
  });

  it("Warned and Suspended allow only GET and DELETE; Deleted deletes everything; Unregistered refuses", async () => {
    const id = randomUUID();
    subscriptions.push(id);
    await putSubscription(id, "Registered");
    const c = clusterPath(id, rg, "doomed");
    expect((await arm.send("PUT", c, { body: clusterBody(id) })).status).toBe(201);
    for (const state of ["Warned", "Suspended"]) {
      await putSubscription(id, state);
      expectError(await arm.send("PUT", c, { body: clusterBody(id) }), 409, "InvalidSubscriptionState", {
        message: `Request is not allowed in subscription in state '${state}'.`,
      });
      expectError(await arm.send("PATCH", c, { body: {} }), 409, "InvalidSubscriptionState");
      expect((await arm.send("GET", c)).status).toBe(200);
    }
    await putSubscription(id, "Deleted");
    expect(
      await service.find(HcpClusterResource, clusterCRName(rg, "doomed"), subscriptionNamespace(id)),
    ).toBeUndefined();
    expectError(await arm.send("GET", c), 400, "InvalidSubscriptionState");
    await putSubscription(id, "Unregistered");
    expectError(await arm.send("GET", c), 400, "InvalidSubscriptionState", {
      message: `Request is not allowed in unregistered subscription '${id}'.`,
    });
  });
});

describe("apiserver calls of a cluster PUT", () => {
  /** The service client, counting the frontend's reads and writes of HcpClusters by verb. */
  function counting(): { client: typeof service; calls: string[] } {
    const calls: string[] = [];
    const client = new Proxy(service, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const [type] = args as [{ plural?: string } | undefined];
          if (type?.plural === HcpClusterResource.plural) calls.push(String(prop));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { client, calls };
  }

  it("creates without reading it first (only the DNS prefix is looked up); a PUT of an existing cluster reads it", async () => {
    const { client, calls } = counting();
    const own = await startFrontendFixture({
      client,
      name: "frontend-put-calls",
      catalogNamespace: fixture.catalogNamespace,
    });
    try {
      // What the frontend reads once when it starts (adopt-settings.ts) is not the PUT's.
      await own.fe.frontend.adopted;
      calls.length = 0;
      const c = clusterPath(sub, rg, "counted");
      const created = await own.arm.send("PUT", c, { body: clusterBody(sub) });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // The list is the look-up of the new cluster's DNS prefix across the region.
      expect(calls).toEqual(["list", "create"]);

      calls.length = 0;
      const again = await own.arm.send("PUT", c, { body: clusterBody(sub) });
      // The create met the stored cluster, so the PUT read it, and answers with it in view: its
      // create is still under way (nothing reconciles here), and ARM allows one at a time.
      expect(again.status, JSON.stringify(again.body)).toBe(409);
      expect(calls).toEqual(["list", "create", "find"]);
    } finally {
      await own.stop();
    }
  });
});
