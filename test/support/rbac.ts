/**
 * Running a component as its ServiceAccount: the RBAC of config/ applied, a bound token in a
 * kubeconfig of its own.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { eventually } from "./fixtures.ts";
import { clusterInfo, kubeConfigFor, kubectlPath } from "./region.ts";

const exec = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));

export function kubectl(cluster: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(kubectlPath(), ["--kubeconfig", clusterInfo(cluster).kubeconfigPath, ...args], { cwd: repo });
}

/** Creates the namespace, first waiting out a deletion another test file left running. */
export async function ensureNamespaceExists(cluster: string, namespace: string): Promise<void> {
  await eventually(
    `namespace ${namespace} on ${cluster} not terminating`,
    async () => {
      const { stdout } = await kubectl(
        cluster,
        ...["get", "namespace", namespace, "--ignore-not-found", "-o", "jsonpath={.status.phase}"],
      );
      return stdout !== "Terminating";
    },
    90_000,
  );
  await kubectl(cluster, "create", "namespace", namespace).catch((err: unknown) => {
    if (!String((err as { stderr?: string }).stderr).includes("AlreadyExists")) throw err;
  });
}

/** A kubeconfig for the ServiceAccount: the admin kubeconfig's cluster, a bound token. */
export async function serviceAccountKubeConfig(
  cluster: string,
  namespace: string,
  serviceAccount: string,
): Promise<KubeConfig> {
  const { stdout: token } = await kubectl(cluster, "create", "token", serviceAccount, "-n", namespace);
  const server = kubeConfigFor(cluster).getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [server],
    users: [{ name: serviceAccount, token: token.trim() }],
    contexts: [{ name: serviceAccount, cluster: server.name, user: serviceAccount }],
    currentContext: serviceAccount,
  });
  return kc;
}
