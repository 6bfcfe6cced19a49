/**
 * A real kube-apiserver on 127.0.0.1, the way envtest runs one: its own serving CA and client CA,
 * an admin client certificate in system:masters, RBAC on, data under its own etcd prefix.
 */
import { request } from "node:https";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createCA, createSigningKey, issueCert, type CertFiles } from "./certs.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import { freePort, waitFor } from "./ports.ts";
import { bringDown, startProcess, type ManagedProcess, type RestartOptions } from "./process.ts";

export interface StartApiServerOptions {
  /** Cluster name: used for the etcd prefix, file names and the kubeconfig context. */
  name: string;
  assetsDir: string;
  etcdUrl: string;
  /** Parent directory; the apiserver gets `<workDir>/<name>/`. */
  workDir: string;
  /** etcd key prefix; default `/<name>/registry`. Two apiservers with one prefix serve one cluster. */
  etcdPrefix?: string;
  /** Extra flags, e.g. ["--watch-cache=false"]. */
  extraArgs?: string[];
  startTimeoutMs?: number;
}

export interface ApiServer {
  name: string;
  url: string;
  kubeconfigPath: string;
  /** Stops (SIGKILL with `kill`) and starts the same apiserver again (same port, certs and data). */
  restart(opts?: RestartOptions): Promise<void>;
  stop(): Promise<void>;
  readonly process: ManagedProcess;
}

interface ApiServerFiles {
  dir: string;
  servingCA: string;
  serving: CertFiles;
  clientCA: string;
  admin: CertFiles;
  saKey: { keyPath: string; publicKeyPath: string };
}

async function createFiles(dir: string): Promise<ApiServerFiles> {
  const servingCA = await createCA(dir, "serving");
  const clientCA = await createCA(dir, "client");
  const serving = await issueCert(servingCA, dir, {
    name: "apiserver",
    commonName: "kube-apiserver",
    dnsNames: ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  const admin = await issueCert(clientCA, dir, {
    name: "admin",
    commonName: "hcp-admin",
    organizations: ["system:masters"],
    usage: "client",
  });
  const saKey = await createSigningKey(dir, "sa-signer");
  return { dir, servingCA: servingCA.certPath, serving, clientCA: clientCA.certPath, admin, saKey };
}

function apiServerArgs(opts: StartApiServerOptions, files: ApiServerFiles, port: number): string[] {
  return [
    `--etcd-servers=${opts.etcdUrl}`,
    `--etcd-prefix=${opts.etcdPrefix ?? `/${opts.name}/registry`}`,
    `--bind-address=127.0.0.1`,
    `--advertise-address=127.0.0.1`,
    `--secure-port=${port}`,
    `--cert-dir=${files.dir}`,
    `--tls-cert-file=${files.serving.certPath}`,
    `--tls-private-key-file=${files.serving.keyPath}`,
    `--client-ca-file=${files.clientCA}`,
    `--service-cluster-ip-range=10.0.0.0/24`,
    `--service-account-issuer=https://127.0.0.1:${port}`,
    `--service-account-key-file=${files.saKey.publicKeyPath}`,
    `--service-account-signing-key-file=${files.saKey.keyPath}`,
    "--authorization-mode=RBAC",
    "--allow-privileged=true",
    // No service-account controller runs here, so no "default" service account would ever exist.
    "--disable-admission-plugins=ServiceAccount",
    // Nothing can reach 127.0.0.1 as the kubernetes Service endpoint; do not keep writing it.
    "--endpoint-reconciler-type=none",
    ...(opts.extraArgs ?? []),
  ];
}

interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

async function readTls(files: ApiServerFiles): Promise<TlsMaterial> {
  const [ca, cert, key] = await Promise.all([
    readFile(files.servingCA),
    readFile(files.admin.certPath),
    readFile(files.admin.keyPath),
  ]);
  return { ca, cert, key };
}

/** GET with the admin client certificate; resolves with the HTTP status. */
function getStatus(url: string, tls: TlsMaterial): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ...tls, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

export async function startApiServer(opts: StartApiServerOptions): Promise<ApiServer> {
  const dir = join(opts.workDir, opts.name);
  await mkdir(dir, { recursive: true });
  const files = await createFiles(dir);
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const kubeconfigPath = join(opts.workDir, `${opts.name}.kubeconfig`);
  await writeKubeconfig({
    path: kubeconfigPath,
    name: opts.name,
    server: url,
    caPath: files.servingCA,
    client: files.admin,
  });
  const tls = await readTls(files);

  const launch = async (): Promise<ManagedProcess> => {
    const proc = await startProcess({
      name: `kube-apiserver-${opts.name}`,
      command: join(opts.assetsDir, "kube-apiserver"),
      args: apiServerArgs(opts, files, port),
      dir: opts.workDir,
    });
    await waitFor(
      `kube-apiserver ${opts.name}`,
      async () => (await getStatus(`${url}/readyz`, tls)) === 200,
      { timeoutMs: opts.startTimeoutMs ?? 90_000, intervalMs: 200, exited: proc.exited },
    );
    return proc;
  };

  let current = await launch();
  return {
    name: opts.name,
    url,
    kubeconfigPath,
    get process() {
      return current;
    },
    restart: async (restartOpts) => {
      await bringDown(current, restartOpts);
      current = await launch();
    },
    stop: async () => {
      await current.stop();
    },
  };
}
