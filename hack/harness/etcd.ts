/** One etcd for the whole region; each kube-apiserver keeps its data under its own prefix. */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { freePort, waitFor } from "./ports.ts";
import { startProcess, type ManagedProcess } from "./process.ts";

export interface Etcd {
  url: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export interface StartEtcdOptions {
  assetsDir: string;
  workDir: string;
}

export async function startEtcd(opts: StartEtcdOptions): Promise<Etcd> {
  const dataDir = join(opts.workDir, "etcd-data");
  await mkdir(dataDir, { recursive: true });
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const proc = await startProcess({
    name: "etcd",
    command: join(opts.assetsDir, "etcd"),
    dir: opts.workDir,
    args: [
      "--name=hcp-local",
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=hcp-local=${peerUrl}`,
      // Test data only: durability is not worth the fsync latency on a shared disk.
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
  });
  await waitFor("etcd", async () => (await fetch(`${url}/health`)).ok, {
    timeoutMs: 30_000,
    exited: proc.exited,
  });
  return { url, process: proc, stop: () => proc.stop() };
}

async function etcdPost<T>(url: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The current etcd revision, read through etcd's JSON gateway. */
export async function etcdRevision(url: string): Promise<number> {
  const res = await etcdPost<{ header: { revision: string } }>(url, "/v3/kv/range", {
    key: Buffer.from("/").toString("base64"),
    limit: 1,
  });
  return Number(res.header.revision);
}

/** Compacts etcd at its current revision, so every older resourceVersion becomes "410 Gone". */
export async function compactEtcd(url: string): Promise<number> {
  const revision = await etcdRevision(url);
  await etcdPost(url, "/v3/kv/compaction", { revision: String(revision), physical: true });
  return revision;
}
