/**
 * Admin (break-glass) credentials through the ARM frontend, with every controller, the maestro
 * agents and the HyperShift simulator running: requestAdminCredential answers 202 and its
 * operation ends with a kubeconfig whose client certificate chains to the hosted control plane's
 * signer; in 2026-09-01-preview the client's own CSR is signed and no key travels; bad input is a
 * 400 naming the field; the actions are refused while the cluster is provisioning; revokeCredentials
 * revokes every credential issued before it, and a new request afterwards works.
 */
import { createPublicKey, generateKeyPairSync, randomUUID, X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArmEmulator, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { startStack, type Stack } from "../../hack/harness/stack.ts";
import { startStorageEmulator, type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import { SIGNER_SECRET } from "../../hack/hypershift-simulator/signer.ts";
import { ConfigMapResource, SecretResource } from "../../operators/api/core.ts";
import { ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  BreakglassCredentialResource,
  HcpClusterResource,
  type BreakglassCredential,
  type HcpCluster,
} from "../../operators/api/v1alpha1/index.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import { certificateRequest } from "../../operators/hcp/pkcs10.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { createLogger } from "../../operators/runtime/logger.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "../support/fixtures.ts";
import { clusterBody, clusterPath, type ArmClient } from "../support/frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";
import { brokerCredentials, clusterInfo, region } from "../support/region.ts";

const LIFECYCLE_MS = 90_000;
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const service = clientFor("service");
const sub = randomUUID();
const ns = subscriptionNamespace(sub);
const rg = "E2E-Breakglass";
const prefix = `fb${process.pid % 100000}`;
const cluster = clusterPath(sub, rg, "BG-Cluster");

let scratch: { path: string; remove(): Promise<void> };
let armEmulator: ArmEmulator;
let stack: Stack;
let storage: StorageEmulator;
let fixture: FrontendFixture;
let arm: ArmClient;

interface Kubeconfig {
  clusters: Array<{ cluster: { server: string; "certificate-authority-data"?: string } }>;
  users: Array<{ user: Record<string, string> }>;
}

const unb64 = (s: string | undefined) => Buffer.from(s ?? "", "base64").toString("utf8");

/** The hosted control plane's signer CA, as the simulator keeps it on the management cluster. */
async function signerCA(): Promise<X509Certificate> {
  const cr = await service.get<HcpCluster>(HcpClusterResource, clusterCRName(rg, "BG-Cluster"), ns);
  const mgmt = clientFor(cr.status!.managementCluster!);
  const controlPlane = `${cr.status!.hostedClusterNamespace!}-${prefix}`;
  const secret = await mgmt.get<KubeObject & { data?: Record<string, string> }>(
    SecretResource,
    SIGNER_SECRET,
    controlPlane,
  );
  return new X509Certificate(unb64(secret.data?.["tls.crt"]));
}

/** The CA the kubeconfig should trust: the control plane's root-ca, as the simulator publishes it. */
async function serverCA(): Promise<string> {
  const cr = await service.get<HcpCluster>(HcpClusterResource, clusterCRName(rg, "BG-Cluster"), ns);
  const mgmt = clientFor(cr.status!.managementCluster!);
  const controlPlane = `${cr.status!.hostedClusterNamespace!}-${prefix}`;
  const cm = await mgmt.get<KubeObject & { data?: Record<string, string> }>(
    ConfigMapResource,
    ROOT_CA_CONFIGMAP,
    controlPlane,
  );
  return cm.data?.[ROOT_CA_KEY] ?? "";
}

/** POSTs an action, checks the 202 and its headers, polls it to the end; returns the result response. */
async function act(action: string, opts: { apiVersion?: string; body?: unknown } = {}) {
  const r = await arm.send("POST", `${cluster}/${action}`, opts);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  expect(r.headers["location"]).toContain("/hcpOperationResults/");
  const op = await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 100);
  expect(op, JSON.stringify(op)).toMatchObject({ status: "Succeeded" });
  const id = String(op["name"]);
  return { result: await arm.send("GET", r.headers["location"]!, { apiVersion: opts.apiVersion }), id };
}

beforeAll(async () => {
  scratch = await scratchDir("frontend-breakglass");
  armEmulator = await startArmEmulator({ workDir: scratch.path, asyncDelayMs: 100 });
  storage = await startStorageEmulator({ workDir: scratch.path, verifyBearer: armEmulator.verifyBearer });
  stack = await startStack({
    storage,
    serviceKubeconfig: clusterInfo("service").kubeconfigPath,
    management: ["mgmt-1", "mgmt-2"].map((name) => ({
      name,
      kubeconfigPath: clusterInfo(name).kubeconfigPath,
    })),
    broker: { url: region().broker.url, credentials: brokerCredentials },
    arm: armEmulator,
    namespace: `hcp-fb-e2e-${process.pid}`,
    simulator: { provisionDelayMs: 1_000, deleteDelayMs: 300 },
    ...(process.env["BG_DEBUG"] ? { log: createLogger({ component: "test" }) } : {}),
  });
  fixture = await startFrontendFixture({
    client: service,
    name: "frontend-breakglass",
    scratchPath: scratch.path,
    catalogNamespace: stack.namespace,
    headers: { "x-ms-home-tenant-id": TENANT, "x-ms-client-principal-name": "admin@contoso.com" },
  });
  arm = fixture.arm;
  expect((await fixture.putSubscription(sub, "Registered", TENANT)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await fixture?.stop();
  await stack?.stop();
  await armEmulator?.stop();
  await storage?.stop();
  await service.delete(namespaceType, { name: ns }).catch(() => undefined);
  await scratch?.remove();
});

describe("admin credentials through ARM", () => {
  it("refuses the actions while the cluster is provisioning, then the cluster gets there", async () => {
    const r = await arm.send("PUT", cluster, { body: clusterBody(sub, { prefix }) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    for (const action of ["requestAdminCredential", "revokeCredentials"]) {
      const refused = await arm.send("POST", `${cluster}/${action}`);
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(refused.body).toMatchObject({ error: { code: "Conflict" } });
    }
    expect((await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe("Succeeded");
  });

  it("issues a kubeconfig whose client certificate chains to the cluster's signer and expires when stated", async () => {
    const { result, id } = await act("requestAdminCredential");
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const body = result.body as { kubeconfig: string; expirationTimestamp: string };
    const config = JSON.parse(body.kubeconfig) as Kubeconfig;
    expect(config.clusters[0]?.cluster.server).toBe(`https://api.${prefix}.hcp.example.com:443`);
    expect(unb64(config.clusters[0]?.cluster["certificate-authority-data"])).toBe(await serverCA());
    const user = config.users[0]?.user ?? {};
    const cert = new X509Certificate(unb64(user["client-certificate-data"]));
    const ca = await signerCA();
    expect(cert.checkIssued(ca) && cert.verify(ca.publicKey)).toBe(true);
    expect(Date.parse(body.expirationTimestamp)).toBe(Date.parse(cert.validTo));
    // The default lifetime: a day.
    expect(Math.abs(Date.parse(cert.validTo) - Date.now() - 86_400_000)).toBeLessThan(120_000);
    expect(createPublicKey(unb64(user["client-key-data"])).export({ format: "jwk" })).toEqual(
      cert.publicKey.export({ format: "jwk" }),
    );
    const credential = await service.get<BreakglassCredential>(BreakglassCredentialResource, `arm-${id}`, ns);
    expect(credential.spec.requester).toBe("admin@contoso.com");
  });

  it("2026-09-01-preview: signs the client's CSR; the kubeconfig carries no key", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const csr = await certificateRequest(privateKey, { commonName: "system:customer-break-glass:alice" });
    const { result } = await act("requestAdminCredential", {
      apiVersion: "2026-09-01-preview",
      body: { certificateSigningRequest: csr },
    });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const config = JSON.parse((result.body as { kubeconfig: string }).kubeconfig) as Kubeconfig;
    const user = config.users[0]?.user ?? {};
    expect(user["client-key-data"]).toBeUndefined();
    // The frontend builds this one from the status: the server's CA is there too.
    expect(unb64(config.clusters[0]?.cluster["certificate-authority-data"])).toBe(await serverCA());
    const cert = new X509Certificate(unb64(user["client-certificate-data"]));
    expect(cert.publicKey.export({ format: "jwk" })).toEqual(
      createPublicKey(privateKey).export({ format: "jwk" }),
    );
    expect(cert.verify((await signerCA()).publicKey)).toBe(true);
  });

  it("answers bad input with a 400 CloudError naming the field", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const alice = { commonName: "system:customer-break-glass:alice" };
    const withTrailingByte = (pem: string): string => {
      const der = Buffer.concat([
        Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64"),
        Buffer.from([0]),
      ]);
      return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
    };
    const cases: Array<{ apiVersion: string; body: unknown; message: RegExp }> = [
      { apiVersion: "2026-09-01-preview", body: { certificateSigningRequest: "garbage" }, message: /PEM/ },
      {
        apiVersion: "2026-09-01-preview",
        body: { certificateSigningRequest: await certificateRequest(privateKey, { commonName: "root" }) },
        message: /system:customer-break-glass:/,
      },
      {
        apiVersion: "2026-06-30-preview",
        body: {
          certificateSigningRequest: await certificateRequest(privateKey, {
            commonName: "system:customer-break-glass:x",
          }),
        },
        message: /not accepted in api-version '2026-06-30-preview'/,
      },
      {
        apiVersion: "2026-09-01-preview",
        body: { certificateSigningRequest: withTrailingByte(await certificateRequest(privateKey, alice)) },
        message: /1 byte follows the request's DER encoding/,
      },
      {
        apiVersion: "2026-09-01-preview",
        body: {
          certificateSigningRequest: await certificateRequest(
            generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey,
            alice,
          ),
        },
        message: /unsupported key: RSA of 1024 bits/,
      },
      {
        apiVersion: "2026-09-01-preview",
        body: {
          certificateSigningRequest: (await certificateRequest(privateKey, alice)).repeat(2),
        },
        message: /holds 2 PEM blocks/,
      },
    ];
    for (const c of cases) {
      const r = await arm.send("POST", `${cluster}/requestAdminCredential`, {
        apiVersion: c.apiVersion,
        body: c.body,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      const error = (r.body as { error: { code: string; message: string; target: string } }).error;
      expect(error).toMatchObject({ code: "InvalidRequestContent", target: "certificateSigningRequest" });
      expect(error.message).toMatch(c.message);
    }
  });

  it("revokes every credential issued before it; a new request afterwards works", async () => {
    const before = (
      await service.list<BreakglassCredential>(BreakglassCredentialResource, { namespace: ns })
    ).items.filter((c) => c.status?.certificate);
    expect(before.length).toBe(2);
    const { result } = await act("revokeCredentials");
    expect(result.status).toBe(204);
    const ca = await signerCA();
    for (const c of before) {
      expect(new X509Certificate(c.status!.certificate!).verify(ca.publicKey)).toBe(false);
      await eventually(`credential ${c.metadata.name ?? ""} reported revoked`, async () => {
        const now = await service.get<BreakglassCredential>(
          BreakglassCredentialResource,
          c.metadata.name!,
          ns,
        );
        return now.status?.revoked === true;
      });
    }
    const events = await service.list<KubeObject & { reason?: string; message?: string }>(
      { group: "", version: "v1", kind: "Event", plural: "events", namespaced: true },
      { namespace: ns },
    );
    expect(events.items.find((e) => e.reason === "BreakglassCredentialsRevoked")?.message).toContain(
      "admin@contoso.com",
    );

    const { result: fresh } = await act("requestAdminCredential");
    const config = JSON.parse((fresh.body as { kubeconfig: string }).kubeconfig) as Kubeconfig;
    const cert = new X509Certificate(unb64(config.users[0]?.user["client-certificate-data"]));
    expect(cert.verify(ca.publicKey)).toBe(true);
  });
});
