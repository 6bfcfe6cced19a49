/**
 * Issue 36: a chosen HostedCluster on mgmt-1 gets a real API (hack/harness/hosted-apis.ts) beside
 * the HyperShift simulator. The simulator signs the SRE break-glass class with its own signer
 * (refusing a request without the class's CommonName prefix), the real kube-apiserver serves from
 * the control plane's root CA under the published endpoint, grants by the certificate's group, and
 * refuses the old certificates once a revocation rotates the SRE signer.
 */
import { generateKeyPairSync, X509Certificate, type KeyObject } from "node:crypto";
import { request } from "node:https";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CertificateRevocationRequestResource,
  CertificateSigningRequestApprovalResource,
  CertificateSigningRequestResource,
  hyperShiftSignerName,
  type CertificateRevocationRequest,
  type CertificateSigningRequest,
} from "../../operators/api/certificates/v1.ts";
import { ConfigMapResource, SecretResource } from "../../operators/api/core.ts";
import {
  controlPlaneNamespaceName,
  HostedClusterResource,
  type HostedCluster,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { ACCESS_LEVEL_GROUPS, SRE_BREAK_GLASS } from "../../operators/api/v1alpha1/accesssession.ts";
import { certificateRequest } from "../../operators/hcp/pkcs10.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { HostedApis } from "../../hack/harness/hosted-apis.ts";
import { HyperShiftSimulator } from "../../hack/hypershift-simulator/controller.ts";
import { apiServerHost } from "../../hack/hypershift-simulator/release.ts";
import { clientFor, eventually, scratchDir, secretType, tempNamespace } from "../support/fixtures.ts";
import { hostedClusterFixture } from "../support/hypershift.ts";
import { kubeConfigFor, region } from "../support/region.ts";

const mgmt = clientFor("mgmt-1");
/** Unique per run: other workers' simulators share mgmt-1. */
const NAME = `ha${process.pid % 100_000}`;
const START_MS = 120_000;

type DataObject = KubeObject & { data?: Record<string, string> };
interface Credential {
  cert: string;
  key: string;
}

const registry = new ClusterRegistry();
const stop = new AbortController();
let running: Promise<unknown>[] = [];
let apis: HostedApis;
let ns: { name: string; remove(): Promise<void> };
let scratch: { path: string; remove(): Promise<void> };
let controlPlane = "";
let hc: HostedCluster;

const rootCA = async (): Promise<string> =>
  (await mgmt.find<DataObject>(ConfigMapResource, "root-ca", controlPlane))?.data?.["ca.crt"] ?? "";

/** An HTTP call to the real API with a client certificate, the server verified against the root CA under `servername`. */
async function call(
  who: Credential,
  method: string,
  path: string,
  { body, servername = "localhost" }: { body?: unknown; servername?: string } = {},
): Promise<number> {
  const served = apis.served(NAME);
  if (!served) throw new Error(`no API served for ${NAME}`);
  const ca = await rootCA();
  return new Promise((resolve, reject) => {
    const req = request(
      `${served.url}${path}`,
      {
        method,
        ca,
        cert: who.cert,
        key: who.key,
        servername,
        headers: body ? { "content-type": "application/json" } : undefined,
        timeout: 5_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

/** Whether a TCP connection to 127.0.0.1:`port` is refused. */
const refused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });

const getCsr = (name: string) =>
  mgmt.find<CertificateSigningRequest>(CertificateSigningRequestResource, name);

/** Sends an SRE break-glass CSR with its approval, as the session controller's work does. */
async function requestSre(
  name: string,
  key: KeyObject,
  subject: { commonName: string; organizations: string[] },
): Promise<void> {
  const pem = await certificateRequest(key, subject);
  await mgmt.create<CertificateSigningRequest>(CertificateSigningRequestResource, {
    metadata: { name },
    spec: {
      request: Buffer.from(pem).toString("base64"),
      signerName: hyperShiftSignerName(controlPlane, SRE_BREAK_GLASS),
      usages: ["client auth"],
      expirationSeconds: 3600,
    },
  });
  await mgmt.create(CertificateSigningRequestApprovalResource, {
    apiVersion: "certificates.hypershift.openshift.io/v1alpha1",
    kind: "CertificateSigningRequestApproval",
    metadata: { name, namespace: controlPlane },
    spec: {},
  });
}

/** A signed SRE break-glass credential for `group`. */
async function sreCredential(name: string, user: string, group: string): Promise<Credential> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  await requestSre(name, privateKey, {
    commonName: `system:sre-break-glass:${user}`,
    organizations: [group],
  });
  await eventually(`CSR ${name} signed`, async () => Boolean((await getCsr(name))?.status?.certificate));
  const cert = Buffer.from((await getCsr(name))?.status?.certificate ?? "", "base64").toString("utf8");
  return { cert, key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
}

const signerCert = async (secret: string): Promise<X509Certificate> =>
  new X509Certificate(
    Buffer.from(
      (await mgmt.find<DataObject>(SecretResource, secret, controlPlane))?.data?.["tls.crt"] ?? "",
      "base64",
    ).toString("utf8"),
  );

beforeAll(async () => {
  ns = await tempNamespace(mgmt, "ha");
  scratch = await scratchDir("hosted-api");
  controlPlane = controlPlaneNamespaceName(ns.name, NAME);
  const cluster = registry.add("mgmt-1", kubeConfigFor("mgmt-1"));
  apis = new HostedApis({
    cluster,
    hostedClusters: [NAME],
    assetsDir: region().assetsDir,
    etcdUrl: region().etcdUrl,
    workDir: scratch.path,
  });
  const simulator = new HyperShiftSimulator({ cluster, provisionDelayMs: 200, deleteDelayMs: 100 });
  running = [simulator.start(stop.signal), apis.start(stop.signal)];
  await mgmt.create(secretType, {
    metadata: { name: "pull-secret", namespace: ns.name },
    type: "kubernetes.io/dockerconfigjson",
    stringData: { ".dockerconfigjson": '{"auths":{}}' },
  });
  hc = await mgmt.create<HostedCluster>(HostedClusterResource, hostedClusterFixture(ns.name, NAME));
}, START_MS);

afterAll(async () => {
  stop.abort();
  await Promise.allSettled(running);
  registry.stopAll();
  // CSRs are cluster-scoped: the namespace's removal does not take them.
  for (const csr of ["reader", "viewer", "admin", "wrong-cn"])
    await mgmt.delete(CertificateSigningRequestResource, { name: `${NAME}-${csr}` }).catch(() => undefined);
  await ns?.remove();
  await scratch?.remove();
});

describe("a chosen hosted cluster's real API", () => {
  it(
    "is published as the control plane's endpoint, served from the kept root CA",
    async () => {
      await eventually(
        "the real API published as the endpoint",
        async () => {
          const served = apis.served(NAME);
          const got = await mgmt.find<HostedCluster>(HostedClusterResource, NAME, ns.name);
          return (
            served !== undefined &&
            got?.status?.controlPlaneEndpoint?.host === "127.0.0.1" &&
            got.status.controlPlaneEndpoint.port === Number(new URL(served.url).port)
          );
        },
        START_MS,
      );
      // The root CA's key is kept, and the Secret and the ConfigMap say the same CA.
      const secret = await mgmt.find<DataObject>(SecretResource, "root-ca", controlPlane);
      const cert = Buffer.from(secret?.data?.["tls.crt"] ?? "", "base64").toString("utf8");
      expect(secret?.data?.["tls.key"]).toBeTruthy();
      expect(Buffer.from(secret?.data?.["ca.crt"] ?? "", "base64").toString("utf8")).toBe(cert);
      expect(await rootCA()).toBe(cert);
    },
    START_MS,
  );

  it("signs the SRE class with its own signer and denies a request without the class's prefix", async () => {
    const reader = await sreCredential(`${NAME}-reader`, "bob", ACCESS_LEVEL_GROUPS.ReadOnly);
    const issued = new X509Certificate(reader.cert);
    expect(issued.subject).toContain("CN=system:sre-break-glass:bob");
    expect(issued.verify((await signerCert("sre-system-admin-signer")).publicKey)).toBe(true);
    expect(issued.checkIssued(await signerCert("customer-system-admin-signer"))).toBe(false);
    const bundle = await mgmt.find<DataObject>(ConfigMapResource, "sre-system-admin-signer-ca", controlPlane);
    expect(new X509Certificate(bundle?.data?.["ca-bundle.crt"] ?? "").fingerprint256).toBe(
      (await signerCert("sre-system-admin-signer")).fingerprint256,
    );

    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    await requestSre(`${NAME}-wrong-cn`, privateKey, {
      commonName: "system:customer-break-glass:eve",
      organizations: [ACCESS_LEVEL_GROUPS.Admin],
    });
    await eventually(
      "the wrong CN denied",
      async () =>
        (await getCsr(`${NAME}-wrong-cn`))?.status?.conditions?.some((c) => c.type === "Denied") ?? false,
    );
    const csr = await getCsr(`${NAME}-wrong-cn`);
    expect(csr?.status?.certificate).toBeUndefined();
    expect(csr?.status?.conditions?.find((c) => c.type === "Denied")?.message).toContain(
      '"system:sre-break-glass:"',
    );
  });

  it("reads with hcp:sre-readonly, writes with system:masters, and refuses the old certificates after a revocation", async () => {
    const reader = await sreCredential(`${NAME}-viewer`, "bob", ACCESS_LEVEL_GROUPS.ReadOnly);
    const admin = await sreCredential(`${NAME}-admin`, "alice", ACCESS_LEVEL_GROUPS.Admin);
    const namespace = (n: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name: n } });
    // The serving certificate names the cluster's API host, so a client dialing by it verifies the server.
    expect(await call(reader, "GET", "/api/v1/namespaces", { servername: apiServerHost(hc) })).toBe(200);
    expect(await call(reader, "POST", "/api/v1/namespaces", { body: namespace(`${NAME}-by-reader`) })).toBe(
      403,
    );
    expect(await call(admin, "POST", "/api/v1/namespaces", { body: namespace(`${NAME}-by-admin`) })).toBe(
      201,
    );

    const customerSigner = (await signerCert("customer-system-admin-signer")).fingerprint256;
    await mgmt.create<CertificateRevocationRequest>(CertificateRevocationRequestResource, {
      apiVersion: "certificates.hypershift.openshift.io/v1alpha1",
      kind: "CertificateRevocationRequest",
      metadata: { name: `${NAME}-revoke`, namespace: controlPlane },
      spec: { signerClass: SRE_BREAK_GLASS },
    });
    await eventually(
      "the old reader certificate refused",
      async () => (await call(reader, "GET", "/api/v1/namespaces")) === 401,
    );
    expect(await call(admin, "GET", "/api/v1/namespaces")).toBe(401);
    // Only the SRE class rotated.
    expect((await signerCert("customer-system-admin-signer")).fingerprint256).toBe(customerSigner);
    // A new request is signed by the new signer and trusted.
    await mgmt.delete(CertificateSigningRequestResource, { name: `${NAME}-viewer` });
    await eventually("the old CSR gone", async () => !(await getCsr(`${NAME}-viewer`)));
    await mgmt.delete(CertificateSigningRequestApprovalResource, {
      name: `${NAME}-viewer`,
      namespace: controlPlane,
    });
    const fresh = await sreCredential(`${NAME}-viewer`, "bob", ACCESS_LEVEL_GROUPS.ReadOnly);
    await eventually(
      "the new certificate accepted",
      async () => (await call(fresh, "GET", "/api/v1/namespaces")) === 200,
    );
  });

  it("stops the API server when the HostedCluster goes", async () => {
    const served = apis.served(NAME);
    expect(served).toBeDefined();
    await mgmt.delete(HostedClusterResource, { name: NAME, namespace: ns.name });
    await eventually("the API no longer served", () => apis.served(NAME) === undefined, 60_000);
    const port = Number(new URL(served?.url ?? "").port);
    await eventually("nothing listens on its port", () => refused(port));
  }, 90_000);
});
