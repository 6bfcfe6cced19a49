/**
 * A person at the session gate, as they would be: `hcpctl session kubeconfig` run as a program of
 * its own (so the kubeconfig's exec plugin line runs hcpctl), and kubectl with it, signed in
 * through the plugin's password grant with the person's Dex password.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { SreAccess, SrePerson } from "../../hack/harness/sre-access.ts";
import type { Stack } from "../../hack/harness/stack.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { kubectlPath } from "./region.ts";

const exec = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));

export class GateClient {
  readonly #sre: SreAccess;
  readonly #dir: string;

  /** `dir`: where kubeconfigs and each person's token cache go. */
  constructor(sre: SreAccess, dir: string) {
    this.#sre = sre;
    this.#dir = dir;
  }

  /** The session's kubeconfig as `who` gets it from hcpctl, written to a file; its path. */
  async kubeconfig(who: SrePerson, session: string): Promise<string> {
    const { gate, dex } = this.#sre;
    const { stdout } = await exec(
      process.execPath,
      [
        "operators/hcpctl/hcpctl.ts",
        ...["--kubeconfig", who.kubeconfigPath, "session", "kubeconfig", session],
        ...["--gate", gate.url, "--gate-ca", gate.caPath],
        ...["--issuer", dex.issuer, "--client-id", dex.hcpctl.clientId, "--issuer-ca", dex.caPath],
      ],
      { cwd: repo },
    );
    const path = join(this.#dir, `${session}-${who.username}.kubeconfig`);
    await writeFile(path, stdout);
    return path;
  }

  /** kubectl with `kubeconfig`, signed in as `who`; whether it succeeded and what it printed. */
  async kubectl(
    who: SrePerson,
    kubeconfig: string,
    ...args: string[]
  ): Promise<{ ok: boolean; out: string }> {
    try {
      const { stdout } = await exec(kubectlPath(), ["--kubeconfig", kubeconfig, ...args], {
        cwd: repo,
        env: {
          ...process.env,
          HCPCTL_OIDC_USERNAME: who.email,
          HCPCTL_OIDC_PASSWORD: who.password,
          XDG_CACHE_HOME: join(this.#dir, `cache-${who.username}`),
        },
      });
      return { ok: true, out: stdout };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      return { ok: false, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
    }
  }
}

/**
 * Whether the HcpCluster is Ready with its apiURL at the kube-apiserver the stack started for its
 * HostedCluster (`hostedCluster`: the cluster's DNS prefix), so the gate reaches a real API.
 */
export async function readyAtOwnApi(
  service: KubeClient,
  stack: Stack | undefined,
  cluster: { namespace: string; name: string; hostedCluster: string },
): Promise<boolean> {
  const c = await service.find<HcpCluster>(HcpClusterResource, cluster.name, cluster.namespace);
  const ready = c?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") ?? false;
  return ready && c?.status?.apiURL === stack?.hostedApi(cluster.hostedCluster)?.url;
}
