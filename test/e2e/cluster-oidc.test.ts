/**
 * Each cluster's OIDC issuer, end to end against the real apiservers and the storage emulator over
 * https: the issuer URL serves a discovery document and a JWKS whose key verifies a token signed
 * with the cluster's signing key; the HostedCluster carries the URL and the key; a restart of the
 * controllers does not rotate the key; a storage fault is a condition, retried until it clears;
 * deleting the cluster removes the documents and the key.
 */
import {
  createPublicKey,
  createSign,
  createVerify,
  generateKeyPairSync,
  randomUUID,
  type JsonWebKey,
} from "node:crypto";
import { readFile } from "node:fs/promises";
import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../../hack/harness/stack.ts";
import { SecretResource } from "../../operators/api/core.ts";
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { brokerCredentials, clusterInfo, region } from "../support/region.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const service = clientFor("service");
const customer = `oidc-${process.pid}`;
const READY_MS = 90_000;

let running: TestStack;
/** The stack the tests run against now: the first, or the one started again after a restart. */
let stack: Stack;
let ca: string;
let n = 0;

type SecretObject = KubeObject & { data?: Record<string, string> };

function newCluster(): HcpCluster {
  const c = sampleCluster();
  const name = `o${n++}`;
  c.metadata = { name, namespace: customer };
  c.spec.dns.baseDomainPrefix = `${name}x${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `oidc-${name}-managed`;
  c.spec.platform.azure.tenantId = randomUUID();
  delete c.spec.placement;
  return c;
}

const get = (name: string) => service.find<HcpCluster>(HcpClusterResource, name, customer);
const cond = (c: HcpCluster | undefined, type: string): Condition | undefined =>
  c?.status?.conditions?.find((x) => x.type === type);

async function createReady(c: HcpCluster): Promise<HcpCluster> {
  await service.create(HcpClusterResource, c);
  await eventually(
    `${c.metadata.name} Ready`,
    async () => cond(await get(c.metadata.name!), "Ready")?.status === "True",
    READY_MS,
  );
  return (await get(c.metadata.name!))!;
}

/** GET over https trusting the storage emulator's CA, as Entra ID would read the issuer. */
function fetchText(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

async function fetchJson(url: string): Promise<Record<string, unknown>> {
  const r = await fetchText(url);
  expect(r.status, `${url}: ${r.body}`).toBe(200);
  return JSON.parse(r.body) as Record<string, unknown>;
}

/** The cluster's signing key as the controller stored it (in the operators' namespace). */
async function storedKey(uid: string): Promise<string | undefined> {
  const s = await service.find<SecretObject>(SecretResource, `sa-signing-key-${uid}`, stack.namespace);
  const key = s?.data?.["key"];
  return key ? Buffer.from(key, "base64").toString() : undefined;
}

/** A service-account token as kube-apiserver would sign it: RS256 with the key's kid. */
function signToken(privateKeyPem: string, kid: string, issuer: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${b64({ alg: "RS256", kid })}.${b64({
    iss: issuer,
    sub: "system:serviceaccount:openshift-cluster-csi-drivers:azure-disk-csi-driver-operator",
    aud: ["openshift"],
    iat: now,
    exp: now + 600,
  })}`;
  const signature = createSign("RSA-SHA256").update(unsigned).sign(privateKeyPem, "base64url");
  return `${unsigned}.${signature}`;
}

/** Verifies a token the way a relying party does: discovery document, then the JWKS key by kid. */
async function verifyAgainstIssuer(token: string, issuer: string): Promise<boolean> {
  const discovery = await fetchJson(`${issuer}/.well-known/openid-configuration`);
  expect(discovery["issuer"]).toBe(issuer);
  const jwks = (await fetchJson(String(discovery["jwks_uri"]))) as { keys: JsonWebKey[] };
  const [head, payload, signature] = token.split(".");
  const { kid } = JSON.parse(Buffer.from(head!, "base64url").toString()) as { kid: string };
  const jwk = jwks.keys.find((k) => k.kid === kid);
  if (!jwk) return false;
  const claims = JSON.parse(Buffer.from(payload!, "base64url").toString()) as { iss: string };
  if (claims.iss !== discovery["issuer"]) return false;
  return createVerify("RSA-SHA256")
    .update(`${head}.${payload}`)
    .verify(createPublicKey({ key: jwk, format: "jwk" }), signature!, "base64url");
}

async function jwksOf(issuer: string): Promise<JsonWebKey[]> {
  return ((await fetchJson(`${issuer}/openid/v1/jwks`)) as { keys: JsonWebKey[] }).keys;
}

beforeAll(async () => {
  running = await startTestStack("oidc", { simulator: { provisionDelayMs: 300, deleteDelayMs: 100 } });
  stack = running.stack;
  ca = await readFile(running.storage.caPath, "utf8");
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  running.storage.faults.clear();
  await running?.stop();
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
});

describe("each cluster's OIDC issuer", () => {
  let cluster: HcpCluster;
  let issuer: string;

  it("gets an issuer URL under the region's Front Door whose documents verify the cluster's tokens", async () => {
    cluster = await createReady(newCluster());
    const uid = cluster.metadata.uid!;
    issuer = `${running.storage.webEndpoint}${cluster.spec.platform.azure.tenantId}/${uid}`;
    expect(cluster.status?.issuerURL).toBe(issuer);
    expect(cond(cluster, "OidcIssuerReady")).toMatchObject({ status: "True", reason: "Published" });

    const key = await storedKey(uid);
    expect(key).toContain("PRIVATE KEY");
    const [jwk] = await jwksOf(issuer);
    expect(jwk).toMatchObject({ kty: "RSA", use: "sig", alg: "RS256" });
    expect(await verifyAgainstIssuer(signToken(key!, String(jwk?.kid), issuer), issuer)).toBe(true);
    // A token signed with another key does not verify.
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const forged = signToken(
      other.export({ type: "pkcs1", format: "pem" }).toString(),
      String(jwk?.kid),
      issuer,
    );
    expect(await verifyAgainstIssuer(forged, issuer)).toBe(false);
  });

  it("puts the issuer URL and the signing key on the HostedCluster", async () => {
    const mgmt = clientFor(cluster.status!.managementCluster!);
    const namespace = cluster.status!.hostedClusterNamespace!;
    const hc = await mgmt.get<HostedCluster>(
      HostedClusterResource,
      cluster.spec.dns.baseDomainPrefix,
      namespace,
    );
    expect(hc.spec.issuerURL).toBe(issuer);
    expect(hc.spec.serviceAccountSigningKey).toEqual({ name: "sa-signing-key" });
    const secret = await mgmt.get<SecretObject>(SecretResource, "sa-signing-key", namespace);
    expect(Buffer.from(secret.data?.["key"] ?? "", "base64").toString()).toBe(
      await storedKey(cluster.metadata.uid!),
    );
  });

  it("keeps the same key through a restart of the controllers", async () => {
    const uid = cluster.metadata.uid!;
    const keyBefore = await storedKey(uid);
    const [jwkBefore] = await jwksOf(issuer);
    await stack.stop();
    stack = await startStack({
      serviceKubeconfig: clusterInfo("service").kubeconfigPath,
      management: ["mgmt-1", "mgmt-2"].map((m) => ({
        name: m,
        kubeconfigPath: clusterInfo(m).kubeconfigPath,
      })),
      broker: { url: region().broker.url, credentials: brokerCredentials },
      arm: running.arm,
      storage: running.storage,
      namespace: stack.namespace,
      simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
    });
    // A new generation: the restarted controller publishes again rather than trusting the status.
    // Only this cluster's calls: the controllers reconcile every HcpCluster of the service cluster.
    const calls = (method: string) =>
      running.storage.requests().filter((r) => r.method === method && r.path.includes(uid)).length;
    const writesBefore = calls("PUT");
    const readsBefore = calls("GET");
    await service.mergePatch(
      HcpClusterResource,
      { name: cluster.metadata.name!, namespace: customer },
      { spec: { nodeDrainTimeoutMinutes: 17 } },
    );
    await eventually(
      "the new generation observed",
      async () => {
        const c = await get(cluster.metadata.name!);
        return (
          c?.status?.observedGeneration === c?.metadata.generation && cond(c, "Ready")?.status === "True"
        );
      },
      READY_MS,
    );
    expect(calls("GET")).toBeGreaterThan(readsBefore);
    // Same content: read, compared, not written.
    expect(calls("PUT")).toBe(writesBefore);
    expect(await storedKey(uid)).toBe(keyBefore);
    expect(await jwksOf(issuer)).toEqual([jwkBefore]);
  });

  it("shows a storage fault in OidcIssuerReady, retries, and publishes once storage is back", async () => {
    const { storage } = running;
    const dropped = storage.faults.add({ pathIncludes: `/${storage.account}/`, fault: { drop: true } });
    const c = newCluster();
    await service.create(HcpClusterResource, c);
    await eventually(
      "StorageUnreachable",
      async () => cond(await get(c.metadata.name!), "OidcIssuerReady")?.reason === "StorageUnreachable",
      READY_MS,
    );
    dropped.remove();
    const failing = storage.faults.add({ method: "PUT", fault: { status: 500, code: "InternalError" } });
    await eventually(
      "StorageError",
      async () => cond(await get(c.metadata.name!), "OidcIssuerReady")?.reason === "StorageError",
      READY_MS,
    );
    const waiting = (await get(c.metadata.name!))!;
    expect(cond(waiting, "OidcIssuerReady")?.message).toContain("InternalError");
    expect(cond(waiting, "Ready")?.status).toBe("False");
    expect(cond(waiting, "Degraded")?.status).toBe("False");
    // The PUTs keep coming: retried with backoff, not given up on.
    const uid = (await get(c.metadata.name!))!.metadata.uid!;
    const refused = () =>
      storage.requests().filter((r) => r.method === "PUT" && r.injected && r.path.includes(uid)).length;
    const seen = refused();
    await eventually("another attempt", () => refused() > seen, READY_MS);
    failing.remove();
    await eventually(
      "Ready once storage is back",
      async () => cond(await get(c.metadata.name!), "Ready")?.status === "True",
      READY_MS,
    );
    const ready = (await get(c.metadata.name!))!;
    expect(cond(ready, "OidcIssuerReady")?.status).toBe("True");
    const url = ready.status!.issuerURL!;
    const [jwk] = await jwksOf(url);
    const key = await storedKey(ready.metadata.uid!);
    expect(await verifyAgainstIssuer(signToken(key!, String(jwk?.kid), url), url)).toBe(true);
  });

  it("removes both documents and the key when the cluster is deleted", async () => {
    const { storage } = running;
    const ours = (await service.list<HcpCluster>(HcpClusterResource, { namespace: customer })).items;
    expect(ours).toHaveLength(2);
    const uids = ours.map((c) => c.metadata.uid!);
    const blobsOf = () => storage.blobs().filter((b) => uids.some((uid) => b.name.includes(uid)));
    expect(blobsOf()).toHaveLength(4);
    for (const c of ours)
      await service.delete(HcpClusterResource, { name: c.metadata.name!, namespace: customer });
    await eventually(
      "every cluster deleted",
      async () => (await service.list(HcpClusterResource, { namespace: customer })).items.length === 0,
      READY_MS,
    );
    expect(blobsOf()).toEqual([]);
    expect((await fetchText(`${issuer}/.well-known/openid-configuration`)).status).toBe(404);
    for (const uid of uids) expect(await storedKey(uid)).toBeUndefined();
  });
});
