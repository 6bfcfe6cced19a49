/**
 * People on a region's cluster: a client certificate from the apiserver's own client CA with the
 * person's name (CN) and groups (O), as a sign-in would give them, in a kubeconfig of its own. The
 * apiserver authorises them by RBAC like anyone else; nothing is impersonated.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { access, mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { issueCert } from "../../hack/harness/certs.ts";
import { writeKubeconfig } from "../../hack/harness/kubeconfig.ts";
import { KubeClient } from "../../operators/runtime/kube.ts";
import { clusterInfo, kubeConfigFor, region } from "./region.ts";

export interface Person {
  name: string;
  groups: string[];
  client: KubeClient;
  kubeconfigPath: string;
}

let dir: Promise<string> | undefined;
let serial = 0;

export async function person(cluster: string, name: string, groups: string[]): Promise<Person> {
  const caDir = join(region().workDir, cluster);
  const ca = {
    name: "client",
    certPath: join(caDir, "client-ca.crt"),
    keyPath: join(caDir, "client-ca.key"),
  };
  await access(ca.keyPath);
  dir ??= mkdtemp(join(region().workDir, "people-"));
  const out = await dir;
  const stem = `${cluster}-${name.replace(/[^A-Za-z0-9]/g, "_")}-${serial++}`;
  const client = await issueCert(ca, out, {
    name: stem,
    commonName: name,
    organizations: groups,
    usage: "client",
  });
  const server = kubeConfigFor(cluster).getCurrentCluster();
  if (!server) throw new Error(`no current cluster in ${clusterInfo(cluster).kubeconfigPath}`);
  const kubeconfigPath = join(out, `${stem}.kubeconfig`);
  await writeKubeconfig({
    path: kubeconfigPath,
    name: cluster,
    server: server.server,
    caPath: join(caDir, "serving-ca.crt"),
    client,
  });
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return { name, groups, client: new KubeClient(cluster, kc), kubeconfigPath };
}
