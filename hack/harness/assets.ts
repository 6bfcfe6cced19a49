/** Locates (and on first use builds) kube-apiserver, kube-controller-manager, etcd and kubectl via hack/build-k8s.sh. */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { join } from "node:path";
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

/**
 * The kube-controller-manager in an assets directory, or undefined: the build script makes one,
 * but a KUBEBUILDER_ASSETS directory from envtest has none.
 */
export function controllerManagerBinary(assetsDir: string): string | undefined {
  const path = join(assetsDir, "kube-controller-manager");
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}
