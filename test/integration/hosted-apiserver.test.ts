/**
 * Issue 36: a hosted cluster's API is a real kube-apiserver. Here the harness module on its own:
 * it serves with a certificate from a given root CA, accepts client certificates of the signer CAs
 * it is given (and stops accepting them once the signer is rotated away), and audits by user.
 */
import { request } from "node:https";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureKubeAssets } from "../../hack/harness/assets.ts";
import { createCA, issueCert, type CertFiles, type CertificateAuthority } from "../../hack/harness/certs.ts";
import { startEtcd, type Etcd } from "../../hack/harness/etcd.ts";
import {
  HOSTED_VIEW_ROLE,
  startHostedApiServer,
  type HostedApiServer,
} from "../../hack/harness/hosted-apiserver.ts";
import { eventually } from "../support/fixtures.ts";

let workDir: string;
let etcd: Etcd;
let root: CertificateAuthority;
let signer: CertificateAuthority;
let rotated: CertificateAuthority;
let api: HostedApiServer;

/** GET `path` with a client certificate, verifying the server against the root CA. */
async function statusOf(path: string, client: CertFiles): Promise<number> {
  const tls = {
    ca: await readFile(root.certPath),
    cert: await readFile(client.certPath),
    key: await readFile(client.keyPath),
  };
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}${path}`, { ...tls, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  const assetsDir = await ensureKubeAssets();
  workDir = await mkdtemp(join(tmpdir(), "hosted-apiserver-"));
  etcd = await startEtcd({ assetsDir, workDir });
  root = await createCA(workDir, "root");
  signer = await createCA(workDir, "customer-break-glass");
  rotated = await createCA(workDir, "customer-break-glass-rotated");
  api = await startHostedApiServer({
    name: "demo",
    assetsDir,
    etcdUrl: etcd.url,
    workDir,
    servingCA: root,
    clientCAs: [await readFile(signer.certPath, "utf8")],
    groupBindings: { "hcp:sre-readonly": HOSTED_VIEW_ROLE },
  });
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await etcd?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe("hosted kube-apiserver", () => {
  it("serves a signer's certificate, audits its user and refuses it once the signer is rotated", async () => {
    const admin = await issueCert(signer, workDir, {
      name: "breakglass-admin",
      commonName: "customer-breakglass:alice",
      organizations: ["system:masters"],
      usage: "client",
    });
    const reader = await issueCert(signer, workDir, {
      name: "sre-reader",
      commonName: "sre:bob",
      organizations: ["hcp:sre-readonly"],
      usage: "client",
    });
    expect(await statusOf("/api/v1/namespaces", admin)).toBe(200);
    expect(await statusOf("/api/v1/namespaces", reader)).toBe(200);
    expect(await statusOf("/api/v1/namespaces/default/secrets", reader)).toBe(403);

    await eventually("the audit log names both users", async () => {
      const audit = await readFile(api.auditLogPath, "utf8");
      return (
        audit.includes('"username":"customer-breakglass:alice"') && audit.includes('"username":"sre:bob"')
      );
    });

    await api.setClientCAs([await readFile(rotated.certPath, "utf8")]);
    await eventually("the rotated-away signer's certificate is refused", async () => {
      return (await statusOf("/api/v1/namespaces", admin)) === 401;
    });
    const fresh = await issueCert(rotated, workDir, {
      name: "breakglass-fresh",
      commonName: "customer-breakglass:carol",
      organizations: ["system:masters"],
      usage: "client",
    });
    expect(await statusOf("/api/v1/namespaces", fresh)).toBe(200);
  });
});
