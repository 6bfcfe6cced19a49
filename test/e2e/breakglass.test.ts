/**
 * Break-glass credentials end to end on the local region: a BreakglassCredential on the service
 * cluster travels as a CSR and HyperShift's approval over MQTT to the management cluster, where
 * the simulator's per-control-plane signer signs it; the certificate comes back through feedback
 * into a kubeconfig that trusts the control plane's root CA. A client's own request works the same
 * way, a bad one is refused, a CSR without an approval is never signed, a revocation rotates the
 * signer, deleting the credential leaves nothing behind, and an expired one says so and is
 * deleted after its retention.
 */
import { createPublicKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigMapResource, SecretResource } from "../../operators/api/core.ts";
import { ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  CertificateRevocationRequestResource,
  CertificateSigningRequestResource,
  hyperShiftSignerName,
  type CertificateRevocationRequest,
  type CertificateSigningRequest,
} from "../../operators/api/certificates/v1.ts";
import {
  BreakglassCredentialResource,
  HcpClusterResource,
  type BreakglassCredential,
  type HcpCluster,
} from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource } from "../../operators/api/work/v1.ts";
import { keySecretName } from "../../operators/breakglass/scope.ts";
import { WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import { certificateRequest } from "../../operators/hcp/pkcs10.ts";
import type { KubeClient, KubeObject } from "../../operators/runtime/kube.ts";
import { SIGNER_SECRET } from "../../hack/hypershift-simulator/signer.ts";
import { createLogger } from "../../operators/runtime/logger.ts";
import { clusterInfo } from "../support/region.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const READY_MS = 90_000;
/** How long the break-glass controller keeps an expired credential here. */
const RETENTION_MS = 60_000;
/** How far ahead of the wall clock the break-glass controller's clock runs (the expiry test moves it). */
let clockAheadMs = 0;
const service = clientFor("service");
const customer = `bg-${process.pid}`;
let running: TestStack | undefined;
let cluster: HcpCluster;
let mgmt: KubeClient;
let controlPlane = "";

const ready = (o: { status?: { conditions?: Array<{ type: string; status: string }> } } | undefined) =>
  o?.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";

const getCredential = (name: string) =>
  service.find<BreakglassCredential>(BreakglassCredentialResource, name, customer);

function credential(name: string, spec: Partial<BreakglassCredential["spec"]> = {}): BreakglassCredential {
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "BreakglassCredential",
    metadata: { name, namespace: customer },
    spec: { clusterRef: { name: "bg" }, requester: "sre@example.com", reason: "incident 42", ...spec },
  };
}

async function issued(name: string): Promise<BreakglassCredential> {
  await eventually(`credential ${name} issued`, async () => ready(await getCredential(name)), 30_000).catch(
    async (err: unknown) => {
      const c = await getCredential(name);
      const works = await service.list(ManifestWorkResource, {
        labelSelector: `${WORK_LABELS.breakglass}=${c?.metadata.uid}`,
      });
      throw new Error(
        `${String(err)} ${JSON.stringify(c?.status)} ${JSON.stringify(works.items[0]?.["status"])}`,
      );
    },
  );
  return (await getCredential(name))!;
}

/** The control plane's signer CA as the simulator keeps it. */
async function signerCA(): Promise<X509Certificate> {
  const secret = await mgmt.find<KubeObject & { data?: Record<string, string> }>(
    SecretResource,
    SIGNER_SECRET,
    controlPlane,
  );
  return new X509Certificate(Buffer.from(secret?.data?.["tls.crt"] ?? "", "base64"));
}

/** The control plane's root CA as the simulator publishes it (HyperShift's root-ca ConfigMap). */
async function rootCA(): Promise<string> {
  const cm = await mgmt.find<KubeObject & { data?: Record<string, string> }>(
    ConfigMapResource,
    ROOT_CA_CONFIGMAP,
    controlPlane,
  );
  return cm?.data?.[ROOT_CA_KEY] ?? "";
}

/** The server's CA, as HyperShift's own admin kubeconfig carries it: the control plane's root CA. */
async function expectServerCA(c: BreakglassCredential, config: Kubeconfig): Promise<void> {
  const serverCA = await rootCA();
  expect(serverCA).toContain("BEGIN CERTIFICATE");
  expect(c.status?.serverCA).toBe(serverCA);
  const caData = config.clusters[0]?.cluster["certificate-authority-data"] ?? "";
  expect(Buffer.from(caData, "base64").toString("utf8")).toBe(serverCA);
}

interface Kubeconfig {
  clusters: Array<{ cluster: { server: string; "certificate-authority-data"?: string } }>;
  users: Array<{ user: Record<string, string> }>;
}

async function kubeconfigOf(c: BreakglassCredential): Promise<Kubeconfig> {
  const secret = await service.find<KubeObject & { data?: Record<string, string> }>(
    SecretResource,
    c.status!.kubeconfigSecret!,
    customer,
  );
  return JSON.parse(Buffer.from(secret?.data?.["kubeconfig"] ?? "", "base64").toString("utf8")) as Kubeconfig;
}

/** hcpctl in this process against the service cluster. */
const hcpctl = (...args: string[]) =>
  runHcpctl("--kubeconfig", clusterInfo("service").kubeconfigPath, ...args);

beforeAll(async () => {
  running = await startTestStack("breakglass", {
    log: process.env["BG_DEBUG"] ? createLogger({ component: "test" }) : undefined,
    simulator: { provisionDelayMs: 500, deleteDelayMs: 200 },
    breakglass: { now: () => Date.now() + clockAheadMs, expiredRetentionMs: RETENTION_MS },
  });
  await service.create(namespaceType, { metadata: { name: customer } });
  const c = sampleCluster();
  c.metadata = { name: "bg", namespace: customer };
  c.spec.dns.baseDomainPrefix = `bg${process.pid % 100000}`;
  delete c.spec.placement;
  await service.create(HcpClusterResource, c);
  await eventually(
    "the cluster Ready",
    async () => ready(await service.find<HcpCluster>(HcpClusterResource, "bg", customer)),
    READY_MS,
  ).catch(async (err: unknown) => {
    const c = await service.find<HcpCluster>(HcpClusterResource, "bg", customer);
    throw new Error(
      `${String(err)}: ${JSON.stringify(c?.status?.conditions?.filter((x) => x.status !== "True"))}`,
    );
  });
  cluster = (await service.find<HcpCluster>(HcpClusterResource, "bg", customer))!;
  mgmt = clientFor(cluster.status!.managementCluster!);
  controlPlane = `${cluster.status!.hostedClusterNamespace!}-${c.spec.dns.baseDomainPrefix}`;
}, READY_MS + 30_000);

afterAll(async () => {
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
  await running?.stop();
});

describe("break-glass credentials", () => {
  it("issues a kubeconfig whose client certificate chains to the control plane's signer and expires when asked", async () => {
    const before = Date.now();
    await service.create(BreakglassCredentialResource, credential("first", { expirationSeconds: 3600 }));
    const c = await issued("first");
    const cert = new X509Certificate(c.status!.certificate!);
    const ca = await signerCA();
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subject).toContain("CN=system:customer-break-glass:sre@example.com");
    const expires = Date.parse(c.status!.expirationTimestamp!);
    expect(expires).toBe(Date.parse(cert.validTo));
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    expect(c.status?.observedGeneration).toBe(c.metadata.generation);

    const config = await kubeconfigOf(c);
    expect(config.clusters[0]?.cluster.server).toBe(cluster.status?.apiURL);
    await expectServerCA(c, config);
    const user = config.users[0]?.user ?? {};
    const clientCert = Buffer.from(user["client-certificate-data"] ?? "", "base64").toString("utf8");
    expect(clientCert).toBe(c.status!.certificate);
    // The key in the kubeconfig is the one the certificate was issued for.
    const key = Buffer.from(user["client-key-data"] ?? "", "base64").toString("utf8");
    expect(createPublicKey(key).export({ format: "jwk" })).toEqual(cert.publicKey.export({ format: "jwk" }));
    // The status carries no key.
    expect(JSON.stringify(c.status)).not.toContain("PRIVATE KEY");

    const events = await service.list<KubeObject & { reason?: string; message?: string }>(
      { group: "", version: "v1", kind: "Event", plural: "events", namespaced: true },
      { namespace: customer, fieldSelector: `involvedObject.name=bg` },
    );
    const event = events.items.find((e) => e.reason === "BreakglassCredentialIssued");
    expect(event?.message).toContain("sre@example.com");
    expect(event?.message).toContain("incident 42");
    expect(event?.message).not.toContain("BEGIN");
  });

  it("deletes the request's work once the certificate is in the status, and stays issued", async () => {
    const c = (await getCredential("first"))!;
    // With the certificate in the status the request's work goes (and its CSR with it): the
    // management cluster's controller manager removes issued CSRs after an hour, and a work still
    // applied would have the agent send the request again.
    await eventually(
      "the issued credential's work and CSR gone",
      async () => {
        const [works, csr] = await Promise.all([
          service.list(ManifestWorkResource, {
            labelSelector: `${WORK_LABELS.breakglass}=${c.metadata.uid}`,
          }),
          mgmt.find(CertificateSigningRequestResource, `breakglass-${c.metadata.uid}`),
        ]);
        return works.items.length === 0 && !csr;
      },
      30_000,
    );
    const after = (await getCredential("first"))!;
    expect(ready(after)).toBe(true);
    expect(after.status?.certificate).toBe(c.status!.certificate);
    expect(after.status?.expirationTimestamp).toBe(c.status!.expirationTimestamp);
    // The key's own Secret in the operators' namespace goes too: the kubeconfig holds the key now.
    await eventually(
      "the key's Secret in the operators' namespace gone",
      async () => !(await service.find(SecretResource, keySecretName(c), running!.stack.namespace)),
      30_000,
    );
    expect((await kubeconfigOf(after)).users[0]?.user["client-key-data"]).toBeTruthy();
  });

  it("signs a client's own request without ever seeing its key", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const csr = await certificateRequest(privateKey, { commonName: "system:customer-break-glass:alice" });
    await service.create(
      BreakglassCredentialResource,
      credential("own", { requester: "alice", certificateSigningRequest: csr, expirationSeconds: 600 }),
    );
    const c = await issued("own");
    const cert = new X509Certificate(c.status!.certificate!);
    expect(cert.checkIssued(await signerCA())).toBe(true);
    expect(cert.publicKey.export({ format: "jwk" })).toEqual(
      createPublicKey(privateKey).export({ format: "jwk" }),
    );
    expect(Date.parse(cert.validTo) - Date.now()).toBeLessThanOrEqual(600_000 + 1000);
    expect(c.status?.kubeconfigSecret).toBeUndefined();
  });

  it("refuses a request that is not a CSR, or one the signer would deny, naming the field", async () => {
    await service.create(
      BreakglassCredentialResource,
      credential("garbage", {
        certificateSigningRequest:
          "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
      }),
    );
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    await service.create(
      BreakglassCredentialResource,
      credential("wrong-cn", {
        certificateSigningRequest: await certificateRequest(privateKey, { commonName: "admin" }),
      }),
    );
    for (const name of ["garbage", "wrong-cn"]) {
      await eventually(
        `credential ${name} Degraded`,
        async () =>
          (await getCredential(name))?.status?.conditions?.some(
            (x) => x.type === "Degraded" && x.status === "True",
          ) ?? false,
      );
      const degraded = (await getCredential(name))?.status?.conditions?.find((x) => x.type === "Degraded");
      expect(degraded?.reason).toBe("InvalidCertificateSigningRequest");
      expect(degraded?.message).toContain("spec.certificateSigningRequest");
    }
    await expect(
      service.create(BreakglassCredentialResource, credential("too-long", { expirationSeconds: 86_401 })),
    ).rejects.toThrow(/expirationSeconds/);
  });

  it("never signs a break-glass CSR without a matching approval", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const request = await certificateRequest(privateKey, {
      commonName: "system:customer-break-glass:mallory",
    });
    const name = `unapproved-${process.pid}`;
    await mgmt.create<CertificateSigningRequest>(CertificateSigningRequestResource, {
      metadata: { name },
      spec: {
        request: Buffer.from(request).toString("base64"),
        signerName: hyperShiftSignerName(controlPlane, "customer-break-glass"),
        usages: ["client auth"],
      },
    });
    // An approved credential issued after this CSR was created proves the signer has looked at it.
    await service.create(BreakglassCredentialResource, credential("witness"));
    await issued("witness");
    const csr = await mgmt.find<CertificateSigningRequest>(CertificateSigningRequestResource, name);
    expect(csr?.status?.certificate).toBeUndefined();
    expect(csr?.status?.conditions ?? []).toEqual([]);
    await mgmt.delete(CertificateSigningRequestResource, { name });
  });

  it("revokes: after a CertificateRevocationRequest the old certificates no longer chain, and a new request works", async () => {
    const old = new X509Certificate((await getCredential("first"))!.status!.certificate!);
    await mgmt.create<CertificateRevocationRequest>(CertificateRevocationRequestResource, {
      apiVersion: "certificates.hypershift.openshift.io/v1alpha1",
      kind: "CertificateRevocationRequest",
      metadata: { name: `revoke-${process.pid}`, namespace: controlPlane },
      spec: { signerClass: "customer-break-glass" },
    });
    await eventually("the revocation done", async () => {
      const crr = await mgmt.find<CertificateRevocationRequest>(
        CertificateRevocationRequestResource,
        `revoke-${process.pid}`,
        controlPlane,
      );
      return (
        crr?.status?.conditions?.some(
          (c) => c.type === "PreviousCertificatesRevoked" && c.status === "True",
        ) ?? false
      );
    });
    const ca = await signerCA();
    expect(old.checkIssued(ca) && old.verify(ca.publicKey)).toBe(false);
    await service.create(BreakglassCredentialResource, credential("after"));
    const fresh = new X509Certificate((await issued("after")).status!.certificate!);
    expect(fresh.verify((await signerCA()).publicKey)).toBe(true);
  });

  it("hcpctl breakglass: request, list and revoke on the same resources; bad flags refused before any write", async () => {
    const bad = await hcpctl(
      "breakglass",
      "request",
      "bg",
      "-n",
      customer,
      "--requester",
      "sre",
      "--reason",
      "x",
      "--ttl",
      "30h",
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--ttl must be between 10m and 24h");
    const made = await hcpctl(
      "breakglass",
      "request",
      "bg",
      "-n",
      customer,
      "--requester",
      "oncall",
      "--reason",
      "page 7",
      "--ttl",
      "2h",
    );
    expect(made.code, made.stderr).toBe(0);
    const name = /breakglasscredential\/(\S+)/.exec(made.stdout)?.[1] ?? "";
    const c = await issued(name);
    expect(Date.parse(c.status!.expirationTimestamp!) - Date.now()).toBeLessThanOrEqual(7_200_000 + 1000);
    const listed = await hcpctl("breakglass", "list", "bg", "-n", customer);
    expect(listed.stdout).toMatch(new RegExp(`credential +${name} +bg +oncall +True`));
    expect(listed.stdout).not.toContain("PRIVATE KEY");
    const revoked = await hcpctl(
      "breakglass",
      "revoke",
      "bg",
      "-n",
      customer,
      "--requester",
      "oncall",
      "--reason",
      "done",
    );
    expect(revoked.code, revoked.stderr).toBe(0);
    await eventually(
      "the credential reported revoked",
      async () => (await getCredential(name))?.status?.revoked === true,
    );
    expect((await hcpctl("breakglass", "list", "bg", "-n", customer)).stdout).toMatch(
      /revocation .* True \(Revoked\)/,
    );
  });

  it("deleting a credential removes its work, its CSR and its key", async () => {
    const c = (await getCredential("first"))!;
    await service.delete(BreakglassCredentialResource, { name: "first", namespace: customer });
    await eventually(
      "the credential, its work and its CSR gone",
      async () => {
        const [cr, works, csr] = await Promise.all([
          getCredential("first"),
          service.list(ManifestWorkResource, {
            labelSelector: `${WORK_LABELS.breakglass}=${c.metadata.uid}`,
          }),
          mgmt.find(CertificateSigningRequestResource, `breakglass-${c.metadata.uid}`),
        ]);
        return !cr && works.items.length === 0 && !csr;
      },
      30_000,
    );
    // The kubeconfig's Secret is the credential's: the garbage collector takes it.
    await eventually(
      "the kubeconfig's Secret gone",
      async () => !(await service.find(SecretResource, c.status!.kubeconfigSecret!, customer)),
      30_000,
    );
  });

  it("an expired credential says so, then goes with everything it left once its retention is over", async () => {
    await service.create(BreakglassCredentialResource, credential("brief", { expirationSeconds: 600 }));
    const c = await issued("brief");
    const poke = (n: number) =>
      service.mergePatch(
        BreakglassCredentialResource,
        { name: "brief", namespace: customer },
        { metadata: { annotations: { "test.hcp.aro.dev/poke": String(n) } } },
      );
    try {
      // Past its expiry: Expired, not Ready, and an Event on the cluster.
      clockAheadMs = 601_000;
      await poke(1);
      await eventually(
        "the credential Expired",
        async () =>
          (await getCredential("brief"))?.status?.conditions?.find((x) => x.type === "Expired")?.status ===
          "True",
        30_000,
      );
      const expired = (await getCredential("brief"))!;
      expect(expired.status?.conditions?.find((x) => x.type === "Ready")).toMatchObject({
        status: "False",
        reason: "Expired",
      });
      const events = await service.list<KubeObject & { reason?: string; message?: string }>(
        { group: "", version: "v1", kind: "Event", plural: "events", namespaced: true },
        { namespace: customer, fieldSelector: "involvedObject.name=bg" },
      );
      expect(
        events.items.find((e) => e.reason === "BreakglassCredentialExpired" && e.message?.includes("brief")),
      ).toBeTruthy();

      // Past its retention: the credential, its kubeconfig and its key are gone.
      clockAheadMs = 601_000 + RETENTION_MS;
      await poke(2);
      await eventually(
        "the expired credential and its Secrets gone",
        async () => {
          const [cr, kubeconfig, key, works] = await Promise.all([
            getCredential("brief"),
            service.find(SecretResource, c.status!.kubeconfigSecret!, customer),
            service.find(SecretResource, keySecretName(c), running!.stack.namespace),
            service.list(ManifestWorkResource, {
              labelSelector: `${WORK_LABELS.breakglass}=${c.metadata.uid}`,
            }),
          ]);
          return !cr && !kubeconfig && !key && works.items.length === 0;
        },
        30_000,
      );
    } finally {
      clockAheadMs = 0;
    }
  });
});
