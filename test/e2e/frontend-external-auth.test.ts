/**
 * An external auth's life through the ARM frontend, with every controller, the maestro agents and
 * the HyperShift simulator running: a PUT while the cluster provisions is a 409; once it is
 * Succeeded, a PUT shaped like ARO HCP's examples goes to Succeeded and the HostedCluster on the
 * management cluster carries the OIDC provider; GET and LIST show it in each api-version's shape;
 * a second external auth and bad input are refused naming the field; PATCH changes the provider;
 * DELETE takes it off the HostedCluster.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  ExternalAuthResource,
  HcpClusterResource,
  type HcpCluster,
} from "../../operators/api/v1alpha1/index.ts";
import {
  clusterCRName,
  externalAuthCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { clientFor, namespaceType } from "../support/fixtures.ts";
import {
  clusterBody,
  clusterPath,
  externalAuthBody,
  externalAuthPath,
  type ArmClient,
} from "../support/frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";
import { ISSUER_CA_PEM } from "../support/oidc.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const LIFECYCLE_MS = 90_000;
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const APP = "0c1f4b7e-3d2a-4f5b-8e9c-6a7b8c9d0e1f";
const service = clientFor("service");
const sub = randomUUID();
const ns = subscriptionNamespace(sub);
const rg = "E2E-Auth";
const prefix = `fa${process.pid % 100000}`;

let running: TestStack | undefined;
let fixture: FrontendFixture;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

beforeAll(async () => {
  running = await startTestStack("fe-extauth", {
    simulator: { provisionDelayMs: 1_000, deleteDelayMs: 200 },
  });
  fixture = await startFrontendFixture({
    client: service,
    name: "frontend-extauth",
    catalogNamespace: running.stack.namespace,
    headers: { "x-ms-home-tenant-id": TENANT },
    arm: running.arm,
  });
  arm = fixture.arm;
  expect((await fixture.putSubscription(sub, "Registered", TENANT)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await fixture?.stop();
  await running?.stop();
  await service.delete(namespaceType, { name: ns }).catch(() => undefined);
});

describe("externalAuths through the frontend", () => {
  const cluster = clusterPath(sub, rg, "Auth-Cluster");
  const entra = externalAuthPath(sub, rg, "Auth-Cluster", "entra");
  let mgmt: KubeClient;
  let hc: { name: string; namespace: string };
  const oidcProviders = async () =>
    (await mgmt.find<HostedCluster>(HostedClusterResource, hc.name, hc.namespace))?.spec.configuration
      ?.authentication?.oidcProviders;

  it("refuses an external auth while its cluster provisions (409), then creates it once the cluster is Succeeded", async () => {
    const created = await arm.send("PUT", cluster, { body: clusterBody(sub, { prefix }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const early = await arm.send("PUT", entra, { body: externalAuthBody({ tenant: TENANT, app: APP }) });
    expect(early.status).toBe(409);
    expect((early.body as Json).error).toMatchObject({
      code: "Conflict",
      message: "Cannot create resource while parent resource is provisioning",
    });
    expect((await arm.poll(created.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe(
      "Succeeded",
    );

    const r = await arm.send("PUT", entra, {
      body: externalAuthBody({ tenant: TENANT, app: APP, ca: ISSUER_CA_PEM }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect((r.body as Json).properties.provisioningState).toBe("Accepted");
    expect((r.body as Json).location).toBeUndefined();
    const op = await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250);
    expect(op, JSON.stringify(op)).toMatchObject({ status: "Succeeded" });

    const cr = await service.get<HcpCluster>(HcpClusterResource, clusterCRName(rg, "Auth-Cluster"), ns);
    mgmt = clientFor(cr.status!.managementCluster!);
    hc = { name: prefix, namespace: cr.status!.hostedClusterNamespace! };
    const providerName = externalAuthCRName(rg, "Auth-Cluster", "entra");
    expect(await oidcProviders()).toEqual([
      {
        name: providerName,
        issuer: {
          issuerURL: `https://login.microsoftonline.com/${TENANT}/v2.0`,
          audiences: [APP],
          issuerCertificateAuthority: { name: `${providerName}-issuer-ca` },
        },
        oidcClients: [
          {
            componentName: "console",
            componentNamespace: "openshift-console",
            clientID: APP,
            clientSecret: { name: `${providerName}-console-client-secret` },
          },
          {
            componentName: "cli",
            componentNamespace: "openshift-console",
            clientID: APP,
            extraScopes: ["offline_access"],
          },
        ],
        claimMappings: {
          username: { claim: "email", prefixPolicy: "NoPrefix" },
          groups: { claim: "groups" },
        },
        claimValidationRules: [
          { type: "RequiredClaim", requiredClaim: { claim: "tid", requiredValue: TENANT } },
        ],
      },
    ]);
  });

  it("GETs and LISTs it in each api-version's shape", async () => {
    const got = (await arm.send("GET", entra)).body as Json;
    expect(got).toMatchObject({
      id: entra,
      name: "entra",
      type: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths",
      properties: {
        provisioningState: "Succeeded",
        issuer: {
          url: `https://login.microsoftonline.com/${TENANT}/v2.0`,
          audiences: [APP],
          ca: ISSUER_CA_PEM,
        },
        claim: { mappings: { username: { claim: "email", prefixPolicy: "NoPrefix" } } },
      },
    });
    expect(got.properties.clients[1]).toEqual({
      component: { name: "cli", authClientNamespace: "openshift-console" },
      clientId: APP,
      extraScopes: ["offline_access"],
      type: "Public",
    });
    expect(got.properties.status.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "Available", status: "True" })]),
    );
    expect(got.properties.condition).toBeUndefined();

    // 2024-06-10-preview and 2025-12-23-preview knew one `condition`, not status.conditions.
    const old = (await arm.send("GET", entra, { apiVersion: "2024-06-10-preview" })).body as Json;
    expect(old.properties.condition).toMatchObject({ type: "Available", status: "True" });
    expect(old.properties.status).toBeUndefined();
    expect(old.properties.issuer).toEqual(got.properties.issuer);

    const list = (await arm.send("GET", `${cluster}/externalAuths`)).body as Json;
    expect((list.value as Json[]).map((v) => v["id"] as string)).toEqual([entra]);
    expect(list.nextLink).toBeUndefined();
  });

  it("refuses a second external auth on the cluster, naming it", async () => {
    const r = await arm.send("PUT", externalAuthPath(sub, rg, "Auth-Cluster", "second"), {
      body: externalAuthBody({ tenant: TENANT, app: APP }),
    });
    expect(r.status).toBe(400);
    expect((r.body as Json).error).toMatchObject({
      code: "InvalidRequestContent",
      message:
        "Forbidden: There are other external auths on the cluster. Only one external auth is allowed per cluster.",
      target: "name",
    });
  });

  it("refuses bad input with a CloudError naming each field", async () => {
    const body = externalAuthBody({ tenant: TENANT, app: APP }) as Json;
    body.properties.issuer.url = "http://login.example.com/v2.0";
    body.properties.issuer.ca = "invalid";
    body.properties.clients[0].clientId = "not-an-audience";
    body.properties.clients[1].type = "NotEnum";
    body.properties.clients[0].type = "Public";
    body.properties.claim.mappings.username = { claim: "email", prefix: "x:" };
    // The schema's errors come first, alone: an enum.
    const r = await arm.send("PATCH", entra, { body: { properties: body.properties } });
    expect(r.status).toBe(400);
    expect((r.body as Json).error).toMatchObject({
      code: "InvalidRequestContent",
      target: "properties.clients[1].type",
    });
    // Then ARO HCP's checks beyond the schema, all at once.
    body.properties.clients[1].type = "Public";
    const r2 = await arm.send("PATCH", entra, { body: { properties: body.properties } });
    expect(r2.status).toBe(400);
    const details = ((r2.body as Json).error as Json).details as Json[];
    expect(details.map((d) => d["target"] as string).sort()).toEqual([
      "properties.claim.mappings.username.prefix",
      "properties.clients[0].clientId",
      "properties.clients[0].type",
      "properties.issuer.ca",
      "properties.issuer.url",
    ]);
    expect(details.find((d) => d.target === "properties.issuer.url")?.message).toContain("must be https URL");
    expect(details.find((d) => d.target === "properties.clients[0].type")?.message).toContain(
      "must be Confidential when component name is console",
    );
    const none = await arm.send("PUT", externalAuthPath(sub, rg, "Auth-Cluster", "bad_name"), {
      body: externalAuthBody({ tenant: TENANT, app: APP }),
    });
    expect(none.status).toBe(400);
    expect((none.body as Json).error).toMatchObject({ code: "InvalidResourceName", target: "name" });
  });

  it("PATCHes the provider: the HostedCluster carries the change", async () => {
    const r = await arm.send("PATCH", entra, {
      body: { properties: { issuer: { audiences: [APP, "api://auth-cluster"] } } },
      apiVersion: "2025-12-23-preview",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect((await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe("Succeeded");
    expect((await oidcProviders())?.[0]?.issuer.audiences).toEqual([APP, "api://auth-cluster"]);
    const got = (await arm.send("GET", entra)).body as Json;
    // A PATCH merges: the CA and the clients stay.
    expect(got.properties.issuer).toEqual({
      url: `https://login.microsoftonline.com/${TENANT}/v2.0`,
      audiences: [APP, "api://auth-cluster"],
      ca: ISSUER_CA_PEM,
    });
    expect(got.properties.clients).toHaveLength(2);
  });

  it("DELETEs it: the operation Succeeds once the HostedCluster no longer carries the provider", async () => {
    const r = await arm.send("DELETE", entra);
    expect(r.status).toBe(202);
    expect((await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe("Succeeded");
    expect((await arm.send("GET", entra)).status).toBe(404);
    expect(await oidcProviders()).toBeUndefined();
    expect(
      await service.find(ExternalAuthResource, externalAuthCRName(rg, "Auth-Cluster", "entra"), ns),
    ).toBeUndefined();
    expect(((await arm.send("GET", `${cluster}/externalAuths`)).body as Json).value).toEqual([]);
  });
});
