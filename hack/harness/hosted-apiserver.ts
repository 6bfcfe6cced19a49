/**
 * A hosted cluster's API as a real kube-apiserver (issue 36): it serves with a certificate from the
 * control plane's root CA, trusts the control plane's break-glass signer CAs as client CAs and
 * writes an audit log, so a request with a break-glass certificate reaches a real API server.
 *
 * It keeps its data under its own prefix on the region's etcd: one more etcd process per hosted
 * cluster would cost more memory and start-up time than a key prefix, and nothing here needs the
 * isolation.
 */
import { request } from "node:https";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createCA, createSigningKey, issueCert, type CertFiles, type CertificateAuthority } from "./certs.ts";
import { freePort, waitFor } from "./ports.ts";
import { startProcess, type ManagedProcess } from "./process.ts";

export interface StartHostedApiServerOptions {
  /** Hosted cluster name: file names, the etcd prefix `/hosted/<name>/registry`. */
  name: string;
  assetsDir: string;
  etcdUrl: string;
  /** Parent directory; the apiserver gets `<workDir>/hosted-<name>/` and its audit log there. */
  workDir: string;
  /** The control plane's root CA (certificate and key as PEM files): it issues the serving cert. */
  servingCA: CertificateAuthority;
  /** PEM certificates of the CAs whose client certificates the apiserver accepts (break-glass signers). */
  clientCAs: string[];
  /** Host names the serving certificate names besides localhost and 127.0.0.1 (the cluster's API host). */
  dnsNames?: string[];
  /**
   * Group → ClusterRole bindings made once it is up, e.g. { "hcp:sre-readonly": HOSTED_VIEW_ROLE }.
   * `view` itself is an aggregated role and stays empty here: no kube-controller-manager runs to
   * aggregate it, so HOSTED_VIEW_ROLE carries read rules of its own.
   */
  groupBindings?: Record<string, string>;
  startTimeoutMs?: number;
}

export interface HostedApiServer {
  name: string;
  host: string;
  port: number;
  url: string;
  /** The audit log (Metadata level, JSON lines). */
  auditLogPath: string;
  /**
   * Replaces the trusted client CAs. kube-apiserver reloads --client-ca-file when the file
   * changes, so a rotated signer's old certificates are refused without a restart.
   */
  setClientCAs(pems: string[]): Promise<void>;
  stop(): Promise<void>;
  readonly process: ManagedProcess;
}

/** Read-only access to the common kinds, Secrets excepted: what `view` grants once aggregated. */
export const HOSTED_VIEW_ROLE = "hcp:hosted-view";
const readVerbs = ["get", "list", "watch"];
const hostedViewRole = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: HOSTED_VIEW_ROLE },
  rules: [
    {
      apiGroups: [""],
      resources: ["namespaces", "pods", "services", "endpoints", "configmaps", "events", "nodes"],
      verbs: readVerbs,
    },
    { apiGroups: ["apps", "batch"], resources: ["*"], verbs: readVerbs },
  ],
};

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: Metadata
`;

interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** One HTTPS call with the harness's admin certificate; resolves with the HTTP status. */
function call(url: string, tls: TlsMaterial, method = "GET", body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = body ? { "content-type": "application/json" } : undefined;
    const req = request(url, { ...tls, method, headers, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

/** Writes the bundle next to itself and renames it over, so the apiserver never reads half a file. */
async function writeBundle(path: string, pems: string[]): Promise<void> {
  const text = pems.map((p) => (p.endsWith("\n") ? p : `${p}\n`)).join("");
  await writeFile(`${path}.new`, text);
  await rename(`${path}.new`, path);
}

async function bindGroups(url: string, tls: TlsMaterial, bindings: Record<string, string>): Promise<void> {
  const rbac = `${url}/apis/rbac.authorization.k8s.io/v1`;
  const made = await call(`${rbac}/clusterroles`, tls, "POST", JSON.stringify(hostedViewRole));
  if (made !== 201 && made !== 409) throw new Error(`ClusterRole ${HOSTED_VIEW_ROLE}: HTTP ${made}`);
  for (const [group, role] of Object.entries(bindings)) {
    const name = `${role}-${group.replace(/[^a-z0-9.-]/g, "-")}`;
    const body = JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }],
    });
    const status = await call(
      `${url}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`,
      tls,
      "POST",
      body,
    );
    // 409: made by an earlier start on the same etcd prefix.
    if (status !== 201 && status !== 409) throw new Error(`ClusterRoleBinding ${name}: HTTP ${status}`);
  }
}

export async function startHostedApiServer(opts: StartHostedApiServerOptions): Promise<HostedApiServer> {
  const dir = join(opts.workDir, `hosted-${opts.name}`);
  await mkdir(dir, { recursive: true });
  const serving = await issueCert(opts.servingCA, dir, {
    name: "serving",
    commonName: `api.${opts.name}`,
    dnsNames: [
      "localhost",
      "kubernetes",
      "kubernetes.default",
      "kubernetes.default.svc",
      ...(opts.dnsNames ?? []),
    ],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  // The harness's own admin CA sits in the bundle beside the signers' so that readiness and RBAC
  // bootstrap need no break-glass certificate.
  const adminCA = await createCA(dir, "harness-admin");
  const admin: CertFiles = await issueCert(adminCA, dir, {
    name: "admin",
    commonName: "hcp-harness-admin",
    organizations: ["system:masters"],
    usage: "client",
  });
  const adminCAPem = await readFile(adminCA.certPath, "utf8");
  const clientCAPath = join(dir, "client-ca.crt");
  await writeBundle(clientCAPath, [adminCAPem, ...opts.clientCAs]);
  const policyPath = join(dir, "audit-policy.yaml");
  await writeFile(policyPath, AUDIT_POLICY);
  const auditLogPath = join(dir, "audit.log");
  const saKey = await createSigningKey(dir, "sa-signer");
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;

  const proc = await startProcess({
    name: `hosted-kube-apiserver-${opts.name}`,
    command: join(opts.assetsDir, "kube-apiserver"),
    args: [
      `--etcd-servers=${opts.etcdUrl}`,
      `--etcd-prefix=/hosted/${opts.name}/registry`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${port}`,
      `--cert-dir=${dir}`,
      `--tls-cert-file=${serving.certPath}`,
      `--tls-private-key-file=${serving.keyPath}`,
      `--client-ca-file=${clientCAPath}`,
      "--service-cluster-ip-range=10.0.0.0/24",
      `--service-account-issuer=${url}`,
      `--service-account-key-file=${saKey.publicKeyPath}`,
      `--service-account-signing-key-file=${saKey.keyPath}`,
      "--authorization-mode=RBAC",
      "--disable-admission-plugins=ServiceAccount",
      "--endpoint-reconciler-type=none",
      `--audit-policy-file=${policyPath}`,
      `--audit-log-path=${auditLogPath}`,
      // Written as it happens, so a test reads the line for a request as soon as it is answered.
      "--audit-log-mode=blocking",
      "--audit-log-format=json",
    ],
    dir: opts.workDir,
  });
  const tls: TlsMaterial = {
    ca: await readFile(opts.servingCA.certPath),
    cert: await readFile(admin.certPath),
    key: await readFile(admin.keyPath),
  };
  try {
    await waitFor(
      `hosted kube-apiserver ${opts.name}`,
      async () => (await call(`${url}/readyz`, tls)) === 200,
      {
        timeoutMs: opts.startTimeoutMs ?? 90_000,
        intervalMs: 200,
        exited: proc.exited,
      },
    );
    await bindGroups(url, tls, opts.groupBindings ?? {});
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    name: opts.name,
    host: "127.0.0.1",
    port,
    url,
    auditLogPath,
    process: proc,
    setClientCAs: (pems) => writeBundle(clientCAPath, [adminCAPem, ...pems]),
    stop: () => proc.stop(),
  };
}
