/** Locates (and on first use builds) kube-apiserver, etcd and kubectl via hack/build-k8s.sh. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);
const script = fileURLToPath(new URL("../build-k8s.sh", import.meta.url));

export async function ensureKubeAssets(): Promise<string> {
  // The script honours KUBEBUILDER_ASSETS and the cache, and prints the directory last.
  const { stdout } = await exec("bash", [script], { maxBuffer: 16 << 20, env: process.env });
  const dir = stdout.trim().split("\n").pop();
  if (!dir) throw new Error("hack/build-k8s.sh printed no directory");
  return dir;
}
